// Issue #31: with HNC down (its process frozen by SIGSTOP, so that every call to its webhooks hangs
// until the API server's timeout, the worst case), ordinary writes go through at once, the rules
// that need no forest are still enforced by the API server (ValidatingAdmissionPolicies), and only
// what needs HNC's forest is refused, naming HNC's webhook. Each row's outcome and time are printed.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MANAGER_GROUPS, MANAGER_USER } from '../../kube/install.js';
import { mintUser } from '../../local-cluster/index.js';
import { TestCluster, eventually, kubectl } from '../support/cluster.js';
import { setParent, treeDepths } from '../support/hnc.js';
import { removeWebhookConfigurations, waitForWebhooks } from '../support/manager.js';

const root = join(import.meta.dirname, '..', '..');
let cluster: TestCluster;
let proc: ChildProcess | undefined;
let stderr = '';
let parent: string;
let child: string;
let teamB: string;
const newNamespace = TestCluster.uniqueName('down-new');

const rbac = (ns: string, kind: 'roles' | 'rolebindings', name = '') =>
  `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/${kind}${name ? `/${name}` : ''}`;

beforeAll(async () => {
  cluster = await TestCluster.connect();
  const manager = await mintUser(inject('stateDir'), MANAGER_USER, MANAGER_GROUPS);
  // `npm start -- --kubeconfig K`: HNC as a process of its own, registered by URL on 127.0.0.1.
  proc = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(root, 'cmd', 'start.ts'),
      '--kubeconfig',
      manager.kubeconfigPath,
      '--webhook-server-port',
      '0',
      '--metrics-addr=',
      '--health-probe-bind-address=',
    ],
    {
      cwd: root,
      env: { ...process.env, KUBECONFIG: '', HNC_LOG_FILE: join(inject('stateDir'), 'logs', 'hnc-down.log') },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  await eventually(async () => (stderr.includes('HNC is running') ? true : undefined), 'HNC to start', 90_000).catch((e: unknown) => {
    throw new Error(`${String(e)}\n${stderr}`);
  });
  await waitForWebhooks(cluster.kubeconfigPath);
  parent = await cluster.namespace('down-parent');
  child = await cluster.namespace('down-child');
  teamB = await cluster.namespace('team-b');
  await setParent(cluster.admin, child, parent);
  await eventually(async () => ((await treeDepths(cluster.admin, child))?.[parent] === 1 ? true : undefined), 'child under parent');
  await cluster.admin.create(rbac(parent, 'roles'), {
    metadata: { name: 'reader' },
    rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
  });
  await eventually(() => cluster.admin.get(rbac(child, 'roles', 'reader')), 'the copy');
  await eventually(
    async () =>
      (await cluster.admin.get<{ metadata: { labels?: Record<string, string> } }>(`/api/v1/namespaces/${teamB}`)).metadata.labels?.[
        'hnc.x-k8s.io/included-namespace'
      ] === 'true'
        ? true
        : undefined,
    'team-b managed',
  );
  // The policies are in effect (the API server has loaded them): a forged copy is refused by them.
  await eventually(async () => {
    const r = await kubectl(cluster.kubeconfigPath, [
      'create',
      'role',
      'probe',
      '-n',
      child,
      '--verb=get',
      '--resource=pods',
      '--dry-run=server',
      '-o',
      'name',
    ]);
    return r.code === 0 ? true : undefined;
  }, 'the API server to accept an ordinary role');
  proc.kill('SIGSTOP');
}, 180_000);

afterAll(async () => {
  if (proc && proc.exitCode === null) {
    proc.kill('SIGCONT');
    proc.kill('SIGINT'); // a run outside the cluster removes its configurations and policies when it stops
    await new Promise((resolve) => proc!.once('exit', resolve));
  }
  await removeWebhookConfigurations();
  await cluster?.admin.delete(`/api/v1/namespaces/${newNamespace}`).catch(() => undefined);
  await cluster?.cleanup();
});

interface Outcome {
  ok: boolean;
  ms: number;
  message: string;
}

