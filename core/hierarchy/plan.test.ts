import { describe, expect, it } from 'vitest';
import type { Condition, HierarchyConfiguration, SubnamespaceAnchor } from '../api/types.js';
import type { Hierarchy } from './hierarchy.js';
import {
  conditionEvents,
  desiredAnchor,
  desiredNamespaceMetadata,
  metadataPatch,
  newSubnamespaceMetadata,
  planAnchor,
  planHierarchy,
  type HierarchyAction,
  type Metadata,
} from './plan.js';
import { hierarchy, kvs, metadataOf, nsFacts, tree, updateAnchor, updateHierarchy, updateNamespace } from './testing.js';

const NOW = '2025-06-01T12:00:00Z';
const LATER = '2025-06-01T13:00:00Z';
const T0 = '2025-01-01T00:00:00Z';
const INCLUDED = { 'hnc.x-k8s.io/included-namespace': 'true' };
const HAS_SUBNS = 'hnc.x-k8s.io/hasSubnamespace';
const SUBNS_OF = 'hnc.x-k8s.io/subnamespace-of';

/** An HC object as the API server would hold it. */
function hc(
  ns: string,
  rest: Omit<Partial<HierarchyConfiguration>, 'metadata'> & { finalizers?: string[]; deletionTimestamp?: string } = {},
): HierarchyConfiguration {
  const { finalizers, deletionTimestamp, ...body } = rest;
  return {
    apiVersion: 'hnc.x-k8s.io/v1alpha2',
    kind: 'HierarchyConfiguration',
    metadata: { name: 'hierarchy', namespace: ns, ...(finalizers && { finalizers }), ...(deletionTimestamp && { deletionTimestamp }) },
    ...body,
  };
}

/** The object a create or update plan writes. */
function written(action: HierarchyAction): HierarchyConfiguration {
  if (action.action === 'none') throw new Error('expected a write, got none');
  return action.object;
}

/** Plans from nothing, writes, and plans again: returns the settled object (or undefined). */
function settle(h: Hierarchy, ns: string, current?: HierarchyConfiguration): HierarchyConfiguration | undefined {
  const first = planHierarchy(h, ns, current, NOW);
  const settled = first.action === 'none' ? current : first.object;
  expect(planHierarchy(h, ns, settled, LATER)).toEqual({ action: 'none' });
  return settled;
}

const cond = (type: string, reason: string, message: string, lastTransitionTime: string): Condition => ({
  type,
  status: 'True',
  reason,
  message,
  lastTransitionTime,
});
const parentMissing = (p: string, at: string) => cond('ActivitiesHalted', 'ParentMissing', `Parent "${p}" does not exist`, at);

