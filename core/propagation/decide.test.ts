import { describe, expect, it } from 'vitest';
import { PropagationMode } from '../api/constants.js';
import type { Hierarchy } from '../hierarchy/hierarchy.js';
import { hierarchy, updateHierarchy, updateNamespace } from '../hierarchy/testing.js';
import { copyPolicy, inheritedFrom, isCopy, type PropagatableObject, type TypeRef } from './copy.js';
import {
  builtInExclusion,
  conflictingDescendants,
  desiredCopies,
  isEmptyPlan,
  namespacesToReplan,
  planNamespace,
  shouldPropagate,
  SourceSet,
  sourceWarnings,
  type NamespacePlan,
  type PropagationContext,
  type PropagationOptions,
} from './decide.js';

const RB: TypeRef = { group: 'rbac.authorization.k8s.io', kind: 'RoleBinding' };
const SECRET: TypeRef = { group: '', kind: 'Secret' };
const CONFIGMAP: TypeRef = { group: '', kind: 'ConfigMap' };
const { Propagate, AllowPropagate, Remove, Ignore } = PropagationMode;

interface Meta {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  deletionTimestamp?: string;
}

/** A RoleBinding granting `role` (a ClusterRole) to the group `team`. */
function rolebinding(name: string, opts: Meta & { role?: string; team?: string } = {}): PropagatableObject {
  const { role = 'admin', team = 'devs', ...meta } = opts;
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name, ...meta },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: team }],
  } as PropagatableObject;
}

const annotated = (name: string, annotations: Record<string, string>) => rolebinding(name, { annotations });

/**
 * A fake cluster: objects of one type by namespace, with server-set metadata. `apply` executes a
 * plan the way the controller would and counts the writes.
 */
class Cluster {
  readonly objects = new Map<string, Map<string, PropagatableObject>>();
  writes = 0;
  private rv = 100;

  constructor(initial: Record<string, PropagatableObject[]> = {}) {
    for (const [ns, objs] of Object.entries(initial)) for (const o of objs) this.put(ns, o);
  }

  put(ns: string, obj: PropagatableObject): void {
    let m = this.objects.get(ns);
    if (!m) this.objects.set(ns, (m = new Map()));
    const name = obj.metadata!.name!;
    const uid = m.get(name)?.metadata?.uid ?? `uid-${ns}-${name}-${this.rv}`;
    m.set(name, {
      ...structuredClone(obj),
      metadata: {
        ...structuredClone(obj.metadata),
        namespace: ns,
        uid,
        resourceVersion: String(this.rv++),
        creationTimestamp: '2025-01-01T00:00:00Z',
      },
    });
  }

  remove(ns: string, name: string): void {
    this.objects.get(ns)?.delete(name);
  }

  in(ns: string): PropagatableObject[] {
    return [...(this.objects.get(ns)?.values() ?? [])];
  }

  get(ns: string, name: string): PropagatableObject | undefined {
    return this.objects.get(ns)?.get(name);
  }

  sources(): SourceSet {
    const set = new SourceSet();
    for (const [ns, m] of this.objects) for (const [name, object] of m) if (!isCopy(object)) set.set({ namespace: ns, name, object });
    return set;
  }

  apply(plan: NamespacePlan): void {
    const ns = plan.namespace;
    for (const c of plan.create) this.put(ns, c.object);
    for (const u of plan.update) {
      if (u.recreate) this.remove(ns, u.name);
      this.put(ns, u.object);
    }
    for (const d of plan.delete) this.remove(ns, d.name);
    this.writes += plan.create.length + plan.update.length * 1 + plan.delete.length;
  }
}

function context(
  h: Hierarchy,
  cluster: Cluster,
  mode: PropagationMode = Propagate,
  type: TypeRef = RB,
  options?: PropagationOptions,
): PropagationContext {
  return { hierarchy: h, type: { ...type, mode }, sources: cluster.sources(), options };
}

/** Plans every namespace and applies the plans: one controller pass over the whole forest. */
function reconcileAll(
  h: Hierarchy,
  cluster: Cluster,
  mode: PropagationMode = Propagate,
  type: TypeRef = RB,
  options?: PropagationOptions,
): void {
  for (const ns of h.namespaceNames()) cluster.apply(planNamespace(context(h, cluster, mode, type, options), ns, cluster.in(ns)));
}

