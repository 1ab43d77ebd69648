// Migration from HNC v1.1.0's Go manager to hnc-ts and back, on the real control plane
// (docs/migrating-from-hnc.md cites the figures this prints). A forest of 65 namespaces is built
// while HNC's manager runs (full namespaces with parents, subnamespaces, a full namespace under a
// subnamespace, five propagated kinds: Roles, RoleBindings, NetworkPolicies and ConfigMaps
// propagated, LimitRanges AllowPropagate with a treeSelect annotation, a select annotation, two
// HRQs, a managed label); `kubectl hns migrate --check` names what the swap needs; every object is
// snapshotted; HNC's process stops (its webhook configurations left as it left them) and hnc-ts
// starts and settles: no object may be deleted or
// recreated, and each modified one must be explained by a documented difference. Then hnc-ts works
// (a subnamespace, propagation, a refused cycle), and HNC's manager comes back: it may delete
// nothing, hnc-ts's objects included. The two managers never run at once.
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Hnc } from '../../cmd/hnc.js';
import { hierarchyConfigurationPath, hncConfigurationPath } from '../../core/api/paths.js';
import { isNotFound } from '../../kube/client.js';
import { installAnyKindGrant, removeAnyKindGrant } from '../../kube/install.js';
import type { Finding } from '../../core/migration/index.js';
import { runMigrateCheck } from '../../kubectl-plugin/commands/migrate.js';
import { KubeHncApi } from '../../kubectl-plugin/kube-api.js';
import { captureIo } from '../../kubectl-plugin/io.js';
import { TestCluster, eventually, kubectl, refusal } from '../support/cluster.js';
import { createAnchor, editHierarchy, getHierarchy, setParent } from '../support/hnc.js';
import { HncGo, hncGoBinary } from '../support/hnc-go.js';
import { removeWebhookConfigurations, startHncWithWebhooks, waitForWebhooks } from '../support/manager.js';
import {
  NO_LAST_APPLIED,
  compare,
  normalizeConfigStatus,
  report,
  snapshot as snapshotOf,
  type Obj,
  type Snapshot,
} from '../support/snapshot.js';

let cluster: TestCluster;
const MINUTE = 60_000;
/** Every object of the forest, as the admin reads it. */
const snapshot = (namespaces: ReadonlySet<string>): Promise<Snapshot> => snapshotOf(cluster.admin, namespaces);

