import { describe, expect, it } from 'vitest';
import { forestText } from '../forest/dsl.js';
import { anchorKey } from './hierarchy.js';
import { namespaceConditions } from './plan.js';
import { HierarchyPolicy } from './policy.js';
import {
  annotationsOf,
  hcFacts,
  hierarchy,
  kvs,
  labelsOf,
  nsFacts,
  sorted,
  tree,
  updateAnchor,
  updateHierarchy,
  updateNamespace,
} from './testing.js';

const INCLUDED = { 'hnc.x-k8s.io/included-namespace': 'true' };
const halted = (reason: string, message: string) => ({ type: 'ActivitiesHalted', reason, message });
const bad = (reason: string, message: string) => ({ type: 'BadConfiguration', reason, message });
const ancestorHalted = (ns: string, root: string) =>
  halted(
    'AncestorHaltActivities',
    `Propagation paused in "${ns}" and its descendants due to ActivitiesHalted condition on ancestor "${root}"`,
  );

describe('the hierarchy DSL', () => {
  it('gives every name a blank Namespace and an HC naming its parent', () => {
    const h = hierarchy('a -> b -> c, d');
    expect(h.namespaceNames().sort()).toEqual(['a', 'b', 'c', 'd']);
    expect(h.namespace('b')).toEqual({ labels: {}, annotations: {}, deleting: false });
    expect(h.hierarchy('a')).toEqual(hcFacts());
    expect(h.hierarchy('c')).toEqual(hcFacts({ parent: 'b' }));
    expect(forestText(h.forest)).toBe('a -> b, b -> c, d');
    expect(h.anchorKeys()).toEqual([]);
  });

  it('leaves missing names without a Namespace or HC', () => {
    const h = hierarchy('gone? -> b');
    expect(h.namespace('gone')).toBeUndefined();
    expect(h.hierarchy('gone')).toBeUndefined();
    expect(forestText(h.forest)).toBe('gone? -> b');
  });

  it('makes subnamespaces: annotated with their parent and anchored in it', () => {
    const h = hierarchy('a -> b -> c', { subns: ['b'] });
    expect(h.namespace('b')?.annotations).toEqual({ 'hnc.x-k8s.io/subnamespace-of': 'a' });
    expect(h.namespace('c')?.annotations).toEqual({});
    expect(h.anchorKeys()).toEqual(['a/b']);
    expect(h.anchor('a', 'b')).toEqual({ labels: [], annotations: [], deleting: false });
    expect(h.subnamespaceOf('b')).toBe('a');
    expect(h.subnamespaceOf('c')).toBeUndefined();
  });

  it('takes a policy or its options', () => {
    const p = new HierarchyPolicy({ managedLabels: ['team'] });
    expect(hierarchy('a', { policy: p }).policy).toBe(p);
    expect(hierarchy('a', { policy: { managedLabels: ['team'] } }).policy.isManagedLabel('team')).toBe(true);
  });

  it.each([
    ['a -> b', ['a'], /subnamespace "a" must exist and have an existing parent/],
    ['gone? -> b', ['b'], /subnamespace "b"/],
    ['a', ['x'], /subnamespace "x"/],
  ])('refuses %j with subns %j', (text, subns, error) => {
    expect(() => hierarchy(text, { subns })).toThrow(error);
  });

  it('throws on forest notation errors', () => {
    expect(() => hierarchy('a -> c, b -> c')).toThrow(/two parents/);
  });
});