/** A plan in one line per action: "name <- source" (create/update), "name" (delete/conflict). */
function summary(plan: NamespacePlan) {
  return {
    create: plan.create.map((c) => `${c.name} <- ${c.source}`),
    update: plan.update.map((u) => `${u.name} <- ${u.source}${u.recreate ? ' (recreate)' : ''}`),
    delete: plan.delete.map((d) => `${d.name} (${d.reason})`),
    conflicts: plan.conflicts.map((c) => `${c.name} vs ${c.source}`),
  };
}

const nothing = { create: [], update: [], delete: [], conflicts: [] };
const plan = (
  h: Hierarchy,
  cluster: Cluster,
  ns: string,
  mode: PropagationMode = Propagate,
  type: TypeRef = RB,
  options?: PropagationOptions,
) => planNamespace(context(h, cluster, mode, type, options), ns, cluster.in(ns));

/** The copies a namespace holds: name -> the namespace it came from. */
const copiesIn = (cluster: Cluster, ns: string) =>
  Object.fromEntries(
    cluster
      .in(ns)
      .filter(isCopy)
      .map((o) => [o.metadata!.name!, inheritedFrom(o)]),
  );

describe('propagating a source down the tree', () => {
  it('copies a root RoleBinding into every descendant, marked with its source', () => {
    const h = hierarchy('root -> team -> dev, team -> prod');
    const cluster = new Cluster({ root: [rolebinding('admins')] });
    expect(summary(plan(h, cluster, 'dev'))).toEqual({ ...nothing, create: ['admins <- root'] });
    expect(summary(plan(h, cluster, 'root'))).toEqual(nothing);
    reconcileAll(h, cluster);
    for (const ns of ['team', 'dev', 'prod']) expect(copiesIn(cluster, ns)).toEqual({ admins: 'root' });
    expect(cluster.get('dev', 'admins')!.metadata!.labels).toEqual({
      'app.kubernetes.io/managed-by': 'hnc.x-k8s.io',
      'hnc.x-k8s.io/inherited-from': 'root',
    });
  });

  it('writes nothing when everything is in place (a restart makes zero writes)', () => {
    const h = hierarchy('root -> team -> dev');
    const cluster = new Cluster({ root: [rolebinding('admins')], team: [rolebinding('viewers', { role: 'view' })] });
    reconcileAll(h, cluster);
    const written = cluster.writes;
    expect(written).toBe(3);
    for (const ns of h.namespaceNames()) {
      const p = plan(h, cluster, ns);
      expect(isEmptyPlan(p), ns).toBe(true);
    }
    expect(plan(h, cluster, 'dev').inSync).toEqual(['admins', 'viewers']);
    reconcileAll(h, cluster);
    expect(cluster.writes).toBe(written);
  });

  it('follows edits with one update per copy, keeping its resourceVersion', () => {
    const h = hierarchy('root -> team -> dev');
    const cluster = new Cluster({ root: [rolebinding('admins')] });
    reconcileAll(h, cluster);
    cluster.put('root', rolebinding('admins', { team: 'ops' }));
    const p = plan(h, cluster, 'dev');
    expect(summary(p)).toEqual({ ...nothing, update: ['admins <- root'] });
    expect(p.update[0]!.object.metadata!.resourceVersion).toBe(cluster.get('dev', 'admins')!.metadata!.resourceVersion);
    const before = cluster.writes;
    reconcileAll(h, cluster);
    expect(cluster.writes - before).toBe(2); // team and dev, once each
    expect((cluster.get('dev', 'admins') as { subjects: { name: string }[] }).subjects[0]!.name).toBe('ops');
  });

  it('removes the copies when the source is deleted', () => {
    const h = hierarchy('root -> team -> dev');
    const cluster = new Cluster({ root: [rolebinding('admins')] });
    reconcileAll(h, cluster);
    cluster.remove('root', 'admins');
    expect(summary(plan(h, cluster, 'dev'))).toEqual({ ...nothing, delete: ['admins (no-source)'] });
    reconcileAll(h, cluster);
    expect(copiesIn(cluster, 'dev')).toEqual({});
  });

  it('moves copies with a subtree: old ancestors’ copies go, new ones come', () => {
    const h = hierarchy('a -> team -> dev, b');
    const cluster = new Cluster({ a: [rolebinding('from-a')], b: [rolebinding('from-b')] });
    reconcileAll(h, cluster);
    expect(copiesIn(cluster, 'dev')).toEqual({ 'from-a': 'a' });
    updateHierarchy(h, 'team', { parent: 'b' });
    expect(summary(plan(h, cluster, 'dev'))).toEqual({ ...nothing, create: ['from-b <- b'], delete: ['from-a (no-source)'] });
    reconcileAll(h, cluster);
    expect(copiesIn(cluster, 'team')).toEqual({ 'from-b': 'b' });
    expect(copiesIn(cluster, 'dev')).toEqual({ 'from-b': 'b' });
  });

  it('rewrites, rather than deletes, a copy that now comes from another ancestor', () => {
    const h = hierarchy('a -> team, b');
    const cluster = new Cluster({ a: [rolebinding('admins')], b: [rolebinding('admins', { team: 'b-admins' })] });
    reconcileAll(h, cluster);
    updateHierarchy(h, 'team', { parent: 'b' });
    expect(summary(plan(h, cluster, 'team'))).toEqual({ ...nothing, update: ['admins <- b'] });
  });

  it('leaves objects that are being deleted alone', () => {
    const h = hierarchy('root -> dev');
    const cluster = new Cluster({ root: [rolebinding('admins', { team: 'new' })] });
    cluster.put('dev', {
      ...rolebinding('admins', {
        labels: { 'hnc.x-k8s.io/inherited-from': 'root' },
        deletionTimestamp: '2025-01-02T00:00:00Z',
        finalizers: ['x'],
      }),
    });
    expect(summary(plan(h, cluster, 'dev'))).toEqual(nothing);
  });

  it('never copies a source into its own namespace', () => {
    const h = hierarchy('root');
    const cluster = new Cluster({ root: [rolebinding('admins')] });
    expect(desiredCopies(context(h, cluster), 'root').size).toBe(0);
  });
});