describe('planHierarchy (docs/behaviour.md §1.7, §3.3)', () => {
  it('writes no object for a plain root leaf', () => {
    const h = hierarchy('a');
    expect(planHierarchy(h, 'a', undefined, NOW)).toEqual({ action: 'none' });
  });

  it('does nothing for a namespace that does not exist', () => {
    const h = hierarchy('gone? -> b');
    expect(planHierarchy(h, 'gone', undefined, NOW)).toEqual({ action: 'none' });
    expect(planHierarchy(h, 'nope', hc('nope'), NOW)).toEqual({ action: 'none' });
  });

  it('creates the HC of a new subnamespace with its parent, and the parent HC with its children and finalizer', () => {
    const h = hierarchy('a -> b', { subns: ['b'] });
    expect(planHierarchy(h, 'b', undefined, NOW)).toEqual({
      action: 'create',
      object: {
        apiVersion: 'hnc.x-k8s.io/v1alpha2',
        kind: 'HierarchyConfiguration',
        metadata: { name: 'hierarchy', namespace: 'b' },
        spec: { parent: 'a' },
      },
    });
    expect(planHierarchy(h, 'a', undefined, NOW)).toEqual({
      action: 'create',
      object: {
        apiVersion: 'hnc.x-k8s.io/v1alpha2',
        kind: 'HierarchyConfiguration',
        metadata: { name: 'hierarchy', namespace: 'a', finalizers: [HAS_SUBNS] },
        spec: {},
        status: { children: ['b'] },
      },
    });
  });

  it('lists children sorted, full namespaces and subnamespaces alike, and adds the finalizer only for anchors', () => {
    const h = hierarchy('p -> z, p -> a, p -> m');
    const obj = written(planHierarchy(h, 'p', undefined, NOW));
    expect(obj.status).toEqual({ children: ['a', 'm', 'z'] });
    expect(obj.metadata.finalizers).toBeUndefined();

    updateAnchor(h, 'p', 'new');
    const withAnchor = written(planHierarchy(h, 'p', obj, NOW));
    expect(withAnchor.metadata.finalizers).toEqual([HAS_SUBNS]);
    expect(planHierarchy(h, 'p', withAnchor, NOW)).toEqual({ action: 'none' });

    h.setAnchor('p', 'new', undefined);
    expect(written(planHierarchy(h, 'p', withAnchor, NOW)).metadata.finalizers).toBeUndefined();
  });

  it('updates an existing HC whose children changed, and drops children when none are left', () => {
    const h = hierarchy('a -> b, c');
    const a = settle(h, 'a')!;
    expect(a.status?.children).toEqual(['b']);
    updateHierarchy(h, 'c', { parent: 'a' });
    expect(written(planHierarchy(h, 'a', a, NOW)).status).toEqual({ children: ['b', 'c'] });
    h.setNamespace('b', undefined);
    updateHierarchy(h, 'c', { parent: undefined });
    const emptied = written(planHierarchy(h, 'a', a, NOW));
    expect(emptied.status).toBeUndefined();
    expect(emptied.spec).toEqual({});
  });

  it('is idempotent: applying the plan and planning again does nothing', () => {
    const h = hierarchy('gone? -> o -> p, r -> s -> t, r -> u, c1 -> c2 -> c1, kube-system -> x', {
      subns: ['s', 'u'],
      policy: { managedLabels: ['team'], managedAnnotations: ['note'] },
    });
    updateAnchor(h, 'r', 's', { labels: kvs({ team: 'a', bad: 'b' }), annotations: kvs({ note: 'n' }) });
    updateHierarchy(h, 'r', { allowCascadingDeletion: true, labels: kvs({ team: 'r' }) });
    h.setAnchor('r', 'u', undefined); // u: SubnamespaceAnchorMissing
    for (const ns of h.namespaceNames()) {
      // From nothing, and from an HC object holding what the facts say.
      settle(h, ns);
      const facts = h.hierarchy(ns)!;
      settle(h, ns, hc(ns, { spec: { ...(facts.parent && { parent: facts.parent }) } }));
    }
  });

  it('stamps new conditions with now (AncestorHaltActivities too) and keeps the time of unchanged ones', () => {
    const h = hierarchy('gone? -> b -> c');
    const b = written(planHierarchy(h, 'b', hc('b', { spec: { parent: 'gone' } }), NOW));
    expect(b.status).toEqual({ conditions: [parentMissing('gone', NOW)], children: ['c'] });

    const c = written(planHierarchy(h, 'c', hc('c', { spec: { parent: 'b' } }), NOW));
    expect(c.status?.conditions).toEqual([
      cond(
        'ActivitiesHalted',
        'AncestorHaltActivities',
        'Propagation paused in "c" and its descendants due to ActivitiesHalted condition on ancestor "b"',
        NOW,
      ),
    ]);
    // Unchanged, it keeps the time it became true: nothing is rewritten.
    expect(
      planHierarchy(h, 'c', { ...c, status: { conditions: c.status!.conditions!.map((x) => ({ ...x, lastTransitionTime: T0 })) } }, LATER),
    ).toEqual({
      action: 'none',
    });

    // Unchanged: the old time stays, so nothing is written.
    const old = hc('b', { spec: { parent: 'gone' }, status: { children: ['c'], conditions: [parentMissing('gone', T0)] } });
    expect(planHierarchy(h, 'b', old, NOW)).toEqual({ action: 'none' });

    // A different message is a new condition.
    updateHierarchy(h, 'b', { parent: 'lost' });
    const moved = written(planHierarchy(h, 'b', { ...old, spec: { parent: 'lost' } }, NOW));
    expect(moved.status?.conditions).toEqual([parentMissing('lost', NOW)]);
  });

  it('clears conditions whose cause is gone', () => {
    const h = hierarchy('gone? -> b -> c');
    const b = settle(h, 'b', hc('b', { spec: { parent: 'gone' } }))!;
    const c = settle(h, 'c', hc('c', { spec: { parent: 'b' } }))!;
    h.setNamespace('gone', nsFacts());
    expect(written(planHierarchy(h, 'b', b, NOW)).status).toEqual({ children: ['c'] });
    expect(written(planHierarchy(h, 'c', c, NOW)).status).toBeUndefined();
  });

  it('writes the InCycle condition into every member', () => {
    const h = hierarchy('a -> b -> a');
    for (const ns of ['a', 'b']) {
      const obj = written(planHierarchy(h, ns, hc(ns, { spec: { parent: ns === 'a' ? 'b' : 'a' } }), NOW));
      expect(obj.status?.conditions).toEqual([cond('ActivitiesHalted', 'InCycle', 'Namespace is a member of the cycle: a <- b <- a', NOW)]);
    }
  });

  it('writes SubnamespaceAnchorMissing and keeps the parent from the annotation', () => {
    const h = hierarchy('a -> b, x', { subns: ['b'] });
    h.setAnchor('a', 'b', undefined);
    const obj = written(planHierarchy(h, 'b', hc('b', { spec: { parent: 'x' } }), NOW));
    expect(obj.spec).toEqual({ parent: 'a' });
    expect(obj.status).toEqual({
      conditions: [cond('BadConfiguration', 'SubnamespaceAnchorMissing', 'The anchor is missing in the parent namespace', NOW)],
    });
  });

  it("copies a subnamespace's managed metadata from its anchor into its HC spec", () => {
    const h = hierarchy('a -> b', { subns: ['b'], policy: { managedLabels: ['team'] } });
    updateAnchor(h, 'a', 'b', { labels: kvs({ team: 't' }), annotations: kvs({ note: 'n' }) });
    const obj = written(planHierarchy(h, 'b', hc('b', { spec: { parent: 'a', labels: kvs({ team: 'old' }) } }), NOW));
    expect(obj.spec).toEqual({ parent: 'a', labels: [{ key: 'team', value: 't' }], annotations: [{ key: 'note', value: 'n' }] });
    expect(obj.status?.conditions).toEqual([
      cond(
        'BadConfiguration',
        'IllegalManagedAnnotation',
        'Not a legal managed annotation (set via --managed-namespace-annotation): note',
        NOW,
      ),
    ]);
    updateAnchor(h, 'a', 'b', { labels: [], annotations: [] });
    expect(written(planHierarchy(h, 'b', obj, NOW)).spec).toEqual({ parent: 'a' });
  });

  it('releases the finalizer and forgets children of an unmanaged namespace, leaving the rest', () => {
    const h = hierarchy('kube-system');
    const stale = hc('kube-system', {
      finalizers: [HAS_SUBNS],
      spec: { parent: 'a' },
      status: { children: ['x'], conditions: [parentMissing('a', T0)] },
    });
    expect(planHierarchy(h, 'kube-system', stale, NOW)).toEqual({
      action: 'update',
      object: hc('kube-system', { spec: { parent: 'a' }, status: { conditions: [parentMissing('a', T0)] } }),
    });
    expect(planHierarchy(h, 'kube-system', undefined, NOW)).toEqual({ action: 'none' });
    expect(planHierarchy(h, 'kube-system', hc('kube-system', { spec: { parent: 'a' } }), NOW)).toEqual({ action: 'none' });
  });

  it('lets a user delete an HC (releasing the finalizer) unless its namespace is being deleted with anchors in it', () => {
    const h = hierarchy('a -> b', { subns: ['b'] });
    const deleting = hc('a', { finalizers: [HAS_SUBNS], deletionTimestamp: T0, status: { children: ['b'] } });
    updateHierarchy(h, 'a', { deleting: true });
    expect(written(planHierarchy(h, 'a', deleting, NOW)).metadata.finalizers).toBeUndefined();

    updateNamespace(h, 'a', { deleting: true });
    expect(planHierarchy(h, 'a', deleting, NOW)).toEqual({ action: 'none' });

    h.setAnchor('a', 'b', undefined);
    expect(written(planHierarchy(h, 'a', deleting, NOW)).metadata.finalizers).toBeUndefined();
  });

  it('releases the finalizer of a namespace being deleted once its anchors have released theirs', () => {
    const h = hierarchy('a -> b', { subns: ['b'] });
    const current = hc('a', { finalizers: [HAS_SUBNS], status: { children: ['b'] } });
    expect(planHierarchy(h, 'a', current, NOW)).toEqual({ action: 'none' });
    updateAnchor(h, 'a', 'b', { finalizer: false }); // not yet reconciled: still needed
    expect(planHierarchy(h, 'a', current, NOW)).toEqual({ action: 'none' });
    updateNamespace(h, 'a', { deleting: true });
    expect(written(planHierarchy(h, 'a', current, NOW)).metadata.finalizers).toBeUndefined();
    updateAnchor(h, 'a', 'b', { finalizer: true });
    expect(planHierarchy(h, 'a', current, NOW)).toEqual({ action: 'none' });
  });

  it('keeps the status of an HC being deleted with its namespace up to date', () => {
    const h = hierarchy('a -> b, a -> c', { subns: ['b', 'c'] });
    updateNamespace(h, 'a', { deleting: true });
    updateHierarchy(h, 'a', { deleting: true });
    const current = hc('a', { finalizers: [HAS_SUBNS], deletionTimestamp: T0, status: { children: ['b', 'c'] } });
    h.setAnchor('a', 'c', undefined);
    h.setNamespace('c', undefined);
    expect(planHierarchy(h, 'a', current, NOW)).toEqual({
      action: 'update',
      object: hc('a', { finalizers: [HAS_SUBNS], deletionTimestamp: T0, spec: {}, status: { children: ['b'] } }),
    });
  });

  it('creates nothing for a namespace being deleted, nor while the HC CRD is being deleted', () => {
    const h = hierarchy('a -> b', { subns: ['b'] });
    updateNamespace(h, 'b', { deleting: true });
    expect(planHierarchy(h, 'b', undefined, NOW)).toEqual({ action: 'none' });

    const h2 = hierarchy('a -> b', { subns: ['b'] });
    h2.setCrdsDeleting({ hierarchy: true, anchor: false });
    expect(planHierarchy(h2, 'a', undefined, NOW)).toEqual({ action: 'none' });
    expect(planHierarchy(h2, 'b', undefined, NOW)).toEqual({ action: 'none' });
  });

  it('reports DeletingCRD in an existing HC being deleted with its CRD, and releases its finalizer', () => {
    const h = hierarchy('a -> b', { subns: ['b'] });
    h.setCrdsDeleting({ hierarchy: true, anchor: false });
    updateHierarchy(h, 'a', { deleting: true });
    const current = hc('a', { finalizers: [HAS_SUBNS], deletionTimestamp: T0, status: { children: ['b'] } });
    const obj = written(planHierarchy(h, 'a', current, NOW));
    expect(obj.metadata.finalizers).toBeUndefined();
    expect(obj.status).toEqual({
      children: ['b'],
      conditions: [
        cond('ActivitiesHalted', 'DeletingCRD', 'The HierarchyConfiguration CRD is being deleted; all propagation is disabled.', NOW),
      ],
    });
    // An HC not (yet) marked for deletion does not keep the finalizer while the CRD goes.
    expect(
      written(planHierarchy(h, 'a', { ...current, metadata: { ...current.metadata, deletionTimestamp: undefined } }, NOW)).metadata
        .finalizers,
    ).toBeUndefined();
  });
});

