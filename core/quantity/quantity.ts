// Kubernetes resource quantities ("500m", "1Gi", "1.5", "1e3"), exact: a quantity is a whole number
// of nano-units held in a bigint, so sums and comparisons never round (no floats anywhere).
//
// Parsing and printing follow Kubernetes' rules (https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/quantity/):
// - values finer than 1n are rounded up (away from zero) to the next nano-unit;
// - the suffix family is remembered (decimal SI, binary SI, decimal exponent) and the canonical text
//   uses the largest suffix of that family that keeps the value exact: "1.5" is "1500m", "1024Mi"
//   is "1Gi", "1.5Gi" is "1536Mi", "1000" is "1k", "1e3" stays "1e3";
// - a binary quantity below 1024 in magnitude, or not a whole number, prints as decimal SI.
// Unlike Kubernetes, there is no int64 cap: a sum of quotas over a large cluster stays exact.

export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

export interface Quantity {
  /** The value in nano-units (value × 10⁹), exact. */
  readonly nano: bigint;
  /** The suffix family the quantity was written in; decides its canonical text. */
  readonly format: QuantityFormat;
}

export class QuantityError extends Error {
  override name = 'QuantityError';
}

const NANO = 1_000_000_000n;

const DECIMAL_SUFFIXES: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIXES: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_BY_EXPONENT = new Map(Object.entries(DECIMAL_SUFFIXES).map(([s, e]) => [e, s]));
const BINARY_BY_EXPONENT = new Map(Object.entries(BINARY_SUFFIXES).map(([s, e]) => [e / 10, s]));

const SHAPE = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(.*)$/;

export const ZERO: Quantity = Object.freeze({ nano: 0n, format: 'DecimalSI' });

/** Divides, rounding the magnitude up (Kubernetes rounds sub-nano values up, away from zero). */
function divideAwayFromZero(n: bigint, d: bigint): bigint {
  const q = n / d;
  return q * d === n ? q : n < 0n ? q - 1n : q + 1n;
}

/**
 * Parses a quantity as written in a manifest: a string, or a JSON number (YAML's unquoted `1.5`
 * or `2`). Throws QuantityError naming the text when it is not a quantity.
 */
export function parseQuantity(input: string | number): Quantity {
  let text: string;
  if (typeof input === 'number') {
    if (!Number.isFinite(input)) throw new QuantityError(`quantity ${String(input)} is not a finite number`);
    text = String(input);
  } else text = input;
  const m = SHAPE.exec(text);
  const whole = m?.[2] ?? '';
  const fraction = m?.[3] ?? '';
  if (!m || whole + fraction === '')
    throw new QuantityError(`${JSON.stringify(text)} is not a quantity (a number with an optional suffix, such as 500m, 2Gi or 1e3)`);
  const suffix = m[4]!;
  let format: QuantityFormat;
  let decimalExponent = 0;
  let binaryExponent = 0;
  if (Object.hasOwn(DECIMAL_SUFFIXES, suffix)) {
    format = 'DecimalSI';
    decimalExponent = DECIMAL_SUFFIXES[suffix]!;
  } else if (Object.hasOwn(BINARY_SUFFIXES, suffix)) {
    format = 'BinarySI';
    binaryExponent = BINARY_SUFFIXES[suffix]!;
  } else if (/^[eE][+-]?[0-9]+$/.test(suffix)) {
    format = 'DecimalExponent';
    decimalExponent = Number(suffix.slice(1));
    if (!Number.isSafeInteger(decimalExponent) || Math.abs(decimalExponent) > 1000)
      throw new QuantityError(`quantity ${JSON.stringify(text)} has an exponent out of range`);
  } else {
    throw new QuantityError(
      `${JSON.stringify(text)} is not a quantity: unknown suffix ${JSON.stringify(suffix)} (n, u, m, k, M, G, T, P, E, Ki … Ei, or e<exponent>)`,
    );
  }
  const digits = BigInt(whole + fraction) * (m[1] === '-' ? -1n : 1n) * 2n ** BigInt(binaryExponent);
  // value = digits × 10^(decimalExponent − fraction.length); in nano-units, 9 more.
  const shift = decimalExponent - fraction.length + 9;
  const nano = shift >= 0 ? digits * 10n ** BigInt(shift) : divideAwayFromZero(digits, 10n ** BigInt(-shift));
  if (format === 'BinarySI' && nano !== 0n && abs(nano) < NANO) format = 'DecimalSI';
  return { nano, format };
}