describe('tree labels (docs/behaviour.md §3.4)', () => {
  it('gives each namespace one label per ancestor, itself at depth 0', () => {
    const h = hierarchy('a -> b -> c');
    expect(labelsOf(h, 'c')).toEqual({
      'hnc.x-k8s.io/included-namespace': 'true',
      'a.tree.hnc.x-k8s.io/depth': '2',
      'b.tree.hnc.x-k8s.io/depth': '1',
      'c.tree.hnc.x-k8s.io/depth': '0',
    });
    expect(labelsOf(h, 'a')).toEqual({ ...INCLUDED, ...tree({ a: 0 }) });
    expect(h.treeLabels('b')).toEqual(tree({ a: 1, b: 0 }));
  });

  it('replaces stale tree labels and keeps unrelated labels', () => {
    const h = hierarchy('a -> b');
    updateNamespace(h, 'b', { labels: { ...tree({ old: 1, b: 3 }), app: 'web', 'hnc.x-k8s.io/included-namespace': 'false' } });
    expect(labelsOf(h, 'b')).toEqual({ ...INCLUDED, ...tree({ a: 1, b: 0 }), app: 'web' });
  });

  it('relabels a moved subtree, and reports old parent, new parent and the whole subtree', () => {
    const h = hierarchy('a -> b -> c -> d, x -> y');
    expect(labelsOf(h, 'd')).toEqual({ ...INCLUDED, ...tree({ a: 3, b: 2, c: 1, d: 0 }) });

    const affected = updateHierarchy(h, 'c', { parent: 'y' });

    expect(sorted(affected)).toEqual({ namespaces: ['b', 'c', 'd', 'y'], anchors: [] });
    expect(forestText(h.forest)).toBe('a -> b, y -> c, c -> d, x -> y');
    expect(labelsOf(h, 'c')).toEqual({ ...INCLUDED, ...tree({ x: 2, y: 1, c: 0 }) });
    expect(labelsOf(h, 'd')).toEqual({ ...INCLUDED, ...tree({ x: 3, y: 2, c: 1, d: 0 }) });
    expect(labelsOf(h, 'b')).toEqual({ ...INCLUDED, ...tree({ a: 1, b: 0 }) });
  });

  it('reports only the namespace itself when nothing inherited changed', () => {
    const h = hierarchy('a -> b -> c');
    expect(sorted(updateHierarchy(h, 'b', {}))).toEqual({ namespaces: ['b'], anchors: [] });
  });

  it('makes a namespace a root when its HC parent is cleared', () => {
    const h = hierarchy('a -> b -> c');
    const affected = updateHierarchy(h, 'b', { parent: '' });
    expect(sorted(affected).namespaces).toEqual(['a', 'b', 'c']);
    expect(h.forest.roots()).toEqual(['a', 'b']);
    expect(labelsOf(h, 'c')).toEqual({ ...INCLUDED, ...tree({ b: 1, c: 0 }) });
  });
});

