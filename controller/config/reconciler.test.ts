// The HNCConfiguration reconciler's glue, from memory: the singleton it creates, the types it
// syncs, and when it writes the status (only on a change, counts once propagation settles, never
// from a cache behind its own write). Discovery is a function here; the real one is exercised by
// test/integration. Resolution and status themselves are core/config's (tested there).
import { describe, expect, it } from 'vitest';
import { API_VERSION, ClusterReason, ConditionType, GROUP, Kind, Plural, PropagationMode, Singleton } from '../../core/api/constants.js';
import { hncConfigurationPath } from '../../core/api/paths.js';
import type { HNCConfiguration } from '../../core/api/types.js';
import type { ConfiguredType, Resolve, TypeCounts } from '../../core/config/plan.js';
import type { Hierarchy } from '../../core/hierarchy/hierarchy.js';
import { hierarchy, updateHierarchy } from '../../core/hierarchy/testing.js';
import type { CrdObject } from '../../kube/hierarchy-cache.js';
import { RecordingWrites, storeOf } from '../../kube/testing.js';
import { silentLog } from '../testing.js';
import type { MissingAccess } from '../../core/config/access.js';
import { ConfigReconciler } from './reconciler.js';

const CONFIG = hncConfigurationPath();
const RBAC = 'rbac.authorization.k8s.io';

/** Discovery as a map: rbac's types and ConfigMaps exist, nothing else does. */
const resolve: Resolve = (group, resource) => {
  const known: Record<string, string> = { [`${RBAC}/roles`]: 'Role', [`${RBAC}/rolebindings`]: 'RoleBinding', '/configmaps': 'ConfigMap' };
  const kind = known[`${group}/${resource}`];
  return kind ? { group, version: 'v1', resource, kind, namespaced: true } : { error: `no matches for ${group}/, Resource=${resource}` };
};

let rv = 1;
const config = (c: Partial<HNCConfiguration> = {}): HNCConfiguration => ({
  apiVersion: API_VERSION,
  kind: Kind.HNCConfiguration,
  spec: {},
  ...structuredClone(c),
  metadata: { name: Singleton.config, uid: 'uid-config', resourceVersion: String(rv++) },
});

function setup(
  opts: {
    configs?: HNCConfiguration[];
    crds?: CrdObject[];
    leader?: boolean;
    missing?: MissingAccess[];
    hierarchy?: Hierarchy;
    now?: () => number;
  } = {},
) {
  const configs = storeOf(opts.configs ?? []);
  const writes = new RecordingWrites();
  const synced: string[][] = [];
  const counts = new Map<string, TypeCounts>();
  const state = { idle: true, settleInMs: 0 };
  const reconciler = new ConfigReconciler({
    configs,
    crds: storeOf(opts.crds ?? []),
    hierarchy: opts.hierarchy ?? hierarchy('a -> b'),
    writes,
    log: silentLog,
    isLeader: () => opts.leader ?? true,
    resolve: () => Promise.resolve(resolve),
    types: {
      sync: (types: ConfiguredType[]) => {
        synced.push(types.map((t) => `${t.resource}:${t.mode}`));
        return Promise.resolve();
      },
      counts: (t) => counts.get(t.resource) ?? { propagated: 0, sources: 0 },
      idle: () => state.idle,
      countsSettleInMs: () => state.settleInMs,
    },
    missingAccess: () => Promise.resolve(opts.missing ?? []),
    now: opts.now,
  });
  /** The watch event of the last status write: the cache now holds what was written. */
  const echoLastWrite = () => {
    const body = writes.writes.findLast((w) => w.ok && w.verb === 'update')!.body as HNCConfiguration;
    configs.upsert({ ...body, metadata: { ...body.metadata, resourceVersion: String(rv++) } });
  };
  return { configs, writes, synced, counts, state, reconciler, echoLastWrite };
}

const summaryOf = (body: unknown) =>
  ((body as HNCConfiguration | undefined)?.status?.conditions ?? []).filter((c) => c.type === ConditionType.NamespaceCondition);

