// `npx tsx bench/preview.ts [--size 1000] [--objects 10] [--runs 5] [--profile DIR] [--controller] [--bundles A,B]`
//
// How long `kubectl hns set X --parent Y --dry-run` takes for a large move, on a throwaway real
// control plane: org ─┬─ team-a ── sub ── SIZE-1 children   (the subtree that moves: SIZE namespaces)
//                     └─ team-b ── SIZE other namespaces     (not moved; as many objects, so every
//                                                              cluster-wide list holds twice the subtree)
// team-a and team-b each hold OBJECTS RoleBindings, and every namespace below them holds a copy of
// each (OBJECTS inherited objects per namespace), with the tree labels and HierarchyConfigurations
// HNC writes. HNC itself is not running (its webhooks would add one admission round trip), so the
// plugin and the API server are measured. The preview moves `sub` from team-a to team-b: SIZE×OBJECTS
// copies created and as many deleted, and as many access changes. Each figure is the median wall
// time of RUNS runs of the built bundle (dist/kubectl-hns.mjs; `npm run build:plugin` first), Node's
// start included, next to the plugin's bare start (`--help`). Run as admin (one cluster-wide list
// per kind) and as `lead`, admin of org's subtree by a RoleBinding in each namespace, who may not
// list across the cluster (the forest is walked namespace by namespace). See docs/benchmarks.md.
//
// --controller: hnc-ts runs (bench/hnc-process.ts, webhooks on) and has caught up, so its counts are
// in HNCConfiguration's status and the preview makes the copies from the sources instead of
// reading them (docs/kubectl-hns.md); the run waits until the plugin says it does (HNS_PREVIEW_DEBUG).
// --bundles A,B: several builds of the plugin, each run in turn in every round on the same cluster
// (old and new interleaved), the admin's preview only (text and -o json).
import { checkedPreviewCounts, previewForest } from './preview-forest.js';
import { parseArgs } from 'node:util';
import { API_VERSION, Label, treeLabel } from '../core/api/constants.js';
import { desiredCopy } from '../core/propagation/copy.js';
import { spawnSync } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { KubeClient } from '../kube/client.js';
import { installCrds, installRbac, MANAGER_GROUPS, MANAGER_USER } from '../kube/install.js';
import { LocalControlPlane } from '../local-cluster/index.js';
import { median, pluginBundle, timeCommandOutput } from './commands.js';
import { HncProcess } from './hnc-process.js';
import { log, pool } from './util.js';

const bundle = pluginBundle();
const { values } = parseArgs({
  options: {
    size: { type: 'string', default: '1000' },
    objects: { type: 'string', default: '10' },
    runs: { type: 'string', default: '5' },
    /** A directory: one more admin preview, with a CPU profile (node --cpu-prof) written there. */
    profile: { type: 'string' },
    controller: { type: 'boolean', default: false },
    bundles: { type: 'string' },
  },
});
const size = Number(values.size);
const perNamespace = Number(values.objects);
const runs = Number(values.runs);
/** Median wall time (ms) of a kubectl-hns command and its last stdout. */
const time = (args: string[], env: NodeJS.ProcessEnv) => timeCommandOutput(process.execPath, [bundle, ...args], env, runs);

