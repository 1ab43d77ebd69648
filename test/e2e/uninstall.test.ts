// Uninstall as docs/deploy.md says (the CRDs while the manager runs, then `kubectl delete -f
// install.yaml`, then the webhook configurations and admission policies the manager wrote) leaves
// every namespace and user object in place; a reinstall, given back the hierarchy, converges with
// no write to an object that was already as it should be.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isNotFound } from '../../kube/client.js';
import { TestCluster, eventually, eventuallyEqual } from '../support/cluster.js';
import { setParent, treeDepths } from '../support/hnc.js';
import { admin, ensureInstalled, uninstall } from './support.js';

let cluster: TestCluster;

beforeAll(async () => {
  cluster = await TestCluster.connect();
  await ensureInstalled(cluster);
});
afterAll(() => cluster?.cleanup());

const RBAC = '/apis/rbac.authorization.k8s.io/v1';
interface Meta {
  metadata: { name: string; namespace?: string; resourceVersion: string; labels?: Record<string, string> };
}

describe('uninstall and reinstall', () => {
  it('uninstalling keeps namespaces and user objects; reinstalling rewrites nothing that was already right', async () => {
    const parent = await cluster.namespace('e2e-un-parent');
    const child = await cluster.namespace('e2e-un-child');
    await setParent(cluster.admin, child, parent);
    await eventuallyEqual(() => treeDepths(cluster.admin, child), { [child]: 0, [parent]: 1 }, 'child under parent');
    await cluster.admin.create(`${RBAC}/namespaces/${parent}/roles`, {
      metadata: { name: 'team' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
    });
    await cluster.admin.create(`${RBAC}/namespaces/${child}/roles`, {
      metadata: { name: 'own' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }],
    });
    const paths = [
      `/api/v1/namespaces/${parent}`,
      `/api/v1/namespaces/${child}`,
      `${RBAC}/namespaces/${parent}/roles/team`,
      `${RBAC}/namespaces/${child}/roles/own`,
      `${RBAC}/namespaces/${child}/roles/team`,
    ];
    await eventually(() => cluster.admin.get(paths[4]!).then(() => true), 'the copy in the child');
    const snapshot = async () =>
      Object.fromEntries(await Promise.all(paths.map(async (p) => [p, (await cluster.admin.get<Meta>(p)).metadata])));
    const before = await snapshot();

    // 1. The CRDs, while the manager runs (it releases what it holds and deletes nothing); 2. the
    // rest of the install; 3. the webhook configurations and admission policies the manager wrote.
    await uninstall(cluster);
    for (const path of [
      '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/hnc-validating-webhook-configuration',
      '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/propagated-copies.hnc.x-k8s.io',
    ])
      expect(
        await cluster.admin.get(path).then(
          () => 'present',
          (e: unknown) => (isNotFound(e) ? 'gone' : Promise.reject(e)),
        ),
        path,
      ).toBe('gone');
    // Every namespace and object is still there, unchanged (the copy too, and the tree labels).
    expect(await snapshot()).toEqual(before);

    // Reinstall: the CRDs first, the hierarchy given back (deleting the CRDs lost it, as with
    // HNC: docs/deploy.md says to back it up), then the rest; the manager then finds every
    // namespace, label and copy as it should be.
    const crdsBack = await admin(cluster, ['apply', '--server-side', '-k', 'crds/']);
    expect(crdsBack.code, crdsBack.stderr).toBe(0);
    const established = await admin(cluster, ['wait', '--for=condition=Established', 'crd', '--all', '--timeout=60s']);
    expect(established.code, established.stderr).toBe(0);
    await setParent(cluster.admin, child, parent);
    await ensureInstalled(cluster);
    await eventually(
      async () => {
        const hc = await cluster.admin.get<{ status?: { children?: string[] } }>(
          `/apis/hnc.x-k8s.io/v1alpha2/namespaces/${parent}/hierarchyconfigurations/hierarchy`,
        );
        return hc.status?.children?.includes(child) ? true : undefined;
      },
      'the reinstalled manager to see the hierarchy',
      120_000,
    );
    // Converged: a new Role in the parent reaches the child, so the manager has reconciled both.
    await cluster.admin.create(`${RBAC}/namespaces/${parent}/roles`, {
      metadata: { name: 'marker' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['watch'] }],
    });
    await eventually(() => cluster.admin.get(`${RBAC}/namespaces/${child}/roles/marker`).then(() => true), 'the marker copied');
    expect(await snapshot()).toEqual(before);
  });
});
