// The HRQ phase (docs/benchmarks.md): a tree of namespaces with HierarchicalResourceQuotas at
// several depths (bench/hrq.ts), on the same control plane and against the same write floor as
// the topologies:
//  1. the tree, converged by HNC without HRQs; then the HRQs created with HNC stopped;
//  2. cold start with --enable-hrq: the time until every namespace's singleton ResourceQuota holds
//     the strictest limits above it and every HRQ's status is right, against the floor, and HNC's
//     writes against the minimum (one singleton per namespace, one status per HRQ);
//  3. a warm restart: nothing written, no object changed;
//  4. the `resourcesquotasstatus` webhook's latency at each offered rate, reviews straight to it;
//  5. two replicas with leader election: the same load sent to the leader and to the follower, which
//     forwards every raise to the leader (docs/hrq.md), and a second replica's start writes nothing.
import { join } from 'node:path';
import { hierarchyConfigurationPath } from '../core/api/paths.js';
import { HncProcess, LoadGenerator } from './hnc-process.js';
import { HRQ_API, QuotaTracker, expectedQuotas, placeHrqs, quotaTree } from './hrq.js';
import { hncWebhookHistogram, histogramDelta, scrape, waitQuiet, writeDelta, type HistogramSummary, type WriteDelta } from './metrics.js';
import type { FloorResult, Plane } from './plane.js';
import { log, pool, round, sleep } from './util.js';
import { versionDiff } from './verify.js';
import type { LatencyResult } from './webhook-load.js';

const LEASE = 'hnc-bench-hrq';

export interface HrqOptions {
  /** Namespaces in the tree (0: no HRQ phase). */
  size: number;
  /** Offered rates (reviews/s) of the open-loop loads on the quota webhook. */
  rates: number[];
  /** Seconds each load runs. */
  seconds: number;
  /** Measure forwarding with two replicas. */
  replicas: boolean;
  quietMs: number;
  timeoutMs: number;
  setupConcurrency: number;
  hncQps: number;
  hncWorkers: number;
  hncObjectWorkers: number;
}

export interface HrqWrites {
  /** Everything written at the API server while HNC started, but the quota system's own status writes. */
  apiserver: WriteDelta;
  /** The quota system's writes of the singletons' status (kube-controller-manager, not HNC). */
  quotaSystem: number;
  /** HNC's HRQ writes: singletons created or updated, HRQ statuses. */
  singletons: number;
  hrqStatus: number;
  /** Write attempts HNC's Writer counted (Events included). */
  manager: number;
  minimum: { singletons: number; hrqStatus: number; total: number };
  /** (singletons + hrqStatus) ÷ minimum. */
  ratio: number;
}

/** A load as the client saw it, and as the receiving process's own histogram saw it (arrival to answer). */
export type QuotaLoad = LatencyResult & { serverSide?: HistogramSummary };

export interface HrqResult {
  shape: { namespaces: number; depth: number; fanOut: number; hrqs: number; hrqsByDepth: Record<string, number> };
  floor: FloorResult;
  coldStart: {
    seconds: number;
    cachesSyncedSeconds: number;
    floorSeconds: number;
    ratioToFloor: number;
    writes: HrqWrites;
  };
  warmRestart: {
    seconds: number;
    writes: WriteDelta;
    managerWrites: number;
    objectsChanged: { changed: number; created: number; deleted: number };
  };
  /** One replica (it decides itself): the quota webhook at each offered rate. */
  webhook: QuotaLoad[];
  /** Two replicas: the same loads to the leader and to the follower (which forwards to the leader). */
  forwarding?: { leader: QuotaLoad[]; follower: QuotaLoad[]; secondReplicaWrites: number };
}

const sum = (byResource: Record<string, number>, ...keys: string[]) => keys.reduce((n, k) => n + (byResource[k] ?? 0), 0);

