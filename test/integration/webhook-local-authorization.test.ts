// The webhooks' authorization checks answered from RBAC in memory (--webhook-local-authorization,
// docs/webhooks.md "Local authorization"), on the real control plane, as non-admin users with
// client certificates of their own: an allow from RBAC (an own RoleBinding, a copy HNC
// propagated, a group) is answered without a SubjectAccessReview; anything else still goes to the
// API server, with the same verdict and message as before; a removed binding stops counting; and
// where the copy allows, the API server's own SubjectAccessReview allows too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hnc } from '../../cmd/hnc.js';
import { TestCluster, eventually, eventuallyEqual, kubectl } from '../support/cluster.js';
import { removeWebhookConfigurations, startHncWithWebhooks, waitForWebhooks } from '../support/manager.js';
import { MANAGER_SERVICE_ACCOUNT } from '../../kube/install.js';
import { setParent, treeDepths } from '../support/hnc.js';
import { compactBinding, compactRules, rbacAllows, type RbacCheck, type RoleObject, type BindingObject } from '../../core/access/rbac.js';
import { RbacIndex, type RbacChange } from '../../webhooks/rbac-index.js';

let cluster: TestCluster;
let hnc: Hnc;

const RBAC = '/apis/rbac.authorization.k8s.io/v1';
let root: string;
let mid: string;
let x: string;
let y: string;
let other: string;
const team = TestCluster.uniqueName('la-team');
const users = {
  alice: TestCluster.uniqueName('la-alice'),
  bob: TestCluster.uniqueName('la-bob'),
  victor: TestCluster.uniqueName('la-victor'),
};

const bind = (ns: string, name: string, role: string, subject: { kind: string; name: string; namespace?: string }) =>
  cluster.admin.create(`${RBAC}/namespaces/${ns}/rolebindings`, {
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [subject.kind === 'ServiceAccount' ? subject : { apiGroup: 'rbac.authorization.k8s.io', ...subject }],
  });
const hc = (ns: string, parent: string) => ({
  apiVersion: 'hnc.x-k8s.io/v1alpha2',
  kind: 'HierarchyConfiguration',
  metadata: { name: 'hierarchy', namespace: ns },
  spec: { parent },
});
/** A parent change as `kubeconfig`'s user, dry run: the webhooks decide it, nothing changes. */
const reparent = (kubeconfig: string, ns: string, parent: string) =>
  kubectl(kubeconfig, ['apply', '--dry-run=server', '-f', '-'], JSON.stringify(hc(ns, parent)));

async function authorizations(h: Hnc): Promise<{ rbac: number; subjectaccessreview: number }> {
  const { values } = await h.metrics.webhookAuthorizations.get();
  const of = (via: string) => values.find((v) => v.labels.via === via)?.value ?? 0;
  return { rbac: of('rbac'), subjectaccessreview: of('subjectaccessreview') };
}

beforeAll(async () => {
  cluster = await TestCluster.connect();
  hnc = await startHncWithWebhooks('local-authz');
  await waitForWebhooks(cluster.kubeconfigPath);
  root = await cluster.namespace('la-root');
  mid = await cluster.namespace('la-mid');
  x = await cluster.namespace('la-x');
  y = await cluster.namespace('la-y');
  other = await cluster.namespace('la-other');
  await setParent(cluster.admin, mid, root);
  await setParent(cluster.admin, x, mid);
  await setParent(cluster.admin, y, mid);
  await eventuallyEqual(() => treeDepths(cluster.admin, x), { [x]: 0, [mid]: 1, [root]: 2 }, 'x in the tree');
  await eventuallyEqual(() => treeDepths(cluster.admin, y), { [y]: 0, [mid]: 1, [root]: 2 }, 'y in the tree');
  // At the root (HNC copies them to mid, x and y): alice and the team are admins, victor a viewer.
  await bind(root, 'alice-admin', 'admin', { kind: 'User', name: users.alice });
  await bind(root, 'team-admin', 'admin', { kind: 'Group', name: team });
  await bind(root, 'victor-view', 'view', { kind: 'User', name: users.victor });
  await bind(root, 'deployer-admin', 'admin', { kind: 'ServiceAccount', name: 'deployer', namespace: root });
  // Each may edit x's own HierarchyConfiguration (else the API server refuses before any webhook).
  await bind(x, 'alice-own', 'admin', { kind: 'User', name: users.alice });
  await bind(x, 'victor-own', 'admin', { kind: 'User', name: users.victor });
  await eventually(
    async () =>
      (await cluster.admin.get<{ items: unknown[] }>(`${RBAC}/namespaces/${mid}/rolebindings`)).items.length >= 4 ? true : undefined,
    'the root bindings copied to mid',
  );
});
afterAll(async () => {
  await hnc?.stop();
  await removeWebhookConfigurations();
  await cluster.cleanup();
});

