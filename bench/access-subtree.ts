// `npx tsx bench/access-subtree.ts [--size 1000] [--bindings 10] [--runs 5]`
//
// How long `kubectl hns access` takes over a large subtree, on a throwaway real control plane: a
// root with 10 team namespaces and SIZE-11 namespaces below them (tree labels written as HNC
// writes them), BINDINGS RoleBindings in the root (each to two groups) and their BINDINGS copies
// (labelled `hnc.x-k8s.io/inherited-from`, as HNC makes them) in every other namespace of the
// subtree. HNC itself is not running, so only the plugin and the API server are measured. As many
// namespaces outside the subtree, with 2 RoleBindings each, so a cluster-wide list reads more than
// the subtree. Each figure is the median wall time of RUNS runs of the built bundle
// (dist/kubectl-hns.mjs; `npm run build:plugin` first), Node's start included, next to the
// plugin's bare start (`--help`): as admin (one cluster-wide list of RoleBindings, filtered), as a
// user who may list RoleBindings only in the subtree's namespaces (one list per namespace), and
// `--subject` over the whole cluster. See docs/benchmarks.md.
import { parseArgs } from 'node:util';
import { KubeClient } from '../kube/client.js';
import { LocalControlPlane } from '../local-cluster/index.js';
import { pluginBundle, timeCommand } from './commands.js';
import { log, pool } from './util.js';

const bundle = pluginBundle();
const { values } = parseArgs({
  options: {
    size: { type: 'string', default: '1000' },
    bindings: { type: 'string', default: '10' },
    runs: { type: 'string', default: '5' },
  },
});
const size = Number(values.size);
const perNamespace = Number(values.bindings);
const runs = Number(values.runs);
const time = (cmd: string, args: string[], env: NodeJS.ProcessEnv) => timeCommand(cmd, args, env, runs);

const rbac = '/apis/rbac.authorization.k8s.io/v1';
const ROLES = ['admin', 'edit', 'view'];
const binding = (i: number, from?: string) => ({
  metadata: {
    name: `rb-${i}`,
    ...(from ? { labels: { 'hnc.x-k8s.io/inherited-from': from, 'app.kubernetes.io/managed-by': 'hnc.x-k8s.io' } } : {}),
  },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: ROLES[i % ROLES.length] },
  subjects: [
    { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: `group-${i}` },
    { apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'everyone' },
  ],
});

const cp = await LocalControlPlane.start({ controllerManager: false, log: () => undefined });
try {
  const admin = await KubeClient.fromKubeconfig(cp.kubeconfigPath);
  const rootNs = 'bench-root';
  const teams = Array.from({ length: 10 }, (_, i) => `team-${i}`);
  const leaves = Array.from({ length: size - 1 - teams.length }, (_, i) => `svc-${String(i).padStart(4, '0')}`);
  const parentOf = (leaf: number) => teams[leaf % teams.length]!;
  const depth = (labels: Record<string, number>) =>
    Object.fromEntries(Object.entries(labels).map(([k, v]) => [`${k}.tree.hnc.x-k8s.io/depth`, String(v)]));
  const t0 = Date.now();
  await admin.create('/api/v1/namespaces', { metadata: { name: rootNs, labels: depth({ [rootNs]: 0 }) } });
  await pool(teams, 16, (t) => admin.create('/api/v1/namespaces', { metadata: { name: t, labels: depth({ [t]: 0, [rootNs]: 1 }) } }));
  await pool(leaves, 16, (name, i) =>
    admin.create('/api/v1/namespaces', { metadata: { name, labels: depth({ [name]: 0, [parentOf(i)]: 1, [rootNs]: 2 }) } }),
  );
  const others = Array.from({ length: size }, (_, i) => `other-${String(i).padStart(4, '0')}`);
  await pool(others, 16, (name) => admin.create('/api/v1/namespaces', { metadata: { name } }));
  const subtree = [rootNs, ...teams, ...leaves];
  await pool(subtree, 16, async (ns) => {
    for (let i = 0; i < perNamespace; i++)
      await admin.create(`${rbac}/namespaces/${ns}/rolebindings`, binding(i, ns === rootNs ? undefined : rootNs));
  });
  await pool(others, 16, async (ns) => {
    for (let i = 0; i < 2; i++) await admin.create(`${rbac}/namespaces/${ns}/rolebindings`, binding(i));
  });
  log(
    `created ${subtree.length + others.length} namespaces and ${subtree.length * perNamespace + others.length * 2} RoleBindings in ${Date.now() - t0} ms`,
  );

  // lead may list namespaces but read RoleBindings only in the subtree's namespaces (a RoleBinding
  // in each, counted in the output): her `access` lists namespace by namespace.
  await admin.create(`${rbac}/clusterroles`, {
    metadata: { name: 'bench-namespace-reader' },
    rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list'] }],
  });
  await admin.create(`${rbac}/clusterroles`, {
    metadata: { name: 'bench-rbac-reader' },
    rules: [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['rolebindings', 'roles'], verbs: ['get', 'list'] }],
  });
  const lead = { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'lead' };
  await admin.create(`${rbac}/clusterrolebindings`, {
    metadata: { name: 'bench-lead' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'bench-namespace-reader' },
    subjects: [lead],
  });
  await pool(subtree, 16, (ns) =>
    admin.create(`${rbac}/namespaces/${ns}/rolebindings`, {
      metadata: { name: 'lead' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'bench-rbac-reader' },
      subjects: [lead],
    }),
  );
  const leadKubeconfig = (await cp.mintUser('lead', [])).kubeconfigPath;

  const env = { ...process.env, KUBECONFIG: cp.kubeconfigPath, NO_COLOR: '1', HOME: cp.stateDir };
  const node = process.execPath;
  const results = {
    start: time(node, [bundle, '--help'], env),
    subtree: time(node, [bundle, 'access', rootNs], env),
    subtreeJson: time(node, [bundle, 'access', rootNs, '-o', 'json'], env),
    subtreePerNamespace: time(node, [bundle, 'access', rootNs], { ...env, KUBECONFIG: leadKubeconfig }),
    subject: time(node, [bundle, 'access', '--subject', 'group:group-3'], env),
  };
  console.log(JSON.stringify({ size, bindingsPerNamespace: perNamespace, runs, results }, null, 2));
  // Two grants per binding (group-N and everyone), lead's own binding in each namespace, a header.
  const expected = size * perNamespace * 2 + size + 1;
  for (const r of [results.subtree, results.subtreePerNamespace]) {
    if (r.lines !== expected) throw new Error(`access listed ${r.lines - 1} grants, not ${expected - 1}`);
  }
  if (results.subject.lines !== size + 1) throw new Error(`--subject listed ${results.subject.lines - 1} grants, not ${size}`);
} finally {
  await cp.stop();
}
