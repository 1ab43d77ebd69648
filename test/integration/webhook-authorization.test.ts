// The webhooks' permission checks (docs/webhooks.md, "Permission checks") on the real control
// plane, as non-admin users with client certificates of their own: SubjectAccessReviews whose
// allows are reused for ALLOW_TTL_MS (webhooks/authz-cache.ts). A permission granted through RBAC
// counts at the next try (denials are never kept); one revoked is refused within the TTL; an allow
// is one user's, never another's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hnc } from '../../cmd/hnc.js';
import { ApiError, type KubeClient } from '../../kube/client.js';
import { ALLOW_TTL_MS } from '../../webhooks/authz-cache.js';
import { TestCluster, eventually, eventuallyEqual } from '../support/cluster.js';
import { removeWebhookConfigurations, startHncWithWebhooks, waitForWebhooks } from '../support/manager.js';
import { setParent, treeDepths } from '../support/hnc.js';

let cluster: TestCluster;
let hnc: Hnc;

const RBAC = '/apis/rbac.authorization.k8s.io/v1';
let root: string;
let mid: string;
let x: string;
let y: string;
const users = { alice: TestCluster.uniqueName('az-alice'), bob: TestCluster.uniqueName('az-bob') };

const bindAdmin = (ns: string, name: string, user: string) =>
  cluster.admin.create(`${RBAC}/namespaces/${ns}/rolebindings`, {
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  });

/**
 * Moves x from mid to y as `client`'s user, dry run (the webhooks decide it, nothing changes): the
 * check is on mid, their most recent common ancestor. Undefined if allowed, else the refusal.
 */
async function reparent(client: KubeClient): Promise<string | undefined> {
  try {
    await client.mergePatch(
      `/apis/hnc.x-k8s.io/v1alpha2/namespaces/${x}/hierarchyconfigurations/hierarchy`,
      { spec: { parent: y } },
      {
        dryRun: 'All',
      },
    );
    return undefined;
  } catch (err) {
    // The webhook refuses with 401 (HNC's code), the API server's own RBAC with 403.
    if (err instanceof ApiError && (err.code === 401 || err.code === 403)) return err.message;
    throw err;
  }
}
const refusal = (user: string) =>
  `User ${user} is not authorized to modify the subtree of ${mid}, which is the most recent common ancestor of current parent "${mid}" and proposed parent "${y}"`;

beforeAll(async () => {
  cluster = await TestCluster.connect();
  hnc = await startHncWithWebhooks('authz');
  await waitForWebhooks(cluster.kubeconfigPath);
  root = await cluster.namespace('az-root');
  mid = await cluster.namespace('az-mid');
  x = await cluster.namespace('az-x');
  y = await cluster.namespace('az-y');
  await setParent(cluster.admin, mid, root);
  await setParent(cluster.admin, x, mid);
  await setParent(cluster.admin, y, mid);
  await eventuallyEqual(() => treeDepths(cluster.admin, x), { [x]: 0, [mid]: 1, [root]: 2 }, 'x in the tree');
  await eventuallyEqual(() => treeDepths(cluster.admin, y), { [y]: 0, [mid]: 1, [root]: 2 }, 'y in the tree');
  // Both may edit x's own HierarchyConfiguration (else the API server refuses before any webhook).
  await bindAdmin(x, 'alice-own', users.alice);
  await bindAdmin(x, 'bob-own', users.bob);
});
afterAll(async () => {
  await hnc?.stop();
  await removeWebhookConfigurations();
  await cluster.cleanup();
});

describe('permission checks', () => {
  it('allows a permission at the next try once granted, never lends an allow to another user, and refuses it within the TTL once revoked', async () => {
    const alice = (await cluster.user(users.alice)).client;
    const bob = (await cluster.user(users.bob)).client;
    // Once the API server's RBAC has the bindings in x, a refusal can only be the webhook's.
    const first = await eventually(async () => {
      const r = await reparent(alice);
      return r?.includes('admission webhook') ? r : undefined;
    }, 'a refusal by the webhook');
    expect(first).toContain(refusal(users.alice));

    // Granted at mid: the refusal just made is not kept, so the next tries are allowed (the API
    // server's RBAC informer takes a moment); well before a kept refusal would have expired.
    await bindAdmin(mid, 'alice-admin', users.alice);
    await eventually(async () => ((await reparent(alice)) === undefined ? true : undefined), 'the grant honoured', ALLOW_TTL_MS / 2);
    // Alice's allow is hers: bob, asking the same of the same namespace, is refused.
    expect(await reparent(bob)).toContain(refusal(users.bob));

    // Revoked (with the copies HNC made in x and y): the allow kept may answer for up to the TTL,
    // never longer. It was asked a moment ago (the last try above), so the next try is answered from it.
    const revoked = performance.now();
    await cluster.admin.delete(`${RBAC}/namespaces/${mid}/rolebindings/alice-admin`);
    expect(await reparent(alice)).toBeUndefined();
    const refused = await eventually(async () => reparent(alice), 'the revocation honoured', ALLOW_TTL_MS * 2);
    // The TTL, and a moment for the API server's RBAC informer and the tries themselves.
    expect(performance.now() - revoked).toBeLessThan(ALLOW_TTL_MS + 3_000);
    expect(refused).toContain(refusal(users.alice));
  });
});
