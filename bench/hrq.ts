// The HRQ phase (docs/benchmarks.md, "Hierarchical quotas"): a tree of namespaces with
// HierarchicalResourceQuotas at several depths, on the same control plane and against the same
// floor as the topologies:
//  1. the tree, converged by HNC without HRQs; then the HRQs created with HNC stopped;
//  2. cold start with --enable-hrq: the time until every namespace's singleton ResourceQuota holds
//     the strictest limits above it and every HRQ's status is right (watched, not polled), against
//     the floor, and HNC's writes against the minimum (one singleton per namespace, one status per HRQ);
//  3. a warm restart: nothing written, no object changed;
//  4. the `resourcesquotasstatus` webhook's latency at each offered rate, reviews straight to it;
//  5. two replicas with leader election: the same load sent to the leader and to the follower, which
//     forwards every raise to the leader (docs/hrq.md): the difference is forwarding's cost.
import type { KubeClient } from '../kube/client.js';
import { Reflector } from '../kube/watch/reflector.js';
import type { KubeObject } from '../kube/watch/store.js';
import { canonicalQuantity, compareQuantities, parseQuantity } from '../core/quantity/quantity.js';
import { hierarchyConfigurationPath } from '../core/api/paths.js';
import { HncProcess, LoadGenerator } from './hnc-process.js';
import { hncWebhookHistogram, histogramDelta, scrape, waitQuiet, writeDelta, type HistogramSummary, type WriteDelta } from './metrics.js';
import type { FloorResult, Plane } from './plane.js';
import { versionDiff } from './verify.js';
import { log, pool, round } from './util.js';
import type { LatencyResult } from './webhook-load.js';
import { join } from 'node:path';

const HRQ_API = '/apis/hnc.x-k8s.io/v1alpha2';
const SINGLETON = 'hrq.hnc.x-k8s.io';
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

/** The tree: `hq`, then fan-out f at each of three levels (f = ⌈∛size⌉), cut at `size` namespaces, breadth first. */
export function quotaTree(size: number): {
  root: string;
  parent: Map<string, string | undefined>;
  depth: Map<string, number>;
  fanOut: number;
} {
  const fanOut = Math.max(2, Math.ceil(Math.cbrt(size)));
  const root = 'hq';
  const parent = new Map<string, string | undefined>([[root, undefined]]);
  const depth = new Map<string, number>([[root, 0]]);
  let level = [root];
  for (let d = 1; parent.size < size; d++) {
    const next: string[] = [];
    for (const p of level)
      for (let i = 0; i < fanOut && parent.size < size; i++) {
        const ns = `${p}-${i}`;
        parent.set(ns, p);
        depth.set(ns, d);
        next.push(ns);
      }
    level = next;
  }
  return { root, parent, depth, fanOut };
}

type Limits = Record<string, string>;

/**
 * HRQs at every depth, looser higher up and on different resources, so that a namespace's
 * strictest limits mix several HRQs: the root, every namespace at depth 1, every other at depth 2,
 * every tenth deeper.
 */
export function placeHrqs(tree: ReturnType<typeof quotaTree>): Array<{ namespace: string; name: string; hard: Limits }> {
  const out: Array<{ namespace: string; name: string; hard: Limits }> = [];
  let i = 0;
  for (const [ns, d] of tree.depth) {
    const n = i++;
    if (d === 0) out.push({ namespace: ns, name: 'org', hard: { services: '5000', pods: '20000', 'requests.cpu': '1000' } });
    else if (d === 1) out.push({ namespace: ns, name: 'division', hard: { services: '500', secrets: '300', 'requests.memory': '64Gi' } });
    else if (d === 2 && n % 2 === 0) out.push({ namespace: ns, name: 'team', hard: { services: '20', 'requests.cpu': '8', pods: '100' } });
    else if (d >= 3 && n % 10 === 0) out.push({ namespace: ns, name: 'app', hard: { services: '2', 'requests.cpu': '1500m' } });
  }
  return out;
}

