import { describe, expect, it } from 'vitest';
import { LineSplitter } from './lines.js';

describe('LineSplitter', () => {
  const text = '{"a":"Jürgen €"}\n\n{"b":2}\r\n{"c":"𝄞"}\n{"d":';
  const bytes = Buffer.from(text);

  it('gives the same lines whatever the chunk size, even across UTF-8 characters', () => {
    for (let size = 1; size <= bytes.length; size++) {
      const s = new LineSplitter();
      const lines: string[] = [];
      for (let i = 0; i < bytes.length; i += size) lines.push(...s.push(bytes.subarray(i, i + size)));
      expect(lines, `chunk size ${size}`).toEqual(['{"a":"Jürgen €"}', '{"b":2}\r', '{"c":"𝄞"}']);
      expect(s.end()).toBe('{"d":');
    }
  });

  it('returns nothing at the end of a stream that ended on a newline', () => {
    const s = new LineSplitter();
    expect(s.push('{"a":1}\n')).toEqual(['{"a":1}']);
    expect(s.end()).toBe('');
  });
});