describe('ParentMissing and AncestorHaltActivities (docs/behaviour.md §2.1, §3.2)', () => {
  it('halts an orphan and pauses its descendants', () => {
    const h = hierarchy('gone? -> b -> c -> d');
    expect(h.ownConditions('b')).toEqual([halted('ParentMissing', 'Parent "gone" does not exist')]);
    expect(h.isHalted('b')).toBe(true);
    expect(h.ownConditions('c')).toEqual([]);
    expect(h.isHalted('c')).toBe(false);
    expect(h.haltedAncestor('d')).toBe('b');
    expect(h.isHaltedOrBelowHalted('d')).toBe(true);
    expect(namespaceConditions(h, 'c')).toEqual([ancestorHalted('c', 'b')]);
    expect(namespaceConditions(h, 'd')).toEqual([
      halted('AncestorHaltActivities', 'Propagation paused in "d" and its descendants due to ActivitiesHalted condition on ancestor "b"'),
    ]);
    // Tree labels stop at the halted namespace: the orphan only carries its own.
    expect(labelsOf(h, 'b')).toEqual({ ...INCLUDED, ...tree({ b: 0 }) });
    expect(labelsOf(h, 'd')).toEqual({ ...INCLUDED, ...tree({ b: 2, c: 1, d: 0 }) });
  });

  it('answers from memory only until an input changes', () => {
    const h = hierarchy('gone? -> b -> c -> d');
    // Asked twice: the same (frozen, shared) answer.
    expect(h.ownConditions('b')).toBe(h.ownConditions('b'));
    expect(Object.isFrozen(h.treeLabels('d'))).toBe(true);
    expect(h.isHaltedOrBelowHalted('d')).toBe(true);
    h.setNamespace('gone', nsFacts());
    expect(h.ownConditions('b')).toEqual([]);
    expect(h.isHaltedOrBelowHalted('d')).toBe(false);
    expect(labelsOf(h, 'd')).toEqual({ ...INCLUDED, ...tree({ gone: 3, b: 2, c: 1, d: 0 }) });
    updateHierarchy(h, 'c', { parent: 'elsewhere' });
    expect(h.isHaltedOrBelowHalted('d')).toBe(true);
    expect(h.haltedAncestor('d')).toBe('c');
    // An unchanged object-conflict report keeps the memory; a new one refreshes it.
    const before = h.ownConditions('b');
    h.setObjectConflicts('b', 'roles', []);
    expect(h.ownConditions('b')).toBe(before);
    h.setObjectConflicts('b', 'roles', ['Role "x" (from "gone")']);
    expect(h.ownConditions('b').map((c) => c.type)).toEqual(['ObjectConflict']);
  });

  it('orphans the children of a deleted parent, reporting the whole orphaned subtrees', () => {
    const h = hierarchy('r -> a -> b -> c, a -> d');
    const affected = h.setNamespace('a', undefined);
    expect(sorted(affected)).toEqual({ namespaces: ['a', 'b', 'c', 'd', 'r'], anchors: [] });
    expect(forestText(h.forest)).toBe('a? -> b, b -> c, a? -> d, r');
    expect(h.ownConditions('b')).toEqual([halted('ParentMissing', 'Parent "a" does not exist')]);
    expect(h.ownConditions('d')).toEqual([halted('ParentMissing', 'Parent "a" does not exist')]);
    expect(namespaceConditions(h, 'c')).toEqual([ancestorHalted('c', 'b')]);
    expect(labelsOf(h, 'c')).toEqual({ ...INCLUDED, ...tree({ b: 1, c: 0 }) });
  });

  it('heals when the parent namespace reappears, reporting the orphan subtree', () => {
    const h = hierarchy('gone? -> b -> c -> d, x');
    const affected = h.setNamespace('gone', nsFacts());
    expect(sorted(affected)).toEqual({ namespaces: ['b', 'c', 'd', 'gone'], anchors: [] });
    expect(h.ownConditions('b')).toEqual([]);
    expect(namespaceConditions(h, 'd')).toEqual([]);
    expect(h.isHaltedOrBelowHalted('d')).toBe(false);
    expect(labelsOf(h, 'd')).toEqual({ ...INCLUDED, ...tree({ gone: 3, b: 2, c: 1, d: 0 }) });
  });

  it('heals when the orphan is made a root', () => {
    const h = hierarchy('gone? -> b -> c');
    const affected = updateHierarchy(h, 'b', { parent: undefined });
    expect(sorted(affected).namespaces).toEqual(['b', 'c', 'gone']); // gone: the old parent
    expect(h.forest.has('gone')).toBe(false);
    expect(namespaceConditions(h, 'c')).toEqual([]);
  });

  it('names the nearest halted ancestor', () => {
    const h = hierarchy('gone? -> a -> b, lost? -> c -> d');
    updateHierarchy(h, 'c', { parent: 'b' }); // c is no longer an orphan: below a, which is
    expect(h.ownConditions('c')).toEqual([]);
    expect(namespaceConditions(h, 'd')).toEqual([ancestorHalted('d', 'a')]);
    updateHierarchy(h, 'c', { parent: 'lost' });
    expect(namespaceConditions(h, 'd')).toEqual([ancestorHalted('d', 'c')]);
  });

  it('does not add AncestorHaltActivities to a namespace halted by itself', () => {
    const h = hierarchy('gone? -> b -> c -> d');
    h.setCrdsDeleting({ hierarchy: true, anchor: false });
    updateHierarchy(h, 'c', { deleting: true }); // c is halted itself, below halted b
    const deletingCrd = halted('DeletingCRD', 'The HierarchyConfiguration CRD is being deleted; all propagation is disabled.');
    expect(h.haltedAncestor('c')).toBe('b');
    expect(namespaceConditions(h, 'c')).toEqual([deletingCrd]);
    expect(namespaceConditions(h, 'd')).toEqual([ancestorHalted('d', 'c')]);
    expect(labelsOf(h, 'd')).toEqual({ ...INCLUDED, ...tree({ c: 1, d: 0 }) });
  });
});

