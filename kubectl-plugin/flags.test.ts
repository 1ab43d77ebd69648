import { describe, expect, it } from 'vitest';
import { parseKeyValues, parseRequestTimeout } from './flags.js';

describe('parseRequestTimeout', () => {
  it.each([
    ['0', 0],
    ['7', 7000],
    ['5s', 5000],
    ['500ms', 500],
    ['1m30s', 90_000],
    ['1.5s', 1500],
    ['2h', 7_200_000],
  ])('%s is %d ms', (text, ms) => {
    expect(parseRequestTimeout(text)).toBe(ms);
  });

  it.each(['', 'soon', '5x', '5s junk', '-1s'])('rejects %j', (text) => {
    expect(() => parseRequestTimeout(text)).toThrow(
      `Error: invalid argument "${text}" for "--request-timeout": use a duration such as 5s, 1m or 0 for none`,
    );
  });
});

describe('parseKeyValues', () => {
  it('splits repeated and comma-separated pairs, sorted by key, later wins', () => {
    expect(parseKeyValues(['b=2,a=1', 'c=x=y', 'a=3'], '--labels')).toEqual([
      { key: 'a', value: '3' },
      { key: 'b', value: '2' },
      { key: 'c', value: 'x=y' },
    ]);
  });

  it('rejects a pair without "="', () => {
    expect(() => parseKeyValues(['a=1,b'], '--labels')).toThrow(
      'Error: invalid argument "a=1,b" for "--labels": b must be formatted as key=value',
    );
  });
});