/** What the phase's steps share. */
interface HrqRun {
  plane: Plane;
  opts: HrqOptions;
  tree: ReturnType<typeof quotaTree>;
  namespaces: string[];
  hrqs: ReturnType<typeof placeHrqs>;
  expected: ReturnType<typeof expectedQuotas>;
  tracker: QuotaTracker;
  /** Every HNC process started, to end them all. */
  processes: HncProcess[];
}

type StartExtra = { hrq?: boolean; leaderElection?: { id: string }; port?: number };

/** A new HNC process, its code loaded (spawned before a timed start, so that node's start-up is not timed). */
async function spawnHnc(run: HrqRun): Promise<HncProcess> {
  const hnc = await HncProcess.spawn();
  run.processes.push(hnc);
  return hnc;
}

/** Starts HNC in `hnc` (a new process if none) with its webhooks, registered on the plane's webhook port. */
async function startHnc(run: HrqRun, label: string, extra: StartExtra = {}, spawned?: HncProcess) {
  const { plane, opts } = run;
  const hnc = spawned ?? (await spawnHnc(run));
  const started = await hnc.start({
    kubeconfig: plane.identity.kubeconfigPath,
    webhooks: true,
    webhookPort: extra.port ?? plane.webhookPort,
    registerPort: plane.webhookPort,
    qps: opts.hncQps,
    workers: opts.hncWorkers,
    objectWorkers: opts.hncObjectWorkers,
    logFile: join(plane.cp.stateDir, 'logs', `hnc-hrq-${label}.log`),
    hrq: extra.hrq,
    leaderElection: extra.leaderElection,
  });
  return { hnc, started };
}

/** The tree, converged by HNC (webhooks on, HRQ off); then the HRQs, with HNC stopped. */
async function setUp(run: HrqRun): Promise<void> {
  const { plane, opts, tree, namespaces, hrqs } = run;
  const { admin } = plane;
  await pool(namespaces, opts.setupConcurrency, (ns) => admin.create('/api/v1/namespaces', { metadata: { name: ns } }));
  await pool(
    namespaces.filter((ns) => tree.parent.get(ns)),
    opts.setupConcurrency,
    (ns) =>
      admin.create(hierarchyConfigurationPath(ns), {
        apiVersion: 'hnc.x-k8s.io/v1alpha2',
        kind: 'HierarchyConfiguration',
        metadata: { name: 'hierarchy', namespace: ns },
        spec: { parent: tree.parent.get(ns) },
      }),
  );
  const { hnc } = await startHnc(run, 'tree');
  await hnc.idle();
  await hnc.stop();
  await pool(hrqs, opts.setupConcurrency, (h) =>
    admin.create(`${HRQ_API}/namespaces/${h.namespace}/hierarchicalresourcequotas`, {
      apiVersion: 'hnc.x-k8s.io/v1alpha2',
      kind: 'HierarchicalResourceQuota',
      metadata: { name: h.name },
      spec: { hard: h.hard },
    }),
  );
  await run.tracker.start();
  await waitQuiet(admin, opts.quietMs);
}