describe('when several ancestors hold a source of the same name', () => {
  it('the highest ancestor wins', () => {
    const h = hierarchy('root -> team -> dev');
    const cluster = new Cluster({
      root: [rolebinding('admins', { team: 'root-admins' })],
      team: [rolebinding('admins', { team: 'team-admins' })],
    });
    const desired = desiredCopies(context(h, cluster), 'dev');
    expect(desired.get('admins')?.source).toBe('root');
    reconcileAll(h, cluster);
    expect(copiesIn(cluster, 'dev')).toEqual({ admins: 'root' });
  });

  it('the next ancestor wins where the highest one does not propagate', () => {
    const h = hierarchy('root -> team -> dev, team -> prod');
    const cluster = new Cluster({
      root: [rolebinding('admins', { annotations: { 'propagate.hnc.x-k8s.io/treeSelect': '!dev' } })],
      team: [rolebinding('admins', { team: 'team-admins' })],
    });
    reconcileAll(h, cluster);
    expect(copiesIn(cluster, 'dev')).toEqual({ admins: 'team' });
    expect(copiesIn(cluster, 'prod')).toEqual({ admins: 'root' });
  });
});

describe('conflicts with objects users made (never overwritten, never deleted)', () => {
  it('reports a same-named user object in a descendant and leaves it as it is', () => {
    const h = hierarchy('root -> team -> dev');
    const mine = rolebinding('admins', { team: 'my-own' });
    const cluster = new Cluster({ root: [rolebinding('admins')], team: [mine] });
    const p = plan(h, cluster, 'team');
    expect(summary(p)).toEqual({ ...nothing, conflicts: ['admins vs root'] });
    expect(p.conflicts[0]!.existing).toBe(cluster.get('team', 'admins'));
    reconcileAll(h, cluster);
    expect((cluster.get('team', 'admins') as { subjects: { name: string }[] }).subjects[0]!.name).toBe('my-own');
    expect(isCopy(cluster.get('team', 'admins')!)).toBe(false);
    // Below the conflict, the highest source still arrives.
    expect(copiesIn(cluster, 'dev')).toEqual({ admins: 'root' });
  });

  it('is no conflict where the source would not propagate', () => {
    const h = hierarchy('root -> dev');
    const cluster = new Cluster({ root: [annotated('admins', { 'propagate.hnc.x-k8s.io/none': 'true' })], dev: [rolebinding('admins')] });
    expect(summary(plan(h, cluster, 'dev'))).toEqual(nothing);
  });

  it('never deletes a user object, whatever its name', () => {
    const h = hierarchy('root -> dev');
    const cluster = new Cluster({ dev: [rolebinding('unrelated')] });
    expect(summary(plan(h, cluster, 'dev'))).toEqual(nothing);
    expect(summary(plan(h, cluster, 'dev', Remove))).toEqual(nothing);
  });
});

