// What one review may cost before it is parsed. JSON.parse is synchronous and its time and memory
// grow with the number of values, not the bytes: 3 MiB of `[[[…]]]` or of `[{},{},…]` takes
// seconds and hundreds of MB, and every other review waits meanwhile. One linear pass over the
// bytes (strings skipped) counts nesting and values first, so such a body is refused with a 400 for
// the price of reading it (docs/webhooks.md, "Limits").

export interface JsonLimits {
  /** Deepest nesting of objects and arrays. */
  maxDepth: number;
  /** Objects, arrays and object members together (what allocates: each costs a few µs to build). */
  maxStructures: number;
  /** Array elements and object members (commas), the cheap part. */
  maxElements: number;
}

/** Far beyond any Kubernetes object (a review holds the object and its old version), far below an attack. */
export const REVIEW_LIMITS: JsonLimits = { maxDepth: 256, maxStructures: 30_000, maxElements: 500_000 };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

/**
 * Why `body` would cost too much to parse, or undefined. Not a validator: malformed JSON within
 * the limits passes and JSON.parse reports it.
 */
export function jsonTooCostly(body: Uint8Array, limits: JsonLimits = REVIEW_LIMITS): string | undefined {
  let depth = 0;
  let structures = 0;
  let elements = 0;
  const n = body.length;
  for (let i = 0; i < n; i++) {
    const c = body[i]!;
    if (c === QUOTE) {
      i = stringEnd(body, i);
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limits.maxDepth) return `the review is nested more than ${limits.maxDepth} levels deep`;
      if (++structures > limits.maxStructures) return `the review holds more than ${limits.maxStructures} objects, arrays and fields`;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    } else if (c === COLON) {
      if (++structures > limits.maxStructures) return `the review holds more than ${limits.maxStructures} objects, arrays and fields`;
    } else if (c === COMMA) {
      if (++elements > limits.maxElements) return `the review holds more than ${limits.maxElements} values`;
    }
  }
  return undefined;
}

/** The index of the quote closing the string opened at `open` (native search; an odd run of backslashes escapes a quote). */
function stringEnd(body: Uint8Array, open: number): number {
  let q = open;
  for (;;) {
    q = body.indexOf(QUOTE, q + 1);
    if (q < 0) return body.length;
    let backslashes = 0;
    while (body[q - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return q;
  }
}
