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
  return new JsonCostScanner(limits).push(body);
}

/**
 * The same count over a body arriving in chunks, so that a costly body is refused at its first
 * chunks, before the rest is read (or decrypted). A string, and a run of backslashes in it, may
 * span chunks.
 */
export class JsonCostScanner {
  private depth = 0;
  private structures = 0;
  private elements = 0;
  private inString = false;
  /** Inside a string: whether the bytes just before this chunk were an odd run of backslashes. */
  private escaping = false;

  constructor(private readonly limits: JsonLimits = REVIEW_LIMITS) {}

  /** Counts one more chunk; the first limit passed, as a message, or undefined. */
  push(chunk: Uint8Array): string | undefined {
    const { limits } = this;
    const n = chunk.length;
    let i = 0;
    while (i < n) {
      if (this.inString) {
        i = this.skipString(chunk, i);
        continue;
      }
      const c = chunk[i++]!;
      if (c === QUOTE) {
        this.inString = true;
        this.escaping = false;
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        if (++this.depth > limits.maxDepth) return `the review is nested more than ${limits.maxDepth} levels deep`;
        if (++this.structures > limits.maxStructures)
          return `the review holds more than ${limits.maxStructures} objects, arrays and fields`;
      } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        this.depth--;
      } else if (c === COLON) {
        if (++this.structures > limits.maxStructures)
          return `the review holds more than ${limits.maxStructures} objects, arrays and fields`;
      } else if (c === COMMA) {
        if (++this.elements > limits.maxElements) return `the review holds more than ${limits.maxElements} values`;
      }
    }
    return undefined;
  }

  /** From `from` inside a string: the index after its closing quote (string over), or the chunk's end (still inside). */
  private skipString(chunk: Uint8Array, from: number): number {
    let i = from;
    if (this.escaping) {
      // The byte after a backslash from the previous chunk is escaped, whatever it is.
      this.escaping = false;
      i++;
    }
    for (;;) {
      const q = chunk.indexOf(QUOTE, i);
      const end = q < 0 ? chunk.length : q;
      // The run of backslashes just before `end` (within this stretch) decides whether it is escaped.
      let run = 0;
      while (end - 1 - run >= i && chunk[end - 1 - run] === BACKSLASH) run++;
      if (q < 0) {
        this.escaping = run % 2 === 1;
        return chunk.length;
      }
      if (run % 2 === 0) {
        this.inString = false;
        return q + 1;
      }
      i = q + 1;
    }
  }
}