describe('halted namespaces (docs/behaviour.md §2.2)', () => {
  it('receive nothing and keep their copies while halted', () => {
    const h = hierarchy('root -> team -> dev');
    const cluster = new Cluster({ root: [rolebinding('admins'), rolebinding('viewers', { role: 'view' })] });
    reconcileAll(h, cluster);
    // team now names a parent that does not exist: team and dev are halted.
    updateHierarchy(h, 'team', { parent: 'gone' });
    cluster.put('root', rolebinding('editors', { role: 'edit' }));
    cluster.remove('root', 'admins');
    for (const ns of ['team', 'dev']) {
      const p = plan(h, cluster, ns);
      expect(p.skipped, ns).toBe('halted');
      expect(summary(p)).toEqual(nothing);
    }
    reconcileAll(h, cluster);
    expect(copiesIn(cluster, 'dev')).toEqual({ admins: 'root', viewers: 'root' });
  });

  it('propagate nothing out of a halted source namespace', () => {
    const h = hierarchy('gone? -> team -> dev');
    const cluster = new Cluster({ team: [rolebinding('admins')] });
    expect(plan(h, cluster, 'dev').skipped).toBe('halted');
    expect(namespacesToReplan(context(h, cluster), { namespace: 'team', name: 'admins', after: rolebinding('admins') })).toEqual([]);
  });

  it('include cycle members', () => {
    const h = hierarchy('a -> b -> a');
    const cluster = new Cluster({ a: [rolebinding('x')] });
    expect(plan(h, cluster, 'b').skipped).toBe('halted');
  });

  it('resume once the halt is lifted', () => {
    const h = hierarchy('root -> team -> dev');
    updateHierarchy(h, 'team', { parent: 'gone' });
    const cluster = new Cluster({ root: [rolebinding('admins')] });
    reconcileAll(h, cluster);
    expect(copiesIn(cluster, 'dev')).toEqual({});
    updateHierarchy(h, 'team', { parent: 'root' });
    reconcileAll(h, cluster);
    expect(copiesIn(cluster, 'dev')).toEqual({ admins: 'root' });
  });
});

