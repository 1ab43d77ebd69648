import { describe, expect, it } from 'vitest';
import { TREE_LABEL_SUFFIX } from '../api/constants.js';
import { forest, forestText } from './dsl.js';
import { Forest } from './forest.js';

/** Tree labels as ancestor -> depth, to keep expectations short. */
function depths(f: Forest, ns: string, opts?: Parameters<Forest['treeLabels']>[1]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(f.treeLabels(ns, opts))) {
    expect(k.endsWith(TREE_LABEL_SUFFIX)).toBe(true);
    out[k.slice(0, -TREE_LABEL_SUFFIX.length)] = v;
  }
  return out;
}

describe('membership', () => {
  it('knows nothing at first, and treats unknown names as lone namespaces', () => {
    const f = new Forest();
    expect(f.size).toBe(0);
    expect(f.has('a')).toBe(false);
    expect(f.exists('a')).toBe(false);
    expect(f.parent('a')).toBeUndefined();
    expect(f.children('a')).toEqual([]);
    expect(f.ancestors('a')).toEqual([]);
    expect(f.descendants('a')).toEqual([]);
    expect(f.root('a')).toBe('a');
    expect(f.treeLabels('a')).toEqual({ [`a${TREE_LABEL_SUFFIX}`]: '0' });
  });

  it('ensure reports the first sighting only', () => {
    const f = new Forest();
    expect(f.ensure('a')).toBe(true);
    expect(f.ensure('a')).toBe(false);
    expect(f.exists('a')).toBe(true);
    expect(f.size).toBe(1);
    expect(f.names()).toEqual(['a']);
    expect(f.roots()).toEqual(['a']);
  });

  it('is safe with names that are Object.prototype keys or numbers', () => {
    const f = forest('constructor -> 10, constructor -> 9, constructor -> tostring');
    expect(f.children('constructor')).toEqual(['10', '9', 'tostring']);
    expect(f.parent('9')).toBe('constructor');
    expect(new Forest().has('constructor')).toBe(false);
    f.remove('constructor');
    expect(f.isMissing('constructor')).toBe(true);
  });
});

describe('setParent', () => {
  it('sets, keeps and clears a parent, reporting what changed', () => {
    const f = forest('a, b, c');
    expect(f.setParent('c', 'a')).toEqual({
      ns: 'c',
      oldParent: undefined,
      newParent: 'a',
      changed: true,
      cycle: undefined,
      createdCycle: false,
      formerCycle: undefined,
    });
    expect(f.setParent('b', 'a').changed).toBe(true);
    expect(f.children('a')).toEqual(['b', 'c']);
    expect(f.setParent('c', 'a').changed).toBe(false);

    const moved = f.setParent('c', 'b');
    expect(moved).toMatchObject({ oldParent: 'a', newParent: 'b', changed: true });
    expect(f.children('a')).toEqual(['b']);
    expect(f.children('b')).toEqual(['c']);

    expect(f.setParent('c', undefined)).toMatchObject({ oldParent: 'b', newParent: undefined, changed: true });
    expect(f.setParent('b', '')).toMatchObject({ oldParent: 'a', newParent: undefined, changed: true });
    expect(f.roots()).toEqual(['a', 'b', 'c']);
    expect(forestText(f)).toBe('a, b, c');
  });

  it('marks the child existing, and records an unknown parent as missing', () => {
    const f = new Forest();
    f.setParent('child', 'ghost');
    expect(f.exists('child')).toBe(true);
    expect(f.has('ghost')).toBe(true);
    expect(f.exists('ghost')).toBe(false);
    expect(f.isMissing('ghost')).toBe(true);
    expect(f.parentMissing('child')).toBe(true);
    expect(f.missing()).toEqual(['ghost']);
    expect(f.names()).toEqual(['child']);
    expect(f.size).toBe(1);
    expect(f.roots()).toEqual([]); // an orphan is not a root

    // Once nobody names it, a missing namespace is forgotten.
    f.setParent('child', undefined);
    expect(f.has('ghost')).toBe(false);
    expect(f.roots()).toEqual(['child']);
  });
});