describe('IllegalParent (docs/behaviour.md §2.1, §3.1)', () => {
  it('halts a namespace whose parent is excluded, and pauses its descendants', () => {
    const h = hierarchy('kube-system -> a -> b');
    expect(h.ownConditions('a')).toEqual([halted('IllegalParent', 'Parent "kube-system" is an unmanaged namespace')]);
    expect(namespaceConditions(h, 'b')).toEqual([ancestorHalted('b', 'a')]);
    expect(labelsOf(h, 'a')).toEqual({ ...INCLUDED, ...tree({ a: 0 }) });
    expect(labelsOf(h, 'b')).toEqual({ ...INCLUDED, ...tree({ a: 1, b: 0 }) });
    // The unmanaged namespace never enters the forest as existing, and is not labelled as included.
    expect(h.forest.exists('kube-system')).toBe(false);
    expect(h.ownConditions('kube-system')).toEqual([]);
    updateNamespace(h, 'kube-system', { labels: { ...INCLUDED, app: 'x' } });
    expect(labelsOf(h, 'kube-system')).toEqual({ app: 'x' });
  });

  it('reports IllegalParent rather than ParentMissing for a parent outside the included regex', () => {
    const h = hierarchy('team-a -> team-b', { policy: { includedNamespaceRegex: 'team-.*' } });
    updateHierarchy(h, 'team-b', { parent: 'other' });
    expect(h.ownConditions('team-b')).toEqual([halted('IllegalParent', 'Parent "other" is an unmanaged namespace')]);
  });
});

describe('InCycle (docs/behaviour.md §2.1, §3.2)', () => {
  const cycle = halted('InCycle', 'Namespace is a member of the cycle: a <- b <- c <- a');

  it('halts every member with the same cycle text, and pauses what hangs below', () => {
    const h = hierarchy('a -> b -> c -> a, c -> d');
    for (const ns of ['a', 'b', 'c']) {
      expect(h.ownConditions(ns)).toEqual([cycle]);
      expect(namespaceConditions(h, ns)).toEqual([cycle]);
      expect(labelsOf(h, ns)).toEqual({ ...INCLUDED, ...tree({ [ns]: 0 }) });
    }
    expect(namespaceConditions(h, 'd')).toEqual([ancestorHalted('d', 'c')]);
    expect(labelsOf(h, 'd')).toEqual({ ...INCLUDED, ...tree({ c: 1, d: 0 }) });
  });

  it('starts the text at the smallest name, each name the parent of the next', () => {
    const h = hierarchy('m -> z -> b -> m');
    expect(h.ownConditions('z')).toEqual([halted('InCycle', 'Namespace is a member of the cycle: b <- m <- z <- b')]);
    expect(hierarchy('s -> s').ownConditions('s')).toEqual([halted('InCycle', 'Namespace is a member of the cycle: s <- s')]);
  });

  it('reports all members when a cycle is closed, and clears it when broken', () => {
    const h = hierarchy('a -> b -> c -> d');
    const closed = updateHierarchy(h, 'a', { parent: 'c' });
    expect(sorted(closed).namespaces).toEqual(['a', 'b', 'c', 'd']);
    expect(h.ownConditions('b')).toEqual([cycle]);

    const broken = updateHierarchy(h, 'b', { parent: undefined });
    expect(sorted(broken).namespaces).toEqual(['a', 'b', 'c', 'd']);
    for (const ns of ['a', 'b', 'c', 'd']) expect(namespaceConditions(h, ns)).toEqual([]);
    expect(forestText(h.forest)).toBe('c -> a, b -> c, c -> d');
    expect(labelsOf(h, 'a')).toEqual({ ...INCLUDED, ...tree({ b: 2, c: 1, a: 0 }) });
  });

  it('reports the former members when a member is deleted', () => {
    const h = hierarchy('a -> b -> c -> a');
    const affected = h.setNamespace('b', undefined);
    expect(sorted(affected).namespaces).toEqual(['a', 'b', 'c']);
    expect(h.ownConditions('c')).toEqual([halted('ParentMissing', 'Parent "b" does not exist')]);
    expect(h.ownConditions('a')).toEqual([]);
    expect(namespaceConditions(h, 'a')).toEqual([ancestorHalted('a', 'c')]);
  });
});