describe('local authorization', () => {
  it('allows from RBAC in memory through a copy of a RoleBinding to admin, and through a group, without a SubjectAccessReview', async () => {
    const alice = (await cluster.user(users.alice)).kubeconfigPath;
    const bob = (await cluster.user(users.bob, [team])).kubeconfigPath;
    // x from mid to y: the check is on mid (the most recent common ancestor), where alice's and the
    // team's bindings are copies HNC made. The first answers may come before the copies are in memory.
    const before = await eventually(async () => {
      const n = await authorizations(hnc);
      const r = await reparent(alice, x, y);
      expect(r.stderr).not.toContain('denied');
      expect(r.code).toBe(0);
      return (await authorizations(hnc)).rbac > n.rbac ? n : undefined;
    }, 'an allow from RBAC in memory');
    const r = await reparent(bob, x, y);
    expect(r.stderr).not.toContain('denied');
    expect(r.code).toBe(0);
    const after = await authorizations(hnc);
    expect(after.rbac).toBeGreaterThanOrEqual(before.rbac + 2);
  });

  it('asks the API server for what RBAC in memory does not allow, and denies with the same message', async () => {
    const victor = (await cluster.user(users.victor)).kubeconfigPath;
    const before = await authorizations(hnc);
    const r = await reparent(victor, x, y);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      `admission webhook "hierarchyconfigurations.hnc.x-k8s.io" denied the request: User ${users.victor} is not authorized to modify the subtree of ${mid}, which is the most recent common ancestor of current parent "${mid}" and proposed parent "${y}"`,
    );
    const after = await authorizations(hnc);
    expect(after.subjectaccessreview).toBe(before.subjectaccessreview + 1);
    expect(after.rbac).toBe(before.rbac);
  });

  it('answers as the API server does wherever RBAC in memory allows', async () => {
    // The copy, built as the webhooks build theirs (every rule kept, for a wider set of checks).
    const list = async (path: string) =>
      (await cluster.admin.get<{ items: Array<{ metadata: { name: string; namespace?: string } }> }>(path)).items;
    const changes: RbacChange[] = (['Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding'] as const).map((k) => ({ k, synced: true }));
    for (const o of await list(`${RBAC}/roles`))
      changes.push({ k: 'Role', ns: o.metadata.namespace!, name: o.metadata.name, rules: compactRules(o as RoleObject) });
    for (const o of await list(`${RBAC}/clusterroles`))
      changes.push({ k: 'ClusterRole', ns: '', name: o.metadata.name, rules: compactRules(o as RoleObject) });
    for (const o of await list(`${RBAC}/rolebindings`)) {
      const binding = compactBinding(o as BindingObject, o.metadata.namespace);
      if (binding) changes.push({ k: 'RoleBinding', ns: o.metadata.namespace!, name: o.metadata.name, binding });
    }
    for (const o of await list(`${RBAC}/clusterrolebindings`)) {
      const binding = compactBinding(o as BindingObject, '');
      if (binding) changes.push({ k: 'ClusterRoleBinding', ns: '', name: o.metadata.name, binding });
    }
    const index = new RbacIndex();
    index.apply(changes);
    const who = [
      { username: users.alice, groups: ['system:authenticated'] },
      { username: users.bob, groups: ['system:authenticated', team] },
      { username: users.victor, groups: ['system:authenticated'] },
      {
        username: `system:serviceaccount:${root}:deployer`,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${root}`, 'system:authenticated'],
      },
      { username: `system:serviceaccount:${mid}:deployer`, groups: ['system:serviceaccounts', 'system:authenticated'] },
    ];
    const checks: RbacCheck[] = [];
    for (const ns of [root, mid, x, y, other]) {
      checks.push(
        { verb: 'update', group: 'hnc.x-k8s.io', resource: 'hierarchyconfigurations', namespace: ns },
        { verb: 'delete', group: '', resource: 'namespaces', name: ns },
        { verb: 'get', group: '', resource: 'pods', namespace: ns },
        { verb: 'create', group: '', resource: 'pods/exec', namespace: ns },
        { verb: 'list', group: '', resource: 'secrets', namespace: ns },
        { verb: 'create', group: 'hnc.x-k8s.io', resource: 'subnamespaceanchors', namespace: ns },
      );
    }
    let allowedHere = 0;
    for (const user of who)
      for (const check of checks) {
        const local = rbacAllows(index, user, check);
        const [resource, subresource] = check.resource.split('/');
        const sar = await cluster.admin.create<{ status?: { allowed?: boolean } }>('/apis/authorization.k8s.io/v1/subjectaccessreviews', {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: { user: user.username, groups: user.groups, resourceAttributes: { ...check, resource, subresource, version: '*' } },
        });
        // The cluster authorizes with RBAC alone: the answers are the same both ways.
        expect({ user: user.username, check, allowed: local }).toEqual({
          user: user.username,
          check,
          allowed: sar.status?.allowed === true,
        });
        if (local) allowedHere++;
      }
    expect(allowedHere).toBeGreaterThan(20);
    // And the webhooks' copy itself: an allow for alice at mid, nothing for victor.
    expect(index.allows(who[0]!, checks[6]!)).toBe(true);
    expect(index.allows(who[2]!, checks[6]!)).toBeUndefined();
  });

  it('stops honouring a binding once it is removed (and its copies with it)', async () => {
    const alice = (await cluster.user(users.alice)).kubeconfigPath;
    await cluster.admin.delete(`${RBAC}/namespaces/${root}/rolebindings/alice-admin`);
    const denied = await eventually(async () => {
      const r = await reparent(alice, x, y);
      return r.code === 1 ? r : undefined;
    }, 'the parent change denied once the binding is gone');
    expect(denied.stderr).toContain(`User ${users.alice} is not authorized to modify the subtree of ${mid}`);
    const before = await authorizations(hnc);
    expect((await reparent(alice, x, y)).code).toBe(1);
    const after = await authorizations(hnc);
    expect(after.rbac).toBe(before.rbac);
    expect(after.subjectaccessreview).toBe(before.subjectaccessreview + 1);
  });

  it('asks the API server while the watch of ClusterRoleBindings fails (the manager lost list/watch on them), and answers locally again once it is back', async () => {
    // The manager runs as a user of this test's own, bound to what the manager's service account
    // is bound to, except that list/watch on ClusterRoleBindings comes from a binding of its own
    // (`crb`): deleting it takes the permission away without touching the shared manager role.
    const SA = { kind: 'ServiceAccount', name: MANAGER_SERVICE_ACCOUNT.name, namespace: MANAGER_SERVICE_ACCOUNT.namespace };
    const manager = TestCluster.uniqueName('la-manager');
    const subject = { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: manager };
    type Rule = { apiGroups?: string[]; resources?: string[]; verbs: string[]; resourceNames?: string[] };
    type Binding = { metadata: { name: string; namespace?: string }; roleRef: { kind: string; name: string }; subjects?: Array<typeof SA> };
    const bound = (b: Binding) => (b.subjects ?? []).some((s) => s.kind === SA.kind && s.name === SA.name && s.namespace === SA.namespace);
    const cleanup: string[] = [];
    const create = async (path: string, body: object) => {
      const o = await cluster.admin.create<{ metadata: { name: string } }>(path, body);
      cleanup.push(`${path}/${o.metadata.name}`);
    };
    const crb = {
      metadata: { name: manager },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: manager },
      subjects: [subject],
    };
    try {
      for (const b of (await cluster.admin.get<{ items: Binding[] }>(`${RBAC}/clusterrolebindings`)).items.filter(bound)) {
        const role = await cluster.admin.get<{ rules?: Rule[] }>(`${RBAC}/clusterroles/${b.roleRef.name}`);
        // Its rules without ClusterRoleBindings (they are a rule of their own below).
        const rules = (role.rules ?? []).flatMap((r) => {
          if (!r.apiGroups?.includes('rbac.authorization.k8s.io') || !r.resources?.includes('clusterrolebindings')) return [r];
          const rest = r.resources.filter((x) => x !== 'clusterrolebindings');
          return rest.length ? [{ ...r, resources: rest }] : [];
        });
        const name = `${manager}-${b.metadata.name}`;
        await create(`${RBAC}/clusterroles`, { metadata: { name }, rules });
        await create(`${RBAC}/clusterrolebindings`, {
          metadata: { name },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
          subjects: [subject],
        });
      }
      for (const b of (await cluster.admin.get<{ items: Binding[] }>(`${RBAC}/rolebindings`)).items.filter(bound))
        await create(`${RBAC}/namespaces/${b.metadata.namespace}/rolebindings`, {
          metadata: { name: `${manager}-${b.metadata.name}` },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', ...b.roleRef },
          subjects: [subject],
        });
      await create(`${RBAC}/clusterroles`, {
        metadata: { name: manager },
        rules: [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterrolebindings'], verbs: ['list', 'watch'] }],
      });
      await cluster.admin.create(`${RBAC}/clusterrolebindings`, crb);
      const bob = (await cluster.user(users.bob, [team])).kubeconfigPath;
      for (const onMainThread of [false, true]) {
        await hnc.stop();
        // The API server does not end a watch whose permission is withdrawn: it runs on until its
        // timeout. A short one (3 s) makes the next re-open, which is refused, come promptly.
        hnc = await startHncWithWebhooks(
          `local-authz-revoked-${onMainThread ? 'main' : 'worker'}`,
          {},
          {
            user: { name: manager, groups: [] },
            webhooks: { onMainThread, rbacWatchTimeoutSeconds: { min: 2, max: 3 } },
          },
        );
        await waitForWebhooks(cluster.kubeconfigPath);
        const allowed = async () => {
          const r = await reparent(bob, x, y);
          expect(r.stderr).not.toContain('denied');
          expect(r.code).toBe(0);
        };
        /** Waits until bob's allowed parent change is answered `via` (and only that way). */
        const answeredBy = (via: 'rbac' | 'subjectaccessreview', what: string) =>
          eventually(
            async () => {
              const before = await authorizations(hnc);
              await allowed();
              const after = await authorizations(hnc);
              const other = via === 'rbac' ? 'subjectaccessreview' : 'rbac';
              return after[via] === before[via] + 1 && after[other] === before[other] ? true : undefined;
            },
            what,
            60_000,
          );
        await answeredBy('rbac', 'an allow from RBAC in memory');
        await cluster.admin.delete(`${RBAC}/clusterrolebindings/${manager}`);
        await answeredBy('subjectaccessreview', 'the allow asked of the API server once the watch of ClusterRoleBindings is refused');
        // Still so while it stays refused (each of its re-opens fails).
        const { rbac } = await authorizations(hnc);
        for (let i = 0; i < 3; i++) await allowed();
        expect((await authorizations(hnc)).rbac).toBe(rbac);
        await cluster.admin.create(`${RBAC}/clusterrolebindings`, crb);
        // The watch resumes and delivers (the binding's own deletion and re-creation, at least).
        await answeredBy('rbac', 'an allow from RBAC in memory again once the watch delivers');
      }
    } finally {
      await cluster.admin.delete(`${RBAC}/clusterrolebindings/${manager}`).catch(() => undefined);
      for (const path of cleanup.reverse()) await cluster.admin.delete(path).catch(() => undefined);
    }
  }, 300_000);

  it('answers from RBAC in memory with the webhooks on the main thread too', async () => {
    await hnc.stop();
    hnc = await startHncWithWebhooks('local-authz-main', {}, { webhooks: { onMainThread: true } });
    await waitForWebhooks(cluster.kubeconfigPath);
    const bob = (await cluster.user(users.bob, [team])).kubeconfigPath;
    await eventually(async () => {
      const r = await reparent(bob, x, y);
      expect(r.stderr).not.toContain('denied');
      expect(r.code).toBe(0);
      return (await authorizations(hnc)).rbac > 0 ? true : undefined;
    }, 'an allow from RBAC in memory on the main thread');
  });

  it('asks the API server every time with --webhook-local-authorization=false', async () => {
    await hnc.stop();
    hnc = await startHncWithWebhooks('local-authz-off', {}, { webhooks: { localAuthorization: false } });
    await waitForWebhooks(cluster.kubeconfigPath);
    // The RoleBinding propagator is running (a new binding at the root reaches x): with the copy
    // on, it would be fed by now.
    await bind(root, 'probe-view', 'view', { kind: 'User', name: users.victor });
    await eventually(
      async () =>
        (await cluster.admin.get<{ items: Array<{ metadata: { name: string } }> }>(`${RBAC}/namespaces/${x}/rolebindings`)).items.some(
          (b) => b.metadata.name === 'probe-view',
        )
          ? true
          : undefined,
      'the new binding copied to x',
    );
    const bob = (await cluster.user(users.bob, [team])).kubeconfigPath;
    for (let i = 0; i < 3; i++) {
      const r = await reparent(bob, x, y);
      expect(r.stderr).not.toContain('denied');
      expect(r.code).toBe(0);
    }
    expect((await authorizations(hnc)).rbac).toBe(0);
  });
});