describe('orphans', () => {
  it('children keep a removed parent as a missing one', () => {
    const f = forest('root -> p -> c1, p -> c2');
    const removal = f.remove('p');
    expect(removal).toEqual({ ns: 'p', existed: true, oldParent: 'root', orphans: ['c1', 'c2'], formerCycle: undefined });
    expect(f.has('p')).toBe(true);
    expect(f.exists('p')).toBe(false);
    expect(f.parent('c1')).toBe('p');
    expect(f.parentMissing('c1')).toBe(true);
    expect(f.children('root')).toEqual([]); // a removed namespace is detached from its own parent
    expect(f.parent('p')).toBeUndefined();
    expect(forestText(f)).toBe('p? -> c1, p? -> c2, root');
  });

  it('removing is a no-op for unknown or already missing namespaces', () => {
    const f = forest('gone? -> c');
    expect(f.remove('gone').existed).toBe(false);
    expect(f.remove('nope').existed).toBe(false);
    expect(forestText(f)).toBe('gone? -> c');
  });

  it('a missing parent that gets a parent itself exists again', () => {
    const f = forest('gone? -> c, root');
    f.setParent('gone', 'root');
    expect(f.exists('gone')).toBe(true);
    expect(f.parentMissing('c')).toBe(false);
    expect(depths(f, 'c')).toEqual({ c: '0', gone: '1', root: '2' });
  });

  it('a removed leaf is forgotten entirely', () => {
    const f = forest('a -> b');
    f.remove('b');
    expect(f.has('b')).toBe(false);
    expect(f.children('a')).toEqual([]);
  });

  it('a missing parent is forgotten when its last child leaves or goes', () => {
    const f = forest('gone? -> c1, gone? -> c2, other');
    f.setParent('c1', 'other');
    expect(f.has('gone')).toBe(true);
    f.remove('c2');
    expect(f.has('gone')).toBe(false);
    expect(forestText(f)).toBe('other -> c1');
  });

  it('children recover when the parent reappears', () => {
    const f = forest('root -> p -> c -> g');
    f.remove('p');
    expect(depths(f, 'c')).toEqual({ c: '0' });
    expect(depths(f, 'g')).toEqual({ g: '0', c: '1' });

    expect(f.ensure('p')).toBe(true);
    expect(f.parentMissing('c')).toBe(false);
    expect(f.parent('p')).toBeUndefined(); // its own parent comes back through its HC, not by itself
    expect(depths(f, 'g')).toEqual({ g: '0', c: '1', p: '2' });

    f.setParent('p', 'root');
    expect(depths(f, 'g')).toEqual({ g: '0', c: '1', p: '2', root: '3' });
  });
});