describe('DeletingCRD (docs/behaviour.md §2.1, §3.7)', () => {
  const deleting = halted('DeletingCRD', 'The HierarchyConfiguration CRD is being deleted; all propagation is disabled.');

  it('halts namespaces whose HC is absent or being deleted while the HC CRD is deleted', () => {
    const h = hierarchy('a -> b -> c, x');
    const affected = h.setCrdsDeleting({ hierarchy: true, anchor: false });
    expect(sorted(affected)).toEqual({ namespaces: ['a', 'b', 'c', 'x'], anchors: [] });
    expect(h.hierarchyCrdDeleting).toBe(true);
    // An HC that is not (yet) being deleted keeps its namespace going.
    expect(h.ownConditions('a')).toEqual([]);

    expect(sorted(updateHierarchy(h, 'a', { deleting: true })).namespaces).toEqual(['a', 'b', 'c']);
    expect(h.ownConditions('a')).toEqual([deleting]);
    expect(namespaceConditions(h, 'c')).toEqual([ancestorHalted('c', 'a')]);
    h.setHierarchy('x', undefined);
    expect(h.ownConditions('x')).toEqual([deleting]);
  });

  it('is overwritten by a later ActivitiesHalted reason (one condition per type)', () => {
    const h = hierarchy('gone? -> b');
    h.setCrdsDeleting({ hierarchy: true, anchor: false });
    updateHierarchy(h, 'b', { deleting: true });
    expect(h.ownConditions('b')).toEqual([halted('ParentMissing', 'Parent "gone" does not exist')]);
  });

  it('reports nothing when the CRD state does not change', () => {
    const h = hierarchy('a -> b', { subns: ['b'] });
    expect(sorted(h.setCrdsDeleting({ hierarchy: false, anchor: false }))).toEqual({ namespaces: [], anchors: [] });
    expect(sorted(h.setCrdsDeleting({ hierarchy: false, anchor: true }))).toEqual({ namespaces: [], anchors: ['a/b'] });
    expect(h.anchorCrdDeleting).toBe(true);
  });
});

