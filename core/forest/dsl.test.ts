import { describe, expect, it } from 'vitest';
import { forest, forestText } from './dsl.js';

describe('forest DSL', () => {
  it('reads a chain as parent -> child', () => {
    const f = forest('a -> b -> c');
    expect(f.parent('b')).toBe('a');
    expect(f.parent('c')).toBe('b');
    expect(f.roots()).toEqual(['a']);
    expect(f.names()).toEqual(['a', 'b', 'c']);
  });

  it('takes several chains separated by commas or newlines, with comments', () => {
    const f = forest(`
      a -> b, a -> c   # two children of a
      d
      e -> f
    `);
    expect(f.children('a')).toEqual(['b', 'c']);
    expect(f.roots()).toEqual(['a', 'd', 'e']);
    expect(f.parent('f')).toBe('e');
    expect(f.size).toBe(6);
  });

  it('tolerates missing spaces and repeated edges', () => {
    expect(forestText(forest('a->b,a -> b ,,b->c'))).toBe('a -> b, b -> c');
  });

  it('builds cycles, including self-parents', () => {
    expect(forest('a -> b -> a').cycleText('b')).toBe('a <- b <- a');
    expect(forest('a -> a').cycleText('a')).toBe('a <- a');
  });

  it('marks missing namespaces with "?"', () => {
    const f = forest('gone? -> a -> b');
    expect(f.has('gone')).toBe(true);
    expect(f.exists('gone')).toBe(false);
    expect(f.parentMissing('a')).toBe(true);
    expect(f.size).toBe(2);
  });

  it('builds an empty forest from empty text', () => {
    expect(forest('').size).toBe(0);
    expect(forest('  \n # nothing\n').size).toBe(0);
  });

  it.each([
    ['a -> c, b -> c', /two parents/],
    ['a -> B', /bad namespace name/],
    ['a - > b', /bad namespace name/],
    ['a -> ', /bad namespace name/],
    ['-a', /bad namespace name/],
    ['a -> gone?', /cannot have a parent/],
    ['gone?', /must be somebody's parent/],
    ['gone? -> a, gone', /both with and without/],
  ])('rejects %j', (text, error) => {
    expect(() => forest(text)).toThrow(error);
  });

  it('writes a forest back canonically, and round-trips', () => {
    const text = 'z -> y, gone? -> o, a -> b -> a, lone, a -> c';
    const f = forest(text);
    const canonical = forestText(f);
    expect(canonical).toBe('b -> a, a -> b, a -> c, lone, gone? -> o, z -> y');
    expect(forestText(forest(canonical))).toBe(canonical);
  });
});