describe('cycles', () => {
  it('a self-parent is a cycle of one', () => {
    const f = forest('a');
    const change = f.setParent('a', 'a');
    expect(change).toMatchObject({ changed: true, createdCycle: true, cycle: ['a'] });
    expect(f.inCycle('a')).toBe(true);
    expect(f.cycleOf('a')).toEqual(['a']);
    expect(f.cycleText('a')).toBe('a <- a');
    expect(f.ancestors('a')).toEqual([]);
    expect(f.descendants('a')).toEqual([]);
    expect(f.root('a')).toBeUndefined();
    expect(f.isAncestor('a', 'a')).toBe(false);
    expect(depths(f, 'a')).toEqual({ a: '0' });

    f.setParent('a', undefined);
    expect(f.inCycle('a')).toBe(false);
    expect(f.root('a')).toBe('a');
  });

  it('a cycle of two is reported identically on both members', () => {
    const f = forest('a -> b -> a');
    for (const ns of ['a', 'b']) {
      expect(f.inCycle(ns)).toBe(true);
      expect(f.cycleOf(ns)).toEqual(['a', 'b']);
      expect(f.cycleText(ns)).toBe('a <- b <- a');
    }
    expect(f.parent('b')).toBe('a');
  });

  it('a cycle of three starts at the smallest name and lists each parent before its child', () => {
    // c is the parent of a, a of b, b of c.
    const f = forest('c -> a -> b -> c');
    for (const ns of ['a', 'b', 'c']) expect(f.cycleText(ns)).toBe('a <- b <- c <- a');
    // The other orientation: a is the parent of c, c of b, b of a.
    const g = forest('a -> c -> b -> a');
    for (const ns of ['a', 'b', 'c']) expect(g.cycleText(ns)).toBe('a <- c <- b <- a');
  });

  it('walks stop safely and list every name once', () => {
    const f = forest('a -> b -> c -> a, b -> x -> y');
    expect(f.ancestors('a')).toEqual(['b', 'c']);
    expect(f.ancestry('a')).toEqual(['b', 'c', 'a']);
    expect(f.depth('a')).toBe(2);
    expect(f.descendants('a')).toEqual(['b', 'c', 'x', 'y']);
    expect(f.ancestors('y')).toEqual(['c', 'a', 'b', 'x']);
    expect(f.isAncestor('c', 'y')).toBe(true);
    expect(f.root('y')).toBeUndefined();
  });

  it('a namespace hanging below a cycle is not a member', () => {
    const f = forest('a -> b -> a, b -> d');
    expect(f.inCycle('d')).toBe(false);
    expect(f.cycleOf('d')).toBeUndefined();
    expect(f.cycleText('d')).toBeUndefined();
  });

  it('reports when a change closes a cycle, and only then', () => {
    const f = forest('a -> b -> c');
    const closing = f.setParent('a', 'c');
    expect(closing).toMatchObject({ changed: true, createdCycle: true, cycle: ['a', 'b', 'c'], formerCycle: undefined });
    const again = f.setParent('a', 'c');
    expect(again).toMatchObject({ changed: false, createdCycle: false, cycle: ['a', 'b', 'c'] });
  });

  it('is cleared on every member when broken, and the former members are reported', () => {
    const f = forest('a -> b -> c -> a');
    const change = f.setParent('b', undefined);
    expect(change).toMatchObject({ changed: true, createdCycle: false, cycle: undefined, formerCycle: ['a', 'b', 'c'] });
    for (const ns of ['a', 'b', 'c']) {
      expect(f.inCycle(ns)).toBe(false);
      expect(f.cycleText(ns)).toBeUndefined();
    }
    expect(forestText(f)).toBe('c -> a, b -> c');
    // The former members all hang below the moved namespace now.
    expect(f.subtreeAffectedBy(change)).toEqual(['b', 'a', 'c']);
  });

  it('moving a member into another cycle reports both', () => {
    const f = forest('a -> b -> a, x -> y -> x');
    const change = f.setParent('a', 'y');
    expect(change.formerCycle).toEqual(['a', 'b']);
    expect(change.cycle).toBeUndefined(); // a now hangs below the x/y cycle
    expect(f.inCycle('b')).toBe(false);
    expect(f.cycleText('x')).toBe('x <- y <- x');
  });

  it('removing a member breaks the cycle and orphans its child', () => {
    const f = forest('a -> b -> c -> a');
    const removal = f.remove('a');
    expect(removal).toMatchObject({ existed: true, oldParent: 'c', orphans: ['b'], formerCycle: ['a', 'b', 'c'] });
    expect(f.inCycle('b')).toBe(false);
    expect(f.parentMissing('b')).toBe(true);
    expect(f.ancestors('c')).toEqual(['a', 'b']);
    expect(f.root('c')).toBe('a'); // a missing root
  });

  it('a removed self-parent is forgotten', () => {
    const f = forest('a -> a');
    expect(f.remove('a')).toMatchObject({ existed: true, oldParent: 'a', orphans: [], formerCycle: ['a'] });
    expect(f.has('a')).toBe(false);
  });
});

describe('wouldCreateCycle', () => {
  const f = forest('a -> b -> c, a -> d, x');

  it('returns the ancestry from the proposed parent up to the namespace', () => {
    expect(f.wouldCreateCycle('a', 'c')).toEqual(['c', 'b', 'a']);
    expect(f.wouldCreateCycle('b', 'c')).toEqual(['c', 'b']);
    expect(f.wouldCreateCycle('a', 'c')?.join(' -> ')).toBe('c -> b -> a');
  });

  it('flags a self-parent', () => {
    expect(f.wouldCreateCycle('a', 'a')).toEqual(['a']);
  });

  it('allows acyclic changes and does not modify the forest', () => {
    expect(f.wouldCreateCycle('c', 'd')).toBeUndefined();
    expect(f.wouldCreateCycle('a', 'x')).toBeUndefined();
    expect(f.wouldCreateCycle('x', 'new')).toBeUndefined();
    expect(f.wouldCreateCycle('b', undefined)).toBeUndefined();
    expect(f.wouldCreateCycle('b', '')).toBeUndefined();
    expect(forestText(f)).toBe('a -> b, b -> c, a -> d, x');
  });

  it('terminates when the proposed parent sits below an existing cycle', () => {
    const g = forest('p -> q -> p, q -> r, s');
    expect(g.wouldCreateCycle('s', 'r')).toBeUndefined();
    expect(g.wouldCreateCycle('p', 'r')).toEqual(['r', 'q', 'p']);
  });
});

