// The four selector annotations of source objects (docs/behaviour.md §5.4, §7.6): parsing with the exact
// error texts HNC and Kubernetes give, and evaluation against a destination namespace's labels.
//
// * `propagate.hnc.x-k8s.io/select`: a Kubernetes label selector string (`a=b`, `a==b`, `a!=b`,
//   `a in (x,y)`, `a notin (x)`, `a`, `!a`), parsed as Kubernetes' own parser does, with its
//   validation of keys and values and its error messages.
// * `propagate.hnc.x-k8s.io/treeSelect`: comma-separated namespace names, each optionally negated
//   (`!ns`); at most one non-negated name. `ns` selects ns's subtree, `!ns` excludes it.
// * `propagate.hnc.x-k8s.io/none` and `.../all`: booleans in Go's strconv.ParseBool syntax.
//
// Empty annotation values mean "not set". Pure functions, no I/O.
import { PropagationMode, SELECTOR_ANNOTATIONS, SelectorAnnotation, treeLabel } from '../api/constants.js';

/** Either a value or the error text to show the user. */
export type Result<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

const ok = <T>(value: T): Result<T> => ({ ok: true, value });
const fail = <T>(error: string): Result<T> => ({ ok: false, error });

// The Kubernetes name checks and Go quoting live in core/util/k8s-names.ts; these names are kept
// for callers of the selector module.
import {
  isDns1123Label as dns1123LabelErrors,
  isQualifiedName as labelKeyErrors,
  isValidLabelValue as labelValueErrors,
  goQuote,
} from '../util/k8s-names.js';

export { dns1123LabelErrors, labelKeyErrors, labelValueErrors, goQuote };

/** field.Invalid(path, value, detail).Error() of apimachinery. */
const invalidValue = (path: string, value: string, errs: readonly string[]): string =>
  `${path}: Invalid value: ${goQuote(value)}: ${errs.join('; ')}`;

// ---- label selectors ---------------------------------------------------------------------------

/** Operators as Kubernetes names them (`!` is "does not exist", `gt`/`lt` are `>`/`<`). */
export type Operator = 'in' | 'notin' | '=' | '==' | '!=' | 'exists' | '!' | 'gt' | 'lt';

export interface Requirement {
  readonly key: string;
  readonly operator: Operator;
  /** Sorted and unique for `in`/`notin`; one value for the exact-match operators; none for `exists`/`!`. */
  readonly values: readonly string[];
}

/** A conjunction of requirements; no requirement at all matches everything. */
export interface LabelSelector {
  readonly requirements: readonly Requirement[];
}

type Labels = Readonly<Record<string, string>>;

const has = (labels: Labels, key: string): boolean => Object.hasOwn(labels, key);

/** Whether one requirement holds for a label set (Kubernetes' Requirement.Matches). */
export function requirementMatches(r: Requirement, labels: Labels): boolean {
  const present = has(labels, r.key);
  const value = present ? labels[r.key]! : undefined;
  switch (r.operator) {
    case 'in':
    case '=':
    case '==':
      return present && r.values.includes(value!);
    case 'notin':
    case '!=':
      return !present || !r.values.includes(value!);
    case 'exists':
      return present;
    case '!':
      return !present;
    case 'gt':
    case 'lt': {
      if (!present) return false;
      const have = parseInt64(value!);
      const want = parseInt64(r.values[0] ?? '');
      if (have === undefined || want === undefined) return false;
      return r.operator === 'gt' ? have > want : have < want;
    }
  }
}

/** Whether every requirement holds (an empty selector matches everything). */
export function selectorMatches(selector: LabelSelector, labels: Labels): boolean {
  return selector.requirements.every((r) => requirementMatches(r, labels));
}

/** The selector in Kubernetes' canonical text form (requirements sorted by key). */
export function selectorString(selector: LabelSelector): string {
  const text = (r: Requirement): string => {
    switch (r.operator) {
      case 'exists':
        return r.key;
      case '!':
        return `!${r.key}`;
      case 'in':
      case 'notin':
        return `${r.key} ${r.operator} (${r.values.join(',')})`;
      case 'gt':
        return `${r.key}>${r.values[0]}`;
      case 'lt':
        return `${r.key}<${r.values[0]}`;
      default:
        return `${r.key}${r.operator}${r.values[0]}`;
    }
  };
  return sortByKey(selector.requirements).map(text).join(',');
}

