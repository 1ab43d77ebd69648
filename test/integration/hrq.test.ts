// Hierarchical resource quotas on the real control plane.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANONICAL_QUANTITIES } from '../../core/quantity/canonical-table.js';
import { formatQuantity, parseQuantity, roundUpToMilli } from '../../core/quantity/quantity.js';
import type { Hnc } from '../../cmd/hnc.js';
import { ApiError, isNotFound } from '../../kube/client.js';
import { TestCluster, eventually, eventuallyEqual, kubectl, refusal, update, type TestUser } from '../support/cluster.js';
import { createAnchor, setParent } from '../support/hnc.js';
import { removeWebhookConfigurations, startHncWithWebhooks } from '../support/manager.js';

let cluster: TestCluster;

beforeAll(async () => {
  cluster = await TestCluster.connect();
});
afterAll(() => cluster.cleanup());

describe('quantities', () => {
  it('print as the API server prints them', async () => {
    const ns = await cluster.namespace('hrq-quantities');
    const serve = async (input: string | number): Promise<string> => {
      const rq = await cluster.admin.create<{ spec: { hard: Record<string, string> } }>(
        `/api/v1/namespaces/${ns}/resourcequotas`,
        { metadata: { name: 'q' }, spec: { hard: { 'requests.storage': input } } },
        { dryRun: 'All' },
      );
      return rq.spec.hard['requests.storage']!;
    };
    // ResourceQuotas refuse negative limits and round limits up to a whole milli-unit; and the API
    // server keeps some texts as typed when they already hold the value exactly ("5.", "1E3").
    const kept = new Set<string | number>(['5.', '+5', '1.001', '1E3', '1e0']);
    const rows = CANONICAL_QUANTITIES.filter(([, canonical]) => !canonical.startsWith('-'));
    const served = await Promise.all(rows.map(async ([input]) => [input, await serve(input)] as const));
    const ours = (input: string | number) => formatQuantity(roundUpToMilli(parseQuantity(input)));
    expect(served).toEqual(rows.map(([input]) => [input, kept.has(input) ? input : ours(input)]));
    // Our canonical text is the server's fixed point too.
    const again = await Promise.all(rows.map(([input]) => serve(ours(input))));
    expect(again).toEqual(rows.map(([input]) => ours(input)));
  });
});

// ---- the controller ---------------------------------------------------------------------------

interface Rq {
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string>; uid?: string };
  spec?: { hard?: Record<string, string> };
  status?: { used?: Record<string, string> };
}
interface Hrq {
  status?: { hard?: Record<string, string>; used?: Record<string, string>; requestsSummary?: string; limitsSummary?: string };
}

const singletonOf = (ns: string) => `/api/v1/namespaces/${ns}/resourcequotas/hrq.hnc.x-k8s.io`;
const hrqUrl = (ns: string, name = '') => `/apis/hnc.x-k8s.io/v1alpha2/namespaces/${ns}/hierarchicalresourcequotas${name && `/${name}`}`;
const singletonHard = async (ns: string) =>
  (await cluster.admin.get<Rq>(singletonOf(ns)).catch((e: unknown) => (isNotFound(e) ? undefined : Promise.reject(e))))?.spec?.hard;
const hrqStatus = async (ns: string, name: string) => (await cluster.admin.get<Hrq>(hrqUrl(ns, name))).status;
const makeHrq = (ns: string, name: string, hard: Record<string, string | number>) =>
  cluster.admin.create(hrqUrl(ns), {
    apiVersion: 'hnc.x-k8s.io/v1alpha2',
    kind: 'HierarchicalResourceQuota',
    metadata: { name },
    spec: { hard },
  });
const service = (ns: string, name: string) =>
  cluster.admin.create(`/api/v1/namespaces/${ns}/services`, { metadata: { name }, spec: { ports: [{ port: 80 }] } });