describe('desiredNamespaceMetadata and metadataPatch (docs/behaviour.md §3.1, §3.4-§3.6)', () => {
  it('removes only the included-namespace label from an unmanaged namespace', () => {
    const h = hierarchy('kube-system');
    const current = { labels: { ...INCLUDED, ...tree({ x: 1 }), team: 'a' }, annotations: { [SUBNS_OF]: 'x' } };
    expect(desiredNamespaceMetadata(h, 'kube-system', current)).toEqual({
      labels: { ...tree({ x: 1 }), team: 'a' },
      annotations: { [SUBNS_OF]: 'x' },
    });
  });

  it('does not modify its input', () => {
    const h = hierarchy('a -> b');
    const current = { labels: { 'x.tree.hnc.x-k8s.io/depth': '4' }, annotations: {} };
    desiredNamespaceMetadata(h, 'b', current);
    expect(current).toEqual({ labels: { 'x.tree.hnc.x-k8s.io/depth': '4' }, annotations: {} });
  });

  it('patches only what differs: changed and new keys with their value, removed keys with null', () => {
    const current: Metadata = { labels: { keep: '1', change: 'old', drop: 'x' }, annotations: { same: 'y' } };
    const desired: Metadata = { labels: { keep: '1', change: 'new', add: 'z' }, annotations: { same: 'y' } };
    expect(metadataPatch(current, desired)).toEqual({ labels: { change: 'new', add: 'z', drop: null } });
    expect(metadataPatch(desired, desired)).toBeUndefined();
    expect(metadataPatch({ labels: {}, annotations: { a: '1' } }, { labels: {}, annotations: {} })).toEqual({ annotations: { a: null } });
    expect(metadataPatch({ labels: { a: '' }, annotations: {} }, { labels: { a: '' }, annotations: {} })).toBeUndefined();
  });

  it('removes a key named like a member of every object ("constructor", "toString": legal label keys)', () => {
    const current: Metadata = { labels: { constructor: 'x', keep: '1' }, annotations: { toString: 'y' } };
    const desired: Metadata = { labels: { keep: '1' }, annotations: {} };
    expect(metadataPatch(current, desired)).toEqual({ labels: { constructor: null }, annotations: { toString: null } });
    // The same through the policy: a managed label nobody provides goes.
    const h = hierarchy('a -> b', { policy: { managedLabels: ['constructor'] } });
    const meta = { labels: { constructor: 'stray' }, annotations: {} };
    expect(metadataPatch(meta, desiredNamespaceMetadata(h, 'b', meta))?.labels).toEqual(expect.objectContaining({ constructor: null }));
  });

  it('patches a namespace into shape once, and then not again', () => {
    const h = hierarchy('a -> b -> c', { policy: { managedLabels: ['team'] } });
    updateHierarchy(h, 'a', { labels: kvs({ team: 't' }) });
    updateNamespace(h, 'c', { labels: { app: 'web', team: 'wrong', ...tree({ c: 0, z: 1 }) } });
    const current = metadataOf(h, 'c');
    const desired = desiredNamespaceMetadata(h, 'c', current);
    expect(metadataPatch(current, desired)).toEqual({
      labels: {
        'hnc.x-k8s.io/included-namespace': 'true',
        'a.tree.hnc.x-k8s.io/depth': '2',
        'b.tree.hnc.x-k8s.io/depth': '1',
        team: 't',
        'z.tree.hnc.x-k8s.io/depth': null,
      },
    });
    updateNamespace(h, 'c', desired);
    expect(metadataPatch(metadataOf(h, 'c'), desiredNamespaceMetadata(h, 'c', metadataOf(h, 'c')))).toBeUndefined();
  });
});