const sortByKey = (rs: readonly Requirement[]): Requirement[] => [...rs].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));

/** Go's strconv.ParseInt(s, 10, 64), or undefined if it would fail. */
function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const n = BigInt(s);
  return n >= -(2n ** 63n) && n < 2n ** 63n ? n : undefined;
}

// Tokens of the selector grammar. Keywords `in`/`notin` are identifiers wherever a value may stand.
type TokenKind = 'end' | 'ident' | 'in' | 'notin' | '(' | ')' | ',' | '!' | '=' | '==' | '!=' | '>' | '<';
interface Token {
  readonly kind: TokenKind;
  readonly text: string;
}

const SYMBOLS = new Set(['=', '!', '(', ')', ',', '>', '<']);
const SPACE = new Set([' ', '\t', '\r', '\n']);

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  // A NUL ends the text, as it does for Kubernetes' byte lexer.
  const text = input.includes('\0') ? input.slice(0, input.indexOf('\0')) : input;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (SPACE.has(c)) {
      i++;
    } else if (SYMBOLS.has(c)) {
      const two = text.slice(i, i + 2);
      const sym = two === '!=' || two === '==' ? two : c;
      tokens.push({ kind: sym as TokenKind, text: sym });
      i += sym.length;
    } else {
      let j = i;
      while (j < text.length && !SYMBOLS.has(text[j]!) && !SPACE.has(text[j]!)) j++;
      const word = text.slice(i, j);
      tokens.push({ kind: word === 'in' || word === 'notin' ? word : 'ident', text: word });
      i = j;
    }
  }
  tokens.push({ kind: 'end', text: '' });
  return tokens;
}

class SelectorSyntaxError extends Error {}

/** Recursive descent over the token list, failing with Kubernetes' messages. */
class SelectorParser {
  private pos = 0;
  constructor(private readonly tokens: readonly Token[]) {}

  /** The next token; `asValue` reads the keywords as identifiers. */
  private peek(asValue: boolean): Token {
    const t = this.tokens[Math.min(this.pos, this.tokens.length - 1)]!;
    return asValue && (t.kind === 'in' || t.kind === 'notin') ? { kind: 'ident', text: t.text } : t;
  }

  private take(asValue: boolean): Token {
    const t = this.peek(asValue);
    this.pos++;
    return t;
  }

  parse(): Requirement[] {
    const out: Requirement[] = [];
    for (;;) {
      const t = this.peek(true);
      if (t.kind === 'end') return out;
      if (t.kind !== 'ident' && t.kind !== '!')
        throw new SelectorSyntaxError(`found '${t.text}', expected: !, identifier, or 'end of string'`);
      out.push(this.requirementOrThrow());
      const sep = this.take(true);
      if (sep.kind === 'end') return out;
      if (sep.kind !== ',') throw new SelectorSyntaxError(`found '${sep.text}', expected: ',' or 'end of string'`);
      const next = this.peek(true);
      if (next.kind !== 'ident' && next.kind !== '!') throw new SelectorSyntaxError(`found '${next.text}', expected: identifier after ','`);
    }
  }

  private requirementOrThrow(): Requirement {
    try {
      return this.requirement();
    } catch (err) {
      if (err instanceof SelectorSyntaxError) throw new SelectorSyntaxError(`unable to parse requirement: ${err.message}`);
      throw err;
    }
  }

