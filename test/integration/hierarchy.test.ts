// The namespace forest on the real control plane: parents, orphans, cycles, tree labels, halted
// subtrees, excluded namespaces and managed labels, with the manager under its own identity.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Manager } from '../../controller/manager.js';
import { Plural } from '../../core/api/constants.js';
import { hncCollectionPath } from '../../core/api/paths.js';
import { TestCluster, eventuallyEqual } from '../support/cluster.js';
import { startManager } from '../support/manager.js';
import { conditions, editHierarchy, getHierarchy, namespaceLabels, setParent, treeDepths } from '../support/hnc.js';

let cluster: TestCluster;
let manager: Manager;
let excluded: string;

beforeAll(async () => {
  cluster = await TestCluster.connect();
  excluded = await cluster.namespace('excluded');
  manager = await startManager('hierarchy', {
    excludedNamespaces: ['kube-system', 'kube-public', 'kube-node-lease', excluded],
    managedLabels: ['team', 'tier\\.example\\.com/.*'],
    managedAnnotations: ['owner'],
  });
});
afterAll(async () => {
  await manager?.stop();
  await cluster.cleanup();
});

const children = async (ns: string) => (await getHierarchy(cluster.admin, ns))?.status?.children ?? [];

describe('the hierarchy', () => {
  it('sets and unsets a parent: tree labels, children and the included label follow', async () => {
    const parent = await cluster.namespace('parent');
    const child = await cluster.namespace('child');
    await setParent(cluster.admin, child, parent);
    await eventuallyEqual(() => treeDepths(cluster.admin, child), { [child]: 0, [parent]: 1 }, 'the child tree labels');
    await eventuallyEqual(() => children(parent), [child], "the parent's children");
    expect((await namespaceLabels(cluster.admin, child))?.['hnc.x-k8s.io/included-namespace']).toBe('true');
    await setParent(cluster.admin, child, undefined);
    await eventuallyEqual(() => treeDepths(cluster.admin, child), { [child]: 0 }, 'the child tree labels after unsetting');
    await eventuallyEqual(() => children(parent), [], "the parent's children after unsetting");
  });

  it('orphans a child whose parent is deleted (ParentMissing, halting its subtree) and heals when the parent returns', async () => {
    const parent = TestCluster.uniqueName('gone');
    await cluster.admin.create('/api/v1/namespaces', { metadata: { name: parent } });
    const child = await cluster.namespace('orphan');
    const grandchild = await cluster.namespace('orphan-gc');
    await setParent(cluster.admin, child, parent);
    await setParent(cluster.admin, grandchild, child);
    await eventuallyEqual(
      () => treeDepths(cluster.admin, grandchild),
      { [grandchild]: 0, [child]: 1, [parent]: 2 },
      'labels before the deletion',
    );
    await cluster.admin.delete(`/api/v1/namespaces/${parent}`);
    await eventuallyEqual(
      () => conditions(cluster.admin, child),
      [`ActivitiesHalted/ParentMissing: Parent "${parent}" does not exist`],
      'ParentMissing on the orphan',
    );
    await eventuallyEqual(
      () => conditions(cluster.admin, grandchild),
      [
        `ActivitiesHalted/AncestorHaltActivities: Propagation paused in "${grandchild}" and its descendants due to ActivitiesHalted condition on ancestor "${child}"`,
      ],
      'AncestorHaltActivities below the orphan',
    );
    await eventuallyEqual(
      () => treeDepths(cluster.admin, grandchild),
      { [grandchild]: 0, [child]: 1 },
      'labels stop at the halted namespace',
    );
    const halted = (await getHierarchy(cluster.admin, grandchild))!.status!.conditions![0]!;
    // The time it became true (HNC stamped this one with the epoch).
    expect(Date.now() - Date.parse(halted.lastTransitionTime)).toBeLessThan(60_000);
    // The parent comes back (once its old self is fully gone).
    await eventuallyEqual(
      () =>
        cluster.admin.create('/api/v1/namespaces', { metadata: { name: parent } }).then(
          () => true,
          () => false,
        ),
      true,
      'recreating the parent',
    );
    await eventuallyEqual(() => conditions(cluster.admin, child), [], 'ParentMissing cleared');
    await eventuallyEqual(() => conditions(cluster.admin, grandchild), [], 'AncestorHaltActivities cleared');
    await eventuallyEqual(() => treeDepths(cluster.admin, grandchild), { [grandchild]: 0, [child]: 1, [parent]: 2 }, 'labels healed');
    await cluster.admin.delete(`/api/v1/namespaces/${parent}`);
  });

  it('reports a cycle (possible only with the webhooks bypassed) on every member, and clears it when broken', async () => {
    const suffix = TestCluster.uniqueName('cyc');
    const [a, b, c] = ['a', 'b', 'c'].map((x) => `${suffix}-${x}`) as [string, string, string];
    for (const ns of [a, b, c]) await cluster.admin.create('/api/v1/namespaces', { metadata: { name: ns } });
    await setParent(cluster.admin, b, a);
    await setParent(cluster.admin, c, b);
    await setParent(cluster.admin, a, c);
    const text = `ActivitiesHalted/InCycle: Namespace is a member of the cycle: ${a} <- ${b} <- ${c} <- ${a}`; // each name is the parent of the next
    for (const ns of [a, b, c]) await eventuallyEqual(() => conditions(cluster.admin, ns), [text], `InCycle on ${ns}`);
    for (const ns of [a, b, c]) expect(await treeDepths(cluster.admin, ns)).toEqual({ [ns]: 0 });
    await setParent(cluster.admin, a, undefined);
    for (const ns of [a, b, c]) await eventuallyEqual(() => conditions(cluster.admin, ns), [], `InCycle cleared on ${ns}`);
    await eventuallyEqual(() => treeDepths(cluster.admin, c), { [c]: 0, [b]: 1, [a]: 2 }, 'labels after the cycle is broken');
    for (const ns of [a, b, c]) await cluster.admin.delete(`/api/v1/namespaces/${ns}`);
  });

  it('relabels a whole subtree when it moves to another parent', async () => {
    const r1 = await cluster.namespace('r1');
    const r2 = await cluster.namespace('r2');
    const mid = await cluster.namespace('mid');
    const leaf = await cluster.namespace('leaf');
    await setParent(cluster.admin, mid, r1);
    await setParent(cluster.admin, leaf, mid);
    await eventuallyEqual(() => treeDepths(cluster.admin, leaf), { [leaf]: 0, [mid]: 1, [r1]: 2 }, 'labels under r1');
    await setParent(cluster.admin, mid, r2);
    await eventuallyEqual(() => treeDepths(cluster.admin, leaf), { [leaf]: 0, [mid]: 1, [r2]: 2 }, 'labels under r2');
    await eventuallyEqual(() => children(r1), [], 'r1 lost its child');
    await eventuallyEqual(() => children(r2), [mid], 'r2 gained it');
  });

  it('ignores excluded namespaces and reports them as an IllegalParent', async () => {
    await setParent(cluster.admin, excluded, 'default');
    const child = await cluster.namespace('under-excluded');
    await setParent(cluster.admin, child, excluded);
    await eventuallyEqual(
      () => conditions(cluster.admin, child),
      [`ActivitiesHalted/IllegalParent: Parent "${excluded}" is an unmanaged namespace`],
      'IllegalParent',
    );
    const labels = await namespaceLabels(cluster.admin, excluded);
    expect(labels?.['hnc.x-k8s.io/included-namespace']).toBeUndefined();
    expect(Object.keys(labels ?? {}).filter((k) => k.includes('.tree.'))).toEqual([]);
    expect((await getHierarchy(cluster.admin, excluded))?.status).toBeUndefined();
  });

  it('propagates managed labels and annotations down, ancestors winning, and reports illegal ones', async () => {
    const top = await cluster.namespace('top');
    const sub = await cluster.namespace('sub');
    await editHierarchy(cluster.admin, top, (spec) => {
      spec.labels = [
        { key: 'team', value: 'blue' },
        { key: 'tier.example.com/level', value: 'gold' },
      ];
      spec.annotations = [{ key: 'owner', value: 'alice' }];
    });
    await editHierarchy(cluster.admin, sub, (spec) => {
      spec.parent = top;
      spec.labels = [
        { key: 'team', value: 'red' },
        { key: 'not-managed', value: 'x' },
      ];
    });
    await eventuallyEqual(
      async () => {
        const l = (await namespaceLabels(cluster.admin, sub)) ?? {};
        return [l.team, l['tier.example.com/level'], l['not-managed']];
      },
      ['blue', 'gold', undefined],
      'managed labels inherited, ancestor winning',
    );
    const ns = await cluster.admin.get<{ metadata: { annotations?: Record<string, string> } }>(`/api/v1/namespaces/${sub}`);
    expect(ns.metadata.annotations?.owner).toBe('alice');
    await eventuallyEqual(
      () => conditions(cluster.admin, sub),
      ['BadConfiguration/IllegalManagedLabel: Not a legal managed label (set via --managed-namespace-label): not-managed'],
      'IllegalManagedLabel',
    );
    // A managed label nobody provides is removed.
    await cluster.admin.mergePatch(`/api/v1/namespaces/${sub}`, { metadata: { labels: { 'tier.example.com/extra': 'stray' } } });
    await eventuallyEqual(
      async () => (await namespaceLabels(cluster.admin, sub))?.['tier.example.com/extra'],
      undefined,
      'stray managed label removed',
    );
  });

  // Its own time limit: the wait below for earlier tests' deletions (other files' too: the control
  // plane is shared) may take up to 180 s under load, and should fail with its own message (which
  // namespaces are stuck), not with the 60 s default's.
  it('makes no writes when restarted with everything in place', { timeout: 300_000 }, async () => {
    const a = await cluster.namespace('steady');
    const b = await cluster.namespace('steady-child');
    await setParent(cluster.admin, b, a);
    await eventuallyEqual(() => treeDepths(cluster.admin, b), { [b]: 0, [a]: 1 }, 'the steady state');
    // Earlier tests delete namespaces without waiting: one whose deletion ends while the manager
    // is stopped leaves work for the restarted one (its children become orphans), which is not
    // "everything in place". So: no namespace left being deleted, and the manager has seen that.
    const names = async () => {
      const list = await cluster.admin.get<{ items: { metadata: { name: string; deletionTimestamp?: string } }[] }>('/api/v1/namespaces');
      return list.items.map((n) => (n.metadata.deletionTimestamp === undefined ? n.metadata.name : `${n.metadata.name} (deleting)`)).sort();
    };
    await eventuallyEqual(async () => (await names()).filter((n) => n.endsWith('(deleting)')), [], 'no namespace being deleted', 180_000);
    await eventuallyEqual(async () => manager.cache.namespaces.store.keys().sort(), await names(), "the manager's namespaces");
    await manager.idle();
    await manager.stop();
    // Every object's resourceVersion (a list's own resourceVersion is the cluster's, which moves
    // with any write anywhere, e.g. the API server renewing its identity Lease).
    const versions = async () => {
      const out: Record<string, string> = {};
      for (const path of [
        '/api/v1/namespaces',
        hncCollectionPath(Plural.HierarchyConfiguration),
        hncCollectionPath(Plural.SubnamespaceAnchor),
      ]) {
        const list = await cluster.admin.get<{ items: { metadata: { namespace?: string; name: string; resourceVersion: string } }[] }>(
          path,
        );
        for (const o of list.items) out[`${path} ${o.metadata.namespace ?? ''}/${o.metadata.name}`] = o.metadata.resourceVersion;
      }
      return out;
    };
    const before = await versions();
    manager = await startManager('hierarchy-restarted', {
      excludedNamespaces: ['kube-system', 'kube-public', 'kube-node-lease', excluded],
      managedLabels: ['team', 'tier\\.example\\.com/.*'],
      managedAnnotations: ['owner'],
    });
    await manager.idle();
    expect(manager.writer.writesSince(0)).toEqual([]);
    expect(await versions()).toEqual(before);
  });
});