describe('navigation', () => {
  const f = forest(`
    root -> mid -> leaf1
    mid -> leaf2
    root -> other
  `);

  it('ancestors are listed root first', () => {
    expect(f.ancestors('leaf1')).toEqual(['root', 'mid']);
    expect(f.ancestry('leaf1')).toEqual(['root', 'mid', 'leaf1']);
    expect(f.ancestors('root')).toEqual([]);
  });

  it('depth and root', () => {
    expect(f.depth('root')).toBe(0);
    expect(f.depth('mid')).toBe(1);
    expect(f.depth('leaf2')).toBe(2);
    expect(f.root('leaf2')).toBe('root');
    expect(f.root('root')).toBe('root');
  });

  it('isAncestor is proper and directional', () => {
    expect(f.isAncestor('root', 'leaf1')).toBe(true);
    expect(f.isAncestor('mid', 'leaf1')).toBe(true);
    expect(f.isAncestor('leaf1', 'root')).toBe(false);
    expect(f.isAncestor('other', 'leaf1')).toBe(false);
    expect(f.isAncestor('mid', 'mid')).toBe(false);
  });

  it('descendants and subtree', () => {
    expect(f.descendants('root')).toEqual(['leaf1', 'leaf2', 'mid', 'other']);
    expect(f.subtree('mid')).toEqual(['mid', 'leaf1', 'leaf2']);
    expect(f.descendants('leaf1')).toEqual([]);
  });

  it('listings do not depend on the order the forest was built in', () => {
    const g = new Forest();
    for (const [c, p] of [
      ['other', 'root'],
      ['leaf2', 'mid'],
      ['leaf1', 'mid'],
      ['mid', 'root'],
    ] as const)
      g.setParent(c, p);
    g.ensure('root');
    for (const ns of f.names()) {
      expect(g.children(ns)).toEqual(f.children(ns));
      expect(g.descendants(ns)).toEqual(f.descendants(ns));
      expect(g.ancestors(ns)).toEqual(f.ancestors(ns));
    }
    expect(forestText(g)).toBe(forestText(f));
  });

  it('node exposes the per-namespace record', () => {
    expect(f.node('mid')).toEqual({ name: 'mid', exists: true });
    expect(f.node('nope')).toBeUndefined();
  });
});

describe('tree labels', () => {
  it('one label per ancestor and self, valued by distance', () => {
    const f = forest('a -> b -> c');
    expect(f.treeLabels('c')).toEqual({
      [`c${TREE_LABEL_SUFFIX}`]: '0',
      [`b${TREE_LABEL_SUFFIX}`]: '1',
      [`a${TREE_LABEL_SUFFIX}`]: '2',
    });
    expect(depths(f, 'a')).toEqual({ a: '0' });
  });

  it('follow a moved subtree', () => {
    const f = forest('a -> b -> c -> d, a -> x -> y');
    expect(depths(f, 'd')).toEqual({ d: '0', c: '1', b: '2', a: '3' });
    const change = f.setParent('c', 'y');
    expect(f.subtreeAffectedBy(change)).toEqual(['c', 'd']);
    expect(depths(f, 'c')).toEqual({ c: '0', y: '1', x: '2', a: '3' });
    expect(depths(f, 'd')).toEqual({ d: '0', c: '1', y: '2', x: '3', a: '4' });
    expect(depths(f, 'b')).toEqual({ b: '0', a: '1' });
    f.setParent('c', undefined);
    expect(depths(f, 'd')).toEqual({ d: '0', c: '1' });
  });

  it('never express a cycle: members carry only their own label, namespaces below stop at the member', () => {
    const f = forest('a -> b -> c -> a, c -> d -> e');
    for (const ns of ['a', 'b', 'c']) expect(depths(f, ns)).toEqual({ [ns]: '0' });
    expect(depths(f, 'd')).toEqual({ d: '0', c: '1' });
    expect(depths(f, 'e')).toEqual({ e: '0', d: '1', c: '2' });
  });

  it('stop at an orphan and never name the missing parent', () => {
    const f = forest('gone? -> o -> k');
    expect(depths(f, 'o')).toEqual({ o: '0' });
    expect(depths(f, 'k')).toEqual({ k: '0', o: '1' });
  });

  it('stop after a namespace halted for other reasons', () => {
    const f = forest('a -> b -> c -> d');
    expect(depths(f, 'd', { isHalted: (ns) => ns === 'b' })).toEqual({ d: '0', c: '1', b: '2' });
  });

  it("copy an external root's labels shifted by its depth", () => {
    const f = forest('ext -> a -> b');
    const externalTreeLabels = (ns: string) => (ns === 'ext' ? { ext: 0, 'ext-parent': 1 } : undefined);
    expect(depths(f, 'b', { externalTreeLabels })).toEqual({ b: '0', a: '1', ext: '2', 'ext-parent': '3' });
  });
});