  private requirement(): Requirement {
    let t = this.take(true);
    const negated = t.kind === '!';
    if (negated) t = this.take(true);
    if (t.kind !== 'ident') throw new SelectorSyntaxError(`found '${t.text}', expected: identifier`);
    const key = t.text;
    const keyErrs = labelKeyErrors(key);
    if (keyErrs.length > 0) throw new SelectorSyntaxError(invalidValue('<nil>', key, keyErrs));
    const after = this.peek(true).kind;
    // `!key` never takes an operator: whatever follows is the caller's to reject.
    if (negated) return { key, operator: '!', values: [] };
    if (after === 'end' || after === ',') return { key, operator: 'exists', values: [] };

    const op = this.take(false);
    let operator: Operator;
    switch (op.kind) {
      case 'in':
      case 'notin':
      case '=':
      case '==':
      case '!=':
        operator = op.kind;
        break;
      case '>':
        operator = 'gt';
        break;
      case '<':
        operator = 'lt';
        break;
      default:
        throw new SelectorSyntaxError(`found '${op.text}', expected: in, notin, =, ==, !=, gt, lt`);
    }
    const values = operator === 'in' || operator === 'notin' ? this.valueSet() : [this.exactValue()];
    return validated(key, operator, values);
  }

  /** `( v1, v2, ... )`; empty entries are the empty value. Returns sorted unique values. */
  private valueSet(): string[] {
    const open = this.take(true);
    if (open.kind !== '(') throw new SelectorSyntaxError(`found '${open.text}' expected: '('`);
    const first = this.peek(true);
    if (first.kind === ')') {
      this.take(true);
      return [''];
    }
    if (first.kind !== 'ident' && first.kind !== ',')
      throw new SelectorSyntaxError(`found '${first.text}', expected: ',', ')' or identifier`);
    const values = new Set<string>();
    for (;;) {
      const t = this.take(true);
      if (t.kind === 'ident') {
        values.add(t.text);
        const next = this.peek(true);
        if (next.kind === ')') break;
        if (next.kind !== ',') throw new SelectorSyntaxError(`found '${next.text}', expected: ',' or ')'`);
      } else if (t.kind === ',') {
        // A comma with nothing before it, after it, or between two commas stands for "".
        if (values.size === 0) values.add('');
        const next = this.peek(true);
        if (next.kind === ')') {
          values.add('');
          break;
        }
        if (next.kind === ',') values.add('');
      } else {
        throw new SelectorSyntaxError(`found '${t.text}', expected: ',', or identifier`);
      }
    }
    this.take(true); // the ')' seen above
    return [...values].sort();
  }

  private exactValue(): string {
    const next = this.peek(true);
    if (next.kind === 'end' || next.kind === ',') return '';
    const t = this.take(true);
    if (t.kind !== 'ident') throw new SelectorSyntaxError(`found '${t.text}', expected: identifier`);
    return t.text;
  }
}

/** Kubernetes' NewRequirement checks on values, with its aggregated error text. */
function validated(key: string, operator: Operator, values: string[]): Requirement {
  const errs: string[] = [];
  if (operator === 'gt' || operator === 'lt') {
    values.forEach((v, i) => {
      if (parseInt64(v) === undefined)
        errs.push(`values[${i}]: Invalid value: ${goQuote(v)}: for 'Gt', 'Lt' operators, the value must be an integer`);
    });
  }
  values.forEach((v, i) => {
    const e = labelValueErrors(v);
    if (e.length > 0) errs.push(invalidValue(`values[${i}][${key}]`, v, e));
  });
  const unique = [...new Set(errs)];
  if (unique.length === 1) throw new SelectorSyntaxError(unique[0]!);
  if (unique.length > 1) throw new SelectorSyntaxError(`[${unique.join(', ')}]`);
  return { key, operator, values };
}

/**
 * Parses a label selector string exactly as Kubernetes' `labels.Parse` does (including `>`/`<`),
 * with its error messages. An empty or blank string is the selector that matches everything.
 */
export function parseLabelSelector(text: string): Result<LabelSelector> {
  try {
    return ok({ requirements: sortByKey(new SelectorParser(tokenize(text)).parse()) });
  } catch (err) {
    if (err instanceof SelectorSyntaxError) return fail(err.message);
    throw err;
  }
}

// ---- the four annotations ----------------------------------------------------------------------

/**
 * The `select` annotation's selector, with the error text HNC gives (it goes through Kubernetes'
 * ParseToLabelSelector, which refuses `gt`/`lt`). Unlike HNC, `!=` is accepted: it means
 * "absent or different", as in every other Kubernetes selector string.
 */