describe('subnamespaces (docs/behaviour.md §4)', () => {
  it('takes the parent from the subnamespace-of annotation, whatever the HC says', () => {
    const h = hierarchy('a -> b, x', { subns: ['b'] });
    updateHierarchy(h, 'b', { parent: 'x' });
    expect(h.effectiveParent('b')).toBe('a');
    expect(h.forest.parent('b')).toBe('a');
  });

  it('reports SubnamespaceAnchorMissing (without halting) when the anchor goes, and clears it when it returns', () => {
    const h = hierarchy('a -> b -> c', { subns: ['b'] });
    expect(h.ownConditions('b')).toEqual([]);

    const removed = h.setAnchor('a', 'b', undefined);
    expect(sorted(removed)).toEqual({ namespaces: ['a', 'b', 'c'], anchors: ['a/b'] });
    expect(h.ownConditions('b')).toEqual([bad('SubnamespaceAnchorMissing', 'The anchor is missing in the parent namespace')]);
    expect(h.isHalted('b')).toBe(false);
    expect(namespaceConditions(h, 'c')).toEqual([]);
    expect(labelsOf(h, 'c')).toEqual({ ...INCLUDED, ...tree({ a: 2, b: 1, c: 0 }) });

    updateAnchor(h, 'a', 'b');
    expect(h.ownConditions('b')).toEqual([]);
  });

  it('does not report a missing anchor for a namespace being deleted', () => {
    const h = hierarchy('a -> b', { subns: ['b'] });
    h.setAnchor('a', 'b', undefined);
    updateNamespace(h, 'b', { deleting: true });
    expect(h.ownConditions('b')).toEqual([]);
  });

  it('reports the anchors named like a namespace when it changes', () => {
    const h = hierarchy('a -> b', { subns: ['b'] });
    updateAnchor(h, 'x', 'b'); // a conflicting anchor elsewhere
    expect(sorted(updateNamespace(h, 'b', {}))).toEqual({ namespaces: ['b'], anchors: ['a/b', 'x/b'] });
    expect(h.anchorsIn('a')).toEqual(['b']);
    expect(anchorKey('a', 'b')).toBe('a/b');
  });

  it('lists anchors sorted and forgets removed ones', () => {
    const h = hierarchy('p');
    for (const c of ['z', 'm', 'a']) updateAnchor(h, 'p', c);
    expect(h.anchorsIn('p')).toEqual(['a', 'm', 'z']);
    expect(sorted(h.setAnchor('p', 'm', undefined))).toEqual({ namespaces: ['p'], anchors: ['p/m'] });
    expect(h.anchorKeys().sort()).toEqual(['p/a', 'p/z']);
    h.setAnchor('p', 'a', undefined);
    h.setAnchor('p', 'z', undefined);
    expect(h.anchorsIn('p')).toEqual([]);
    expect(h.anchorKeys()).toEqual([]);
  });

  it('allows cascading deletion if the namespace or any ancestor allows it', () => {
    const h = hierarchy('a -> b -> c -> d');
    expect(h.allowsCascadingDeletion('c')).toBe(false);
    const affected = updateHierarchy(h, 'b', { allowCascadingDeletion: true });
    expect(sorted(affected).namespaces).toEqual(['b', 'c', 'd']);
    expect(h.allowsCascadingDeletion('a')).toBe(false);
    expect(h.allowsCascadingDeletion('b')).toBe(true);
    expect(h.allowsCascadingDeletion('d')).toBe(true);
    expect(hierarchy('a -> b -> a').allowsCascadingDeletion('a')).toBe(false);
  });
});