/** Whether the text (or number) is a quantity Kubernetes accepts. */
export function isQuantity(input: unknown): boolean {
  if (typeof input !== 'string' && typeof input !== 'number') return false;
  try {
    parseQuantity(input);
    return true;
  } catch {
    return false;
  }
}

const abs = (n: bigint): bigint => (n < 0n ? -n : n);

/** Removes factors of `base` from `n` (n ≠ 0), up to `max` of them. */
function removeFactors(n: bigint, base: bigint, max = Infinity): [bigint, number] {
  let times = 0;
  while (times < max && n % base === 0n) {
    n /= base;
    times++;
  }
  return [n, times];
}

/** The canonical text, as the API server stores and prints the quantity. */
export function formatQuantity(q: Quantity): string {
  if (q.nano === 0n) return '0';
  const sign = q.nano < 0n ? '-' : '';
  const magnitude = abs(q.nano);
  if (q.format === 'BinarySI' && magnitude >= 1024n * NANO && magnitude % NANO === 0n) {
    const [mantissa, power] = removeFactors(magnitude / NANO, 1024n, 6);
    return `${sign}${mantissa}${power === 0 ? '' : BINARY_BY_EXPONENT.get(power)!}`;
  }
  let [mantissa, exponent] = removeFactors(magnitude, 10n);
  exponent -= 9;
  // Lower the exponent to a multiple of 3 (Kubernetes' suffixes step by 10³).
  const over = ((exponent % 3) + 3) % 3;
  mantissa *= 10n ** BigInt(over);
  exponent -= over;
  if (q.format === 'DecimalExponent') return `${sign}${mantissa}${exponent === 0 ? '' : `e${exponent}`}`;
  const suffix = DECIMAL_BY_EXPONENT.get(exponent);
  return `${sign}${mantissa}${suffix ?? `e${exponent}`}`;
}

/** Canonical text of a quantity given as text or number (throws QuantityError if it is not one). */
export function canonicalQuantity(input: string | number): string {
  return formatQuantity(parseQuantity(input));
}

/** a + b, in a's format (as Kubernetes' Quantity.Add); a zero a takes b's format. */
export function addQuantities(a: Quantity, b: Quantity): Quantity {
  return { nano: a.nano + b.nano, format: a.nano === 0n && a.format === 'DecimalSI' ? b.format : a.format };
}

/** a − b, in a's format. */
export function subtractQuantities(a: Quantity, b: Quantity): Quantity {
  return { nano: a.nano - b.nano, format: a.nano === 0n && a.format === 'DecimalSI' ? b.format : a.format };
}

/** -1, 0 or 1 as a is less than, equal to or greater than b. */
export function compareQuantities(a: Quantity, b: Quantity): -1 | 0 | 1 {
  return a.nano < b.nano ? -1 : a.nano > b.nano ? 1 : 0;
}

/** The smaller of two quantities (the first when equal). */
export function minQuantity(a: Quantity, b: Quantity): Quantity {
  return compareQuantities(b, a) < 0 ? b : a;
}

/**
 * The quantity rounded up (away from zero) to a whole milli-unit: the API server stores
 * ResourceQuota limits so (a limit of "1n" is kept as "1m"), and a desired ResourceQuota compared
 * with the stored one must be rounded the same way or it would be rewritten forever.
 */
export function roundUpToMilli(q: Quantity): Quantity {
  return { nano: divideAwayFromZero(q.nano, 1_000_000n) * 1_000_000n, format: q.format };
}