export function parseSelect(value: string): Result<LabelSelector> {
  const wrap = (msg: string) => fail<LabelSelector>(`while parsing "${SelectorAnnotation.select}": ${msg}`);
  const parsed = parseLabelSelector(value);
  if (!parsed.ok) return wrap(`couldn't parse the selector string "${value}": ${parsed.error}`);
  const unsupported = parsed.value.requirements.find((r) => r.operator === 'gt' || r.operator === 'lt');
  if (unsupported) return wrap(`${goQuote(unsupported.operator)} isn't supported in label selectors`);
  return parsed;
}

export interface TreeSelector {
  readonly selector: LabelSelector;
  /** The one non-negated namespace, whose subtree is selected. */
  readonly include: string | undefined;
  /** Namespaces whose subtrees are excluded. */
  readonly exclude: readonly string[];
}

/**
 * The `treeSelect` annotation: `ns` selects ns's subtree (its tree label exists), `!ns` excludes
 * it. Segments are trimmed; an empty one is an invalid name (HNC crashes on it).
 */
export function parseTreeSelect(value: string): Result<TreeSelector> {
  const requirements: Requirement[] = [];
  const included: string[] = [];
  const exclude: string[] = [];
  for (const raw of value.split(',')) {
    const seg = raw.trim();
    const negated = seg.startsWith('!');
    const ns = negated ? seg.slice(1) : seg;
    const errs = dns1123LabelErrors(ns);
    if (errs.length > 0) return fail(`${goQuote(ns)} is not a valid namespace name: ${errs.join('; ')}`);
    (negated ? exclude : included).push(ns);
    requirements.push({ key: treeLabel(ns), operator: negated ? '!' : 'exists', values: [] });
  }
  if (included.length > 1) return fail(`should only have one non-negated namespace, but got multiple: [${included.join(' ')}]`);
  return ok({ selector: { requirements: sortByKey(requirements) }, include: included[0], exclude });
}

const GO_TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const GO_FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** The `none` or `all` annotation, in Go's strconv.ParseBool syntax, with HNC's error text. */
export function parseBoolAnnotation(key: typeof SelectorAnnotation.none | typeof SelectorAnnotation.all, value: string): Result<boolean> {
  if (GO_TRUE.has(value)) return ok(true);
  if (GO_FALSE.has(value)) return ok(false);
  return fail(`invalid ${key} value: strconv.ParseBool: parsing ${goQuote(value)}: invalid syntax`);
}

type Annotations = Readonly<Record<string, string>> | undefined;

/** The value of an annotation, or undefined when absent or empty ("not set"). */
const setValue = (annotations: Annotations, key: string): string | undefined => {
  const v = annotations?.[key];
  return v === undefined || v === '' ? undefined : v;
};

export interface SelectorError {
  readonly annotation: SelectorAnnotation;
  /** The parse error, as HNC puts it in the CannotParseSelector event. */
  readonly message: string;
}

export interface Selectors {
  /** The `select` selector, if set and valid. */
  readonly select: LabelSelector | undefined;
  readonly treeSelect: TreeSelector | undefined;
  readonly none: boolean;
  readonly all: boolean;
  /** One entry per set annotation that does not parse, in the order HNC lists the annotations. */
  readonly errors: readonly SelectorError[];
}

/** Parses all four annotations of an object at once. */
export function parseSelectors(annotations: Annotations): Selectors {
  const errors: SelectorError[] = [];
  const get = <T>(key: SelectorAnnotation, parse: (v: string) => Result<T>): T | undefined => {
    const v = setValue(annotations, key);
    if (v === undefined) return undefined;
    const r = parse(v);
    if (r.ok) return r.value;
    errors.push({ annotation: key, message: r.error });
    return undefined;
  };
  const select = get(SelectorAnnotation.select, parseSelect);
  const treeSelect = get(SelectorAnnotation.treeSelect, parseTreeSelect);
  const none = get(SelectorAnnotation.none, (v) => parseBoolAnnotation(SelectorAnnotation.none, v)) ?? false;
  const all = get(SelectorAnnotation.all, (v) => parseBoolAnnotation(SelectorAnnotation.all, v)) ?? false;
  return { select, treeSelect, none, all, errors };
}