describe('managed labels and annotations (docs/behaviour.md §3.5)', () => {
  const policy = { managedLabels: ['team', 'env'], managedAnnotations: ['note'] };

  it('inherits managed labels and annotations down the tree, the ancestor winning', () => {
    const h = hierarchy('a -> b -> c', { policy });
    updateHierarchy(h, 'a', { labels: kvs({ team: 'from-a' }), annotations: kvs({ note: 'a' }) });
    const affected = updateHierarchy(h, 'b', { labels: kvs({ team: 'from-b', env: 'prod' }), annotations: kvs({ note: 'b' }) });
    expect(sorted(affected).namespaces).toEqual(['b', 'c']);
    expect(labelsOf(h, 'c')).toEqual({ ...INCLUDED, ...tree({ a: 2, b: 1, c: 0 }), team: 'from-a', env: 'prod' });
    expect(labelsOf(h, 'b')).toEqual({ ...INCLUDED, ...tree({ a: 1, b: 0 }), team: 'from-a', env: 'prod' });
    expect(annotationsOf(h, 'c')).toEqual({ note: 'a' });
    expect(h.ownManaged('b', 'labels')).toEqual({ team: 'from-b', env: 'prod' });
    expect(h.inheritedManaged('c', 'labels')).toEqual({ team: 'from-a', env: 'prod' });
  });

  it('strips managed keys nobody provides, and keeps everything else', () => {
    const h = hierarchy('a -> b', { policy });
    updateHierarchy(h, 'a', { labels: kvs({ env: 'dev' }) });
    updateNamespace(h, 'b', { labels: { team: 'stale', env: 'wrong', app: 'web' }, annotations: { note: 'stale', other: 'kept' } });
    expect(labelsOf(h, 'b')).toEqual({ ...INCLUDED, ...tree({ a: 1, b: 0 }), env: 'dev', app: 'web' });
    expect(annotationsOf(h, 'b')).toEqual({ other: 'kept' });
  });

  it('ignores illegal keys and reports the last one as BadConfiguration', () => {
    const h = hierarchy('a -> b', { policy });
    updateHierarchy(h, 'a', { labels: kvs({ team: 't', bad: 'x', 'worse/key': 'y' }), annotations: kvs({ nope: 'z' }) });
    expect(h.ownConditions('a')).toEqual([
      bad('IllegalManagedAnnotation', 'Not a legal managed annotation (set via --managed-namespace-annotation): nope'),
    ]);
    updateHierarchy(h, 'a', { annotations: [] });
    expect(h.ownConditions('a')).toEqual([
      bad('IllegalManagedLabel', 'Not a legal managed label (set via --managed-namespace-label): worse/key'),
    ]);
    expect(h.isHalted('a')).toBe(false);
    expect(namespaceConditions(h, 'b')).toEqual([]);
    expect(labelsOf(h, 'b')).toEqual({ ...INCLUDED, ...tree({ a: 1, b: 0 }), team: 't' });
  });

  it('keeps the first set of a type in place and orders the types as HNC sets them', () => {
    const h = hierarchy('gone? -> b', { policy });
    updateHierarchy(h, 'b', { labels: kvs({ bad: 'x' }) });
    expect(h.ownConditions('b')).toEqual([
      halted('ParentMissing', 'Parent "gone" does not exist'),
      bad('IllegalManagedLabel', 'Not a legal managed label (set via --managed-namespace-label): bad'),
    ]);
  });

  it('stops inheriting at a halted ancestor', () => {
    const h = hierarchy('top -> a -> b -> c', { policy });
    updateHierarchy(h, 'top', { labels: kvs({ env: 'top' }) });
    updateHierarchy(h, 'b', { labels: kvs({ team: 'b' }) });
    expect(labelsOf(h, 'c')).toEqual({ ...INCLUDED, ...tree({ top: 3, a: 2, b: 1, c: 0 }), team: 'b', env: 'top' });
    h.setNamespace('a', undefined); // b is now an orphan
    expect(labelsOf(h, 'c')).toEqual({ ...INCLUDED, ...tree({ b: 1, c: 0 }), team: 'b' });
    expect(h.labelChain('c')).toEqual(['c', 'b']);
  });

  it('takes a subnamespace managed metadata from its anchor, not its HC', () => {
    const h = hierarchy('a -> b', { policy, subns: ['b'] });
    updateHierarchy(h, 'b', { labels: kvs({ team: 'hc' }) });
    const affected = updateAnchor(h, 'a', 'b', { labels: kvs({ team: 'anchor', bad: 'x' }), annotations: kvs({ note: 'n' }) });
    expect(sorted(affected)).toEqual({ namespaces: ['a', 'b'], anchors: ['a/b'] });
    expect(labelsOf(h, 'b')).toEqual({ ...INCLUDED, ...tree({ a: 1, b: 0 }), team: 'anchor' });
    expect(annotationsOf(h, 'b')).toEqual({ 'hnc.x-k8s.io/subnamespace-of': 'a', note: 'n' });
    expect(h.ownConditions('b')).toEqual([
      bad('IllegalManagedLabel', 'Not a legal managed label (set via --managed-namespace-label): bad'),
    ]);
    // With the anchor gone, the HC spec (which HNC copied from the anchor) is the source again.
    h.setAnchor('a', 'b', undefined);
    expect(labelsOf(h, 'b')).toEqual({ ...INCLUDED, ...tree({ a: 1, b: 0 }), team: 'hc' });
  });
});