const signature = (l: Record<string, string> | undefined) =>
  Object.entries(l ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

/** What HNC must reach: each namespace's singleton limits (the strictest above it) and each HRQ's status. */
export function expectedQuotas(
  tree: ReturnType<typeof quotaTree>,
  hrqs: ReturnType<typeof placeHrqs>,
): { singletons: Map<string, string>; statuses: Map<string, string> } {
  const byNs = new Map<string, Limits[]>();
  for (const h of hrqs) byNs.set(h.namespace, [...(byNs.get(h.namespace) ?? []), h.hard]);
  const singletons = new Map<string, string>();
  for (const ns of tree.parent.keys()) {
    const strictest: Limits = {};
    for (let at: string | undefined = ns; at !== undefined; at = tree.parent.get(at))
      for (const hard of byNs.get(at) ?? [])
        for (const [r, v] of Object.entries(hard))
          if (strictest[r] === undefined || compareQuantities(parseQuantity(v), parseQuantity(strictest[r])) < 0) strictest[r] = v;
    if (Object.keys(strictest).length)
      singletons.set(ns, signature(Object.fromEntries(Object.entries(strictest).map(([r, v]) => [r, canonicalQuantity(v)]))));
  }
  // Nothing runs in these namespaces: every subtree's usage is zero.
  const statuses = new Map<string, string>();
  for (const h of hrqs) {
    const hard = Object.fromEntries(Object.entries(h.hard).map(([r, v]) => [r, canonicalQuantity(v)]));
    statuses.set(`${h.namespace}/${h.name}`, `${signature(hard)}|${signature(Object.fromEntries(Object.keys(hard).map((r) => [r, '0'])))}`);
  }
  return { singletons, statuses };
}

interface Slim extends KubeObject {
  metadata: { name: string; namespace?: string; resourceVersion?: string; uid?: string };
  spec?: { hard?: Record<string, string> };
  status?: { hard?: Record<string, string>; used?: Record<string, string> };
}

const silent = { debug() {}, info() {}, warn() {}, error() {} };

/** Watches the singletons and the HRQs and says the moment both match what is expected. */
class QuotaTracker {
  readonly singletons: Reflector<Slim>;
  readonly hrqs: Reflector<Slim>;
  private okSingletons = new Set<string>();
  private okStatuses = new Set<string>();
  private waiters: Array<(t: number) => void> = [];

  constructor(
    client: KubeClient,
    private readonly expected: ReturnType<typeof expectedQuotas>,
  ) {
    const slim = (o: Slim): Slim => ({
      metadata: {
        name: o.metadata.name,
        namespace: o.metadata.namespace,
        resourceVersion: o.metadata.resourceVersion,
        uid: o.metadata.uid,
      },
      spec: { hard: o.spec?.hard },
      status: { hard: o.status?.hard, used: o.status?.used },
    });
    const opts = { client, transform: slim, freeze: false, pageSize: 2000, logger: silent };
    this.singletons = new Reflector<Slim>({ ...opts, path: '/api/v1/resourcequotas', fieldSelector: `metadata.name=${SINGLETON}` });
    this.hrqs = new Reflector<Slim>({ ...opts, path: `${HRQ_API}/hierarchicalresourcequotas` });
    this.singletons.addHandler((type, o) => {
      const ns = o.metadata.namespace!;
      if (type !== 'DELETED' && this.expected.singletons.get(ns) === signature(o.spec?.hard)) this.okSingletons.add(ns);
      else this.okSingletons.delete(ns);
      this.check();
    });
    this.hrqs.addHandler((type, o) => {
      const key = `${o.metadata.namespace}/${o.metadata.name}`;
      if (type !== 'DELETED' && this.expected.statuses.get(key) === `${signature(o.status?.hard)}|${signature(o.status?.used)}`)
        this.okStatuses.add(key);
      else this.okStatuses.delete(key);
      this.check();
    });
  }

  async start(): Promise<void> {
    this.singletons.start();
    this.hrqs.start();
    await Promise.all([this.singletons.synced, this.hrqs.synced]);
  }

  stop(): Promise<unknown> {
    return Promise.all([this.singletons.stop(), this.hrqs.stop()]);
  }

  get converged(): boolean {
    return this.okSingletons.size === this.expected.singletons.size && this.okStatuses.size === this.expected.statuses.size;
  }

  progress(): string {
    return `singletons ${this.okSingletons.size}/${this.expected.singletons.size}, HRQ statuses ${this.okStatuses.size}/${this.expected.statuses.size}`;
  }

  whenConverged(timeoutMs: number): Promise<number> {
    if (this.converged) return Promise.resolve(performance.now());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`HRQs not converged within ${timeoutMs} ms: ${this.progress()}`)), timeoutMs);
      this.waiters.push((t) => {
        clearTimeout(timer);
        resolve(t);
      });
    });
  }

  /** uid -> resourceVersion of every singleton and HRQ. */
  versions(): Map<string, string> {
    const out = new Map<string, string>();
    for (const r of [this.singletons, this.hrqs]) for (const o of r.store.list()) out.set(o.metadata.uid!, o.metadata.resourceVersion!);
    return out;
  }

  private check(): void {
    if (!this.waiters.length || !this.converged) return;
    const t = performance.now();
    const w = this.waiters;
    this.waiters = [];
    for (const done of w) done(t);
  }
}

