import { describe, expect, it } from 'vitest';
import { buildTopology, coldState, descendants, expectedState, minimumWrites, placeSources, TOPOLOGIES } from './topology.js';

describe('buildTopology', () => {
  it.each(TOPOLOGIES)(
    '%s: one root, parents before children, the move subtree and inner namespaces inside, the same every time',
    (name) => {
      const t = buildTopology(name, { size: 300, moveSize: 20, maxChain: 1000 });
      expect(buildTopology(name, { size: 300, moveSize: 20, maxChain: 1000 })).toEqual(t);
      expect(new Set(t.namespaces).size).toBe(t.namespaces.length);
      // full fits the largest K with 1 + K + K² in the body; the others use it all.
      if (name === 'full') expect(t.namespaces.length).toBeLessThanOrEqual(300);
      else expect(t.namespaces.length).toBe(300);
      const seen = new Set<string>();
      for (const ns of t.namespaces) {
        const p = t.parent.get(ns);
        if (p === undefined) expect(ns).toBe(t.root);
        else expect(seen.has(p), `${ns}'s parent ${p} comes first`).toBe(true);
        seen.add(ns);
      }
      expect(t.moveSize).toBe(20);
      expect(1 + descendants(t.parent, t.moveRoot).length).toBe(20);
      expect(t.moveParents[0]).toBe(t.root);
      expect(descendants(t.parent, t.moveRoot)).not.toContain(t.moveParents[1]);
      for (const ns of t.innerSourceNamespaces) expect(t.parent.get(ns)).toBeDefined();
    },
  );
});

describe('minimumWrites', () => {
  it('of a cold start: a label patch per namespace, a status per parent, a create per copy', () => {
    const t = buildTopology('wide', { size: 10, moveSize: 3, maxChain: 1000 });
    const sources = placeSources(t, 2, 1);
    const to = expectedState(t.parent, sources);
    const m = minimumWrites(coldState(t.parent), to);
    expect(m.namespaces).toBe(10);
    // Namespaces with children: the root, the move subtree's root and its one child (3 = root, child, grandchild).
    expect(m.hierarchyconfigurations).toBe(3);
    // Two root sources to 9 descendants, one inner source (the move root's) to its 2 children.
    expect(m.copies.roles + m.copies.rolebindings + m.copies.networkpolicies).toBe(2 * 9 + 2);
    expect(m.total).toBe(10 + 3 + 20);
  });

  it('of an object in and out again: one create and one delete per descendant', () => {
    const t = buildTopology('org', { size: 100, moveSize: 10, maxChain: 1000 });
    const sources = placeSources(t, 1, 0);
    const grown = expectedState(t.parent, [...sources, { kind: 'roles', namespace: t.root, name: 'new' }]);
    const before = expectedState(t.parent, sources);
    const D = descendants(t.parent, t.root).length;
    expect(minimumWrites(before, grown)).toMatchObject({ namespaces: 0, hierarchyconfigurations: 0, total: D });
    expect(minimumWrites(grown, before).total).toBe(D);
  });
});