/** HNC started with --enable-hrq on the tree and its HRQs, timed until every singleton and status is right. */
async function coldStart(run: HrqRun) {
  const { admin, floor } = run.plane;
  const singletonsMinimum = run.expected.singletons.size;
  const minimum = { singletons: singletonsMinimum, hrqStatus: run.hrqs.length, total: singletonsMinimum + run.hrqs.length };
  const floorSeconds = minimum.total / floor.writesPerSecond;
  log(`hrq: cold start (minimum ${minimum.total} writes, floor ${floorSeconds.toFixed(2)} s)`);
  const next = await spawnHnc(run);
  const m0 = await scrape(admin);
  const t0 = performance.now();
  const { hnc, started } = await startHnc(run, 'cold', { hrq: true }, next);
  const seconds = ((await run.tracker.whenConverged(run.opts.timeoutMs)) - t0) / 1000;
  await hnc.idle();
  const all = writeDelta(m0, await waitQuiet(admin, run.opts.quietMs));
  // The quota system's own status writes of the new singletons are kube-controller-manager's, not HNC's.
  const quotaSystem = sum(all.byResource, 'resourcequotas/status');
  const apiserver = { ...all, total: all.total - quotaSystem };
  delete apiserver.byResource['resourcequotas/status'];
  const singletons = sum(all.byResource, 'resourcequotas');
  const hrqStatus = sum(all.byResource, 'hierarchicalresourcequotas/status', 'hierarchicalresourcequotas');
  const manager = (await hnc.stats()).writesTotal;
  const writes: HrqWrites = {
    apiserver,
    quotaSystem,
    singletons,
    hrqStatus,
    manager,
    minimum,
    ratio: round((singletons + hrqStatus) / minimum.total, 4),
  };
  log(
    `hrq: converged in ${seconds.toFixed(2)} s; ${singletons} singleton + ${hrqStatus} HRQ status writes for a minimum of ${minimum.singletons} + ${minimum.hrqStatus}`,
  );
  const coldStart = {
    seconds: round(seconds, 3),
    cachesSyncedSeconds: round(started.startedMs / 1000, 3),
    floorSeconds: round(floorSeconds, 3),
    ratioToFloor: round(seconds / floorSeconds, 2),
    writes,
  };
  return { hnc, coldStart };
}

/** A new process with every singleton and status in place: it must write nothing. */
async function warmRestart(run: HrqRun, previous: HncProcess) {
  const { admin } = run.plane;
  const rv0 = run.tracker.versions();
  await previous.stop();
  const next = await spawnHnc(run);
  const m0 = await scrape(admin);
  const t0 = performance.now();
  const { hnc } = await startHnc(run, 'warm', { hrq: true }, next);
  await hnc.idle();
  const seconds = (performance.now() - t0) / 1000;
  const warm = {
    seconds: round(seconds, 2),
    writes: writeDelta(m0, await waitQuiet(admin, run.opts.quietMs)),
    managerWrites: (await hnc.stats()).writesTotal,
    objectsChanged: versionDiff(rv0, run.tracker.versions()),
  };
  log(`hrq: warm restart idle in ${seconds.toFixed(2)} s; ${warm.writes.total} writes, ${JSON.stringify(warm.objectsChanged)}`);
  return { hnc, warm };
}

/** The quota webhook of `proc` (listening on `port`) under an open-loop load at each rate. */
async function quotaLoads(run: HrqRun, proc: HncProcess, port: number, rates: number[], label: string): Promise<QuotaLoad[]> {
  const { admin } = run.plane;
  const secret = await admin.get<{ data: Record<string, string> }>('/api/v1/namespaces/hnc-system/secrets/hnc-webhook-server-cert');
  const ca = Buffer.from(secret.data['ca.crt']!, 'base64').toString('utf8');
  const root = run.tree.root;
  const targets = { root, leaves: [root], otherParent: root, copy: { namespace: root, name: 'x', from: root } };
  const gen = await LoadGenerator.start({ port, ca, targets, labels: {}, quotaNamespaces: run.namespaces });
  try {
    await gen.warm(Math.min(400, Math.max(...rates, 100) * run.opts.seconds));
    const metricsPort = (await proc.stats()).metricsPort;
    const hist = () => (metricsPort ? hncWebhookHistogram(metricsPort).catch(() => undefined) : Promise.resolve(undefined));
    const out: QuotaLoad[] = [];
    for (const rate of rates) {
      const hb = await hist();
      const res = await gen.run({ mode: 'open', rate }, Math.max(50, Math.round(rate * run.opts.seconds)));
      const ha = await hist();
      out.push({ ...res, ...(hb && ha ? { serverSide: histogramDelta(hb, ha) } : {}) });
      log(`hrq: quota webhook (${label}) at ${rate}/s: p50 ${res.overall.p50.toFixed(2)} ms, p99 ${res.overall.p99.toFixed(2)} ms`);
    }
    return out;
  } finally {
    await gen.stop();
  }
}

