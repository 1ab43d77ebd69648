import { describe, expect, it } from 'vitest';
import { JsonCostScanner, jsonTooCostly, REVIEW_LIMITS } from './json-limits.js';

const scan = (s: string, limits = REVIEW_LIMITS) => jsonTooCostly(Buffer.from(s), limits);
const small = { maxDepth: 3, maxStructures: 5, maxElements: 4 };

describe('jsonTooCostly', () => {
  it('passes an ordinary review', () => {
    const review = {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: { uid: 'u', object: { metadata: { name: 'x', labels: { a: 'b' } }, rules: [{ verbs: ['get', 'list'] }] } },
    };
    expect(scan(JSON.stringify(review))).toBeUndefined();
  });

  it('refuses nesting past the depth limit, and counts only real brackets', () => {
    expect(scan('[[[]]]', small)).toBeUndefined();
    expect(scan('[[[[]]]]', small)).toBe('the review is nested more than 3 levels deep');
    expect(scan('{"a":{"b":{"c":{}}}}', { ...small, maxStructures: 10 })).toBe('the review is nested more than 3 levels deep');
    // Brackets inside strings are text, also after escaped quotes and backslashes.
    expect(scan(JSON.stringify({ a: '[[[[[[{{{{', b: 'x"[[[[', c: '\\', d: '\\"[[[[' }), small)).toBeUndefined();
  });

  it('refuses too many objects, arrays and fields', () => {
    expect(scan('[{},{}]', small)).toBeUndefined();
    expect(scan('[{},{},{},{},{}]', small)).toBe('the review holds more than 5 objects, arrays and fields');
    expect(scan('{"a":1,"b":2,"c":3,"d":4,"e":5}', small)).toBe('the review holds more than 5 objects, arrays and fields');
  });

  it('refuses too many values', () => {
    expect(scan('[1,2,3,4,5]', small)).toBeUndefined();
    expect(scan('[1,2,3,4,5,6]', small)).toBe('the review holds more than 4 values');
    expect(scan(JSON.stringify(['a,b,c,d,e,f,g'])), 'commas in strings do not count').toBeUndefined();
  });

  it('refuses 3 MiB of [[[…]]] at once and in a few milliseconds', () => {
    const half = 1.5 * 1024 * 1024;
    const body = Buffer.from('['.repeat(half) + ']'.repeat(half));
    const t = performance.now();
    expect(jsonTooCostly(body)).toBe(`the review is nested more than ${REVIEW_LIMITS.maxDepth} levels deep`);
    expect(performance.now() - t).toBeLessThan(200);
    const flat = Buffer.from(`[${Array(1_000_000).fill('{}').join(',')}]`);
    expect(jsonTooCostly(flat)).toBe(`the review holds more than ${REVIEW_LIMITS.maxStructures} objects, arrays and fields`);
  });

  it('leaves malformed JSON to the parser', () => {
    expect(scan('{"a": "unterminated')).toBeUndefined();
    expect(scan(']]]')).toBeUndefined();
  });

  it('gives the same answer over chunks, wherever a chunk ends (inside strings, between backslashes)', () => {
    const bodies = [
      JSON.stringify({ a: 'x"[[[[', b: '\\', c: '\\"[[[[', d: ['[', '\\\\'] }),
      '[[["\\\\"],["\\""]]]',
      '{"a":"\\\\\\"[[[[[","b":[[[[1]]]]}',
      '[1,2,3,4,"a,b",{"k":"v"}]',
    ];
    for (const body of bodies) {
      const whole = jsonTooCostly(Buffer.from(body), small);
      for (let cut = 0; cut <= body.length; cut++) {
        for (const step of [1, 2, 3, 5]) {
          const scanner = new JsonCostScanner(small);
          let got: string | undefined;
          const bytes = Buffer.from(body);
          const pieces = [
            bytes.subarray(0, cut),
            ...Array.from({ length: Math.ceil((bytes.length - cut) / step) }, (_, k) =>
              bytes.subarray(cut + k * step, cut + (k + 1) * step),
            ),
          ];
          for (const p of pieces) got ??= scanner.push(p);
          expect(got, `${body} cut at ${cut} in steps of ${step}`).toBe(whole);
        }
      }
    }
  });
});
