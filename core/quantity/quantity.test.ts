import { describe, expect, it } from 'vitest';
import {
  addQuantities,
  canonicalQuantity,
  compareQuantities,
  formatQuantity,
  isQuantity,
  minQuantity,
  parseQuantity,
  QuantityError,
  subtractQuantities,
  roundUpToMilli,
} from './quantity.js';
import { CANONICAL_QUANTITIES as CANONICAL } from './canonical-table.js';

describe('quantities', () => {
  it.each(CANONICAL)('%j prints as %s', (input, canonical) => {
    expect(canonicalQuantity(input)).toBe(canonical);
    // Canonical text is a fixed point.
    expect(canonicalQuantity(canonical)).toBe(canonical);
  });

  it.each(['', '.', 'abc', '1x', '1K', '1 Gi', '1e', '1e1.5', '--1', '1Gi2', '0x10', ' 1'])('refuses %j', (text) => {
    expect(() => parseQuantity(text)).toThrow(QuantityError);
    expect(isQuantity(text)).toBe(false);
  });

  it('refuses non-finite numbers and non-quantities', () => {
    expect(() => parseQuantity(Number.NaN)).toThrow(/not a finite number/);
    expect(isQuantity(null)).toBe(false);
    expect(isQuantity({})).toBe(false);
    expect(isQuantity('250m')).toBe(true);
  });

  it('names the bad suffix', () => {
    expect(() => parseQuantity('1K')).toThrow('"1K" is not a quantity: unknown suffix "K"');
  });

  it('adds exactly, where floats would not', () => {
    let sum = parseQuantity('0');
    for (let i = 0; i < 10; i++) sum = addQuantities(sum, parseQuantity('0.1'));
    expect(formatQuantity(sum)).toBe('1');
    expect(formatQuantity(addQuantities(parseQuantity('1Gi'), parseQuantity('512Mi')))).toBe('1536Mi');
    expect(formatQuantity(addQuantities(parseQuantity('9Ei'), parseQuantity('9Ei')))).toBe('18Ei');
    // Beyond Kubernetes' int64 range, still exact (Kubernetes would cap it).
    expect(canonicalQuantity('1000E')).toBe('1e21');
    const big = addQuantities(parseQuantity('9223372036854775807'), parseQuantity('1'));
    expect(formatQuantity(big)).toBe('9223372036854775808');
  });

  it('keeps the first operand’s format (a zero start takes the other’s)', () => {
    expect(formatQuantity(addQuantities(parseQuantity('1Ki'), parseQuantity('1024')))).toBe('2Ki');
    expect(formatQuantity(addQuantities(parseQuantity('1024'), parseQuantity('1Ki')))).toBe('2048');
    expect(formatQuantity(addQuantities(parseQuantity('0'), parseQuantity('2Gi')))).toBe('2Gi');
  });

  it('subtracts, compares and takes the minimum', () => {
    expect(formatQuantity(subtractQuantities(parseQuantity('1'), parseQuantity('250m')))).toBe('750m');
    expect(formatQuantity(subtractQuantities(parseQuantity('1'), parseQuantity('2')))).toBe('-1');
    expect(compareQuantities(parseQuantity('1Gi'), parseQuantity('1G'))).toBe(1);
    expect(compareQuantities(parseQuantity('1000m'), parseQuantity('1'))).toBe(0);
    expect(compareQuantities(parseQuantity('999m'), parseQuantity('1'))).toBe(-1);
    expect(formatQuantity(minQuantity(parseQuantity('2'), parseQuantity('1500m')))).toBe('1500m');
  });
});

describe('roundUpToMilli', () => {
  it.each([
    ['1n', '1m'],
    ['1500000n', '2m'],
    ['1.0001', '1001m'],
    ['1e-9', '1e-3'],
    ['-1n', '-1m'],
    ['1Gi', '1Gi'],
    ['250m', '250m'],
  ])('%s is kept as %s', (input, rounded) => {
    expect(formatQuantity(roundUpToMilli(parseQuantity(input)))).toBe(rounded);
  });
});