export interface SelectorDecision {
  readonly propagate: boolean;
  /** Set when an annotation did not parse (the object then propagates nowhere). */
  readonly error?: string;
}

/**
 * Whether the selector annotations let an object propagate into a namespace with `labels` (its
 * full label set, tree labels included), under `mode` (docs/behaviour.md §5.4 steps 1-5). Propagate starts
 * from yes; AllowPropagate from no, and only a non-empty `select` or `treeSelect`, or `all=true`,
 * turns it to yes. Built-in exclusions are not checked here (see decide.ts).
 */
export function evaluateSelectors(annotations: Annotations, labels: Labels, mode: PropagationMode): SelectorDecision {
  let propagate = mode === PropagationMode.Propagate;

  const select = setValue(annotations, SelectorAnnotation.select);
  if (select !== undefined) {
    const r = parseSelect(select);
    if (!r.ok) return { propagate: false, error: r.error };
    if (r.value.requirements.length > 0) {
      if (!selectorMatches(r.value, labels)) return { propagate: false };
      propagate = true;
    }
  }

  const tree = setValue(annotations, SelectorAnnotation.treeSelect);
  if (tree !== undefined) {
    const r = parseTreeSelect(tree);
    if (!r.ok) return { propagate: false, error: r.error };
    if (!selectorMatches(r.value.selector, labels)) return { propagate: false };
    propagate = true;
  }

  const none = setValue(annotations, SelectorAnnotation.none);
  if (none !== undefined) {
    const r = parseBoolAnnotation(SelectorAnnotation.none, none);
    if (!r.ok) return { propagate: false, error: r.error };
    if (r.value) return { propagate: false };
  }

  const all = setValue(annotations, SelectorAnnotation.all);
  if (all !== undefined) {
    const r = parseBoolAnnotation(SelectorAnnotation.all, all);
    if (!r.ok) return { propagate: false, error: r.error };
    if (r.value) propagate = true;
  }

  return { propagate };
}

// ---- the objects webhook (docs/behaviour.md §7.6) -----------------------------------------------

/** `<x>.hnc.x-k8s.io/<y>` with a dot-free x: the shape of HNC's own annotation keys. */
const HNC_EXCEPTION_KEY = /^[^./]+\.hnc\.x-k8s\.io\//;

/**
 * What the objects webhook says about a source's selector annotations (HTTP 400), or undefined
 * when they are acceptable. `previous` is the old object's annotations on UPDATE (undefined on
 * CREATE): only changed selector values are parsed, and "more than one selector" is only refused
 * when some selector changed, so objects admitted earlier stay editable.
 */
export function validateSelectorAnnotations(annotations: Annotations, previous?: Annotations): string | undefined {
  const known = new Set<string>(SELECTOR_ANNOTATIONS);
  for (const key of Object.keys(annotations ?? {}).sort()) {
    if (HNC_EXCEPTION_KEY.test(key) && !known.has(key)) {
      return `invalid HNC exceptions annotation: ${key}, should be one of the following: ${SELECTOR_ANNOTATIONS.join('; ')}`;
    }
  }
  const value = (a: Annotations, key: string) => a?.[key] ?? '';
  const changed = SELECTOR_ANNOTATIONS.filter((key) => value(annotations, key) !== value(previous, key));
  for (const key of changed) {
    const v = value(annotations, key);
    if (v === '') continue;
    switch (key) {
      case SelectorAnnotation.select: {
        const r = parseSelect(v);
        if (!r.ok) return `invalid Kubernetes labelSelector: ${r.error}`;
        break;
      }
      case SelectorAnnotation.treeSelect: {
        const r = parseTreeSelect(v);
        if (!r.ok) return `invalid HNC ${goQuote(key)} value: ${r.error}`;
        break;
      }
      default: {
        const r = parseBoolAnnotation(key, v);
        if (!r.ok) return r.error;
      }
    }
  }
  const set = SELECTOR_ANNOTATIONS.filter((key) => value(annotations, key) !== '');
  if (changed.length > 0 && set.length > 1)
    return `cannot have more than one selector at the same time, but got multiple: ${set.join(', ')}`;
  return undefined;
}
