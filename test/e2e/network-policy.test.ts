// NetworkPolicies propagated by HNC, enforced by kube-router on the node, proven with real traffic
// between pods: a deny-from-other-namespaces policy in a parent reaches its subtree and blocks a
// pod in an unrelated namespace; a policy selecting `<parent>.tree.hnc.x-k8s.io/depth` lets the
// subtree's pods talk; moving a namespace out of the subtree changes what it can reach.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestCluster, eventually, eventuallyEqual } from '../support/cluster.js';
import { setParent, treeDepths } from '../support/hnc.js';
import { clientPod, configureResources, ensureInstalled, eventuallyReaches, serverPod } from './support.js';

let cluster: TestCluster;

beforeAll(async () => {
  cluster = await TestCluster.connect();
  await ensureInstalled(cluster);
  await configureResources(cluster, [{ group: 'networking.k8s.io', resource: 'networkpolicies', mode: 'Propagate' }]);
});
afterAll(() => cluster?.cleanup());

const NP = '/apis/networking.k8s.io/v1';

describe('NetworkPolicy enforcement across a hierarchy', () => {
  it('a parent policy propagates and is enforced; the tree label admits the subtree; moving out changes reachability', async () => {
    const parent = await cluster.namespace('e2e-np-parent');
    const child = await cluster.namespace('e2e-np-child');
    const other = await cluster.namespace('e2e-np-other');
    await setParent(cluster.admin, child, parent);
    await eventuallyEqual(() => treeDepths(cluster.admin, child), { [child]: 0, [parent]: 1 }, 'child under parent');

    const [parentIp, childIp] = await Promise.all([serverPod(cluster.admin, parent, 'web'), serverPod(cluster.admin, child, 'web')]);
    await Promise.all([clientPod(cluster.admin, child, 'client'), clientPod(cluster.admin, other, 'client')]);
    // Without policies everything is open: the baseline the policies then change.
    await eventuallyReaches(cluster, other, 'client', parentIp, true);
    await eventuallyReaches(cluster, other, 'client', childIp, true);
    await eventuallyReaches(cluster, child, 'client', parentIp, true);

    // Only pods of the same namespace ...
    await cluster.admin.create(`${NP}/namespaces/${parent}/networkpolicies`, {
      metadata: { name: 'deny-from-other-namespaces' },
      spec: { podSelector: {}, ingress: [{ from: [{ podSelector: {} }] }] },
    });
    // ... and of the parent's subtree (every namespace carrying its tree label).
    await cluster.admin.create(`${NP}/namespaces/${parent}/networkpolicies`, {
      metadata: { name: 'allow-from-subtree' },
      spec: {
        podSelector: {},
        ingress: [
          { from: [{ namespaceSelector: { matchExpressions: [{ key: `${parent}.tree.hnc.x-k8s.io/depth`, operator: 'Exists' }] } }] },
        ],
      },
    });
    await eventually(async () => {
      const list = await cluster.admin.get<{ items: Array<{ metadata: { name: string; labels?: Record<string, string> } }> }>(
        `${NP}/namespaces/${child}/networkpolicies`,
      );
      const copies = list.items.filter((p) => p.metadata.labels?.['hnc.x-k8s.io/inherited-from'] === parent).map((p) => p.metadata.name);
      return copies.length === 2 ? copies : undefined;
    }, 'both policies copied into the child');
    // The unrelated namespace is shut out of the parent and of the child (by the copy) ...
    await eventuallyReaches(cluster, other, 'client', parentIp, false);
    await eventuallyReaches(cluster, other, 'client', childIp, false);
    // ... while the subtree still talks to its parent.
    await eventuallyReaches(cluster, child, 'client', parentIp, true);

    // Out of the subtree: the child loses the tree label and the copies, so it cannot reach the
    // parent any more, and nothing protects its own pod from the unrelated namespace.
    await setParent(cluster.admin, child, undefined);
    await eventuallyEqual(() => treeDepths(cluster.admin, child), { [child]: 0 }, 'child a root');
    await eventuallyReaches(cluster, child, 'client', parentIp, false);
    await eventuallyReaches(cluster, other, 'client', childIp, true);
    expect((await cluster.admin.get<{ items: unknown[] }>(`${NP}/namespaces/${child}/networkpolicies`)).items).toEqual([]);
  });
});