describe('migrating from HNC v1.1.0 to hnc-ts and back', { timeout: 10 * MINUTE }, () => {
  const p = TestCluster.uniqueName('mig');
  const org = p;
  const teams = [0, 1, 2].map((i) => `${p}-t${i}`);
  const subs = (t: string) => [0, 1, 2, 3, 4].map((i) => `${t}-s${i}`);
  const leaves = (s: string) => [0, 1, 2].map((i) => `${s}-l${i}`);
  const full = `${p}-x`; // a full namespace under a subnamespace
  const forest = new Set([org, ...teams, ...teams.flatMap((t) => [...subs(t), ...subs(t).flatMap(leaves)]), full]);
  const created = `${teams[1]}-new`; // the subnamespace hnc-ts creates
  const logDir = join(inject('stateDir'), 'logs');
  let savedConfig: unknown;
  let go: HncGo | undefined;
  let hnc: Hnc | undefined;
  const snapshots: Snapshot[] = [];
  const figures: string[] = [];
  /** Objects made while hnc-ts ran: key -> uid. */
  const madeByHncTs = new Map<string, string>();

  const list = async (path: string) =>
    (await cluster.admin.get<{ items: Obj[] }>(path)).items.filter((o) => forest.has(o.metadata.namespace!));
  const copies = async (path: string, name: string) =>
    (await list(path)).filter((o) => o.metadata.name === name && o.metadata.labels?.['hnc.x-k8s.io/inherited-from']).length;
  const apply = async (manifest: object) => {
    const r = await kubectl(inject('kubeconfig'), ['apply', '-f', '-'], JSON.stringify(manifest));
    expect(r.code, r.stderr).toBe(0);
  };
  /** Everything HNC (either) must have done to the forest as built. */
  const forestBuilt = async (): Promise<true | undefined> => {
    const nss = (await cluster.admin.get<{ items: Obj[] }>('/api/v1/namespaces')).items.filter((n) => forest.has(n.metadata.name));
    if (nss.length !== forest.size || nss.some((n) => n.metadata.labels?.env !== 'prod'))
      throw new Error(`${nss.filter((n) => n.metadata.labels?.env === 'prod').length} of ${forest.size} namespaces labelled`);
    const counts = [
      await copies('/apis/rbac.authorization.k8s.io/v1/roles', 'reader'),
      await copies('/apis/rbac.authorization.k8s.io/v1/rolebindings', 'readers'),
      await copies('/apis/networking.k8s.io/v1/networkpolicies', 'deny-ingress'),
      await copies('/api/v1/configmaps', 'settings'),
      await copies('/api/v1/limitranges', 'limits'),
      (await list('/api/v1/resourcequotas')).filter((o) => o.metadata.name === 'hrq.hnc.x-k8s.io').length,
    ];
    // Everywhere below org; the select annotation: teams[1]'s subtree; the treeSelect: teams[2]'s but its s0's.
    // teams[1]'s subtree is 21 namespaces (22 with the one hnc-ts creates); teams[2]'s, less s0's 4, 17 with the source.
    const expected = [forest.size - 1, forest.size - 1, forest.size - 1, forest.has(created) ? 22 : 21, 16, forest.size];
    if (!isDeepStrictEqual(counts, expected)) throw new Error(`copies ${JSON.stringify(counts)}, expected ${JSON.stringify(expected)}`);
    return true;
  };

  beforeAll(async () => {
    cluster = await TestCluster.connect();
    // A cold build of HNC's manager from the Go module proxy takes about 10 minutes (then cached).
    await hncGoBinary();
    savedConfig = (await cluster.admin.get<{ spec?: unknown }>(hncConfigurationPath('config')).catch(() => undefined))?.spec;
  }, 30 * MINUTE);

  afterAll(async () => {
    try {
      // Delete the forest while HNC's manager runs (it releases its finalizers), then put the cluster
      // back. HNC v1.1.0 inherits allowCascadingDeletion only through subnamespaces: each full
      // namespace holding subnamespaces needs its own, or HNC refuses their anchors' deletion and the
      // forest stays Terminating for the next test files to find (a failure here, not a warning).
      if (go) {
        for (const ns of [org, ...teams]) await editHierarchy(cluster.admin, ns, (s) => (s.allowCascadingDeletion = true));
        for (const ns of [org, ...teams, full])
          await cluster.admin.delete(`/api/v1/namespaces/${ns}`).catch((e: unknown) => (isNotFound(e) ? undefined : Promise.reject(e)));
        await eventually(
          async () =>
            (await cluster.admin.get<{ items: Obj[] }>('/api/v1/namespaces')).items.some(
              (n) => forest.has(n.metadata.name) || n.metadata.name === created,
            )
              ? undefined
              : true,
          'the forest to be deleted',
          3 * MINUTE,
        );
      }
    } finally {
      if (go) {
        await cluster.admin
          .replace(hncConfigurationPath('config'), {
            ...(await cluster.admin.get<object>(hncConfigurationPath('config'))),
            spec: savedConfig ?? {},
          })
          .catch(() => undefined);
        await go.stop();
      }
      await hnc?.stop();
      await removeWebhookConfigurations();
      await HncGo.revoke(cluster.admin);
      await removeAnyKindGrant(cluster.admin);
      await cluster.cleanup();
      if (figures.length) process.stdout.write(`\nMigration figures (test/integration/migration.test.ts)\n${figures.join('\n')}\n`);
    }
  }, 5 * MINUTE);

  it('HNC v1.1.0 builds a forest of 65 namespaces with five propagated kinds, HRQs and a managed label', async () => {
    await HncGo.grant(cluster.admin);
    go = await HncGo.start({ hrq: true, managedLabels: ['env'], logFile: join(logDir, 'hnc-go-migration.log') });
    await waitForWebhooks(inject('kubeconfig'));
    await cluster.admin.replace(hncConfigurationPath('config'), {
      ...(await cluster.admin.get<object>(hncConfigurationPath('config'))),
      spec: {
        resources: [
          { group: 'networking.k8s.io', resource: 'networkpolicies', mode: 'Propagate' },
          { resource: 'configmaps', mode: 'Propagate' },
          { resource: 'limitranges', mode: 'AllowPropagate' },
        ],
      },
    });
    for (const ns of [org, ...teams, full]) await cluster.admin.create('/api/v1/namespaces', { metadata: { name: ns } });
    await editHierarchy(cluster.admin, org, (s) => (s.labels = [{ key: 'env', value: 'prod' }]));
    for (const t of teams) await setParent(cluster.admin, t, org);
    await cluster.admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${org}/roles`, {
      metadata: { name: 'reader' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }],
    });
    await cluster.admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${org}/rolebindings`, {
      metadata: { name: 'readers' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: `${p}-readers` }],
    });
    // Applied with kubectl, as users do: their copies carry kubectl's last-applied-configuration.
    await apply({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: 'deny-ingress', namespace: org },
      spec: { podSelector: {}, policyTypes: ['Ingress'] },
    });
    await apply({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'settings',
        namespace: org,
        annotations: { 'propagate.hnc.x-k8s.io/select': `${teams[1]}.tree.hnc.x-k8s.io/depth` },
      },
      data: { tier: 'gold' },
    });
    await cluster.admin.create(`/api/v1/namespaces/${teams[2]}/limitranges`, {
      metadata: { name: 'limits', annotations: { 'propagate.hnc.x-k8s.io/treeSelect': `!${teams[2]}-s0` } },
      spec: { limits: [{ type: 'Container', default: { memory: '256Mi' } }] },
    });
    for (const [ns, name, hard] of [
      [org, 'org-quota', { configmaps: '1000' }],
      [teams[2]!, 'team-quota', { services: '20' }],
    ] as const)
      await cluster.admin.create(`/apis/hnc.x-k8s.io/v1alpha2/namespaces/${ns}/hierarchicalresourcequotas`, {
        apiVersion: 'hnc.x-k8s.io/v1alpha2',
        kind: 'HierarchicalResourceQuota',
        metadata: { name },
        spec: { hard },
      });
    for (const t of teams) for (const s of subs(t)) await createAnchor(cluster.admin, t, s);
    for (const t of teams)
      for (const s of subs(t)) {
        await eventually(
          async () => ((await cluster.admin.get(`/api/v1/namespaces/${s}`)) ? true : undefined),
          `subnamespace ${s}`,
          MINUTE,
        );
        for (const l of leaves(s)) await createAnchor(cluster.admin, s, l);
      }
    await eventually(
      async () => ((await cluster.admin.get(`/api/v1/namespaces/${teams[0]}-s0`)) ? true : undefined),
      'a subnamespace',
      MINUTE,
    );
    await setParent(cluster.admin, full, `${teams[0]}-s0`);
    await eventually(forestBuilt, "HNC's manager to build the forest", 3 * MINUTE);
    await go.idle();
    snapshots.push(await snapshot(forest));
    expect(snapshots[0]!.size).toBeGreaterThan(500);
  });

  it('kubectl hns migrate --check, while HNC runs, names what the swap needs', async () => {
    // HNC's manager runs as a process here: a Deployment with its args (no replicas) stands for HNC's install.
    const deployments = '/apis/apps/v1/namespaces/hnc-system/deployments';
    await cluster.admin.create(deployments, {
      metadata: { name: 'hnc-controller-manager' },
      spec: {
        replicas: 0,
        selector: { matchLabels: { 'control-plane': 'controller-manager' } },
        template: {
          metadata: { labels: { 'control-plane': 'controller-manager' } },
          spec: { containers: [{ name: 'manager', image: 'hnc:v1.1.0', command: ['/manager'], args: go!.args }] },
        },
      },
    });
    const io = captureIo();
    let code: number;
    try {
      code = await runMigrateCheck(new KubeHncApi(cluster.admin, 30_000), io, { namespace: 'hnc-system', output: 'json' });
    } finally {
      await cluster.admin.delete(`${deployments}/hnc-controller-manager`);
    }
    const report = JSON.parse(io.stdout) as { findings: Finding[]; notes: string[] };
    const find = (area: string, severity: string, subject?: string) =>
      report.findings.find((f) => f.area === area && f.severity === severity && (subject === undefined || f.subject === subject));
    expect(report.notes).toEqual([]);
    expect(code).toBe(2);
    // ConfigMaps are beyond hnc-ts's default RBAC: the guide's grant (unless a grant another test file made is still there).
    const grants = await cluster.admin.get<{ items: { metadata: { name: string }; rules?: { resources?: string[] }[] }[] }>(
      '/apis/rbac.authorization.k8s.io/v1/clusterroles?labelSelector=hnc.x-k8s.io/aggregate-to-manager%3Dtrue',
    );
    const granted = grants.items.some((r) => r.rules?.some((x) => x.resources?.some((res) => res === 'configmaps' || res === '*')));
    if (granted) expect(find('propagation', 'ok', 'configmaps')?.message).toContain('granted to hnc-ts');
    else
      expect(find('propagation', 'action', 'configmaps')?.commands).toEqual([
        'kubectl apply -k deploy/optional/propagate-secrets-configmaps',
      ]);
    expect(find('propagation', 'ok')?.subject).toBe('roles rolebindings networkpolicies.networking.k8s.io limitranges');
    // The copies of the kubectl-applied sources, rewritten once by hnc-ts (the next step sees exactly these).
    expect(find('copies', 'change')?.counts).toEqual({ ConfigMap: 21, NetworkPolicy: forest.size - 1 });
    expect(find('hrq', 'action')).toMatchObject({ counts: { HierarchicalResourceQuota: 2 }, helm: ['--set hrq.enabled=true'] });
    expect(find('hrq', 'action')?.message).toMatch(/^HNC ran with --enable-hrq and 2 HierarchicalResourceQuotas exist: /);
    expect(find('flags', 'action', '--managed-namespace-label')?.args).toEqual(['--managed-namespace-label=env']);
    expect(find('deployment', 'change', 'hnc-system/hnc-controller-manager')?.commands).toEqual([
      'kubectl delete validatingwebhookconfiguration hnc-validating-webhook-configuration',
      'kubectl delete mutatingwebhookconfiguration hnc-mutating-webhook-configuration',
      'kubectl -n hnc-system delete deployment hnc-controller-manager --cascade=foreground --wait',
    ]);
    // Every other flag of HNC's run is carried over (ports, exclusions, the no-propagation label) or ignored.
    expect(report.findings.filter((f) => f.area === 'flags').map((f) => f.severity)).toEqual(['ok', 'action']);
  });

  it('stops HNC, starts hnc-ts: nothing deleted or recreated, each change a documented difference', async () => {
    await go!.stop();
    go = undefined;
    // Applying hnc-ts's manifest over HNC's replaces HNC's cluster-admin role with the
    // least-privilege one; ConfigMaps are beyond it: the migration guide's grant.
    await HncGo.revoke(cluster.admin);
    await installAnyKindGrant(cluster.admin);
    hnc = await startHncWithWebhooks('migration', { managedLabels: ['env'] }, { hrq: { syncIntervalMs: 60_000 } });
    await waitForWebhooks(inject('kubeconfig'));
    await eventually(forestBuilt, 'the forest under hnc-ts', 2 * MINUTE);
    await hnc.manager.idle(2 * MINUTE);
    const after = await snapshot(forest);
    snapshots.push(after);
    const c = compare(snapshots[0]!, after);
    figures.push(report('HNC v1.1.0 -> hnc-ts', c));
    process.stdout.write(`${figures.at(-1)}\n`);
    expect(c.deleted).toEqual([]);
    expect(c.recreated).toEqual([]);
    // Every change is one docs/migrating-from-hnc.md lists (each a documented difference).
    const modified = [...c.modified.keys()].map(normalizeConfigStatus);
    expect(modified.sort()).toEqual(
      [
        // docs/hnc-differences.md, "GitOps-friendly copies": kubectl's key is never copied.
        `ConfigMap copy: ${NO_LAST_APPLIED}`,
        `NetworkPolicy copy: ${NO_LAST_APPLIED}`,
        // Status only: hnc-ts's own counts of sources and copies per kind, and the HRQ summaries
        // with quantities printed as Kubernetes prints them (docs/hrq.md).
        'HNCConfiguration: status.resources changed',
        'HierarchicalResourceQuota: status.limitsSummary changed; status.requestsSummary changed',
      ].sort(),
    );
  });

  it('hnc-ts then creates subnamespaces, propagates and refuses a cycle', async () => {
    await createAnchor(cluster.admin, teams[1]!, created);
    forest.add(created);
    await eventually(
      async () => ((await copies('/api/v1/configmaps', 'settings').catch(() => 0)) === 22 ? true : undefined),
      'the ConfigMap in the new subnamespace',
    );
    await cluster.admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${org}/roles`, {
      metadata: { name: 'writer' },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create'] }],
    });
    await eventually(
      async () => ((await copies('/apis/rbac.authorization.k8s.io/v1/roles', 'writer')) === forest.size - 1 ? true : undefined),
      'the new Role everywhere',
    );
    const leaf = `${teams[0]}-s0-l0`;
    // One write (setParent would retry the refusal: a cycle is a 409 Conflict, as in HNC).
    const hc = (await getHierarchy(cluster.admin, org))!;
    const err = await refusal(
      cluster.admin.replace(hierarchyConfigurationPath(org, 'hierarchy'), { ...hc, spec: { ...hc.spec, parent: leaf } }),
    );
    expect(err.code).toBe(409);
    expect(err.message).toContain(`illegal parent: cycle when making "${leaf}" the parent of "${org}"`);
    await hnc!.manager.idle(MINUTE);
    const now = await snapshot(forest);
    for (const [key, r] of now) if (!snapshots[1]!.has(key)) madeByHncTs.set(key, r.uid);
    // The anchor and its namespace, its HierarchyConfiguration and copies, the Role and its copies.
    expect([...madeByHncTs.keys()]).toEqual(
      expect.arrayContaining([
        `SubnamespaceAnchor/${teams[1]}/${created}`,
        `Namespace//${created}`,
        `Role/${org}/writer`,
        `Role/${leaf}/writer`,
        `ConfigMap/${created}/settings`,
      ]),
    );
    snapshots.push(now);
  });

  it('rolls back to HNC v1.1.0: it deletes nothing hnc-ts made or kept', async () => {
    await hnc!.stop();
    hnc = undefined;
    // The guide's rollback: hnc-ts's webhook configurations go, HNC's manifest comes back.
    await removeWebhookConfigurations();
    await HncGo.grant(cluster.admin);
    go = await HncGo.start({ hrq: true, managedLabels: ['env'], logFile: join(logDir, 'hnc-go-migration.log') });
    await waitForWebhooks(inject('kubeconfig'));
    await eventually(forestBuilt, 'the forest under HNC again', 2 * MINUTE);
    await go.idle();
    const back = await snapshot(forest);
    const c = compare(snapshots[2]!, back);
    figures.push(report('hnc-ts -> HNC v1.1.0', c));
    process.stdout.write(`${figures.at(-1)}\n`);
    expect(c.deleted).toEqual([]);
    // HNC v1.1.0 deletes and creates again some copies of a source with a select annotation (its
    // own doing, reported in the figures): copies only, never a namespace, anchor or user object.
    const isCopy = (key: string) => snapshots[2]!.get(key)?.labels['hnc.x-k8s.io/inherited-from'] !== undefined;
    expect(c.recreated.filter((k) => !isCopy(k))).toEqual([]);
    for (const [key, uid] of madeByHncTs) {
      expect(back.has(key), key).toBe(true);
      if (!isCopy(key)) expect(back.get(key)?.uid, key).toBe(uid);
    }
  });
});