const sum = (byResource: Record<string, number>, ...keys: string[]) => keys.reduce((n, k) => n + (byResource[k] ?? 0), 0);

export async function runHrq(plane: Plane, opts: HrqOptions): Promise<HrqResult> {
  const { admin, identity, floor, cp } = plane;
  const tree = quotaTree(opts.size);
  const namespaces = [...tree.parent.keys()];
  const hrqs = placeHrqs(tree);
  const expected = expectedQuotas(tree, hrqs);
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
  const children: HncProcess[] = [];
  const spawn = async () => {
    const p = await HncProcess.spawn();
    children.push(p);
    return p;
  };
  const start = (p: HncProcess, n: string, extra: { hrq?: boolean; leaderElection?: { id: string }; port?: number } = {}) =>
    p.start({
      kubeconfig: identity.kubeconfigPath,
      webhooks: true,
      webhookPort: extra.port ?? plane.webhookPort,
      registerPort: plane.webhookPort,
      qps: opts.hncQps,
      workers: opts.hncWorkers,
      objectWorkers: opts.hncObjectWorkers,
      logFile: join(cp.stateDir, 'logs', `hnc-hrq-${n}.log`),
      hrq: extra.hrq,
      leaderElection: extra.leaderElection,
    });
  const tracker = new QuotaTracker(admin, expected);
  let loadGenerator: LoadGenerator | undefined;
  try {
    // 1. The tree, converged by HNC (webhooks on, HRQ off); then the HRQs, with HNC stopped.
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
    let hnc = await spawn();
    await start(hnc, 'tree');
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
    await tracker.start();
    await waitQuiet(admin, opts.quietMs);

    // 2. Cold start with HRQs.
    const minimum = { singletons: expected.singletons.size, hrqStatus: hrqs.length, total: expected.singletons.size + hrqs.length };
    const floorSeconds = minimum.total / floor.writesPerSecond;
    log(`hrq: cold start (minimum ${minimum.total} writes, floor ${floorSeconds.toFixed(2)} s)`);
    hnc = await spawn();
    const m0 = await scrape(admin);
    const t0 = performance.now();
    const started = await start(hnc, 'cold', { hrq: true });
    const t1 = await tracker.whenConverged(opts.timeoutMs);
    await hnc.idle();
    const m1 = await waitQuiet(admin, opts.quietMs);
    const all = writeDelta(m0, m1);
    const quotaSystem = sum(all.byResource, 'resourcequotas/status');
    const apiserver = { ...all, total: all.total - quotaSystem };
    delete apiserver.byResource['resourcequotas/status'];
    const singletons = sum(all.byResource, 'resourcequotas');
    const hrqStatus = sum(all.byResource, 'hierarchicalresourcequotas/status', 'hierarchicalresourcequotas');
    const coldSeconds = (t1 - t0) / 1000;
    const writes: HrqWrites = {
      apiserver,
      quotaSystem,
      singletons,
      hrqStatus,
      manager: (await hnc.stats()).writesTotal,
      minimum,
      ratio: round((singletons + hrqStatus) / minimum.total, 4),
    };
    log(
      `hrq: converged in ${coldSeconds.toFixed(2)} s (${(coldSeconds / floorSeconds).toFixed(2)}x floor); ${singletons} singleton + ${hrqStatus} HRQ status writes for a minimum of ${minimum.singletons} + ${minimum.hrqStatus}; all HNC writes ${apiserver.total} (${JSON.stringify(apiserver.byResource)})`,
    );

    // 3. Warm restart.
    const rv0 = tracker.versions();
    await hnc.stop();
    hnc = await spawn();
    const m2 = await scrape(admin);
    const tw = performance.now();
    await start(hnc, 'warm', { hrq: true });
    await hnc.idle();
    const warmSeconds = (performance.now() - tw) / 1000;
    const m3 = await waitQuiet(admin, opts.quietMs);
    const warm = {
      seconds: round(warmSeconds, 2),
      writes: writeDelta(m2, m3),
      managerWrites: (await hnc.stats()).writesTotal,
      objectsChanged: versionDiff(rv0, tracker.versions()),
    };
    log(`hrq: warm restart idle in ${warmSeconds.toFixed(2)} s; ${warm.writes.total} writes, ${JSON.stringify(warm.objectsChanged)}`);

    // 4. The quota webhook under load, one replica.
    const secret = await admin.get<{ data: Record<string, string> }>('/api/v1/namespaces/hnc-system/secrets/hnc-webhook-server-cert');
    const ca = Buffer.from(secret.data['ca.crt']!, 'base64').toString('utf8');
    const targets = {
      root: tree.root,
      leaves: [tree.root],
      otherParent: tree.root,
      copy: { namespace: tree.root, name: 'x', from: tree.root },
    };
    const load = async (proc: HncProcess, port: number, rates: number[], label: string) => {
      loadGenerator = await LoadGenerator.start({ port, ca, targets, labels: {}, quotaNamespaces: namespaces });
      await loadGenerator.warm(Math.min(400, Math.max(...rates, 100) * opts.seconds));
      const metricsPort = (await proc.stats()).metricsPort;
      const hist = () => (metricsPort ? hncWebhookHistogram(metricsPort).catch(() => undefined) : Promise.resolve(undefined));
      const out: QuotaLoad[] = [];
      for (const rate of rates) {
        const hb = await hist();
        const res = await loadGenerator.run({ mode: 'open', rate }, Math.max(50, Math.round(rate * opts.seconds)));
        const ha = await hist();
        const r: QuotaLoad = { ...res, ...(hb && ha ? { serverSide: histogramDelta(hb, ha) } : {}) };
        const denied = Object.values(r.byRequest).reduce((n, x) => n + x.denied, 0);
        const errors = Object.values(r.byRequest).reduce((n, x) => n + x.errors, 0);
        log(
          `hrq: quota webhook (${label}) at ${rate}/s: p50 ${r.overall.p50.toFixed(2)} ms, p99 ${r.overall.p99.toFixed(2)} ms, max ${r.overall.max.toFixed(1)} ms (${r.requests} reviews, ${denied} refused, ${errors} errors; at most ${r.maxInFlight} in flight; HNC's own histogram: mean ${r.serverSide?.meanMs.toFixed(2) ?? '?'} ms, p99 ≤ ${r.serverSide?.p99UpperMs ?? '?'} ms)`,
        );
        out.push(r);
      }
      await loadGenerator.stop();
      loadGenerator = undefined;
      return out;
    };
    const webhook = await load(hnc, plane.webhookPort, opts.rates, 'one replica');

    // 5. Two replicas: a leader on the registered port, a follower on another.
    let forwarding: HrqResult['forwarding'];
    if (opts.replicas) {
      await hnc.stop();
      const leader = await spawn();
      await start(leader, 'leader', { hrq: true, leaderElection: { id: LEASE } });
      await waitFor(async () => (await leader.stats()).leading === true, 30_000, 'the first replica to lead');
      await leader.idle();
      const follower = await spawn();
      const f0 = await scrape(admin);
      const followerPort = (await start(follower, 'follower', { hrq: true, leaderElection: { id: LEASE }, port: 0 })).webhookPort!;
      await follower.idle();
      const f1 = await waitQuiet(admin, opts.quietMs);
      if ((await follower.stats()).leading) throw new Error('the second replica leads: forwarding would not be measured');
      const leaderRuns: QuotaLoad[] = [];
      const followerRuns: QuotaLoad[] = [];
      // Interleaved, so that both see the same machine.
      for (const rate of opts.rates) {
        leaderRuns.push(...(await load(leader, plane.webhookPort, [rate], 'leader')));
        followerRuns.push(...(await load(follower, followerPort, [rate], 'follower, forwarded to the leader')));
      }
      forwarding = { leader: leaderRuns, follower: followerRuns, secondReplicaWrites: writeDelta(f0, f1).total };
    }
    return {
      shape,
      floor,
      coldStart: {
        seconds: round(coldSeconds, 3),
        cachesSyncedSeconds: round(started.startedMs / 1000, 3),
        floorSeconds: round(floorSeconds, 3),
        ratioToFloor: round(coldSeconds / floorSeconds, 2),
        writes,
      },
      warmRestart: warm,
      webhook,
      forwarding,
    };
  } finally {
    await loadGenerator?.stop().catch(() => undefined);
    await tracker.stop().catch(() => undefined);
    for (const c of children) await c.kill().catch(() => undefined);
    for (const kind of [
      'validatingwebhookconfigurations/hnc-validating-webhook-configuration',
      'mutatingwebhookconfigurations/hnc-mutating-webhook-configuration',
    ]) {
      await admin.delete(`/apis/admissionregistration.k8s.io/v1/${kind}`).catch(() => undefined);
    }
  }
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const until = performance.now() + timeoutMs;
  // Leadership has no watch of its own from here: ask the process (cheap, over IPC) until it says so.
  while (!(await check())) {
    if (performance.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