describe('planAnchor (docs/behaviour.md §4)', () => {
  const policy = { managedLabels: ['team', 'env'], managedAnnotations: ['note'] };

  /** Creates the subnamespace an anchor asks for, as the anchor reconciler would. */
  function createFromPlan(h: Hierarchy, parent: string, child: string): Metadata {
    const plan = planAnchor(h, parent, child);
    expect(plan.state).toBe('Missing');
    expect(plan.create).toEqual(newSubnamespaceMetadata(h, parent, child));
    h.setNamespace(child, nsFacts(plan.create));
    return plan.create!;
  }

  it('asks to create a missing subnamespace, already labelled as it will be', () => {
    const h = hierarchy('a -> p', { policy });
    updateHierarchy(h, 'a', { labels: kvs({ env: 'prod', team: 'a' }), annotations: kvs({ note: 'from-a' }) });
    updateAnchor(h, 'p', 'new', { labels: kvs({ team: 'mine', bad: 'x' }), annotations: kvs({ note: 'mine', other: 'y' }) });
    expect(planAnchor(h, 'p', 'new')).toEqual({
      state: 'Missing',
      finalizer: true,
      deleteNamespace: false,
      create: {
        labels: {
          ...INCLUDED,
          'new.tree.hnc.x-k8s.io/depth': '0',
          'p.tree.hnc.x-k8s.io/depth': '1',
          'a.tree.hnc.x-k8s.io/depth': '2',
          team: 'a',
          env: 'prod',
        },
        annotations: { [SUBNS_OF]: 'p', note: 'from-a' },
      },
    });
  });

  it.each([
    ['a root', 'p', []],
    ['a deep chain with managed metadata', 'a -> b -> p', ['b']],
    ['an orphan', 'gone? -> p', []],
    ['below an orphan', 'gone? -> o -> p', []],
    ['a cycle member', 'p -> q -> p', []],
    ['below an illegal parent', 'kube-system -> o -> p', []],
  ])('needs no second write once created, in %s', (_what, text, subns) => {
    const h = hierarchy(text, { policy, subns });
    for (const ns of h.namespaceNames())
      updateHierarchy(h, ns, { labels: kvs({ team: ns, env: `${ns}-env` }), annotations: kvs({ note: ns }) });
    for (const s of subns) updateAnchor(h, h.forest.parent(s)!, s, { labels: kvs({ team: s }) });
    updateAnchor(h, 'p', 'new', { labels: kvs({ team: 'new', env: 'new' }), annotations: kvs({ note: 'new' }) });
    const created = createFromPlan(h, 'p', 'new');
    expect(desiredNamespaceMetadata(h, 'new', created)).toEqual(created);
    expect(metadataPatch(created, desiredNamespaceMetadata(h, 'new', created))).toBeUndefined();
    expect(planAnchor(h, 'p', 'new')).toEqual({ state: 'Ok', finalizer: true, deleteNamespace: false });
  });

  it('needs no second write below an external namespace', () => {
    const h = hierarchy('ext', { policy });
    updateNamespace(h, 'ext', {
      annotations: { 'hnc.x-k8s.io/managed-by': 'argocd' },
      labels: { ...tree({ ext: 0, org: 1 }), team: 'platform' },
    });
    updateAnchor(h, 'ext', 'new');
    const created = createFromPlan(h, 'ext', 'new');
    expect(created.labels).toEqual({ ...INCLUDED, ...tree({ new: 0, ext: 1, org: 2 }), team: 'platform' });
    expect(metadataPatch(created, desiredNamespaceMetadata(h, 'new', created))).toBeUndefined();
  });

  it('is Ok for its own subnamespace, and asks for nothing to be created', () => {
    const h = hierarchy('a -> b', { subns: ['b'] });
    expect(planAnchor(h, 'a', 'b')).toEqual({ state: 'Ok', finalizer: true, deleteNamespace: false });
  });

  it('is Conflict for a namespace that is not its subnamespace', () => {
    const h = hierarchy('a, b, x -> c', { subns: ['c'] });
    updateAnchor(h, 'a', 'b');
    updateAnchor(h, 'a', 'c');
    expect(planAnchor(h, 'a', 'b')).toEqual({ state: 'Conflict', finalizer: true, deleteNamespace: false });
    expect(planAnchor(h, 'a', 'c')).toEqual({ state: 'Conflict', finalizer: true, deleteNamespace: false });
  });

  it('is Forbidden, without a finalizer, when named after an unmanaged namespace', () => {
    const h = hierarchy('a');
    updateAnchor(h, 'a', 'kube-system');
    expect(planAnchor(h, 'a', 'kube-system')).toEqual({ state: 'Forbidden', finalizer: false, deleteNamespace: false });
  });

  it('is ignored (no state, no finalizer) in an unmanaged namespace, or when it does not exist', () => {
    const h = hierarchy('kube-system, a');
    updateAnchor(h, 'kube-system', 'b');
    expect(planAnchor(h, 'kube-system', 'b')).toEqual({ state: undefined, finalizer: false, deleteNamespace: false });
    expect(planAnchor(h, 'a', 'nothing')).toEqual({ state: undefined, finalizer: false, deleteNamespace: false });
  });

  describe('deletion', () => {
    it('deletes a childless subnamespace, keeping the finalizer until it is gone', () => {
      const h = hierarchy('a -> b', { subns: ['b'] });
      updateAnchor(h, 'a', 'b', { deleting: true });
      expect(planAnchor(h, 'a', 'b')).toEqual({ state: 'Ok', finalizer: true, deleteNamespace: true });
      updateNamespace(h, 'b', { deleting: true });
      expect(planAnchor(h, 'a', 'b')).toEqual({ state: 'Ok', finalizer: true, deleteNamespace: false });
      h.setNamespace('b', undefined);
      expect(planAnchor(h, 'a', 'b')).toEqual({ state: 'Missing', finalizer: false, deleteNamespace: false });
    });

    it('refuses to cascade into children unless allowCascadingDeletion is set on it or an ancestor', () => {
      const h = hierarchy('r -> a -> b -> c', { subns: ['b'] });
      updateAnchor(h, 'a', 'b', { deleting: true });
      expect(planAnchor(h, 'a', 'b')).toEqual({ state: 'Ok', finalizer: false, deleteNamespace: false });
      updateHierarchy(h, 'r', { allowCascadingDeletion: true });
      expect(planAnchor(h, 'a', 'b')).toEqual({ state: 'Ok', finalizer: true, deleteNamespace: true });
      updateHierarchy(h, 'r', { allowCascadingDeletion: false });
      updateHierarchy(h, 'b', { allowCascadingDeletion: true });
      expect(planAnchor(h, 'a', 'b')).toEqual({ state: 'Ok', finalizer: true, deleteNamespace: true });
      updateHierarchy(h, 'b', { allowCascadingDeletion: false });
      updateHierarchy(h, 'c', { allowCascadingDeletion: true }); // a descendant's setting does not count
      expect(planAnchor(h, 'a', 'b')).toEqual({ state: 'Ok', finalizer: false, deleteNamespace: false });
    });

    it('in a namespace being deleted, deletes its subnamespace and lets go at once, before it is itself deleted', () => {
      const h = hierarchy('r -> a -> b -> c', { subns: ['b', 'c'] });
      updateNamespace(h, 'a', { deleting: true });
      // b has a child: only with cascading deletion allowed above a (a has left r in the forest).
      expect(planAnchor(h, 'a', 'b')).toEqual({ state: 'Ok', finalizer: false, deleteNamespace: false });
      updateHierarchy(h, 'r', { allowCascadingDeletion: true });
      expect(h.forest.parent('a')).toBeUndefined();
      expect(planAnchor(h, 'a', 'b')).toEqual({ state: 'Ok', finalizer: false, deleteNamespace: true });
      updateNamespace(h, 'b', { deleting: true });
      expect(planAnchor(h, 'a', 'b')).toEqual({ state: 'Ok', finalizer: false, deleteNamespace: false });
      expect(planAnchor(h, 'b', 'c')).toEqual({ state: 'Ok', finalizer: false, deleteNamespace: true });
      // Nothing is created in a namespace on its way out.
      updateAnchor(h, 'a', 'new');
      expect(planAnchor(h, 'a', 'new')).toEqual({ state: 'Missing', finalizer: false, deleteNamespace: false });
    });

    it('leaves an anchor in Conflict alone when its namespace goes: nothing is re-created', () => {
      const h = hierarchy('a -> b', { subns: ['b'] });
      updateNamespace(h, 'b', { annotations: {} }); // detached: a full namespace now
      expect(planAnchor(h, 'a', 'b')).toEqual({ state: 'Conflict', finalizer: true, deleteNamespace: false });
      updateAnchor(h, 'a', 'b', { state: 'Conflict' });
      h.setNamespace('b', undefined);
      expect(planAnchor(h, 'a', 'b')).toEqual({ state: 'Conflict', finalizer: true, deleteNamespace: false });
      updateAnchor(h, 'a', 'b', { deleting: true });
      expect(planAnchor(h, 'a', 'b')).toEqual({ state: 'Conflict', finalizer: false, deleteNamespace: false });
      // An anchor that was Ok re-creates its namespace (HNC's repair of a deleted subnamespace).
      updateAnchor(h, 'a', 'b', { state: 'Ok', deleting: false });
      expect(planAnchor(h, 'a', 'b')).toMatchObject({ state: 'Missing', finalizer: true, create: expect.anything() });
    });

    it('never deletes a namespace a user grafted (made a subnamespace by its annotation)', () => {
      const h = hierarchy('a -> b', { subns: ['b'] });
      updateNamespace(h, 'b', { annotations: { [SUBNS_OF]: 'a', 'hnc.x-k8s.io/grafted-by': 'mallory' } });
      expect(planAnchor(h, 'a', 'b')).toEqual({ state: 'Ok', finalizer: true, deleteNamespace: false });
      updateAnchor(h, 'a', 'b', { deleting: true });
      expect(planAnchor(h, 'a', 'b')).toEqual({ state: 'Ok', finalizer: false, deleteNamespace: false });
      updateAnchor(h, 'a', 'b', { deleting: false });
      updateNamespace(h, 'a', { deleting: true });
      expect(planAnchor(h, 'a', 'b')).toEqual({ state: 'Ok', finalizer: false, deleteNamespace: false });
    });

    it('never deletes a namespace it does not own', () => {
      const h = hierarchy('a, b');
      updateAnchor(h, 'a', 'b', { deleting: true });
      expect(planAnchor(h, 'a', 'b')).toEqual({ state: 'Conflict', finalizer: false, deleteNamespace: false });
      updateAnchor(h, 'a', 'missing', { deleting: true });
      expect(planAnchor(h, 'a', 'missing')).toEqual({ state: 'Missing', finalizer: false, deleteNamespace: false });
    });

    it('releases every finalizer without deleting anything while the anchor CRD is being deleted', () => {
      const h = hierarchy('a -> b, a -> c', { subns: ['b', 'c'] });
      updateAnchor(h, 'a', 'b', { deleting: true });
      updateAnchor(h, 'a', 'new');
      h.setCrdsDeleting({ hierarchy: false, anchor: true });
      expect(planAnchor(h, 'a', 'b')).toEqual({ state: 'Ok', finalizer: false, deleteNamespace: false });
      expect(planAnchor(h, 'a', 'c')).toEqual({ state: 'Ok', finalizer: false, deleteNamespace: false });
      expect(planAnchor(h, 'a', 'new')).toEqual({ state: 'Missing', finalizer: false, deleteNamespace: false });
    });
  });
});