describe('ConfigReconciler', () => {
  it('creates the singleton on the leader, and reports its status in the same pass', async () => {
    const t = setup();
    await t.reconciler.reconcile();
    expect(t.writes.lines()).toEqual([`create ${CONFIG}`, `update ${CONFIG}/${Singleton.config}`]);
    expect(t.writes.writes[0]!.body).toEqual({
      apiVersion: API_VERSION,
      kind: Kind.HNCConfiguration,
      metadata: { name: 'config' },
      spec: {},
    });
    expect(t.synced).toEqual([['roles:Propagate', 'rolebindings:Propagate']]);
  });

  it('creates nothing on a follower, nor while the HNCConfiguration CRD is being deleted', async () => {
    const follower = setup({ leader: false });
    await follower.reconciler.reconcile();
    expect(follower.writes.writes).toEqual([]);
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `${Plural.HNCConfiguration}.${GROUP}`, deletionTimestamp: '2026-01-01T00:00:00Z' },
    };
    const uninstalling = setup({ crds: [crd] });
    await uninstalling.reconciler.reconcile();
    expect(uninstalling.writes.writes).toEqual([]);
  });

  it('writes the status when it changes, and never rewrites an unchanged one', async () => {
    const t = setup({ configs: [config({ spec: { resources: [{ resource: 'configmaps' }, { group: 'x.io', resource: 'widgets' }] } })] });
    await t.reconciler.reconcile();
    expect(t.synced.at(-1)).toEqual(['roles:Propagate', 'rolebindings:Propagate', 'configmaps:Propagate']);
    expect(t.writes.lines()).toEqual([`update ${CONFIG}/${Singleton.config}`]);
    const status = (t.writes.writes[0]!.body as HNCConfiguration).status!;
    expect(status.conditions?.map((c) => c.reason)).toEqual([ClusterReason.ResourceNotFound]);
    expect(status.resources?.map((r) => r.resource)).toEqual(['configmaps', 'rolebindings', 'roles']);
    t.echoLastWrite();
    t.writes.clear();
    await t.reconciler.reconcile();
    expect(t.writes.writes).toEqual([]); // the condition kept its lastTransitionTime: nothing changed
  });

  it('reports a namespace condition in the summary in the same pass when the summary is cheap', async () => {
    const h = hierarchy('a -> b');
    const t = setup({ configs: [config()], hierarchy: h });
    await t.reconciler.reconcile();
    t.echoLastWrite();
    t.writes.clear();
    updateHierarchy(h, 'b', { parent: 'gone' });
    expect(await t.reconciler.reconcile()).toBeUndefined();
    expect(summaryOf(t.writes.writes.at(-1)?.body).map((c) => [c.reason, c.message])).toEqual([
      [ConditionType.ActivitiesHalted, 'Namespaces "b" is affected by "ParentMissing"'],
    ]);
  });

  it('computes an expensive summary again only after 20 times its cost while the model changes, and comes back for it', async () => {
    const h = hierarchy('a -> b');
    // Every reading of the clock is 10 ms after the last: each summary "costs" 10 ms.
    let clock = 0;
    const t = setup({ configs: [config()], hierarchy: h, now: () => (clock += 10) });
    await t.reconciler.reconcile(); // computed at 10, cost 10 ms: kept until 210
    t.echoLastWrite();
    t.writes.clear();
    updateHierarchy(h, 'b', { parent: 'gone' });
    // The model moved on, but the summary is too recent to compute again: kept, with a requeue.
    expect(await t.reconciler.reconcile()).toEqual({ requeueAfter: 180 });
    expect(t.writes.writes).toEqual([]);
    clock = 300;
    expect(await t.reconciler.reconcile()).toBeUndefined();
    expect(summaryOf(t.writes.writes.at(-1)?.body).map((c) => c.message)).toEqual(['Namespaces "b" is affected by "ParentMissing"']);
    t.echoLastWrite();
    t.writes.clear();
    // A model that stands still keeps its summary however old: nothing to compute, nothing to write.
    clock = 100_000;
    expect(await t.reconciler.reconcile()).toBeUndefined();
    expect(t.writes.writes).toEqual([]);
  });

  it('writes changed counts once propagation has settled, not while it is under way', async () => {
    const t = setup({ configs: [config()] });
    await t.reconciler.reconcile();
    t.echoLastWrite();
    t.writes.clear();
    t.counts.set('roles', { propagated: 3, sources: 1 });
    t.state.idle = false;
    expect(await t.reconciler.reconcile()).toEqual({ requeueAfter: 1000 });
    expect(t.writes.writes).toEqual([]);
    // Idle, but the counts changed a moment ago: not settled yet.
    t.state.idle = true;
    t.state.settleInMs = 250;
    expect(await t.reconciler.reconcile()).toEqual({ requeueAfter: 250 });
    expect(t.writes.writes).toEqual([]);
    t.state.settleInMs = 0;
    await t.reconciler.reconcile();
    expect(t.writes.lines()).toEqual([`update ${CONFIG}/${Singleton.config}`]);
    expect((t.writes.writes[0]!.body as HNCConfiguration).status?.resources).toContainEqual({
      group: RBAC,
      version: 'v1',
      resource: 'roles',
      mode: PropagationMode.Propagate,
      numPropagatedObjects: 3,
      numSourceObjects: 1,
    });
  });

  it('writes changed counts after 10 s even if propagation never settles', async () => {
    let now = 0;
    const t = setup({ configs: [config()], now: () => now });
    await t.reconciler.reconcile();
    t.echoLastWrite();
    t.writes.clear();
    // Sources come and go all the time: never idle, never still.
    t.state.idle = false;
    t.counts.set('roles', { propagated: 3, sources: 1 });
    expect(await t.reconciler.reconcile()).toEqual({ requeueAfter: 1000 });
    now = 9_500;
    t.counts.set('roles', { propagated: 5, sources: 2 });
    expect(await t.reconciler.reconcile()).toEqual({ requeueAfter: 500 });
    expect(t.writes.writes).toEqual([]);
    now = 10_000;
    await t.reconciler.reconcile();
    expect(t.writes.lines()).toEqual([`update ${CONFIG}/${Singleton.config}`]);
    t.echoLastWrite();
    t.writes.clear();
    // The wait starts again from the next change.
    now = 10_100;
    t.counts.set('roles', { propagated: 6, sources: 2 });
    expect(await t.reconciler.reconcile()).toEqual({ requeueAfter: 1000 });
    expect(t.writes.writes).toEqual([]);
  });

  it('plans nothing from a cache that has not seen its last status write yet (read-your-writes)', async () => {
    const t = setup({ configs: [config()] });
    await t.reconciler.reconcile();
    expect(t.writes.writes).toHaveLength(1);
    // The write's watch event has not arrived: the cached status still differs, but is stale.
    await t.reconciler.reconcile();
    expect(t.writes.writes).toHaveLength(1);
    t.echoLastWrite();
    await t.reconciler.reconcile();
    expect(t.writes.writes).toHaveLength(1);
  });

  it('takes a 404 on the status write as the configuration gone, and throws anything else', async () => {
    const gone = setup({ configs: [config()] });
    gone.writes.failNext('update', `${CONFIG}/${Singleton.config}`, 404);
    await gone.reconciler.reconcile();
    expect(gone.writes.lines()).toEqual([`update ${CONFIG}/${Singleton.config} (failed)`]);
    const failing = setup({ configs: [config()] });
    failing.writes.failNext('update', `${CONFIG}/${Singleton.config}`, 500);
    await expect(failing.reconciler.reconcile()).rejects.toThrow(/500/);
  });

  it('runs no propagator for a kind the manager may not access, says why with the fix, and checks again in a second', async () => {
    const missing = [{ group: '', resource: 'configmaps', verbs: ['list', 'watch'] }];
    const t = setup({ configs: [config({ spec: { resources: [{ resource: 'configmaps', mode: PropagationMode.Propagate }] } })], missing });
    expect(await t.reconciler.reconcile()).toEqual({ requeueAfter: 1000 });
    expect(t.synced).toEqual([['roles:Propagate', 'rolebindings:Propagate']]);
    const status = (t.writes.writes.at(-1)!.body as HNCConfiguration).status!;
    expect(status.conditions).toContainEqual(
      expect.objectContaining({
        type: 'OutOfSync',
        reason: 'MissingPermission',
        message:
          "HNC's manager may not list, watch configmaps cluster-wide, so they are not propagated; to fix: kubectl apply -k deploy/optional/propagate-secrets-configmaps",
      }),
    );
    missing.length = 0; // granted
    t.echoLastWrite();
    expect(await t.reconciler.reconcile()).toBeUndefined();
    expect(t.synced.at(-1)).toEqual(['roles:Propagate', 'rolebindings:Propagate', 'configmaps:Propagate']);
  });
});