describe('modes (docs/behaviour.md §5.2)', () => {
  it('Remove deletes every copy of the type, and only copies', () => {
    const h = hierarchy('root -> team -> dev');
    const cluster = new Cluster({ root: [rolebinding('admins')], team: [rolebinding('own')] });
    reconcileAll(h, cluster);
    expect(summary(plan(h, cluster, 'dev', Remove))).toEqual({ ...nothing, delete: ['admins (removed-mode)', 'own (removed-mode)'] });
    reconcileAll(h, cluster, Remove);
    expect(copiesIn(cluster, 'dev')).toEqual({});
    expect(cluster.get('root', 'admins')).toBeDefined();
    expect(cluster.get('team', 'own')).toBeDefined();
  });

  it('Remove leaves halted namespaces alone too', () => {
    const h = hierarchy('root -> dev');
    const cluster = new Cluster({ root: [rolebinding('admins')] });
    reconcileAll(h, cluster);
    updateHierarchy(h, 'dev', { parent: 'gone' });
    expect(summary(plan(h, cluster, 'dev', Remove))).toEqual(nothing);
  });

  it('Ignore decides nothing', () => {
    const h = hierarchy('root -> dev');
    const cluster = new Cluster({
      root: [rolebinding('admins')],
      dev: [rolebinding('stale', { labels: { 'hnc.x-k8s.io/inherited-from': 'root' } })],
    });
    const p = plan(h, cluster, 'dev', Ignore);
    expect(p.skipped).toBe('ignored');
    expect(summary(p)).toEqual(nothing);
  });

  it('AllowPropagate propagates only objects that opt in with a selector or all=true', () => {
    const h = hierarchy('root -> team -> dev, root -> other');
    updateNamespace(h, 'other', { labels: { env: 'prod' } });
    const cluster = new Cluster({
      root: [
        rolebinding('plain'),
        annotated('everywhere', { 'propagate.hnc.x-k8s.io/all': 'true' }),
        annotated('team-only', { 'propagate.hnc.x-k8s.io/treeSelect': 'team' }),
        annotated('prod-only', { 'propagate.hnc.x-k8s.io/select': 'env=prod' }),
        annotated('not-all', { 'propagate.hnc.x-k8s.io/all': 'false' }),
      ],
    });
    reconcileAll(h, cluster, AllowPropagate);
    expect(copiesIn(cluster, 'dev')).toEqual({ everywhere: 'root', 'team-only': 'root' });
    expect(copiesIn(cluster, 'other')).toEqual({ everywhere: 'root', 'prod-only': 'root' });
  });
});

describe('selectors restrict destinations', () => {
  it('follows select, treeSelect and none', () => {
    const h = hierarchy('root -> team -> dev, team -> prod');
    updateNamespace(h, 'prod', { labels: { env: 'prod' } });
    const cluster = new Cluster({
      root: [
        annotated('prod-only', { 'propagate.hnc.x-k8s.io/select': 'env=prod' }),
        annotated('not-dev', { 'propagate.hnc.x-k8s.io/treeSelect': '!dev' }),
        annotated('nowhere', { 'propagate.hnc.x-k8s.io/none': 'true' }),
        annotated('broken', { 'propagate.hnc.x-k8s.io/select': 'a b' }),
      ],
    });
    reconcileAll(h, cluster);
    expect(copiesIn(cluster, 'team')).toEqual({ 'not-dev': 'root' });
    expect(copiesIn(cluster, 'dev')).toEqual({});
    expect(copiesIn(cluster, 'prod')).toEqual({ 'not-dev': 'root', 'prod-only': 'root' });
  });

  it('deletes copies from namespaces a selector no longer selects', () => {
    const h = hierarchy('root -> dev, root -> prod');
    const cluster = new Cluster({ root: [rolebinding('admins')] });
    reconcileAll(h, cluster);
    cluster.put('root', annotated('admins', { 'propagate.hnc.x-k8s.io/treeSelect': 'prod' }));
    expect(summary(plan(h, cluster, 'dev'))).toEqual({ ...nothing, delete: ['admins (no-source)'] });
    expect(summary(plan(h, cluster, 'prod'))).toEqual(nothing);
  });
});