describe('10,000 namespaces', () => {
  // r -> 100 groups -> 9 teams each -> 10 apps each: 1 + 100 * (1 + 9 + 90) = 10,001 namespaces.
  function build(): Forest {
    const f = new Forest();
    f.ensure('r');
    for (let g = 0; g < 100; g++) {
      const group = `g${String(g).padStart(3, '0')}`;
      f.setParent(group, 'r');
      for (let t = 0; t < 9; t++) {
        f.setParent(`${group}-t${t}`, group);
        for (let a = 0; a < 10; a++) f.setParent(`${group}-t${t}-a${a}`, `${group}-t${t}`);
      }
    }
    return f;
  }

  function allLabels(f: Forest): Map<string, string> {
    return new Map(f.names().map((ns) => [ns, JSON.stringify(f.treeLabels(ns))]));
  }

  it('moving a subtree touches only the subtree and the two ancestries', () => {
    const f = build();
    expect(f.size).toBe(10_001);
    const before = allLabels(f);
    const oldAncestry = f.ancestry('g042'); // r, g042
    const newParent = 'g017-t3-a4';
    const newAncestry = f.ancestry(newParent);

    // setParent only walks the ancestries around the moved namespace.
    const move = f.trace(() => f.setParent('g042', newParent));
    expect(move.result).toMatchObject({ changed: true, createdCycle: false, oldParent: 'r' });
    const allowed = new Set([...oldAncestry, ...newAncestry]);
    expect([...move.visited].filter((ns) => !allowed.has(ns))).toEqual([]);
    expect(move.visits).toBeLessThan(20);

    // The affected set is exactly the moved subtree, found with one visit per member.
    const affected = f.trace(() => f.subtreeAffectedBy(move.result));
    expect(affected.result).toHaveLength(100);
    expect(affected.visits).toBe(100);
    expect(new Set(affected.visited)).toEqual(new Set(affected.result));

    // ...and it is exactly the set whose labels changed (checked by brute force, untraced).
    const after = allLabels(f);
    const changed = f.names().filter((ns) => before.get(ns) !== after.get(ns));
    expect(changed.sort()).toEqual([...affected.result].sort());

    // Relabelling the affected namespaces reads nothing outside them and the new ancestry.
    const relabel = f.trace(() => affected.result.map((ns) => f.treeLabels(ns)));
    const inScope = new Set([...affected.result, ...newAncestry]);
    expect([...relabel.visited].filter((ns) => !inScope.has(ns))).toEqual([]);
    expect(relabel.visits).toBeLessThan(100 * 2 * (f.depth('g042-t0-a0') + 1));
  });

  it('closing and breaking a cycle stays local too', () => {
    const f = build();
    const close = f.trace(() => f.setParent('g042', 'g042-t1-a1'));
    expect(close.result.cycle).toEqual(['g042', 'g042-t1', 'g042-t1-a1']);
    expect([...close.visited].every((ns) => ns === 'r' || ns.startsWith('g042'))).toBe(true);
    expect(close.visits).toBeLessThan(20);

    const brk = f.trace(() => f.setParent('g042', 'r'));
    expect(brk.result.formerCycle).toEqual(['g042', 'g042-t1', 'g042-t1-a1']);
    expect([...brk.visited].every((ns) => ns === 'r' || ns.startsWith('g042'))).toBe(true);
    expect(brk.visits).toBeLessThan(20);
    expect(f.stats.visits).toBeGreaterThan(0);
  });
});
