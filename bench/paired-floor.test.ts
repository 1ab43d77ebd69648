import { describe, expect, it } from 'vitest';
import { SelectorAnnotation } from '../core/api/constants.js';
import { shouldPropagate } from '../core/propagation/decide.js';
import { floorBody, median, pairPhase, summarizePairs, type PairedTrial } from './paired-floor.js';
import { contentMark } from './tracker.js';
import { SOURCE_KINDS, sourceBody } from './topology.js';

describe('floorBody', () => {
  it('is the source content, labelled for the floor watch, and propagates nowhere', () => {
    const like = {
      metadata: { name: 'x', labels: { bench: 'source' } },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
    };
    const b = floorBody('bench-floor-3', like) as { metadata: Record<string, unknown>; rules: unknown };
    expect(b.metadata).toEqual({ name: 'bench-floor-3', labels: { bench: 'floor' }, annotations: { [SelectorAnnotation.none]: 'true' } });
    expect(b.rules).toEqual((like as { rules: unknown }).rules);
    // The floor's objects in an inner namespace must not be copied below it: HNC writes nothing for them.
    const decision = shouldPropagate(b, {}, { group: 'rbac.authorization.k8s.io', kind: 'Role', mode: 'Propagate' });
    expect(decision.propagate).toBe(false);
  });
});

describe('pairPhase', () => {
  it('divides every copy, the per-namespace p50 and the p99 by the floor beside it', () => {
    const perNs = (n: number, scale: number) => Array.from({ length: n }, (_, i) => (i + 1) * scale);
    // 100 namespaces: the floor's n-th object lands at n ms, HNC's at 1.2 n ms.
    const p = pairPhase({ allMs: 120, perNamespaceMs: perNs(100, 1.2) }, { allMs: 100, perNamespaceMs: perNs(100, 1) });
    expect(p.hnc).toEqual({ allMs: 120, p50Ms: 60, p99Ms: 118.8, firstMs: 1.2 });
    expect(p.floor).toEqual({ allMs: 100, p50Ms: 50, p99Ms: 99, firstMs: 1 });
    expect(p.ratio).toBe(1.2);
    expect(p.p50Ratio).toBe(1.2);
    expect(p.p99Ratio).toBe(1.2);
    expect([p.ratioBefore, p.ratioAfter]).toEqual([1.2, 1.2]);
  });

  it('compares with the mean of the floor before and the floor after, and shows each apart', () => {
    const perNs = (n: number, scale: number) => Array.from({ length: n }, (_, i) => (i + 1) * scale);
    // The machine slowed down steadily: 100 ms before, 140 ms after; HNC in between took 132 ms.
    const p = pairPhase(
      { allMs: 132, perNamespaceMs: perNs(100, 1.32) },
      { allMs: 100, perNamespaceMs: perNs(100, 1) },
      { allMs: 140, perNamespaceMs: perNs(100, 1.4) },
    );
    expect(p.floor).toEqual({ allMs: 120, p50Ms: 60, p99Ms: 118.8, firstMs: 1.2 });
    expect(p.ratio).toBe(1.1);
    expect(p.p99Ratio).toBe(1.1);
    expect(p.ratioBefore).toBe(1.32);
    expect(p.ratioAfter).toBe(0.943);
  });
});

describe('summarizePairs', () => {
  const phase = (ratio: number, p99Ratio: number) => ({
    hnc: { allMs: ratio * 100, p50Ms: 0, p99Ms: 0, firstMs: 0 },
    floor: { allMs: 100, p50Ms: 0, p99Ms: 0, firstMs: 0 },
    ratio,
    p50Ratio: ratio,
    p99Ratio,
    ratioBefore: ratio + 0.05,
    ratioAfter: ratio - 0.05,
  });
  const trial = (c: number, d: number): PairedTrial => ({
    kind: 'roles',
    create: phase(c, c + 0.1),
    update: phase(c, c),
    delete: phase(d, d),
  });

  it('gives the median, the worst and the best trial of each ratio', () => {
    const trials = [trial(1.3, 1), trial(0.9, 2), trial(1.05, 3), trial(1.2, 4)];
    const s = summarizePairs(trials, 'create');
    expect(s.ratio).toEqual({ median: 1.125, p99: 1.3, min: 0.9 });
    expect(s.p99Ratio.median).toBe(1.225);
    expect(s.ratioBefore.median).toBe(1.175);
    expect(s.ratioAfter.median).toBe(1.075);
    expect(summarizePairs(trials, 'delete').ratio).toEqual({ median: 2.5, p99: 4, min: 1 });
  });

  it('takes the middle value of an odd count', () => {
    expect(median([1, 2, 10])).toBe(2);
    expect(median([])).toBeNaN();
  });
});

describe('an update trial', () => {
  it("changes, for every kind, the field the watches read back as the content's mark", () => {
    for (const kind of SOURCE_KINDS) {
      const before = contentMark(kind, sourceBody(kind, 'x'));
      const after = contentMark(kind, sourceBody(kind, 'x', true));
      expect(before, kind).not.toBe('');
      expect(after, kind).not.toBe(before);
      // The floor's objects carry the same content, so their mark moves the same way.
      expect(contentMark(kind, floorBody('f', sourceBody(kind, 'x', true)))).toBe(after);
    }
  });

  it('keeps what an update may not change (a RoleBinding copy is updated, not recreated)', () => {
    const a = sourceBody('rolebindings', 'x') as { roleRef: unknown };
    const b = sourceBody('rolebindings', 'x', true) as { roleRef: unknown };
    expect(b.roleRef).toEqual(a.roleRef);
  });
});
