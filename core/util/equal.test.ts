import { describe, expect, it } from 'vitest';
import { jsonEqual, stableJson } from './equal.js';

describe('jsonEqual', () => {
  it('ignores key order and keys whose value is undefined, on both sides', () => {
    expect(jsonEqual({ a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 })).toBe(true);
    expect(jsonEqual({ a: 1, x: undefined }, { a: 1 })).toBe(true);
    expect(jsonEqual({ a: 1 }, { a: 1, x: undefined })).toBe(true);
  });

  it('tells apart missing keys, extra keys, other values, other types', () => {
    expect(jsonEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(jsonEqual({ a: 1, b: 2 }, { a: 1 })).toBe(false);
    expect(jsonEqual({ a: 1, b: undefined }, { a: 1, c: 2 })).toBe(false);
    expect(jsonEqual({ a: 1 }, { a: '1' })).toBe(false);
    expect(jsonEqual({ a: null }, { a: {} })).toBe(false);
    expect(jsonEqual({ a: null }, { a: null })).toBe(true);
    expect(jsonEqual([], {})).toBe(false);
    expect(jsonEqual({}, [])).toBe(false);
    expect(jsonEqual({ a: undefined }, { a: null })).toBe(false);
  });

  it('compares arrays in order and in full', () => {
    expect(jsonEqual([1, [2, { a: 3 }]], [1, [2, { a: 3 }]])).toBe(true);
    expect(jsonEqual([1, 2], [2, 1])).toBe(false);
    expect(jsonEqual([1, 2], [1, 2, 3])).toBe(false);
    expect(jsonEqual([{ a: 1 }], [{ a: 2 }])).toBe(false);
  });

  it('agrees with stableJson', () => {
    const values = [{ a: 1, b: [1, { c: 'x' }] }, { b: [1, { c: 'x' }], a: 1 }, { a: 1, b: [1, { c: 'y' }] }, { a: 1 }, [1], null, 'a'];
    for (const x of values) for (const y of values) expect(jsonEqual(x, y)).toBe(stableJson(x) === stableJson(y));
  });
});