const cp = await LocalControlPlane.start({ log: () => undefined });
try {
  const admin = await KubeClient.fromKubeconfig(cp.kubeconfigPath);
  await installCrds(admin);
  await installRbac(admin);
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  const t0 = Date.now();

  // The forest, as HNC labels it: name -> parent.
  const { parents, moved, others, ancestry } = previewForest(size);
  await pool([...parents.keys()], 16, async (name) => {
    const labels: Record<string, string> = { [Label.includedNamespace]: 'true' };
    ancestry(name).forEach((a, depth) => (labels[treeLabel(a)] = String(depth)));
    await admin.create('/api/v1/namespaces', { metadata: { name, labels } });
    const parent = parents.get(name);
    const children = [...parents].filter(([, p]) => p === name).map(([c]) => c);
    // With its status as the controller writes it: a user who may not list namespaces walks down by status.children.
    if (parent || children.length)
      await admin.create(`/apis/hnc.x-k8s.io/v1alpha2/namespaces/${name}/hierarchyconfigurations`, {
        apiVersion: API_VERSION,
        kind: 'HierarchyConfiguration',
        metadata: { name: 'hierarchy', namespace: name },
        spec: parent ? { parent } : {},
        status: { children },
      });
  });

  // OBJECTS RoleBindings in each team, and a copy of each in every namespace below it, as HNC makes them.
  const sources = (team: string) =>
    Array.from({ length: perNamespace }, (_, i) => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: `${team}-rb-${i}`, namespace: team },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: i % 2 ? 'view' : 'edit' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: `${team}-group-${i}` }],
    }));
  const writes: Array<{ ns: string; body: object }> = [];
  for (const [team, below] of [
    ['team-a', moved],
    ['team-b', others],
  ] as const) {
    for (const src of sources(team)) {
      writes.push({ ns: team, body: src });
      for (const ns of below) writes.push({ ns, body: desiredCopy(src, team, ns) });
    }
  }
  // lead: admin of org and everything below it, by a RoleBinding in each namespace (as org's copied one would be).
  const lead = { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'lead' };
  const leadBinding = {
    metadata: { name: 'lead' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
    subjects: [lead],
  };
  for (const ns of parents.keys()) writes.push({ ns, body: leadBinding });
  await pool(writes, 16, ({ ns, body }) => admin.create(`${rbac}/namespaces/${ns}/rolebindings`, body));
  log(`created ${parents.size} namespaces and ${writes.length} RoleBindings in ${Date.now() - t0} ms`);
  const leadKubeconfig = (await cp.mintUser('lead', [])).kubeconfigPath;

  const env = { ...process.env, KUBECONFIG: cp.kubeconfigPath, NO_COLOR: '1', HOME: cp.stateDir };
  const move = ['set', 'sub', '--parent', 'team-b', '--dry-run'];
  let hnc: HncProcess | undefined;
  if (values.controller) {
    const t1 = Date.now();
    const identity = await cp.mintUser(MANAGER_USER, MANAGER_GROUPS);
    hnc = await HncProcess.spawn();
    await hnc.start({
      kubeconfig: identity.kubeconfigPath,
      webhooks: true,
      webhookPort: await freePort(),
      qps: 100_000,
      workers: 10,
      objectWorkers: 32,
      logFile: join(cp.stateDir, 'logs', 'hnc-preview.log'),
    });
    await hnc.idle();
    // Its counts are written once they stop moving: until then the plugin reads every copy.
    const deadline = Date.now() + 300_000;
    for (;;) {
      const r = spawnSync(process.execPath, [bundle, ...move, '-o', 'json'], { env: { ...env, HNS_PREVIEW_DEBUG: '1' }, encoding: 'utf8' });
      if (r.stderr.startsWith('preview: copies synthesized')) break;
      if (Date.now() > deadline) throw new Error(`the preview still reads every copy: ${r.stderr}`);
      await new Promise((done) => setTimeout(done, 1000));
    }
    log(`hnc-ts caught up, its counts written, in ${Date.now() - t1} ms`);
  }
  if (values.bundles) {
    const bundles = values.bundles.split(',').map((b) => resolve(b));
    const times = new Map(bundles.map((b) => [b, { text: [] as number[], json: [] as number[] }]));
    const outputs = new Map<string, Set<string>>();
    const once = (b: string, args: string[]) => {
      const r = timeCommandOutput(process.execPath, [b, ...args], env, 1);
      const key = args.join(' ');
      if (!outputs.has(key)) outputs.set(key, new Set());
      outputs.get(key)!.add(r.stdout);
      return r.ms;
    };
    for (let i = 0; i < runs; i++)
      for (const b of bundles) {
        times.get(b)!.text.push(once(b, move));
        times.get(b)!.json.push(once(b, [...move, '-o', 'json']));
      }
    const same = [...outputs.values()].every((o) => o.size === 1);
    const result = Object.fromEntries(
      [...times].map(([b, t]) => [b, { text: { median: median(t.text), runs: t.text }, json: { median: median(t.json), runs: t.json } }]),
    );
    for (const [b, t] of Object.entries(result))
      log(`${b}: text ${t.text.median} ms ${JSON.stringify(t.text.runs)}, json ${t.json.median} ms`);
    console.log(
      JSON.stringify({ size, objectsPerNamespace: perNamespace, runs, controller: values.controller, sameOutput: same, result }, null, 2),
    );
    if (!same) throw new Error('the builds printed different previews');
  } else {
    const timed = (name: string, r: { ms: number; stdout: string }) => {
      log(`${name}: ${r.ms} ms`);
      return r;
    };
    const results = {
      start: timed('start', time(['--help'], env)),
      previewText: timed('previewText', time(move, env)),
      previewJson: timed('previewJson', time([...move, '-o', 'json'], env)),
      previewClient: timed('previewClient', time(['set', 'sub', '--parent', 'team-b', '--dry-run=client'], env)),
      previewLead: timed('previewLead', time([...move, '-o', 'json'], { ...env, KUBECONFIG: leadKubeconfig })),
    };
    if (values.profile) {
      timeCommandOutput(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${values.profile}`, bundle, ...move], env, 1);
      log(`CPU profile of the admin preview in ${values.profile}`);
    }
    const counts: Record<string, unknown> = {};
    for (const key of ['previewJson', 'previewLead'] as const) {
      const c = checkedPreviewCounts(
        JSON.parse(results[key].stdout) as Parameters<typeof checkedPreviewCounts>[0],
        size,
        perNamespace,
        key,
      );
      counts[key] = c;
    }
    const ms = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, v.ms]));
    console.log(JSON.stringify({ size, objectsPerNamespace: perNamespace, runs, controller: values.controller, ms, counts }, null, 2));
  }
  await hnc?.stop();
} finally {
  await cp.stop();
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const srv = createServer();
    srv.once('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => done(port));
    });
  });
}
