// `npx tsx bench/get-subtree.ts [--size 1000] [--secrets 2] [--runs 5]`
//
// How long `kubectl hns get` takes over a large subtree, on a throwaway real control plane: a root
// with SIZE-1 child namespaces (tree labels written as HNC writes them; HNC itself is not running,
// so only the plugin and the API server are measured), SECRETS Secrets in each. Each figure is the
// median wall time of RUNS runs of the built bundle (dist/kubectl-hns.mjs; `npm run build:plugin`
// first), Node's start included, next to the plugin's bare start (`--help`) and to kubectl's own
// `get secrets -A`. The subtree is listed twice: as admin (one cluster-wide list, filtered) and as
// a user who may list Secrets only in the subtree's namespaces (one list per namespace). See
// docs/benchmarks.md.
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { KubeClient } from '../kube/client.js';
import { LocalControlPlane } from '../local-cluster/index.js';
import { pluginBundle, timeCommand } from './commands.js';
import { log, pool } from './util.js';

const bundle = pluginBundle();
const { values } = parseArgs({
  options: { size: { type: 'string', default: '1000' }, secrets: { type: 'string', default: '2' }, runs: { type: 'string', default: '5' } },
});
const size = Number(values.size);
const perNamespace = Number(values.secrets);
const runs = Number(values.runs);
const time = (cmd: string, args: string[], env: NodeJS.ProcessEnv) => timeCommand(cmd, args, env, runs);

const cp = await LocalControlPlane.start({ controllerManager: false, log: () => undefined });
try {
  const admin = await KubeClient.fromKubeconfig(cp.kubeconfigPath);
  const rootNs = 'bench-root';
  const names = [rootNs, ...Array.from({ length: size - 1 }, (_, i) => `bench-${String(i).padStart(4, '0')}`)];
  const t0 = Date.now();
  await pool(names, 16, (name) =>
    admin.create('/api/v1/namespaces', {
      metadata: {
        name,
        labels: { [`${rootNs}.tree.hnc.x-k8s.io/depth`]: name === rootNs ? '0' : '1', [`${name}.tree.hnc.x-k8s.io/depth`]: '0' },
      },
    }),
  );
  // Namespaces outside the subtree, with as many Secrets: -A lists twice what the subtree holds.
  const others = Array.from({ length: size }, (_, i) => `other-${String(i).padStart(4, '0')}`);
  await pool(others, 16, (name) => admin.create('/api/v1/namespaces', { metadata: { name } }));
  await pool([...names, ...others], 16, async (ns) => {
    for (let i = 0; i < perNamespace; i++) {
      await admin.create(`/api/v1/namespaces/${ns}/secrets`, { metadata: { name: `s${i}` }, stringData: { k: 'v' } });
    }
  });
  log(
    `created ${names.length + others.length} namespaces and ${(names.length + others.length) * perNamespace} Secrets in ${Date.now() - t0} ms`,
  );

  // lead may list namespaces but read Secrets only in the subtree's namespaces (a RoleBinding in
  // each): her `get` cannot list cluster-wide, so it lists namespace by namespace.
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  await admin.create(`${rbac}/clusterroles`, {
    metadata: { name: 'bench-namespace-reader' },
    rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list'] }],
  });
  await admin.create(`${rbac}/clusterroles`, {
    metadata: { name: 'bench-secret-reader' },
    rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] }],
  });
  const lead = { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'lead' };
  await admin.create(`${rbac}/clusterrolebindings`, {
    metadata: { name: 'bench-lead' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'bench-namespace-reader' },
    subjects: [lead],
  });
  await pool(names, 16, (ns) =>
    admin.create(`${rbac}/namespaces/${ns}/rolebindings`, {
      metadata: { name: 'lead' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'bench-secret-reader' },
      subjects: [lead],
    }),
  );
  const leadKubeconfig = (await cp.mintUser('lead', [])).kubeconfigPath;

  const env = { ...process.env, KUBECONFIG: cp.kubeconfigPath, NO_COLOR: '1', HOME: cp.stateDir };
  const node = process.execPath;
  const kubectl = cp.binaries.kubectl;
  const k8s = execFileSync(kubectl ?? 'kubectl', ['version', '--client', '-o', 'json'], { env, encoding: 'utf8' });
  const results = {
    start: time(node, [bundle, '--help'], env),
    subtree: time(node, [bundle, 'get', 'secrets', '-n', rootNs], env),
    subtreePerNamespace: time(node, [bundle, 'get', 'secrets', '-n', rootNs], { ...env, KUBECONFIG: leadKubeconfig }),
    subtreeName: time(node, [bundle, 'get', 'secrets', '-n', rootNs, '-o', 'name'], env),
    all: time(node, [bundle, 'get', 'secrets', '-A'], env),
    kubectlAll: kubectl ? time(kubectl, ['get', 'secrets', '-A'], env) : undefined,
  };
  const expected = size * perNamespace;
  for (const r of [results.subtree, results.subtreePerNamespace]) {
    if (r.lines !== expected + 1) throw new Error(`the subtree listed ${r.lines - 1} Secrets, not ${expected}`);
  }
  console.log(
    JSON.stringify(
      { size, secretsPerNamespace: perNamespace, runs, kubectl: (JSON.parse(k8s) as { clientVersion?: unknown }).clientVersion, results },
      null,
      2,
    ),
  );
} finally {
  await cp.stop();
}