describe('desiredAnchor', () => {
  const FINALIZER = 'hnc.x-k8s.io';
  const anchor = (finalizers?: string[], status?: string): SubnamespaceAnchor => ({
    apiVersion: 'hnc.x-k8s.io/v1alpha2',
    kind: 'SubnamespaceAnchor',
    metadata: { name: 'c', namespace: 'p', resourceVersion: '7', ...(finalizers && { finalizers }) },
    ...(status && { status: { status } }),
  });
  const plan = (state: string | undefined, finalizer: boolean) =>
    ({ state, finalizer, deleteNamespace: false }) as Parameters<typeof desiredAnchor>[1];

  it('adds our finalizer and the state, keeping other finalizers and the resourceVersion', () => {
    expect(desiredAnchor(anchor(['other']), plan('Missing', true))).toEqual(anchor(['other', FINALIZER], 'Missing'));
  });

  it('reports Ok in the same write as the finalizer when the subnamespace was just created', () => {
    expect(desiredAnchor(anchor(), plan('Missing', true), true)).toEqual(anchor([FINALIZER], 'Ok'));
  });

  it('removes only our finalizer, and the field when it was the last', () => {
    expect(desiredAnchor(anchor([FINALIZER, 'other'], 'Ok'), plan('Ok', false))).toEqual(anchor(['other'], 'Ok'));
    expect(desiredAnchor(anchor([FINALIZER], 'Ok'), plan('Ok', false))?.metadata).not.toHaveProperty('finalizers');
  });

  it('leaves the status as it is when the plan has no state', () => {
    expect(desiredAnchor(anchor([FINALIZER], 'Conflict'), plan(undefined, false))).toEqual(anchor(undefined, 'Conflict'));
  });

  it('is undefined for an anchor that is already as it should be (never rewritten)', () => {
    expect(desiredAnchor(anchor([FINALIZER], 'Ok'), plan('Ok', true))).toBeUndefined();
    expect(desiredAnchor(anchor(undefined, 'Forbidden'), plan('Forbidden', false))).toBeUndefined();
    expect(desiredAnchor(anchor(), plan(undefined, false))).toBeUndefined();
  });

  it('does not change the cached object', () => {
    const current = anchor(['other']);
    desiredAnchor(current, plan('Ok', true));
    expect(current).toEqual(anchor(['other']));
  });

  it('with planAnchor: a new anchor whose subnamespace is missing gets the finalizer and says Missing', () => {
    const h = hierarchy('p', { subns: [] });
    updateAnchor(h, 'p', 'c', {});
    expect(desiredAnchor(anchor(), planAnchor(h, 'p', 'c'))).toEqual(anchor([FINALIZER], 'Missing'));
  });
});

describe('conditionEvents', () => {
  const c = (reason: string, message = `${reason} message`): Condition => ({
    type: 'ActivitiesHalted',
    status: 'True',
    reason,
    message,
    lastTransitionTime: NOW,
  });

  it('is a Warning for each condition that appears and a Normal one for each that clears', () => {
    expect(conditionEvents([c('ParentMissing')], [c('InCycle')])).toEqual([
      { type: 'Warning', reason: 'InCycle', message: 'InCycle message' },
      {
        type: 'Normal',
        reason: 'ParentMissingCleared',
        message: 'Condition ActivitiesHalted (ParentMissing) cleared: ParentMissing message',
      },
    ]);
  });

  it('is nothing when the conditions are the same, whatever their times', () => {
    expect(conditionEvents([c('InCycle')], [{ ...c('InCycle'), lastTransitionTime: LATER }])).toEqual([]);
  });

  it('treats a changed message as a new condition', () => {
    expect(conditionEvents([c('InCycle', 'a')], [c('InCycle', 'b')]).map((e) => e.type)).toEqual(['Warning', 'Normal']);
  });
});