describe('the HRQ controller', () => {
  let hnc: Hnc;
  beforeAll(async () => {
    hnc = await startHncWithWebhooks('hrq', {}, { hrq: { syncIntervalMs: 60_000 } });
    // The API server uses new webhook configurations once its informer has them: wait for a refusal.
    await eventually(async () => {
      const r = await cluster.admin
        .create(
          hrqUrl('default'),
          {
            apiVersion: 'hnc.x-k8s.io/v1alpha2',
            kind: 'HierarchicalResourceQuota',
            metadata: { name: 'probe' },
            spec: { hard: { nope: '1' } },
          },
          { dryRun: 'All' },
        )
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      return r instanceof Error && r.message.includes('hrq.hnc.x-k8s.io') ? true : undefined;
    }, 'the HRQ webhooks to take effect');
  });
  afterAll(async () => {
    await hnc?.stop();
    await removeWebhookConfigurations();
  });

  it('puts the strictest limits of the namespace and its ancestors in each singleton, and removes obsolete ones', async () => {
    const [a, b, c] = [await cluster.namespace('hrq-a'), await cluster.namespace('hrq-b'), await cluster.namespace('hrq-c')];
    await setParent(cluster.admin, b, a);
    await setParent(cluster.admin, c, b);
    await makeHrq(a, 'team', { services: '10', secrets: '5' });
    await makeHrq(b, 'sub', { services: 2, 'requests.cpu': '1.5' });
    await eventuallyEqual(() => singletonHard(a), { secrets: '5', services: '10' }, 'a limited by its own HRQ');
    await eventuallyEqual(() => singletonHard(b), { 'requests.cpu': '1500m', secrets: '5', services: '2' }, 'b: strictest of a and b');
    await eventuallyEqual(() => singletonHard(c), { 'requests.cpu': '1500m', secrets: '5', services: '2' }, 'c inherits b and a');
    const rq = await cluster.admin.get<Rq>(singletonOf(c));
    expect(rq.metadata.labels?.['hnc.x-k8s.io/hrq']).toBe('true');
    expect(rq.metadata.annotations?.['propagate.hnc.x-k8s.io/none']).toBe('true');

    // A limit raised, then an HRQ removed: the singletons follow; with no HRQ left, they go.
    await update<{ spec: { hard: Record<string, string> } }>(cluster.admin, hrqUrl(a, 'team'), (o) => ({
      ...o,
      spec: { hard: { services: '1', secrets: '5' } },
    }));
    await eventuallyEqual(() => singletonHard(c), { 'requests.cpu': '1500m', secrets: '5', services: '1' }, 'a stricter than b now');
    await cluster.admin.delete(hrqUrl(b, 'sub'));
    await eventuallyEqual(() => singletonHard(c), { secrets: '5', services: '1' }, 'b’s HRQ gone');
    await cluster.admin.delete(hrqUrl(a, 'team'));
    for (const ns of [a, b, c]) await eventuallyEqual(() => singletonHard(ns), undefined, `${ns}'s singleton deleted`);
  });

  it('rolls usage up the tree on create, delete and move, and recreates a deleted singleton', async () => {
    const [root, mid, leaf, other] = [
      await cluster.namespace('use-root'),
      await cluster.namespace('use-mid'),
      await cluster.namespace('use-leaf'),
      await cluster.namespace('use-other'),
    ];
    await setParent(cluster.admin, mid, root);
    await setParent(cluster.admin, leaf, mid);
    await makeHrq(root, 'q', { services: '10' });
    await makeHrq(other, 'q', { services: '10' });
    // The API server's quota system counts only once the singleton's status is initialised, in
    // every namespace that gets a service: a service created before its namespace's singleton
    // exists is missed when the quota controller's first count reads a cache that has not seen it
    // yet, until its periodic full recount (minutes).
    for (const ns of [root, mid, leaf, other])
      await eventually(async () => (await cluster.admin.get<Rq>(singletonOf(ns)).catch(() => undefined))?.status?.used, `${ns} counted`);
    await service(root, 's1');
    await service(mid, 's2');
    await service(leaf, 's3');
    await eventuallyEqual(
      () => hrqStatus(root, 'q'),
      { hard: { services: '10' }, used: { services: '3' }, requestsSummary: 'services: 3/10', limitsSummary: '' },
      'root counts its subtree',
    );
    await cluster.admin.delete(`/api/v1/namespaces/${mid}/services/s2`);
    await eventuallyEqual(async () => (await hrqStatus(root, 'q'))?.used, { services: '2' }, 'a deletion counted');

    await setParent(cluster.admin, leaf, other);
    await eventuallyEqual(async () => (await hrqStatus(root, 'q'))?.used, { services: '1' }, 'leaf moved away');
    await eventuallyEqual(async () => (await hrqStatus(other, 'q'))?.used, { services: '1' }, 'leaf moved in');

    const before = await cluster.admin.get<Rq>(singletonOf(leaf));
    await cluster.admin.delete(singletonOf(leaf));
    await eventually(async () => {
      const rq = await cluster.admin.get<Rq>(singletonOf(leaf)).catch(() => undefined);
      return rq && rq.metadata.uid !== before.metadata.uid && rq.spec?.hard?.services === '10' ? true : undefined;
    }, 'the singleton recreated');
    await eventuallyEqual(async () => (await hrqStatus(other, 'q'))?.used, { services: '1' }, 'usage counted again after recreation');

    await cluster.admin.delete(`/api/v1/namespaces/${leaf}`);
    await eventuallyEqual(async () => (await hrqStatus(other, 'q'))?.used, { services: '0' }, 'a deleted namespace no longer counts');
    // Its removal from the forest (once the namespace controller is done) rewrites its parent's
    // status: wait for it here, so the next case's write count is its own.
    await eventually(
      () =>
        cluster.admin.get(`/api/v1/namespaces/${leaf}`).then(
          () => undefined,
          (e: unknown) => (isNotFound(e) ? true : Promise.reject(e)),
        ),
      'the deleted namespace gone',
      60_000,
    );
    await hnc.manager.idle();
  });

  it('shows HNC’s columns in kubectl get hrq, and writes nothing more once settled', async () => {
    const ns = await cluster.namespace('hrq-get');
    await makeHrq(ns, 'mine', { services: '2', 'limits.cpu': '2', 'requests.memory': '1Gi' });
    await eventually(async () => (await cluster.admin.get<Rq>(singletonOf(ns)).catch(() => undefined))?.status?.used, 'counted');
    await service(ns, 'one');
    await eventuallyEqual(async () => (await hrqStatus(ns, 'mine'))?.requestsSummary, 'requests.memory: 0/1Gi, services: 1/2', 'summary');
    const out = await kubectl(cluster.kubeconfigPath, ['get', 'hrq', '-n', ns]);
    expect(out.stdout.split('\n')[0]).toMatch(/^NAME\s+REQUEST\s+LIMIT/);
    expect(out.stdout.split('\n')[1]).toMatch(/^mine\s+requests\.memory: 0\/1Gi, services: 1\/2\s+limits\.cpu: 0\/2/);
    const hns = await kubectl(cluster.kubeconfigPath, ['hns', 'hrq', '-n', ns]);
    expect(hns.stdout.split('\n')[0]).toMatch(/^NAME\s+AGE\s+REQUEST\s+LIMIT$/);
    expect(hns.stdout.split('\n')[1]).toMatch(/^mine\s+\S+\s+requests\.memory: 0\/1Gi, services: 1\/2\s+limits\.cpu: 0\/2$/);
    const all = await kubectl(cluster.kubeconfigPath, ['hns', 'hrq', '-A']);
    expect(all.stdout.split('\n')[0]).toMatch(/^NAMESPACE\s+NAME\s+AGE\s+REQUEST\s+LIMIT$/);
    expect(all.stdout).toMatch(new RegExp(`\\n${ns}\\s+mine\\s+\\S+\\s+requests\\.memory: 0/1Gi, services: 1/2`));
    const none = await kubectl(cluster.kubeconfigPath, ['hns', 'hrq', '-n', 'kube-public']);
    expect(none).toMatchObject({ code: 1, stdout: '' });
    expect(none.stderr).toBe('No resources found in kube-public namespace.\n');
    await hnc.manager.idle();
    const writes = hnc.manager.writer.total;
    hnc.manager.resyncAll();
    await hnc.manager.idle();
    expect(hnc.manager.writer.writesSince(writes)).toEqual([]);
  });
  const waitCounted = (ns: string) =>
    eventually(
      async () => (await cluster.admin.get<Rq>(singletonOf(ns)).catch(() => undefined))?.status?.used,
      `${ns}'s singleton counted`,
    );
  const yamlHrq = (ns: string, name: string, hardYaml: string) =>
    `apiVersion: hnc.x-k8s.io/v1alpha2\nkind: HierarchicalResourceQuota\nmetadata:\n  name: ${name}\n  namespace: ${ns}\nspec:\n  hard:\n${hardYaml}`;

  it('refuses invalid resource names with HNC’s 422, and takes an unquoted cpu: 1.5', async () => {
    const ns = await cluster.namespace('hrq-valid');
    const bad = await refusal(makeHrq(ns, 'bad', { foo: '1' }));
    expect(bad.code).toBe(422);
    expect(bad.message).toMatch(/admission webhook "hrq\.hnc\.x-k8s\.io" denied the request: \[?spec\.hard\[foo\]: Invalid value: "foo"/);
    expect(bad.message).not.toContain('is invalid');
    expect(bad.status?.details).toMatchObject({ causes: [{ field: '.spec.hard' }] });
    const viaKubectl = await kubectl(cluster.kubeconfigPath, ['apply', '-f', '-'], yamlHrq(ns, 'bad', '    foo: "1"\n'));
    expect(viaKubectl.code).toBe(1);
    // kubectl words a 422 with causes by its field, as it did for HNC's.
    expect(viaKubectl.stderr).toMatch(/^The request is invalid: \.spec\.hard: \[?spec\.hard\[foo\]: Invalid value: "foo"/);
    const unquoted = await kubectl(cluster.kubeconfigPath, ['apply', '-f', '-'], yamlHrq(ns, 'cpu', '    cpu: 1.5\n    pods: 2\n'));
    expect(unquoted.stderr).toBe('');
    const stored = await cluster.admin.get<{ spec: { hard: Record<string, unknown> } }>(hrqUrl(ns, 'cpu'));
    expect(stored.spec.hard).toEqual({ cpu: '1500m', pods: '2' });
  });

  it('refuses a creation over an ancestor’s HRQ with HNC’s message, as seen in kubectl by a namespace admin', async () => {
    const root = await cluster.namespace('deny-root');
    const child = await cluster.namespace('deny-child');
    await setParent(cluster.admin, child, root);
    await makeHrq(root, 'team', { services: '2', secrets: '1' });
    await waitCounted(child);
    await waitCounted(root);
    const user = await cluster.user('hrq-child-admin');
    await cluster.admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${child}/rolebindings`, {
      metadata: { name: 'child-admin' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user.name }],
    });
    await service(root, 'one');
    const svc = (name: string) =>
      JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: child }, spec: { ports: [{ port: 80 }] } });
    const ok = await kubectl(user.kubeconfigPath, ['create', '-f', '-'], svc('two'));
    expect(ok.stderr).toBe('');
    const over = await kubectl(user.kubeconfigPath, ['create', '-f', '-'], svc('three'));
    expect(over.code).toBe(1);
    expect(over.stderr).toContain(
      `exceeded hierarchical quota in namespace "${root}": "team", requested: services=1, used: services=2, limited: services=2`,
    );
    // A kind no HRQ limits is not held back; a deletion always passes, and frees room.
    await cluster.admin.create(`/api/v1/namespaces/${child}/configmaps`, { metadata: { name: 'free' } });
    await cluster.admin.delete(`/api/v1/namespaces/${root}/services/one`);
    await eventually(
      async () => ((await kubectl(user.kubeconfigPath, ['create', '-f', '-'], svc('three'))).code === 0 ? true : undefined),
      'room after a deletion',
    );
    await eventuallyEqual(async () => (await hrqStatus(root, 'team'))?.requestsSummary, 'secrets: 0/1, services: 2/2', 'summary');
  });

  it('shows usage against limits in kubectl hns describe and tree --quota, as admin and as a namespace admin', async () => {
    const root = await cluster.namespace('quota-root');
    const mid = await cluster.namespace('quota-mid');
    const leaf = await cluster.namespace('quota-leaf');
    const other = await cluster.namespace('quota-other');
    await setParent(cluster.admin, mid, root);
    await setParent(cluster.admin, leaf, mid);
    await setParent(cluster.admin, other, root);
    await makeHrq(root, 'org', { services: '5', secrets: '4' });
    await makeHrq(mid, 'team', { services: '3' });
    for (const ns of [root, mid, leaf, other]) await waitCounted(ns);
    await service(leaf, 'a');
    await service(leaf, 'b');
    await service(mid, 'c');
    await service(other, 'd');
    await eventuallyEqual(async () => (await hrqStatus(root, 'org'))?.requestsSummary, 'secrets: 0/4, services: 4/5', 'the root HRQ');
    await eventuallyEqual(async () => (await hrqStatus(mid, 'team'))?.requestsSummary, 'services: 3/3', 'the middle HRQ');
    await eventuallyEqual(async () => (await cluster.admin.get<Rq>(singletonOf(leaf))).status?.used?.services, '2', 'the leaf counted');
    await eventuallyEqual(async () => (await cluster.admin.get<Rq>(singletonOf(other))).status?.used?.services, '1', 'the other counted');
    const legend =
      '\n[name: resource used/hard] is a HierarchicalResourceQuota in that namespace (usage of its whole subtree);\n' +
      '(resource used) is the usage of a subtree without one, for the resources limited above it\n';

    // As admin: every HRQ above, and each subtree's usage.
    const described = await kubectl(cluster.kubeconfigPath, ['hns', 'describe', leaf]);
    expect(described).toMatchObject({ code: 0, stderr: '' });
    expect(described.stdout).toContain(
      `\nHierarchical resource quotas (used in the subtree / limit):\n  None in ${leaf}\n  Above ${leaf}:\n` +
        `  - ${mid}/team: services: 3/3\n  - ${root}/org: secrets: 0/4, services: 4/5\n  Used in ${leaf} itself: secrets: 0, services: 2\n\n`,
    );
    expect((await kubectl(cluster.kubeconfigPath, ['hns', 'describe', root])).stdout).toContain(
      `\nHierarchical resource quotas (used in the subtree / limit):\n  In ${root}:\n  - org: secrets: 0/4, services: 4/5\n` +
        `  Used in ${root} itself: secrets: 0, services: 0\n\n`,
    );
    expect(await kubectl(cluster.kubeconfigPath, ['hns', 'tree', root, '--quota'])).toEqual({
      code: 0,
      stdout:
        `${root} [org: secrets 0/4, services 4/5]\n├── ${mid} [team: services 3/3]\n│   └── ${leaf} (secrets 0, services 2)\n` +
        `└── ${other} (secrets 0, services 1)\n${legend}`,
      stderr: '',
    });
    // HNC's describe is unchanged where no HRQ applies.
    const plain = await cluster.namespace('quota-none');
    expect((await kubectl(cluster.kubeconfigPath, ['hns', 'describe', plain])).stdout).not.toContain('Hierarchical resource quotas');
    expect((await kubectl(cluster.kubeconfigPath, ['hns', 'tree', root, '--quota', '-o', 'json'])).stderr).toBe(
      'Error: --quota is shown in the text output only, not with -o json\n',
    );

    // As the admin of the leaf only: the HRQs above are not readable, so they are notes, and the
    // singleton still says which limits apply and what the namespace uses.
    const user = await cluster.user('quota-leaf-admin');
    await cluster.admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${leaf}/rolebindings`, {
      metadata: { name: 'leaf-admin' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user.name }],
    });
    const theirs = await kubectl(user.kubeconfigPath, ['hns', 'describe', leaf]);
    expect(theirs).toMatchObject({ code: 0, stderr: '' });
    expect(theirs.stdout).toContain(
      `\nHierarchical resource quotas (used in the subtree / limit):\n  None in ${leaf}\n` +
        `  Strictest limits over ${leaf}: secrets: 4, services: 3\n  Used in ${leaf} itself: secrets: 0, services: 2\n` +
        `  (no permission to list the HierarchicalResourceQuotas in ${mid})\n  (no permission to list the HierarchicalResourceQuotas in ${root})\n\n`,
    );
    expect(await kubectl(user.kubeconfigPath, ['hns', 'tree', leaf, '--quota'])).toEqual({
      code: 0,
      stdout: `${leaf} (secrets 0, services 2)\n${legend}`,
      stderr: '',
    });
  });

  it('counts Pod objects’ cpu and memory requests (no kubelet needed), and refuses the one that does not fit', async () => {
    const root = await cluster.namespace('pods-root');
    const child = await cluster.namespace('pods-child');
    await setParent(cluster.admin, child, root);
    await makeHrq(root, 'compute', { 'requests.cpu': '1', 'requests.memory': '1Gi' });
    await waitCounted(child);
    await waitCounted(root);
    const pod = (ns: string, name: string, cpu: string, memory: string) =>
      cluster.admin.create(`/api/v1/namespaces/${ns}/pods`, {
        metadata: { name },
        spec: {
          automountServiceAccountToken: false,
          containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu, memory } } }],
        },
      });
    // The namespace's default ServiceAccount comes from the controller manager, a moment after the namespace.
    await eventually(() => pod(child, 'p1', '600m', '256Mi').then(() => true), 'the first pod');
    await eventually(() => pod(root, 'p2', '0.3', '256Mi').then(() => true), 'the second pod');
    const over = await refusal(pod(root, 'p3', '200m', '128Mi'));
    expect(over.message).toContain(
      `exceeded hierarchical quota in namespace "${root}": "compute", requested: requests.cpu=200m, used: requests.cpu=900m, limited: requests.cpu=1`,
    );
    await eventuallyEqual(
      async () => (await hrqStatus(root, 'compute'))?.used,
      { 'requests.cpu': '900m', 'requests.memory': '512Mi' },
      'pods counted',
    );
  });

  it('leaves usage that was over before the HRQ existed alone', async () => {
    const ns = await cluster.namespace('hrq-over');
    for (const name of ['a', 'b', 'c']) await service(ns, name);
    await makeHrq(ns, 'late', { services: '1', secrets: '5' });
    await eventuallyEqual(async () => (await hrqStatus(ns, 'late'))?.used, { secrets: '0', services: '3' }, 'over from the start');
    await cluster.admin.create(`/api/v1/namespaces/${ns}/secrets`, { metadata: { name: 's' } });
    await cluster.admin.delete(`/api/v1/namespaces/${ns}/services/a`);
    // The namespace's own share of the limit is in its singleton, so Kubernetes' quota refuses first.
    const more = await refusal(service(ns, 'd'));
    expect(more.message).toMatch(/exceeded quota: hrq\.hnc\.x-k8s\.io, requested: services=1, used: services=[23], limited: services=1/);
    await eventuallyEqual(async () => (await hrqStatus(ns, 'late'))?.used, { secrets: '1', services: '2' }, 'the rest counted');
  });

  // docs/reliability.md, "What the runs found" item 7: a team lead's RoleBinding copied into a new
  // subnamespace before its singleton existed let the lead create objects the API server's quota
  // admission did not send to HNC. Several rounds: the race is a matter of milliseconds.
  it('never admits a team lead’s Service in a new subnamespace of a team at its limit', async () => {
    const team = await cluster.namespace('race-team');
    await makeHrq(team, 'team', { services: '1' });
    await waitCounted(team);
    await service(team, 'taken');
    await eventuallyEqual(async () => (await hrqStatus(team, 'team'))?.used, { services: '1' }, 'the team at its limit');
    const lead = await cluster.user('race-lead');
    await cluster.admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${team}/rolebindings`, {
      metadata: { name: 'lead' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: lead.name }],
    });
    const rounds = 5;
    const subs: string[] = [];
    for (let round = 0; round < rounds; round++) {
      const sub = TestCluster.uniqueName('race-sub');
      subs.push(sub);
      const answers = await raceForAService(lead.client, sub, () => createAnchor(cluster.admin, team, sub));
      expect(answers.admitted, `round ${round}: ${JSON.stringify(answers)}`).toEqual([]);
      expect(answers.other, `round ${round}`).toEqual([]);
      expect(answers.quota, `round ${round}: the lead got in`).toBeGreaterThan(0);
    }
    for (const sub of subs) await cluster.admin.delete(`/apis/hnc.x-k8s.io/v1alpha2/namespaces/${team}/subnamespaceanchors/${sub}`);
  });
});

/** What the lead's creations of a Service in `ns` got, from before `start()` until quota refusals come steadily. */
interface RaceAnswers {
  rbac: number;
  quota: number;
  admitted: string[];
  other: string[];
}

/**
 * Creates Services in `ns` as `client` in three tight loops, from before `start()` (which brings
 * the namespace) until 20 quota refusals have come or 15 s have passed: each answer is an RBAC
 * refusal (no RoleBinding there yet), a quota refusal (Kubernetes' own, for the singleton's limit
 * or a status not counted yet, or HNC's), an admission, or something else.
 */
async function raceForAService(client: TestUser['client'], ns: string, start: () => Promise<void>): Promise<RaceAnswers> {
  const answers: RaceAnswers = { rbac: 0, quota: 0, admitted: [], other: [] };
  const deadline = Date.now() + 15_000;
  let n = 0;
  const loop = async () => {
    while (answers.quota < 20 && Date.now() < deadline) {
      const name = `s${n++}`;
      try {
        await client.create(`/api/v1/namespaces/${ns}/services`, { metadata: { name }, spec: { ports: [{ port: 80 }] } });
        answers.admitted.push(`${name} at ${new Date().toISOString()}`);
      } catch (err) {
        const message = err instanceof ApiError ? err.message : String(err);
        if (/exceeded (hierarchical )?quota|status unknown for quota/.test(message)) answers.quota++;
        else if (/403 Forbidden .*cannot create resource "services"/.test(message)) answers.rbac++;
        else answers.other.push(message);
      }
    }
  };
  const loops = [loop(), loop(), loop()];
  await start();
  await Promise.all(loops);
  return answers;
}