describe('built-in exclusions (docs/behaviour.md §5.5)', () => {
  const h = hierarchy('root -> dev');

  it.each([
    ['a service account token Secret', SECRET, { metadata: { name: 'tok' }, type: 'kubernetes.io/service-account-token' }],
    ['a Helm release Secret', SECRET, { metadata: { name: 'sh.helm.release.v1.x.v1' }, type: 'helm.sh/release.v1' }],
    ['kube-root-ca.crt', CONFIGMAP, { metadata: { name: 'kube-root-ca.crt' } }],
    ['istio-ca-root-cert', CONFIGMAP, { metadata: { name: 'istio-ca-root-cert' } }],
    ["Rancher's objects", CONFIGMAP, { metadata: { name: 'c', labels: { 'cattle.io/creator': 'norman' } } }],
    ["OpenShift's described objects", CONFIGMAP, { metadata: { name: 'c', annotations: { 'openshift.io/description': '' } } }],
    ['an object with finalizers', CONFIGMAP, { metadata: { name: 'c', finalizers: ['example.com/f'] } }],
  ])('never propagates %s, not even with all=true', (_what, type, obj) => {
    const withAll = {
      ...obj,
      metadata: { ...obj.metadata, annotations: { ...(obj.metadata as Meta).annotations, 'propagate.hnc.x-k8s.io/all': 'true' } },
    } as PropagatableObject;
    expect(builtInExclusion(withAll, type)).toBeDefined();
    const cluster = new Cluster({ root: [withAll] });
    expect(summary(plan(h, cluster, 'dev', Propagate, type))).toEqual(nothing);
  });

  it('propagates ordinary Secrets and ConfigMaps, and honours custom no-propagation labels', () => {
    const cluster = new Cluster({
      root: [{ metadata: { name: 'creds', labels: { tier: 'secret' } }, type: 'Opaque', data: {} } as PropagatableObject],
    });
    expect(summary(plan(h, cluster, 'dev', Propagate, SECRET))).toEqual({ ...nothing, create: ['creds <- root'] });
    expect(summary(plan(h, cluster, 'dev', Propagate, SECRET, { noPropagationLabels: [{ key: 'tier', value: 'secret' }] }))).toEqual(
      nothing,
    );
    // A key=value rule needs the exact value.
    expect(summary(plan(h, cluster, 'dev', Propagate, SECRET, { noPropagationLabels: [{ key: 'tier', value: 'other' }] }))).toEqual({
      ...nothing,
      create: ['creds <- root'],
    });
  });

  it('warns about finalizers and unparsable selectors on the source', () => {
    const type = { ...RB, mode: Propagate };
    expect(
      sourceWarnings(rolebinding('a', { finalizers: ['f'], annotations: { 'propagate.hnc.x-k8s.io/treeSelect': 'A' } }), type),
    ).toEqual([
      { reason: 'CannotParseSelector', message: expect.stringContaining('"A" is not a valid namespace name') },
      { reason: 'CannotPropagateObject', message: 'Objects with finalizers cannot be propagated' },
    ]);
    expect(sourceWarnings(rolebinding('a', { finalizers: ['f'] }), { ...RB, mode: Remove })).toEqual([]);
    expect(shouldPropagate(annotated('a', { 'propagate.hnc.x-k8s.io/none': 'maybe' }), {}, type)).toEqual({
      propagate: false,
      error: 'invalid propagate.hnc.x-k8s.io/none value: strconv.ParseBool: parsing "maybe": invalid syntax',
    });
  });
});

describe('copies', () => {
  it('strip never-copied keys per the policy', () => {
    const h = hierarchy('root -> dev');
    const cluster = new Cluster({
      root: [
        rolebinding('admins', { labels: { 'argocd.argoproj.io/instance': 'rbac', keep: 'me' }, annotations: { 'example.com/x': '1' } }),
      ],
    });
    const created = plan(h, cluster, 'dev', Propagate, RB, { copy: copyPolicy({ neverCopied: ['example.com/*'] }) }).create[0]!.object;
    expect(created.metadata).toEqual({
      name: 'admins',
      namespace: 'dev',
      labels: {
        'argocd.argoproj.io/instance': 'rbac',
        keep: 'me',
        'app.kubernetes.io/managed-by': 'hnc.x-k8s.io',
        'hnc.x-k8s.io/inherited-from': 'root',
      },
    });
    const byDefault = plan(h, cluster, 'dev').create[0]!.object;
    expect(byDefault.metadata!.labels).not.toHaveProperty('argocd.argoproj.io/instance');
  });

  it('of a RoleBinding whose roleRef changes are recreated', () => {
    const h = hierarchy('root -> dev');
    const cluster = new Cluster({ root: [rolebinding('admins')] });
    reconcileAll(h, cluster);
    cluster.put('root', rolebinding('admins', { role: 'view' }));
    const p = plan(h, cluster, 'dev');
    expect(summary(p)).toEqual({ ...nothing, update: ['admins <- root (recreate)'] });
    expect(p.update[0]!.object.metadata!.resourceVersion).toBeUndefined();
    cluster.put('root', rolebinding('admins', { role: 'admin', team: 'other' }));
    expect(summary(plan(h, cluster, 'dev'))).toEqual({ ...nothing, update: ['admins <- root'] });
  });

  it('edited behind the controller’s back are restored; deleted ones are recreated', () => {
    const h = hierarchy('root -> dev');
    const cluster = new Cluster({ root: [rolebinding('admins')] });
    reconcileAll(h, cluster);
    cluster.put('dev', rolebinding('admins', { team: 'intruder', labels: { 'hnc.x-k8s.io/inherited-from': 'root' } }));
    expect(summary(plan(h, cluster, 'dev'))).toEqual({ ...nothing, update: ['admins <- root'] });
    cluster.remove('dev', 'admins');
    expect(summary(plan(h, cluster, 'dev'))).toEqual({ ...nothing, create: ['admins <- root'] });
  });
});

