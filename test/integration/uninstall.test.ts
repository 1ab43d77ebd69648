// Uninstalling: deleting HNC's CRDs releases HNC's finalizers without cascading any deletion, and
// changes no namespace's labels (docs/behaviour.md §3.7, docs/deploy.md "Uninstall"). On a control
// plane of its own, since it deletes the CRDs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalControlPlane } from '../../local-cluster/index.js';
import { KubeClient, isNotFound } from '../../kube/client.js';
import { installCrds, installRbac, MANAGER_GROUPS, MANAGER_USER } from '../../kube/install.js';
import { Manager } from '../../controller/manager.js';
import { createLogger } from '../../kube/log.js';
import { eventually, eventuallyEqual } from '../support/cluster.js';
import { createAnchor, getAnchor, getHierarchy, namespaceExists, setParent } from '../support/hnc.js';

let cp: LocalControlPlane;
let admin: KubeClient;
let manager: Manager;

beforeAll(async () => {
  cp = await LocalControlPlane.start({ log: () => undefined });
  admin = await KubeClient.fromKubeconfig(cp.kubeconfigPath);
  await installCrds(admin);
  await installRbac(admin);
  const client = await KubeClient.fromKubeconfig((await cp.mintUser(MANAGER_USER, MANAGER_GROUPS)).kubeconfigPath);
  manager = new Manager({ client, logger: createLogger({ level: 'silent' }), workers: 2 });
  await manager.start();
}, 180_000);
afterAll(async () => {
  await manager?.stop();
  await cp?.stop();
});

const crdGone = (name: string) =>
  admin.get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`).then(
    () => false,
    (e: unknown) => (isNotFound(e) ? true : Promise.reject(e)),
  );

describe('uninstall', () => {
  it('deleting the CRDs releases every finalizer and deletes no namespace', async () => {
    await admin.create('/api/v1/namespaces', { metadata: { name: 'org' } });
    await createAnchor(admin, 'org', 'team');
    await eventuallyEqual(async () => (await getAnchor(admin, 'org', 'team'))?.status?.status, 'Ok', 'the subnamespace');
    await eventuallyEqual(
      async () => (await getHierarchy(admin, 'org'))?.metadata.finalizers,
      ['hnc.x-k8s.io/hasSubnamespace'],
      'the parent finalizer',
    );
    expect((await getAnchor(admin, 'org', 'team'))?.metadata.finalizers).toEqual(['hnc.x-k8s.io']);

    // A child by HierarchyConfiguration (not a subnamespace): its ancestry lives only in the HC.
    await admin.create('/api/v1/namespaces', { metadata: { name: 'app' } });
    await setParent(admin, 'app', 'team');
    const treeLabels = async (ns: string) => {
      const labels = (await admin.get<{ metadata: { labels?: Record<string, string> } }>(`/api/v1/namespaces/${ns}`)).metadata.labels ?? {};
      return Object.fromEntries(Object.entries(labels).filter(([k]) => k.endsWith('.tree.hnc.x-k8s.io/depth')));
    };
    const appLabels = { 'app.tree.hnc.x-k8s.io/depth': '0', 'team.tree.hnc.x-k8s.io/depth': '1', 'org.tree.hnc.x-k8s.io/depth': '2' };
    await eventuallyEqual(() => treeLabels('app'), appLabels, 'the tree labels of app');
    await manager.idle();
    const before = { org: await treeLabels('org'), team: await treeLabels('team') };
    expect(before.team).toEqual({ 'team.tree.hnc.x-k8s.io/depth': '0', 'org.tree.hnc.x-k8s.io/depth': '1' });
    const namespaceWrites = manager.writer.writesTo('namespaces');

    await admin.delete('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/subnamespaceanchors.hnc.x-k8s.io');
    await eventuallyEqual(() => crdGone('subnamespaceanchors.hnc.x-k8s.io'), true, 'the anchor CRD to finish deleting', 60_000);
    await admin.delete('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/hierarchyconfigurations.hnc.x-k8s.io');
    await eventuallyEqual(() => crdGone('hierarchyconfigurations.hnc.x-k8s.io'), true, 'the hierarchy CRD to finish deleting', 60_000);

    // The subnamespace survives, and still says whose subnamespace it is (a reinstall picks it up).
    expect(await namespaceExists(admin, 'team')).toBe(true);
    const ns = await admin.get<{ metadata: { annotations?: Record<string, string>; deletionTimestamp?: string } }>(
      '/api/v1/namespaces/team',
    );
    expect(ns.metadata.deletionTimestamp).toBeUndefined();
    expect(ns.metadata.annotations?.['hnc.x-k8s.io/subnamespace-of']).toBe('org');
    await eventually(
      async () => (manager.hierarchy.hierarchyCrdDeleting && manager.hierarchy.anchorCrdDeleting ? true : undefined),
      'the manager to know',
    );
    // The HierarchyConfigurations are gone with their CRD, yet no namespace lost its ancestry:
    // selectors on tree labels (NetworkPolicies, ...) keep their meaning during an uninstall.
    await manager.idle();
    expect(await treeLabels('app')).toEqual(appLabels);
    expect({ org: await treeLabels('org'), team: await treeLabels('team') }).toEqual(before);
    expect(manager.writer.writesTo('namespaces')).toBe(namespaceWrites);
    expect(manager.hierarchy.isHalted('app')).toBe(true);
  });
});
