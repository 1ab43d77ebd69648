// Subnamespaces on the real control plane: an anchor creates its namespace, reports its state,
// and its deletion removes the namespace only when that is safe.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { KubeClient } from '../../kube/client.js';
import { MANAGER_GROUPS, MANAGER_USER } from '../../kube/install.js';
import { mintUser } from '../../local-cluster/index.js';
import type { Manager } from '../../controller/manager.js';
import { TestCluster, eventuallyEqual } from '../support/cluster.js';
import { startManager } from '../support/manager.js';
import { conditions, createAnchor, editHierarchy, getAnchor, getHierarchy, namespaceExists, treeDepths } from '../support/hnc.js';
import { anchorPath } from '../../core/api/paths.js';

let cluster: TestCluster;
let manager: Manager;

beforeAll(async () => {
  cluster = await TestCluster.connect();
  manager = await startManager('subnamespaces', { managedLabels: ['team'] });
});
afterAll(async () => {
  await manager?.stop();
  await cluster.cleanup();
});

const anchorState = async (parent: string, child: string) => (await getAnchor(cluster.admin, parent, child))?.status?.status;
const anchorGone = async (parent: string, child: string) => (await getAnchor(cluster.admin, parent, child)) === undefined;

describe('subnamespaces', () => {
  it('creates the subnamespace of an anchor, labelled and parented in one go', async () => {
    const parent = await cluster.namespace('team');
    const child = TestCluster.uniqueName('sub');
    await createAnchor(cluster.admin, parent, child, { labels: [{ key: 'team', value: 'a' }] });
    await eventuallyEqual(() => anchorState(parent, child), 'Ok', 'the anchor to be Ok');
    const ns = await cluster.admin.get<{ metadata: { labels: Record<string, string>; annotations: Record<string, string> } }>(
      `/api/v1/namespaces/${child}`,
    );
    expect(ns.metadata.annotations['hnc.x-k8s.io/subnamespace-of']).toBe(parent);
    expect(ns.metadata.labels.team).toBe('a');
    expect(await treeDepths(cluster.admin, child)).toEqual({ [child]: 0, [parent]: 1 });
    await eventuallyEqual(async () => (await getHierarchy(cluster.admin, child))?.spec?.parent, parent, 'the subnamespace HC parent');
    await eventuallyEqual(async () => (await getHierarchy(cluster.admin, parent))?.status?.children, [child], "the parent's children");
    expect((await getHierarchy(cluster.admin, parent))?.metadata.finalizers).toEqual(['hnc.x-k8s.io/hasSubnamespace']);
    expect((await getAnchor(cluster.admin, parent, child))?.metadata.finalizers).toEqual(['hnc.x-k8s.io']);
  });

  it('deletes the subnamespace when its anchor is deleted, and lets the anchor go only after', async () => {
    const parent = await cluster.namespace('team');
    const child = TestCluster.uniqueName('sub');
    await createAnchor(cluster.admin, parent, child);
    await eventuallyEqual(() => anchorState(parent, child), 'Ok', 'the anchor to be Ok');
    await cluster.admin.delete(anchorPath(parent, child));
    // While the namespace terminates, the anchor waits on its finalizer.
    await eventuallyEqual(() => namespaceExists(cluster.admin, child), false, 'the subnamespace to be gone', 60_000);
    await eventuallyEqual(() => anchorGone(parent, child), true, 'the anchor to be gone');
    await eventuallyEqual(
      async () => (await getHierarchy(cluster.admin, parent))?.metadata.finalizers,
      undefined,
      'the parent finalizer released',
    );
  });

  it('never takes over an existing namespace of the same name (Conflict), nor deletes it with the anchor', async () => {
    const parent = await cluster.namespace('team');
    const existing = await cluster.namespace('existing');
    await createAnchor(cluster.admin, parent, existing);
    await eventuallyEqual(() => anchorState(parent, existing), 'Conflict', 'the anchor to be in Conflict');
    expect(
      (await cluster.admin.get<{ metadata: { annotations?: Record<string, string> } }>(`/api/v1/namespaces/${existing}`)).metadata
        .annotations?.['hnc.x-k8s.io/subnamespace-of'],
    ).toBeUndefined();
    await cluster.admin.delete(anchorPath(parent, existing));
    await eventuallyEqual(() => anchorGone(parent, existing), true, 'the Conflict anchor to be gone');
    expect(await namespaceExists(cluster.admin, existing)).toBe(true);
  });

  it('refuses to cascade: an anchor whose subnamespace has children goes, the namespace stays and says so', async () => {
    const parent = await cluster.namespace('team');
    const child = TestCluster.uniqueName('sub');
    const grandchild = TestCluster.uniqueName('subsub');
    await createAnchor(cluster.admin, parent, child);
    await eventuallyEqual(() => anchorState(parent, child), 'Ok', 'the child anchor');
    await createAnchor(cluster.admin, child, grandchild);
    await eventuallyEqual(() => anchorState(child, grandchild), 'Ok', 'the grandchild anchor');
    await cluster.admin.delete(anchorPath(parent, child));
    await eventuallyEqual(() => anchorGone(parent, child), true, 'the anchor released without cascading');
    expect(await namespaceExists(cluster.admin, child)).toBe(true);
    await eventuallyEqual(
      () => conditions(cluster.admin, child),
      ['BadConfiguration/SubnamespaceAnchorMissing: The anchor is missing in the parent namespace'],
      'SubnamespaceAnchorMissing',
    );
    // Clean up the leftover tree: allow cascading deletion, then delete the namespace.
    await editHierarchy(cluster.admin, child, (spec) => (spec.allowCascadingDeletion = true));
    await cluster.admin.delete(`/api/v1/namespaces/${child}`);
    await eventuallyEqual(() => namespaceExists(cluster.admin, grandchild), false, 'the grandchild to go with it', 60_000);
  });

  it('cascades when an ancestor allows it: the whole subtree of subnamespaces is deleted', async () => {
    const parent = await cluster.namespace('team');
    const child = TestCluster.uniqueName('sub');
    const grandchild = TestCluster.uniqueName('subsub');
    await editHierarchy(cluster.admin, parent, (spec) => (spec.allowCascadingDeletion = true));
    await createAnchor(cluster.admin, parent, child);
    await eventuallyEqual(() => anchorState(parent, child), 'Ok', 'the child anchor');
    await createAnchor(cluster.admin, child, grandchild);
    await eventuallyEqual(() => anchorState(child, grandchild), 'Ok', 'the grandchild anchor');
    await cluster.admin.delete(anchorPath(parent, child));
    await eventuallyEqual(() => namespaceExists(cluster.admin, child), false, 'the child namespace to be gone', 60_000);
    await eventuallyEqual(() => namespaceExists(cluster.admin, grandchild), false, 'the grandchild namespace to be gone', 60_000);
    await eventuallyEqual(() => anchorGone(parent, child), true, 'the anchor to be gone');
  });

  it('leaves no subnamespace behind an anchor deleted as it was created (found by the soak)', async () => {
    // Each anchor is deleted a little later than the last (0-300 ms after its creation), so that
    // some deletions land before HNC writes the anchor's finalizer, some while it writes it (the
    // API server may then drop the anchor with the finalizer on, kubernetes#77988) and some after.
    const parent = await cluster.namespace('team');
    const children = Array.from({ length: 16 }, () => TestCluster.uniqueName('quick'));
    await Promise.all(
      children.map(async (child, i) => {
        await createAnchor(cluster.admin, parent, child);
        await new Promise((r) => setTimeout(r, i * 20));
        await cluster.admin.delete(anchorPath(parent, child));
      }),
    );
    const left = async () => (await Promise.all(children.map(async (c) => ((await namespaceExists(cluster.admin, c)) ? [c] : [])))).flat();
    await eventuallyEqual(left, [], 'every subnamespace of a deleted anchor to be gone', 60_000);
    expect(await Promise.all(children.map((c) => anchorGone(parent, c)))).toEqual(children.map(() => true));
  });

  it('deletes a subnamespace that HNC’s own late request created after its anchor went (a deposed leader’s, delivered after a cut)', async () => {
    const parent = await cluster.namespace('team');
    const child = TestCluster.uniqueName('late');
    await createAnchor(cluster.admin, parent, child);
    await eventuallyEqual(() => anchorState(parent, child), 'Ok', 'the anchor to be Ok');
    await cluster.admin.delete(anchorPath(parent, child));
    await eventuallyEqual(() => anchorGone(parent, child), true, 'the anchor and its subnamespace to be gone', 60_000);
    // The old leader's creation, held up in the network, arrives well after (HNC's identity: no grafted-by).
    await new Promise((r) => setTimeout(r, 3_500));
    const hnc = await KubeClient.fromKubeconfig((await mintUser(inject('stateDir'), MANAGER_USER, MANAGER_GROUPS)).kubeconfigPath);
    await hnc.create('/api/v1/namespaces', { metadata: { name: child, annotations: { 'hnc.x-k8s.io/subnamespace-of': parent } } });
    await eventuallyEqual(() => namespaceExists(cluster.admin, child), false, 'the late subnamespace deleted', 60_000);
  });

  it('forbids an anchor named after an excluded namespace', async () => {
    const parent = await cluster.namespace('team');
    await createAnchor(cluster.admin, parent, 'kube-public');
    await eventuallyEqual(() => anchorState(parent, 'kube-public'), 'Forbidden', 'the anchor to be Forbidden');
    expect((await getAnchor(cluster.admin, parent, 'kube-public'))?.metadata.finalizers).toBeUndefined();
  });
});