async function attempt(op: () => Promise<unknown>): Promise<Outcome> {
  const t0 = performance.now();
  try {
    await op();
    return { ok: true, ms: performance.now() - t0, message: '' };
  } catch (err) {
    return { ok: false, ms: performance.now() - t0, message: (err as Error).message };
  }
}

const merge = (path: string, body: unknown) => cluster.admin.request('PATCH', path, { body, contentType: 'application/merge-patch+json' });
const nsPath = (ns: string) => `/api/v1/namespaces/${ns}`;
const policy = (name: string) => `ValidatingAdmissionPolicy '${name}.hnc.x-k8s.io' with binding '${name}.hnc.x-k8s.io' denied request: `;
const results: string[] = [];
const record = (row: string, o: Outcome) =>
  results.push(
    `${row.padEnd(58)} ${(o.ok ? 'allowed' : 'refused').padEnd(8)} ${o.ms.toFixed(0).padStart(5)} ms  ${o.message.slice(0, 160)}`,
  );

describe('with every HNC replica down (its process frozen)', () => {
  afterAll(() => console.log(`\nHNC frozen: operation, outcome, time\n${results.join('\n')}`));

  // No webhook call at all (< 1 s), or one that fails open within its 1 s timeout (< 2 s).
  const succeeds: Array<[string, number, () => Promise<unknown>]> = [
    [
      'create a namespace (mutator called, fails open)',
      2000,
      () => cluster.admin.create('/api/v1/namespaces', { metadata: { name: newNamespace } }),
    ],
    ['label a managed namespace', 1000, () => merge(nsPath(teamB), { metadata: { labels: { foo: 'bar' } } })],
    ['annotate a managed namespace', 1000, () => merge(nsPath(teamB), { metadata: { annotations: { foo: 'bar' } } })],
    ['label an excluded namespace', 1000, () => merge(nsPath('kube-public'), { metadata: { labels: { touched: 'yes' } } })],
    [
      'create a configmap in an excluded namespace',
      1000,
      () => cluster.admin.create('/api/v1/namespaces/kube-public/configmaps', { metadata: { generateName: 'down-' } }),
    ],
    [
      'create a RoleBinding (a source) in a managed namespace',
      2000,
      () =>
        cluster.admin.create(rbac(child, 'rolebindings'), {
          metadata: { name: 'mine' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'dave' }],
        }),
    ],
    ['update that RoleBinding', 2000, () => merge(rbac(child, 'rolebindings', 'mine'), { metadata: { labels: { edited: 'yes' } } })],
    ['delete that RoleBinding', 1000, () => cluster.admin.delete(rbac(child, 'rolebindings', 'mine'))],
  ];
  for (const [row, maxMs, op] of succeeds)
    it(`succeeds: ${row}, within ${maxMs} ms`, async () => {
      const o = await attempt(op);
      record(row, o);
      expect(o.message).toBe('');
      expect(o.ms).toBeLessThan(maxMs);
    });

  // Refused by the API server itself, with HNC's message, without calling HNC (< 1 s).
  const refusedByApiServer: Array<[string, string, () => Promise<unknown>]> = [
    [
      'create an object labelled inherited-from',
      `${policy('propagated-copies')}cannot create objects with the label "hnc.x-k8s.io/inherited-from"`,
      () =>
        cluster.admin.create(rbac(child, 'roles'), {
          metadata: { name: 'forged', labels: { 'hnc.x-k8s.io/inherited-from': parent } },
          rules: [],
        }),
    ],
    [
      'edit a copy',
      `${policy('propagated-copies')}cannot modify object propagated from namespace "PARENT"`,
      () => merge(rbac(child, 'roles', 'reader'), { metadata: { labels: { mine: 'yes' } } }),
    ],
    [
      "change a copy's rules",
      `cannot modify object propagated from namespace "PARENT"`,
      () => merge(rbac(child, 'roles', 'reader'), { rules: [] }),
    ],
    [
      "change a copy's inherited-from label",
      `${policy('propagated-copies')}cannot modify the label "hnc.x-k8s.io/inherited-from"`,
      () => merge(rbac(child, 'roles', 'reader'), { metadata: { labels: { 'hnc.x-k8s.io/inherited-from': 'elsewhere' } } }),
    ],
    [
      'delete a copy',
      `${policy('propagated-copies')}cannot delete object propagated from namespace "PARENT"`,
      () => cluster.admin.delete(rbac(child, 'roles', 'reader')),
    ],
    [
      'set a tree label',
      `${policy('namespace-labels')}cannot set or modify tree label "team-a.tree.hnc.x-k8s.io/depth" in namespace "TEAMB"; these can only be managed by HNC`,
      () => merge(nsPath(teamB), { metadata: { labels: { 'team-a.tree.hnc.x-k8s.io/depth': '1' } } }),
    ],
    [
      'remove a tree label',
      `cannot remove tree label "TEAMB.tree.hnc.x-k8s.io/depth"`,
      () => merge(nsPath(teamB), { metadata: { labels: { [`${teamB}.tree.hnc.x-k8s.io/depth`]: null } } }),
    ],
    [
      'change the included-namespace label',
      `${policy('namespace-labels')}you cannot change the value of the "hnc.x-k8s.io/included-namespace" label`,
      () => merge(nsPath(teamB), { metadata: { labels: { 'hnc.x-k8s.io/included-namespace': 'false' } } }),
    ],
    [
      'forge the included-namespace label on an excluded namespace',
      'you cannot enforce webhook rules on this unmanaged namespace',
      () => merge(nsPath('kube-public'), { metadata: { labels: { 'hnc.x-k8s.io/included-namespace': 'true' } } }),
    ],
  ];
  for (const [row, message, op] of refusedByApiServer)
    it(`refused by the API server: ${row}`, async () => {
      const o = await attempt(op);
      record(row, o);
      expect(o.ok).toBe(false);
      expect(o.message).toContain(message.replace('TEAMB', teamB).replace('PARENT', parent));
      expect(o.message).toMatch(/403 Forbidden/);
      expect(o.ms).toBeLessThan(1000);
    });

  it('shows the API server’s refusal well in kubectl', async () => {
    const r = await kubectl(cluster.kubeconfigPath, ['delete', 'role', 'reader', '-n', child]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      `Error from server (Forbidden): roles.rbac.authorization.k8s.io "reader" is forbidden: ${policy('propagated-copies')}cannot delete object propagated from namespace "${parent}"`,
    );
  });

  // Refused, fail closed, because they need the forest: the message names HNC's webhook.
  const failClosed: Array<[string, string, () => Promise<unknown>]> = [
    [
      'change a parent (HierarchyConfiguration)',
      'hierarchyconfigurations.hnc.x-k8s.io',
      () =>
        cluster.admin.request('PATCH', `/apis/hnc.x-k8s.io/v1alpha2/namespaces/${teamB}/hierarchyconfigurations/hierarchy`, {
          body: { apiVersion: 'hnc.x-k8s.io/v1alpha2', kind: 'HierarchyConfiguration', metadata: { name: 'hierarchy' }, spec: { parent } },
          contentType: 'application/apply-patch+yaml',
          query: { fieldManager: 'hnc-down-test', force: true },
        }),
    ],
    [
      'create an anchor',
      'subnamespaceanchors.hnc.x-k8s.io',
      () =>
        cluster.admin.create(`/apis/hnc.x-k8s.io/v1alpha2/namespaces/${parent}/subnamespaceanchors`, {
          apiVersion: 'hnc.x-k8s.io/v1alpha2',
          kind: 'SubnamespaceAnchor',
          metadata: { name: TestCluster.uniqueName('sub') },
        }),
    ],
    [
      'set subnamespace-of',
      'namespaces.hnc.x-k8s.io',
      () => merge(nsPath(teamB), { metadata: { annotations: { 'hnc.x-k8s.io/subnamespace-of': parent } } }),
    ],
    ['delete a managed namespace', 'namespaces.hnc.x-k8s.io', () => cluster.admin.delete(nsPath(teamB))],
  ];
  for (const [row, webhook, op] of failClosed)
    it(`refused, failing closed: ${row}`, async () => {
      const o = await attempt(op);
      record(row, o);
      expect(o.ok).toBe(false);
      expect(o.message).toContain(`failed calling webhook "${webhook}"`);
    });
});