describe('external namespaces (docs/behaviour.md §3.6)', () => {
  const policy = { managedLabels: ['team'] };
  const EXTERNAL = { 'hnc.x-k8s.io/managed-by': 'argocd' };
  const extLabels = { ...tree({ ext: 0, org: 1 }), team: 'platform', app: 'x' };

  const setup = () => {
    const h = hierarchy('p -> ext -> b -> c', { policy });
    updateNamespace(h, 'ext', { annotations: EXTERNAL, labels: extLabels });
    return h;
  };

  it('has no parent, whatever its HC says', () => {
    const h = setup();
    expect(h.isExternal('ext')).toBe(true);
    expect(h.effectiveParent('ext')).toBeUndefined();
    expect(h.forest.parent('ext')).toBeUndefined();
    expect(h.forest.children('p')).toEqual([]);
    expect(h.ownConditions('ext')).toEqual([]);
  });

  it('keeps its own labels, only making sure of its depth-0 label', () => {
    const h = setup();
    expect(labelsOf(h, 'ext')).toEqual({ ...INCLUDED, ...extLabels });
    updateNamespace(h, 'ext', { labels: { team: 'platform' } });
    expect(labelsOf(h, 'ext')).toEqual({ ...INCLUDED, ...tree({ ext: 0 }), team: 'platform' });
    expect(h.ownManaged('ext', 'labels')).toEqual({ team: 'platform' });
  });

  it('carries its own tree labels, which its children get shifted by one', () => {
    const h = setup();
    expect(h.treeLabels('ext')).toEqual(tree({ ext: 0, org: 1 }));
    expect(h.treeLabels('b')).toEqual(tree({ b: 0, ext: 1, org: 2 }));
  });

  it('hands its tree labels (shifted) and managed labels down to its descendants', () => {
    const h = setup();
    expect(labelsOf(h, 'b')).toEqual({ ...INCLUDED, ...tree({ org: 2, ext: 1, b: 0 }), team: 'platform' });
    expect(labelsOf(h, 'c')).toEqual({ ...INCLUDED, ...tree({ org: 3, ext: 2, b: 1, c: 0 }), team: 'platform' });
  });

  it('relabels its subtree when it turns external, changes labels, or turns back', () => {
    const h = hierarchy('p -> ext -> b -> c', { policy });
    expect(sorted(updateNamespace(h, 'ext', { annotations: EXTERNAL, labels: extLabels })).namespaces).toEqual(['b', 'c', 'ext', 'p']);
    expect(sorted(updateNamespace(h, 'ext', { labels: { ...extLabels, team: 'other' } })).namespaces).toEqual(['b', 'c', 'ext']);
    expect(sorted(updateNamespace(h, 'ext', { annotations: {} })).namespaces).toEqual(['b', 'c', 'ext', 'p']);
    expect(h.forest.parent('ext')).toBe('p');
    expect(labelsOf(h, 'c')).toEqual({ ...INCLUDED, ...tree({ p: 3, ext: 2, b: 1, c: 0 }) });
  });

  it('lists the external namespaces, sorted, as they turn external, turn back or go', () => {
    const h = hierarchy('p -> ext -> b -> c', { policy });
    expect(h.externalNamespaces()).toEqual([]);
    updateNamespace(h, 'ext', { annotations: EXTERNAL });
    updateNamespace(h, 'b', { annotations: EXTERNAL });
    expect(h.externalNamespaces()).toEqual(['b', 'ext']);
    updateNamespace(h, 'ext', { annotations: { 'hnc.x-k8s.io/managed-by': 'hnc.x-k8s.io' } });
    expect(h.externalNamespaces()).toEqual(['b']);
    h.setNamespace('b', undefined);
    expect(h.externalNamespaces()).toEqual([]);
  });

  it('is not external when managed by HNC itself or by nobody', () => {
    const h = hierarchy('a', { policy });
    updateNamespace(h, 'a', { annotations: { 'hnc.x-k8s.io/managed-by': 'hnc.x-k8s.io' } });
    expect(h.isExternal('a')).toBe(false);
    updateNamespace(h, 'a', { annotations: { 'hnc.x-k8s.io/managed-by': '' } });
    expect(h.isExternal('a')).toBe(false);
  });

  it('is never a subnamespace', () => {
    const h = hierarchy('a -> ext', { subns: ['ext'] });
    updateNamespace(h, 'ext', { annotations: { ...EXTERNAL, 'hnc.x-k8s.io/subnamespace-of': 'a' } });
    expect(h.subnamespaceOf('ext')).toBeUndefined();
    expect(h.effectiveParent('ext')).toBeUndefined();
  });
});