describe('namespaces outside propagation', () => {
  it('skips unmanaged namespaces and namespaces not synced yet', () => {
    const h = hierarchy('root -> dev');
    const cluster = new Cluster({ root: [rolebinding('admins')] });
    expect(plan(h, cluster, 'kube-system').skipped).toBe('unmanaged');
    expect(plan(h, cluster, 'unknown').skipped).toBe('not-synced');
  });
});

describe('namespacesToReplan: what a source change touches', () => {
  const h = hierarchy('root -> team -> dev, team -> prod, root -> other, other -> deep');
  const cluster = new Cluster();
  const ctx = context(h, cluster);
  const change = (before: PropagatableObject | undefined, after: PropagatableObject | undefined) =>
    namespacesToReplan(ctx, { namespace: 'root', name: 'admins', before, after });

  it('is every descendant for a plain source', () => {
    expect(change(undefined, rolebinding('admins'))).toEqual(['deep', 'dev', 'other', 'prod', 'team']);
  });

  it('is only where the source propagates, before or after', () => {
    const toTeam = annotated('admins', { 'propagate.hnc.x-k8s.io/treeSelect': 'team' });
    const toOther = annotated('admins', { 'propagate.hnc.x-k8s.io/treeSelect': 'other' });
    expect(change(undefined, toTeam)).toEqual(['dev', 'prod', 'team']);
    expect(change(toTeam, toOther)).toEqual(['deep', 'dev', 'other', 'prod', 'team']);
    expect(change(toTeam, undefined)).toEqual(['dev', 'prod', 'team']);
    expect(change(undefined, annotated('admins', { 'propagate.hnc.x-k8s.io/none': 'true' }))).toEqual([]);
  });

  it('adds namespaces holding a copy, and leaves out halted ones', () => {
    const none = annotated('admins', { 'propagate.hnc.x-k8s.io/none': 'true' });
    expect(namespacesToReplan(ctx, { namespace: 'root', name: 'admins', after: none }, (ns) => ns === 'deep')).toEqual(['deep']);
    const h2 = hierarchy('root -> team -> dev, root -> other');
    updateHierarchy(h2, 'team', { parent: 'gone' });
    // team left root's subtree (it is an orphan now); other still receives.
    expect(namespacesToReplan(context(h2, cluster), { namespace: 'root', name: 'admins', after: rolebinding('admins') })).toEqual([
      'other',
    ]);
  });
});

describe('conflictingDescendants: what the objects webhook refuses', () => {
  it('lists descendants holding a same-named source the new object would reach', () => {
    const h = hierarchy('root -> team -> dev, team -> prod, other');
    const cluster = new Cluster({
      dev: [rolebinding('admins')],
      prod: [rolebinding('admins')],
      other: [rolebinding('admins')],
      root: [rolebinding('admins')],
    });
    const ctx = context(h, cluster);
    expect(conflictingDescendants(ctx, 'team', 'admins', rolebinding('admins'))).toEqual(['dev', 'prod']);
    expect(conflictingDescendants(ctx, 'team', 'admins', annotated('admins', { 'propagate.hnc.x-k8s.io/treeSelect': '!prod' }))).toEqual([
      'dev',
    ]);
    expect(conflictingDescendants(ctx, 'team', 'viewers', rolebinding('viewers'))).toEqual([]);
    expect(conflictingDescendants(context(h, cluster, AllowPropagate), 'team', 'admins', rolebinding('admins'))).toEqual([]);
  });
});