/** Two replicas: a leader on the registered port, a follower on another that forwards every raise to it. */
async function forwarding(run: HrqRun, previous: HncProcess): Promise<NonNullable<HrqResult['forwarding']>> {
  const { admin, webhookPort } = run.plane;
  await previous.stop();
  const lease = { id: LEASE };
  const { hnc: leader } = await startHnc(run, 'leader', { hrq: true, leaderElection: lease });
  // Leadership has no watch of its own from here: ask the process (cheap, over IPC) until it says so.
  for (const until = performance.now() + 30_000; !(await leader.stats()).leading; await sleep(100))
    if (performance.now() > until) throw new Error('timed out waiting for the first replica to lead');
  await leader.idle();
  const f0 = await scrape(admin);
  const { hnc: follower, started } = await startHnc(run, 'follower', { hrq: true, leaderElection: lease, port: 0 });
  await follower.idle();
  const f1 = await waitQuiet(admin, run.opts.quietMs);
  if ((await follower.stats()).leading) throw new Error('the second replica leads: forwarding would not be measured');
  const result = { leader: [] as QuotaLoad[], follower: [] as QuotaLoad[], secondReplicaWrites: writeDelta(f0, f1).total };
  // Interleaved, so that both see the same machine.
  for (const rate of run.opts.rates) {
    result.leader.push(...(await quotaLoads(run, leader, webhookPort, [rate], 'leader')));
    result.follower.push(...(await quotaLoads(run, follower, started.webhookPort!, [rate], 'follower, forwarded to the leader')));
  }
  return result;
}

export async function runHrq(plane: Plane, opts: HrqOptions): Promise<HrqResult> {
  const tree = quotaTree(opts.size);
  const namespaces = [...tree.parent.keys()];
  const hrqs = placeHrqs(tree);
  const hrqsByDepth: Record<string, number> = {};
  for (const h of hrqs) hrqsByDepth[String(tree.depth.get(h.namespace))] = (hrqsByDepth[String(tree.depth.get(h.namespace))] ?? 0) + 1;
  const shape = {
    namespaces: namespaces.length,
    depth: Math.max(...tree.depth.values()),
    fanOut: tree.fanOut,
    hrqs: hrqs.length,
    hrqsByDepth,
  };
  log(
    `hrq: ${shape.namespaces} namespaces (depth ${shape.depth}, fan-out ${shape.fanOut}), ${hrqs.length} HRQs by depth ${JSON.stringify(hrqsByDepth)}`,
  );
  const expected = expectedQuotas(tree, hrqs);
  const run: HrqRun = { plane, opts, tree, namespaces, hrqs, expected, tracker: new QuotaTracker(plane.admin, expected), processes: [] };
  try {
    await setUp(run);
    const cold = await coldStart(run);
    const { hnc, warm } = await warmRestart(run, cold.hnc);
    const webhook = await quotaLoads(run, hnc, plane.webhookPort, opts.rates, 'one replica');
    return {
      shape,
      floor: plane.floor,
      coldStart: cold.coldStart,
      warmRestart: warm,
      webhook,
      forwarding: opts.replicas ? await forwarding(run, hnc) : undefined,
    };
  } finally {
    await run.tracker.stop().catch(() => undefined);
    for (const c of run.processes) await c.kill().catch(() => undefined);
    for (const kind of [
      'validatingwebhookconfigurations/hnc-validating-webhook-configuration',
      'mutatingwebhookconfigurations/hnc-mutating-webhook-configuration',
    ])
      await plane.admin.delete(`/apis/admissionregistration.k8s.io/v1/${kind}`).catch(() => undefined);
  }
}
