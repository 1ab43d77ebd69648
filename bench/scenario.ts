// One topology, measured from start to end on a control plane of its own: the floor, the cold
// start, the steady state, a warm restart, single-object propagation, subtree moves, and the
// webhooks under load. Every figure comes from this one run.
import { join } from 'node:path';
import { cpSync, mkdirSync } from 'node:fs';
import net from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { LocalControlPlane } from '../local-cluster/index.js';
import { isAlreadyExists, KubeClient } from '../kube/client.js';
import { installCrds, installRbac, MANAGER_GROUPS, MANAGER_USER } from '../kube/install.js';
import { HncProcess, LoadGenerator, ReviewFloorServer, type Controller } from './hnc-process.js';
import { GoHncProcess } from './hnc-go.js';
import type { ChildStats } from './hnc-child.js';
import {
  hncWebhookHistogram,
  histogramDelta,
  scrape,
  waitQuiet,
  writeDelta,
  webhookDelta,
  type WriteDelta,
  type HistogramSummary,
} from './metrics.js';
import { Tracker, collection, contentMark, INHERITED_FROM, type Arrivals } from './tracker.js';
import {
  pairPhase,
  runFloor,
  summarizePairs,
  type PairedPhase,
  type PairedSummary,
  type PairedTrial,
  type RunCost,
} from './paired-floor.js';
import { Writer } from '../kube/writer.js';
import {
  buildTopology,
  describe,
  descendants,
  expectedState,
  hierarchySignature,
  labelSignature,
  minimumWrites,
  placeSources,
  SOURCE_KINDS,
  type Expected,
  type MinimumWrites,
  type Source,
  type SourceKind,
  type TopologyName,
} from './topology.js';
import { cpuDelta, log, mb, pool, processesNamed, round, sampleCpu, sleep, summarize, type Summary } from './util.js';
import { apiserverClient, LOAD_USER, windowOf, windowsOf, type LatencyResult } from './webhook-load.js';
import { hierarchyConfigurationPath, hncCollectionPath, hncConfigurationPath } from '../core/api/paths.js';
import type { ThreadDelay } from '../webhooks/admission-protocol.js';
import { placeInCpuGroup } from './cgroups.js';

export interface ScenarioOptions {
  size: number;
  rootObjects: number;
  innerObjects: number;
  moveSize: number;
  maxChain: number;
  trials: number;
  moveTrials: number;
  /** Reviews of the closed-loop saturation run. */
  webhookRequests: number;
  /** Seconds each open-loop load runs. */
  webhookSeconds: number;
  /** HNC starts with webhooks before the load: 2 shows a restart with everything (certificate, configurations) in place. */
  webhookRestarts: number;
  /** Propagation trials with the webhooks on. */
  webhookTrials: number;
  /** Whether a topology gets the webhook phase (--quick runs it for the last topology only). */
  webhooksFor: (topology: TopologyName) => boolean;
  /** Give up on a cold start after this long (the rest of the topology is skipped; the run goes on). */
  coldTimeoutMs: number;
  /** Idle window right after the cold start (0: skip; the window after the warm restart is steadyMs). */
  coldSteadyMs: number;
  /** Idle window before the steady RSS with webhooks on (long enough for V8's memory reducer). */
  webhookSteadyMs: number;
  /** No write at the API server for this long = quiet (must exceed HNC's 1 s status coalescing). */
  quietMs: number;
  /** Offered rates (reviews/s) of the open-loop webhook loads. */
  webhookRates: number[];
  /** Seconds of open-loop load at the highest rate during which one new root Role propagates (0: skip). */
  webhookPropagationSeconds: number;
  /**
   * The same loads, at rest and during a copy, against a bare TLS server with a fixed answer in
   * HNC's CPU group (bench/hnc-process.ts, ReviewFloorServer): the machine's own floor for a review.
   */
  reviewFloor: boolean;
  /** Copies during the webhook load, each with a load of its own; their windows are pooled. */
  webhookPropagationTrials: number;
  /** Offered rate of dry-run requests through the API server. */
  apiserverRate: number;
  webhookConcurrency: number;
  floorWrites: number;
  floorConcurrency: number[];
  setupConcurrency: number;
  steadyMs: number;
  hncQps: number;
  hncWorkers: number;
  hncObjectWorkers: number;
  /** Stop each topology after the cold start, its steady state and the warm restart (no propagation trials, moves, webhooks). */
  coldOnly?: boolean;
  /** Extra node flags of the HNC process (HNC_BENCH_NODE_FLAGS). */
  hncNodeFlags: string[];
  /** The HNC process's allocator settings, NAME=value (the image's ENV, or HNC_BENCH_NODE_ENV). */
  hncNodeEnv: string[];
  profileDir?: string;
  /** Copy the control plane's and HNC's logs here before the plane is removed. */
  logDir?: string;
  /** Which manager is measured: ours (default) or HNC's Go manager (bench/hnc-go.ts), through the same phases. */
  controller?: 'hnc-ts' | 'hnc-go';
}

const HNC_CONFIG = hncConfigurationPath();
const HC = (ns: string) => hierarchyConfigurationPath(ns);

/**
 * A source's body; `updated`, the same source after an update trial's change, to one field its
 * copies carry (`contentMark` in bench/tracker.ts reads it back), of the same size of write.
 */
export function sourceBody(kind: SourceKind, name: string, updated = false): Record<string, unknown> {
  switch (kind) {
    case 'roles':
      return {
        metadata: { name, labels: { bench: 'source' } },
        rules: [{ apiGroups: [''], resources: ['pods', 'configmaps'], verbs: updated ? ['get', 'list'] : ['get', 'list', 'watch'] }],
      };
    case 'rolebindings':
      return {
        metadata: { name, labels: { bench: 'source' } },
        // The roleRef is immutable: an update that changed it would delete and recreate every copy.
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: `${name}-${updated ? 'editors' : 'readers'}` }],
      };
    case 'networkpolicies':
      return {
        metadata: { name, labels: { bench: 'source' } },
        spec: { podSelector: {}, policyTypes: updated ? ['Ingress', 'Egress'] : ['Ingress'], ingress: [{ from: [{ podSelector: {} }] }] },
      };
  }
}

async function listAll<T>(client: KubeClient, path: string, query: Record<string, string> = {}): Promise<T[]> {
  const items: T[] = [];
  let cont: string | undefined;
  do {
    const page = await client.get<{ items: T[]; metadata: { continue?: string } }>(path, { ...query, limit: 2000, continue: cont });
    items.push(...page.items);
    cont = page.metadata.continue || undefined;
  } while (cont);
  return items;
}

/** The cold start did not converge within --cold-timeout: the topology's other phases are skipped. */
export class ColdStartTimeout extends Error {
  override name = 'ColdStartTimeout';
  constructor(
    readonly topology: string,
    readonly partial: {
      seconds: number;
      minimumWrites: number;
      floorSeconds: number;
      progress: unknown;
      writesSoFar: number;
      cpu: Record<string, number>;
      shape: unknown;
    },
  ) {
    super(
      `the cold start had not converged after ${partial.seconds} s (floor ${partial.floorSeconds} s): ${JSON.stringify(partial.progress)}; ${partial.writesSoFar} of ${partial.minimumWrites} writes made; CPU s ${JSON.stringify(partial.cpu)}`,
    );
  }
}

// ---- the floor -----------------------------------------------------------------------------------

export interface FloorResult {
  /** Writes per second at each concurrency. */
  byConcurrency: Record<string, number>;
  /** The best of them: the floor's write rate. */
  writesPerSecond: number;
  concurrency: number;
  writes: number;
  cpu: Record<string, number>;
}

async function measureFloor(
  admin: KubeClient,
  writer: KubeClient,
  opts: ScenarioOptions,
  pids: Record<string, number | undefined>,
): Promise<FloorResult> {
  const ns = 'bench-floor';
  await admin.create('/api/v1/namespaces', { metadata: { name: ns } });
  let n = 0;
  const one = () => {
    const i = n++;
    const kind = SOURCE_KINDS[i % 3]!;
    return writer.create(collection(kind, ns), sourceBody(kind, `floor-${i}`));
  };
  // Warm-up: connections, the apiserver's caches, etcd.
  await pool(Array.from({ length: Math.min(300, Math.round(opts.floorWrites / 2)) }), 16, one);
  const byConcurrency: Record<string, number> = {};
  const cpu0 = sampleCpu(pids);
  let writes = 0;
  let wall = 0;
  for (const c of opts.floorConcurrency) {
    const t0 = performance.now();
    await pool(Array.from({ length: opts.floorWrites }), c, one);
    const s = (performance.now() - t0) / 1000;
    byConcurrency[String(c)] = round(opts.floorWrites / s, 0);
    writes += opts.floorWrites;
    wall += s;
    log(`floor: ${byConcurrency[String(c)]} writes/s at concurrency ${c}`);
  }
  const cpu = cpuDelta(cpu0, sampleCpu(pids));
  for (const k of Object.keys(cpu)) cpu[k] = round(cpu[k]! / wall, 2); // cores busy on average
  const best = Object.entries(byConcurrency).sort((a, b) => b[1] - a[1])[0]!;
  // Empty the namespace (one DELETECOLLECTION per kind); the namespace itself stays, a root HNC labels.
  for (const kind of SOURCE_KINDS) await admin.delete(collection(kind, ns));
  return { byConcurrency, writesPerSecond: best[1], concurrency: Number(best[0]), writes, cpu };
}

// ---- checks by listing -----------------------------------------------------------------------------

export interface Verification {
  ok: boolean;
  namespacesWrong: number;
  hierarchiesWrong: number;
  copiesMissing: number;
  copiesUnexpected: number;
}

async function verifyByListing(admin: KubeClient, expected: Expected): Promise<Verification> {
  const nss = await listAll<{ metadata: { name: string; labels?: Record<string, string> } }>(admin, '/api/v1/namespaces');
  const labels = new Map(nss.map((n) => [n.metadata.name, labelSignature(n.metadata.labels)]));
  let namespacesWrong = 0;
  for (const [ns, sig] of expected.labels) if (labels.get(ns) !== sig) namespacesWrong++;
  const hcs = await listAll<{ metadata: { namespace: string }; status?: { children?: string[]; conditions?: unknown[] } }>(
    admin,
    hncCollectionPath('hierarchyconfigurations'),
  );
  const hcSig = new Map(hcs.map((h) => [h.metadata.namespace, hierarchySignature(h)]));
  let hierarchiesWrong = 0;
  for (const [ns, sig] of expected.hierarchy) if ((hcSig.get(ns) ?? hierarchySignature(undefined)) !== sig) hierarchiesWrong++;
  const seen = new Map<string, string>();
  for (const kind of SOURCE_KINDS) {
    for (const o of await listAll<{ metadata: { namespace: string; name: string; labels: Record<string, string> } }>(
      admin,
      collection(kind),
      { labelSelector: INHERITED_FROM },
    )) {
      seen.set(`${kind}/${o.metadata.namespace}/${o.metadata.name}`, o.metadata.labels[INHERITED_FROM]!);
    }
  }
  let copiesMissing = 0;
  for (const [k, from] of expected.copies) if (seen.get(k) !== from) copiesMissing++;
  let copiesUnexpected = 0;
  for (const k of seen.keys()) if (!expected.copies.has(k) && expected.labels.has(k.split('/')[1]!)) copiesUnexpected++;
  const ok = namespacesWrong + hierarchiesWrong + copiesMissing + copiesUnexpected === 0;
  return { ok, namespacesWrong, hierarchiesWrong, copiesMissing, copiesUnexpected };
}

/** uid -> resourceVersion of everything HNC could write. */
async function versions(admin: KubeClient): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const paths = [
    '/api/v1/namespaces',
    hncCollectionPath('hierarchyconfigurations'),
    HNC_CONFIG,
    ...SOURCE_KINDS.map((k) => collection(k)),
    '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
    '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
    '/api/v1/namespaces/hnc-system/secrets',
  ];
  for (const p of paths)
    for (const o of await listAll<{ metadata: { uid: string; resourceVersion: string } }>(admin, p))
      out.set(o.metadata.uid, o.metadata.resourceVersion);
  return out;
}

function versionDiff(a: Map<string, string>, b: Map<string, string>): { changed: number; created: number; deleted: number } {
  let changed = 0;
  let created = 0;
  let deleted = 0;
  for (const [uid, rv] of b) {
    const old = a.get(uid);
    if (old === undefined) created++;
    else if (old !== rv) changed++;
  }
  for (const uid of a.keys()) if (!b.has(uid)) deleted++;
  return { changed, created, deleted };
}

// ---- results -----------------------------------------------------------------------------------------

export interface Memory {
  rssMB: number;
  heapUsedMB: number;
  /** Heap and RSS right after a full garbage collection (live data), taken after the other figures. */
  heapLiveMB?: number;
  rssAfterGcMB?: number;
  /** V8's heap as reserved (heapTotal) and memory outside it (Buffers, TLS), after that collection. */
  heapTotalAfterGcMB?: number;
  externalAfterGcMB?: number;
  /** Of the RSS after that collection: file-backed (node's binary, shared) and anonymous. */
  rssFileAfterGcMB?: number;
  rssAnonAfterGcMB?: number;
  peakRssMB: number;
  /** RSS of the same process before HNC started (node and the loaded code). */
  baselineRssMB: number;
  /** With webhooks on a thread: that thread's own V8 heap, used and reserved. */
  admissionHeapUsedMB?: number;
  admissionHeapTotalMB?: number;
}

const memory = (s: ChildStats, baseline: ChildStats | undefined): Memory => ({
  rssMB: mb(s.rss),
  heapUsedMB: mb(s.heapUsed),
  peakRssMB: mb(s.maxRss),
  baselineRssMB: mb(baseline?.rss ?? 0),
  ...(s.admissionEventLoop?.heapTotal !== undefined
    ? { admissionHeapUsedMB: mb(s.admissionEventLoop.heapUsed ?? 0), admissionHeapTotalMB: mb(s.admissionEventLoop.heapTotal) }
    : {}),
});
const cpuSeconds = (s: ChildStats) => (s.cpuUser + s.cpuSystem) / 1e6;

export interface WritesReport {
  /** Measured at the API server (apiserver_request_total deltas, every write verb, leases excluded). */
  apiserver: WriteDelta;
  /** Write attempts the manager's Writer counted (manager.writer.total). */
  manager: number;
  minimum: MinimumWrites;
  /** apiserver.total ÷ minimum.total. */
  ratio: number;
}

/** Event-loop delay (ms) of HNC's process and of the benchmark's (the client) during a load. */
export interface EventLoops {
  /** HNC's own histogram of the time it took to answer (from the request's arrival to its answer). */
  serverSide?: HistogramSummary;
  serverEventLoop: { p50: number; p99: number; max: number; gcMaxMs: number; gcTotalMs: number };
  /** The admission thread's own event-loop delay and GC pauses (webhooks on their thread; sampled every 10 ms). */
  admissionEventLoop?: ThreadDelay;
  /** The load generator's (its own process): event-loop delay and CPU used, % of a core. */
  clientEventLoop: { p50: number; p99: number; max: number };
  clientCpuPercent: number;
  /** The load generator's thread: ms per second it waited for a CPU (Linux). */
  clientRunQueueMsPerS?: number;
  /** The load generator's scheduling policy (`normal`, or `SCHED_FIFO N` with --generator-realtime). */
  clientPolicy?: string;
  /** Cores busy on average during the load, by process (kube-apiserver, etcd, hnc, generator, bench, others, machine). */
  coresBusy?: Record<string, number>;
}

export interface ScenarioResult {
  topology: TopologyName;
  shape: ReturnType<typeof describe> & { sources: { root: number; inner: number; innerNamespaces: string[] } };
  controlPlaneStartSeconds: number;
  /** True when this topology shared its control plane with others (--quick): earlier topologies' namespaces were present. */
  sharedPlane: boolean;
  /** Other kube-apiservers running on the machine during the cold start (another job competing for the cores). */
  otherApiServers: number;
  setup: { seconds: number; writes: number; settleSeconds: number };
  floor: FloorResult;
  coldStart: {
    seconds: number;
    cachesSyncedSeconds: number;
    idleSeconds: number;
    floorSeconds: number;
    ratioToFloor: number;
    writes: WritesReport;
    verified: Verification;
    cpu: Record<string, number>;
    managerCpuSeconds: number;
    /** HNC's event-loop delay (ms) and GC pauses during the cold start: how long anything else (a
     * webhook request, a watch event) could wait. */
    eventLoop: { p50: number; p99: number; max: number; gcMaxMs: number; gcTotalMs: number };
    memory: Memory;
  };
  steadyState: {
    seconds: number;
    cpuPercentAfterColdStart: number;
    memory: Memory;
    cpuPercentAfterWarmRestart: number;
    memoryAfterWarmRestart: Memory;
  };
  warmRestart: {
    seconds: number;
    writes: WriteDelta;
    managerWrites: number;
    objectsChanged: { changed: number; created: number; deleted: number };
    managerCpuSeconds: number;
  };
  /** Absent with --cold-only, as is `move`. */
  propagation?: {
    descendants: number;
    create: Summary;
    /** Until every copy has the source's new content (the paired trials). */
    update: Summary;
    delete: Summary;
    floorSeconds: number;
    p50RatioToFloor: number;
    p99RatioToFloor: number;
    writes: WritesReport;
    cpu: Record<string, number>;
    /** gcMinorMs: the part of gcTotalMs spent in scavenges (the young generation); the rest is full collections. */
    eventLoop: { p50: number; p99: number; max: number; gcMaxMs: number; gcTotalMs: number; gcMinorMs: number };
    /** Each trial between two floors of its own, measured right before and right after it (bench/paired-floor.ts). */
    pairedFloors: PairedFloors;
    /** With HNC's webhooks registered: latencies, and the webhook calls the API server made meanwhile (HNC's own copy writes included). */
    withWebhooks?: { create: Summary; delete: Summary; webhookCalls: Record<string, number>; copyWrites: number };
  };
  move?: { size: number; trials: Summary; minimumPerMove: number; writes: WritesReport };
  /** Absent for the topologies --quick runs without the webhook phase. */
  webhooks?: {
    /** Writes of HNC's first start with webhooks and of its last (a restart with everything in place when restarts ≥ 2). */
    restartWrites: {
      first: WriteDelta;
      last: WriteDelta;
      objectsChangedLast: { changed: number; created: number; deleted: number };
      restarts: number;
    };
    /** Reviews straight to the webhook server: open loop at each offered rate, and closed loop (saturation). */
    direct: Array<LatencyResult & EventLoops>;
    /**
     * The same open-loop load while one new root Role propagates to every descendant: the reviews
     * sent between the Role's creation and its last copy (`during`), the whole load (`all`), and the
     * propagation's own time against the floor of the same run.
     */
    duringPropagation?: {
      during: LatencyResult;
      all: LatencyResult & EventLoops;
      copies: number;
      propagationMs: number;
      floorMs: number;
      /** Whether the load outlasted the propagation (else `during` covers only its start). */
      covered: boolean;
      /** Tries to create the Role that the API server refused because a webhook did not answer in time. */
      refusedCreates: number;
      /** With --webhook-propagation-trials: each trial's own p99 (`during` pools them; `all` is the worst trial's load). */
      trialP99s?: number[];
    };
    /**
     * The review floor: the same open-loop load against a server that does nothing but answer
     * (ReviewFloorServer), at rest right before HNC's, and while another Role is copied.
     */
    reviewFloor?: {
      atRest: LatencyResult & EventLoops;
      duringCopy?: {
        during: LatencyResult;
        all: LatencyResult & EventLoops;
        propagationMs: number;
        covered: boolean;
        trialP99s?: number[];
      };
    };
    saturation: LatencyResult & EventLoops;
    /**
     * HNC's process with its webhooks on (the admission worker's heap and caches included): once
     * idle after the start, and after the loads. The steady-state figures elsewhere are measured
     * without webhooks.
     */
    /** Right after the start, after webhookSteadyMs more of idling (steady), after the loads. */
    memory: { idle: Memory; steady?: Memory; afterLoads: Memory };
    /** Dry-run requests through the API server, open loop. */
    apiserver: LatencyResult;
    apiserverHistogram: Record<string, HistogramSummary>;
  };
  versions: { kubernetes: string; binaries: string };
  leftoverProcesses: string[];
}

/** The trials beside their floors, and what the floors cost. */
export interface PairedFloors {
  trials: PairedTrial[];
  create: PairedSummary;
  update: PairedSummary;
  delete: PairedSummary;
  /** The floor loop's writes in flight (HNC's --max-object-reconciles). */
  concurrency: number;
  /**
   * Writes the floor loops made (a create, an update and a delete per descendant, two floors per
   * trial), and those the API server counted of their kinds in the floors' windows (equal unless HNC copied one).
   */
  floorWrites: number;
  floorWritesAtApiserver: number;
  /** HNC's writes while the floors ran: its count of sources in HNCConfiguration's status (not part of the trials' writes). */
  hncWritesDuringFloors: { apiserver: number; byResource: Record<string, number>; manager: number };
  /** The floor's objects the watches still see after the last trial (must be 0). */
  floorObjectsLeft: number;
  /** CPU seconds during the floors (HNC's share: decoding the floor's watch events, planning their namespaces). */
  cpu: Record<string, number>;
  floorLoop: { p50: number; p99: number; max: number; gcMaxMs: number; gcTotalMs: number; gcMinorMs: number };
}

/** Writes, CPU and HNC's event loop summed over the windows of one kind (the trials', the floors'). */
interface Window {
  writes: WriteDelta;
  manager: number;
  cpu: Record<string, number>;
  loop: { p50: number; p99: number; max: number; gcMaxMs: number; gcTotalMs: number; gcMinorMs: number };
}

function newWindow(): Window {
  return {
    writes: { total: 0, byRequest: {}, byResource: {}, conflicts: 0, errors: 0 },
    manager: 0,
    cpu: {},
    loop: { p50: 0, p99: 0, max: 0, gcMaxMs: 0, gcTotalMs: 0, gcMinorMs: 0 },
  };
}

/** Adds one window; the event loop's p50 and p99 are the worst window's (percentiles do not add up). */
function addWindow(w: Window, d: { writes: WriteDelta; manager: number; cpu: Record<string, number>; stats: ChildStats }): void {
  const add = (to: Record<string, number>, from: Record<string, number>) => {
    for (const [k, v] of Object.entries(from)) to[k] = round((to[k] ?? 0) + v, 2);
  };
  w.writes.total += d.writes.total;
  w.writes.conflicts += d.writes.conflicts;
  w.writes.errors += d.writes.errors;
  add(w.writes.byRequest, d.writes.byRequest);
  add(w.writes.byResource, d.writes.byResource);
  w.manager += d.manager;
  add(w.cpu, d.cpu);
  const { eventLoop: e, gc } = d.stats;
  w.loop = {
    p50: Math.max(w.loop.p50, e.p50),
    p99: Math.max(w.loop.p99, e.p99),
    max: Math.max(w.loop.max, e.max),
    gcMaxMs: Math.max(w.loop.gcMaxMs, gc.maxMs),
    gcTotalMs: round(w.loop.gcTotalMs + gc.totalMs, 1),
    gcMinorMs: round(w.loop.gcMinorMs + gc.minorMs, 1),
  };
}

/** A full collection of this process's heap (gc exposed on demand, as `node --expose-gc` would). */
function collectOwnHeap(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

function writesReport(apiserver: WriteDelta, manager: number, minimum: MinimumWrites, benchOwn = 0): WritesReport {
  const own = { ...apiserver, total: apiserver.total - benchOwn };
  return { apiserver: own, manager, minimum, ratio: round(own.total / Math.max(1, minimum.total), 4) };
}

function addMinimum(a: MinimumWrites, b: MinimumWrites): MinimumWrites {
  return {
    namespaces: a.namespaces + b.namespaces,
    hierarchyconfigurations: a.hierarchyconfigurations + b.hierarchyconfigurations,
    copies: {
      roles: a.copies.roles + b.copies.roles,
      rolebindings: a.copies.rolebindings + b.copies.rolebindings,
      networkpolicies: a.copies.networkpolicies + b.copies.networkpolicies,
    },
    total: a.total + b.total,
  };
}
const ZERO: MinimumWrites = {
  namespaces: 0,
  hierarchyconfigurations: 0,
  copies: { roles: 0, rolebindings: 0, networkpolicies: 0 },
  total: 0,
};

function alive(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

// ---- the control plane ------------------------------------------------------------------------------------

/** A control plane with HNC's CRDs and RBAC installed and its floor measured. */
export class Plane {
  private constructor(
    readonly cp: LocalControlPlane,
    readonly admin: KubeClient,
    readonly identity: { kubeconfigPath: string },
    readonly asManager: KubeClient,
    readonly version: string,
    readonly floor: FloorResult,
    /** A fixed port for HNC's webhook server, as in a deployment (a new port would rewrite the configurations). */
    readonly webhookPort: number,
  ) {}

  topologies = 0;

  static async start(opts: ScenarioOptions): Promise<Plane> {
    const cp = await LocalControlPlane.start({ log: () => undefined });
    try {
      Plane.placeInCpuGroups(cp);
      const admin = await KubeClient.fromKubeconfig(cp.kubeconfigPath);
      await installCrds(admin);
      await installRbac(admin);
      const identity = await cp.mintUser(MANAGER_USER, MANAGER_GROUPS);
      const asManager = await KubeClient.fromKubeconfig(identity.kubeconfigPath);
      const version = (await admin.get<{ gitVersion: string }>('/version')).gitVersion;
      await admin.create(HNC_CONFIG, {
        apiVersion: 'hnc.x-k8s.io/v1alpha2',
        kind: 'HNCConfiguration',
        metadata: { name: 'config' },
        spec: { resources: [{ group: 'networking.k8s.io', resource: 'networkpolicies', mode: 'Propagate' }] },
      });
      // The floor, on the empty cluster, as HNC's own identity.
      await waitQuiet(admin, 1500);
      const floor = await measureFloor(admin, asManager, opts, Plane.pidsOf(cp));
      return new Plane(cp, admin, identity, asManager, version, floor, await freePort());
    } catch (err) {
      await cp.stop();
      throw err;
    }
  }

  /** With --cgroups: etcd, kube-apiserver and kube-controller-manager in the control plane's group (bench/cgroups.ts). */
  static placeInCpuGroups(cp: LocalControlPlane): void {
    for (const pid of Object.values(Plane.pidsOf(cp))) placeInCpuGroup('control-plane', pid);
  }

  static pidsOf(cp: LocalControlPlane): Record<string, number | undefined> {
    const p = cp.pids();
    return { etcd: p.etcd, 'kube-apiserver': p['kube-apiserver'], 'kube-controller-manager': p['kube-controller-manager'] };
  }

  /** Stops the control plane; returns the processes still alive after (there should be none). */
  async stop(logDir?: string): Promise<string[]> {
    const pids = this.cp.pids();
    if (logDir) {
      mkdirSync(logDir, { recursive: true });
      cpSync(join(this.cp.stateDir, 'logs'), logDir, { recursive: true });
    }
    await this.cp.stop();
    await sleep(200);
    return Object.entries(pids)
      .filter(([, pid]) => alive(pid))
      .map(([n, pid]) => `${n} (${pid})`);
  }
}

// ---- the run ---------------------------------------------------------------------------------------------

export async function runScenario(name: TopologyName, opts: ScenarioOptions, plane: Plane, shared: boolean): Promise<ScenarioResult> {
  const topology = buildTopology(name, { size: opts.size, moveSize: opts.moveSize, maxChain: opts.maxChain });
  const sources = placeSources(topology, opts.rootObjects, opts.innerObjects);
  const shape = {
    ...describe(topology),
    sources: { root: opts.rootObjects, inner: sources.length - opts.rootObjects, innerNamespaces: topology.innerSourceNamespaces },
  };
  log(`${name}: ${shape.namespaces} namespaces, depth ${shape.depth}, max fan-out ${shape.maxFanOut}, ${sources.length} sources`);
  const { admin, identity, floor, cp } = plane;
  plane.topologies++;
  // Again per topology: a component the control plane restarted has a new process.
  Plane.placeInCpuGroups(cp);
  const children: Controller[] = [];
  let tracker: Tracker | undefined;
  let running: Controller | undefined;
  const spawnController = (cpuProfileDir?: string): Promise<Controller> =>
    opts.controller === 'hnc-go' ? GoHncProcess.spawn() : HncProcess.spawn({ cpuProfileDir });
  const pids = () => ({ ...Plane.pidsOf(cp), hnc: running?.pid });
  try {
    // 1. The topology and its sources, without HNC: no labels, no copies.
    const tSetup = performance.now();
    await pool(topology.namespaces, opts.setupConcurrency, (ns) => admin.create('/api/v1/namespaces', { metadata: { name: ns } }));
    const withParent = topology.namespaces.filter((ns) => topology.parent.get(ns) !== undefined);
    await pool(withParent, opts.setupConcurrency, (ns) =>
      admin.create(HC(ns), {
        apiVersion: 'hnc.x-k8s.io/v1alpha2',
        kind: 'HierarchyConfiguration',
        metadata: { name: 'hierarchy', namespace: ns },
        spec: { parent: topology.parent.get(ns) },
      }),
    );
    await pool(sources, opts.setupConcurrency, (s) => admin.create(collection(s.kind, s.namespace), sourceBody(s.kind, s.name)));
    const setupSeconds = (performance.now() - tSetup) / 1000;
    const setupWrites = topology.namespaces.length + withParent.length + sources.length;
    log(`${name}: ${setupWrites} setup writes in ${setupSeconds.toFixed(1)} s; waiting for the controller-manager to settle`);
    const tSettle = performance.now();
    await waitQuiet(admin, opts.quietMs);
    const settleSeconds = (performance.now() - tSettle) / 1000;

    // What HNC must reach: the topology, plus the other namespaces it manages here (roots).
    const parent = new Map(topology.parent);
    for (const ns of ['default', 'bench-floor']) parent.set(ns, undefined);
    const expected = expectedState(parent, sources);
    tracker = new Tracker(admin);
    await tracker.start();
    tracker.expect(expected);
    // The minimum counts from what is really there (on a shared plane, default is labelled already).
    const coldMinimum = minimumWrites(tracker.observed(), expected);

    // 2. Cold start.
    const logFile = (n: string) => join(cp.stateDir, 'logs', `hnc-${name}-${n}.log`);
    const startReq = (n: string, webhooks: boolean) => ({
      kubeconfig: identity.kubeconfigPath,
      webhooks,
      webhookPort: plane.webhookPort,
      qps: opts.hncQps,
      workers: opts.hncWorkers,
      objectWorkers: opts.hncObjectWorkers,
      logFile: logFile(n),
    });
    let profileDir: string | undefined;
    if (opts.profileDir) mkdirSync((profileDir = join(opts.profileDir, name)), { recursive: true });
    let hnc = await spawnController(profileDir);
    children.push(hnc);
    running = hnc;
    const floorSeconds = coldMinimum.total / floor.writesPerSecond;
    log(`${name}: cold start (minimum ${coldMinimum.total} writes, floor ${floorSeconds.toFixed(2)} s)`);
    const m0 = await scrape(admin);
    const cpu0 = sampleCpu(pids());
    const otherApiServers = processesNamed('kube-apiserver').filter((p) => p !== Plane.pidsOf(cp)['kube-apiserver']).length;
    if (otherApiServers)
      log(`${name}: note: ${otherApiServers} other kube-apiserver process(es) on this machine are competing for its cores`);
    await hnc.stats(true); // event-loop delay and GC pauses from here
    const t0 = performance.now();
    const ticker = setInterval(
      () => log(`${name}: cold start ${((performance.now() - t0) / 1000).toFixed(0)} s: ${JSON.stringify(tracker!.progress())}`),
      15_000,
    );
    let started;
    let tConverged;
    try {
      started = await hnc.start(startReq('cold', false));
      tConverged = await tracker.whenConverged(opts.coldTimeoutMs);
    } catch (err) {
      if (!/not converged/.test((err as Error).message)) throw err;
      // Not a failure of the benchmark: the figure is "more than the timeout"; say how far it got.
      const seconds = (performance.now() - t0) / 1000;
      throw new ColdStartTimeout(name, {
        seconds: round(seconds, 1),
        minimumWrites: coldMinimum.total,
        floorSeconds: round(floorSeconds, 2),
        progress: tracker.progress(),
        writesSoFar: writeDelta(m0, await scrape(admin)).total,
        cpu: cpuDelta(cpu0, sampleCpu(pids())),
        shape,
      });
    } finally {
      clearInterval(ticker);
    }
    const coldSeconds = (tConverged - t0) / 1000;
    const idleStats = await hnc.idle();
    const coldLoop = { ...idleStats.eventLoop, gcMaxMs: idleStats.gc.maxMs, gcTotalMs: idleStats.gc.totalMs };
    const idleSeconds = (performance.now() - t0) / 1000;
    const cpu1 = sampleCpu(pids());
    const m1 = await waitQuiet(admin, opts.quietMs);
    const coldVerified = await verifyByListing(admin, expected);
    const coldWrites = writesReport(writeDelta(m0, m1), (await hnc.stats()).writesTotal, coldMinimum);
    log(
      `${name}: converged in ${coldSeconds.toFixed(2)} s (${(coldSeconds / floorSeconds).toFixed(2)}x floor); ${coldWrites.apiserver.total} writes for a minimum of ${coldMinimum.total}; verified by listing: ${coldVerified.ok}`,
    );
    if (!coldVerified.ok) log(`${name}: listing disagrees: ${JSON.stringify(coldVerified)}`);
    const coldCpu = cpuDelta(cpu0, cpu1);
    // The next process loads its code now, so that restarts below time HNC, not node's start-up.
    const spawn = () => {
      const p = spawnController(profileDir);
      void p.then(
        (c) => children.push(c),
        () => undefined,
      );
      return p;
    };
    let next = spawn();

    // 3. Steady state: nothing changes; how much does HNC hold and burn?
    const s0 = await hnc.stats();
    await sleep(opts.coldSteadyMs);
    const s1 = await hnc.stats();
    const steadyCpu = opts.coldSteadyMs ? (cpuSeconds(s1) - cpuSeconds(s0)) / (opts.coldSteadyMs / 1000) : NaN;
    const steadyMemory = memory(s1, hnc.baseline);
    const gc1 = await hnc.collected();
    steadyMemory.heapLiveMB = mb(gc1.heapUsed);
    steadyMemory.rssAfterGcMB = mb(gc1.rss);
    steadyMemory.heapTotalAfterGcMB = mb(gc1.heapTotal);
    steadyMemory.externalAfterGcMB = mb(gc1.external);
    if (gc1.rssFile !== undefined) steadyMemory.rssFileAfterGcMB = mb(gc1.rssFile);
    if (gc1.rssAnon !== undefined) steadyMemory.rssAnonAfterGcMB = mb(gc1.rssAnon);
    if (profileDir)
      log(`${name}: heap snapshot at steady state: ${(await hnc.heapSnapshot(join(profileDir, 'steady-state.heapsnapshot'))).file}`);

    // 4. Warm restart: everything in place; a new process must write nothing.
    const rv0 = await versions(admin);
    await hnc.stop();
    hnc = await next;
    running = hnc;
    next = spawn();
    const m2 = await scrape(admin);
    const tw = performance.now();
    await hnc.start(startReq('warm', false));
    const warmIdle = await hnc.idle();
    const warmSeconds = (performance.now() - tw) / 1000;
    const m3 = await waitQuiet(admin, opts.quietMs);
    const rv1 = await versions(admin);
    const warm = {
      seconds: round(warmSeconds, 2),
      writes: writeDelta(m2, m3),
      managerWrites: (await hnc.stats()).writesTotal,
      objectsChanged: versionDiff(rv0, rv1),
      managerCpuSeconds: round(cpuSeconds(warmIdle), 2),
    };
    log(
      `${name}: warm restart idle in ${warmSeconds.toFixed(2)} s; ${warm.writes.total} writes at the API server, ${warm.managerWrites} by the manager`,
    );
    const w0 = await hnc.stats();
    await sleep(opts.steadyMs);
    const w1 = await hnc.stats();
    const steadyAfterWarm = (cpuSeconds(w1) - cpuSeconds(w0)) / (opts.steadyMs / 1000);
    const result = (warmMemory: Memory): ScenarioResult => ({
      topology: name,
      shape,
      controlPlaneStartSeconds: round(cp.startSeconds, 2),
      sharedPlane: shared,
      otherApiServers,
      setup: { seconds: round(setupSeconds, 2), writes: setupWrites, settleSeconds: round(settleSeconds, 2) },
      floor,
      coldStart: {
        seconds: round(coldSeconds, 3),
        cachesSyncedSeconds: round(started.startedMs / 1000, 3),
        idleSeconds: round(idleSeconds, 3),
        floorSeconds: round(floorSeconds, 3),
        ratioToFloor: round(coldSeconds / floorSeconds, 2),
        writes: coldWrites,
        verified: coldVerified,
        cpu: coldCpu,
        managerCpuSeconds: round(cpuSeconds(idleStats), 2),
        eventLoop: coldLoop,
        memory: memory(idleStats, children[0]!.baseline),
      },
      steadyState: {
        seconds: opts.steadyMs / 1000,
        cpuPercentAfterColdStart: round(steadyCpu * 100, 2),
        memory: steadyMemory,
        cpuPercentAfterWarmRestart: round(steadyAfterWarm * 100, 2),
        memoryAfterWarmRestart: warmMemory,
      },
      warmRestart: warm,
      versions: { kubernetes: plane.version, binaries: cp.binaries.source.split('/').pop() ?? cp.binaries.source },
      leftoverProcesses: [],
    });
    if (opts.coldOnly) {
      const warmMemory = memory(w1, hnc.baseline);
      await hnc.kill();
      await (await next).kill();
      return result(warmMemory);
    }

    // 5. One new object at the root, then (in the paired trials) an update of it, then its
    // deletion, to every descendant; repeated.
    const D = descendants(parent, topology.root).length;
    const targets = descendants(parent, topology.root);
    /** Resolves when `a` is done, or fails after 600 s naming what did not arrive. */
    const arrived = (a: Arrivals, what: string): Promise<number> => {
      let timer: NodeJS.Timeout | undefined;
      return Promise.race([
        a.done,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`${what}: ${a.missing} copies not seen within 600 s`)), 600_000);
        }),
      ]).finally(() => clearTimeout(timer));
    };
    const trial = async (i: number, update = false) => {
      const kind = SOURCE_KINDS[i % 3]!;
      const src: Source = { kind, namespace: topology.root, name: `bench-prop-${i}` };
      const path = `${collection(kind, topology.root)}/${src.name}`;
      const grown = expectedState(parent, [...sources, src]);
      tracker!.expect(grown);
      const ta = performance.now();
      await admin.create(collection(kind, topology.root), sourceBody(kind, src.name));
      const tb = await tracker!.whenConverged(600_000);
      let updated: { ms: number; at: number; arrivals: Arrivals } | undefined;
      let minimum = minimumWrites(expected, grown);
      if (update) {
        // Every copy rewritten with the source's new content: one update each.
        await hnc.idle();
        const body = sourceBody(kind, src.name, true);
        const keys = targets.map((ns) => `${kind}/${ns}/${src.name}`);
        const arrivals = tracker!.arrivals(keys, true, false, contentMark(kind, body));
        try {
          const { metadata } = await admin.get<{ metadata: Record<string, unknown> }>(path);
          const at = performance.now();
          await admin.replace(path, { ...body, metadata: { ...metadata, ...(body.metadata as object) } });
          updated = { ms: (await arrived(arrivals, `the update of ${path}`)) - at, at, arrivals };
        } finally {
          arrivals.release();
        }
        minimum = addMinimum(minimum, { ...ZERO, copies: { ...ZERO.copies, [kind]: keys.length }, total: keys.length });
        await hnc.idle();
      }
      tracker!.expect(expected);
      const tc = performance.now();
      await admin.delete(path);
      const td = await tracker!.whenConverged(600_000);
      await hnc.idle();
      return {
        create: tb - ta,
        update: updated,
        delete: td - tc,
        createdAt: ta,
        deletedAt: tc,
        minimum: addMinimum(minimum, minimumWrites(grown, expected)),
      };
    };
    // Each trial between two floors of its own (bench/paired-floor.ts): one right before it, one
    // right after. Writes and CPU are counted over the trials' windows only, between quiet points:
    // the floor's writes, and HNC's count of sources in HNCConfiguration's status (the floor's
    // objects are sources that propagate nowhere), stay out of the trials' figures and are reported apart.
    const floorWriter = new Writer(plane.asManager, { qps: opts.hncQps });
    const windows = { trial: newWindow(), floor: newWindow() };
    const pairs: PairedTrial[] = [];
    const creates: number[] = [];
    const updates: number[] = [];
    const deletes: number[] = [];
    let propMinimum = ZERO;
    let quiet = await waitQuiet(admin, opts.quietMs);
    const measured = async <T>(w: Window, fn: () => Promise<T>): Promise<{ out: T; cost: RunCost }> => {
      // Both heaps collected first (HNC's, and this process's, whose client is the floor's): the
      // garbage one run leaves is then paid by no other run (docs/benchmarks.md, "Why two floors").
      await hnc.collected();
      collectOwnHeap();
      const c0 = sampleCpu(pids());
      const hw0 = (await hnc.stats(true)).writesTotal;
      const out = await fn();
      const c1 = sampleCpu(pids());
      const st = await hnc.stats();
      const q = await waitQuiet(admin, opts.quietMs);
      const cpu = cpuDelta(c0, c1);
      addWindow(w, { writes: writeDelta(quiet, q), manager: st.writesTotal - hw0, cpu, stats: st });
      quiet = q;
      const ms = (k: string) => round(1000 * (cpu[k] ?? NaN), 1);
      return { out, cost: { hncCpuMs: ms('hnc'), hncGcMs: round(st.gc.totalMs, 1), apiserverCpuMs: ms('kube-apiserver') } };
    };
    for (let i = 0; i < opts.trials; i++) {
      const kind = SOURCE_KINDS[i % 3]!;
      const floorOnce = (which: 'before' | 'after') =>
        measured(windows.floor, async () => {
          const name = `bench-floor-${i}-${which}`;
          const f = await runFloor({
            writes: floorWriter,
            tracker: tracker!,
            kind,
            name,
            namespaces: targets,
            concurrency: opts.hncObjectWorkers,
            like: sourceBody(kind, name),
            updated: { like: sourceBody(kind, name, true), mark: contentMark(kind, sourceBody(kind, name, true)) },
            timeoutMs: 600_000,
            distinctNames: opts.controller === 'hnc-go',
          });
          await hnc.idle();
          return f;
        });
      const trialOnce = () =>
        measured(windows.trial, async () => {
          const name = `bench-prop-${i}`;
          const keys = targets.map((ns) => `${kind}/${ns}/${name}`);
          const came = tracker!.arrivals(keys, true);
          const went = tracker!.arrivals(keys, false);
          try {
            const r = await trial(i, true);
            const perNs = (a: Arrivals, from: number) => keys.map((k) => a.at.get(k)! - from);
            return {
              ...r,
              createTiming: { allMs: r.create, perNamespaceMs: perNs(came, r.createdAt) },
              updateTiming: { allMs: r.update!.ms, perNamespaceMs: perNs(r.update!.arrivals, r.update!.at) },
              deleteTiming: { allMs: r.delete, perNamespaceMs: perNs(went, r.deletedAt) },
            };
          } finally {
            came.release();
            went.release();
          }
        });
      const before = await floorOnce('before');
      const { out: r, cost } = await trialOnce();
      const after = await floorOnce('after');
      creates.push(r.create);
      updates.push(r.update!.ms);
      deletes.push(r.delete);
      propMinimum = addMinimum(propMinimum, r.minimum);
      const pair: PairedTrial = {
        kind,
        create: pairPhase(r.createTiming, before.out.create, after.out.create),
        update: pairPhase(r.updateTiming, before.out.update, after.out.update),
        delete: pairPhase(r.deleteTiming, before.out.delete, after.out.delete),
        cost: { before: before.cost, trial: cost, after: after.cost },
      };
      pairs.push(pair);
      const line = (p: PairedPhase) =>
        `${p.hnc.allMs.toFixed(0)} ms ÷ floor ${p.floor.allMs.toFixed(0)} ms = ${p.ratio.toFixed(2)} (before ${p.ratioBefore.toFixed(2)}, after ${p.ratioAfter.toFixed(2)}; per namespace p99 ${p.p99Ratio.toFixed(2)}; first in place ${p.hnc.firstMs.toFixed(0)} ms, floor ${p.floor.firstMs.toFixed(0)} ms)`;
      log(
        `${name}: trial ${i + 1}/${opts.trials} (${kind}): create ${line(pair.create)}; update ${line(pair.update)}; delete ${line(pair.delete)}`,
      );
    }
    const propLoop = windows.trial.loop;
    const propWrites = writesReport(windows.trial.writes, windows.trial.manager, propMinimum, 3 * opts.trials);
    const floorWrites = targets.length * 3 * 2 * opts.trials;
    const floorKinds = windows.floor.writes.byResource;
    const paired: PairedFloors = {
      trials: pairs,
      create: summarizePairs(pairs, 'create'),
      update: summarizePairs(pairs, 'update'),
      delete: summarizePairs(pairs, 'delete'),
      concurrency: opts.hncObjectWorkers,
      floorWrites,
      floorWritesAtApiserver: SOURCE_KINDS.reduce((n, k) => n + (floorKinds[k] ?? 0), 0),
      hncWritesDuringFloors: {
        apiserver: windows.floor.writes.total - floorWrites,
        byResource: Object.fromEntries(Object.entries(floorKinds).filter(([k]) => !(SOURCE_KINDS as readonly string[]).includes(k))),
        manager: windows.floor.manager,
      },
      floorObjectsLeft: tracker.floorObjectsLeft,
      cpu: windows.floor.cpu,
      floorLoop: windows.floor.loop,
    };
    const create = summarize(creates);
    const propFloor = D / floor.writesPerSecond;
    log(
      `${name}: one object to ${D} descendants: p50 ${create.p50.toFixed(0)} ms, p99 ${create.p99.toFixed(0)} ms (floor ${(propFloor * 1000).toFixed(0)} ms); between two floors each: median ${paired.create.ratio.median.toFixed(2)} × (per-namespace p99 ${paired.create.p99Ratio.median.toFixed(2)} ×), update ${paired.update.ratio.median.toFixed(2)} × (p99 ${paired.update.p99Ratio.median.toFixed(2)} ×), delete ${paired.delete.ratio.median.toFixed(2)} ×`,
    );

    // 6. Move a subtree between its two parents, back and forth.
    let moveMinimum = ZERO;
    const moves: number[] = [];
    const mv0 = await scrape(admin);
    const mvw0 = (await hnc.stats()).writesTotal;
    let current = expected;
    const moveTrials = opts.moveTrials % 2 === 0 ? opts.moveTrials : opts.moveTrials + 1; // end where it began
    for (let i = 0; i < moveTrials; i++) {
      const to = topology.moveParents[(i + 1) % 2]!;
      const moved = new Map(parent);
      moved.set(topology.moveRoot, to);
      const next = i % 2 === 0 ? expectedState(moved, sources) : expected;
      moveMinimum = addMinimum(moveMinimum, minimumWrites(current, next));
      const hc = await admin.get<{ spec: { parent?: string } }>(hierarchyConfigurationPath(topology.moveRoot, 'hierarchy'));
      tracker.expect(next);
      const ta = performance.now();
      await admin.replace(hierarchyConfigurationPath(topology.moveRoot, 'hierarchy'), { ...hc, spec: { ...hc.spec, parent: to } });
      const tb = await tracker.whenConverged(600_000);
      moves.push(tb - ta);
      await hnc.idle();
      current = next;
    }
    const mv1 = await waitQuiet(admin, opts.quietMs);
    const moveWrites = writesReport(writeDelta(mv0, mv1), (await hnc.stats()).writesTotal - mvw0, moveMinimum, moveTrials);
    const moveSummary = summarize(moves);
    log(`${name}: moving ${topology.moveSize} namespaces: p50 ${moveSummary.p50.toFixed(0)} ms, max ${moveSummary.max.toFixed(0)} ms`);
    const warmMemory = memory(await hnc.stats(), hnc.baseline);
    const gc2 = await hnc.collected();
    warmMemory.heapLiveMB = mb(gc2.heapUsed);
    warmMemory.rssAfterGcMB = mb(gc2.rss);

    let webhooks: ScenarioResult['webhooks'];
    let withWebhooks: NonNullable<ScenarioResult['propagation']>['withWebhooks'];
    if (opts.webhooksFor(name)) {
      // 7. The webhooks: HNC restarted with them (the last restart is the one with everything in place), then load.
      // The load's user may change the hierarchy, as a platform team's may: a ClusterRoleBinding to a
      // ClusterRole that allows it (cluster-scoped: no copies for the tracker to see). Its parent
      // changes are then allowed, each after the SubjectAccessReview of the root (issue 18, item 3:
      // which --webhook-local-authorization answers from RBAC in memory).
      await grantLoadUser(admin);
      await hnc.stop();
      let restart = {
        first: undefined as WriteDelta | undefined,
        last: undefined as WriteDelta | undefined,
        changed: { changed: 0, created: 0, deleted: 0 },
      };
      for (let i = 0; i < Math.max(1, opts.webhookRestarts); i++) {
        // A webhook server keeps the API server's connections open: end the process rather than drain them.
        if (i > 0) await hnc.kill();
        const rvA = await versions(admin);
        hnc = await next;
        running = hnc;
        next = spawn();
        const ha = await scrape(admin);
        await hnc.start(startReq(`webhooks-${i + 1}`, true));
        await hnc.idle();
        const hb = await waitQuiet(admin, opts.quietMs);
        const d = writeDelta(ha, hb);
        restart = { first: restart.first ?? d, last: d, changed: versionDiff(rvA, await versions(admin)) };
      }
      const secret = await admin.get<{ data: Record<string, string> }>('/api/v1/namespaces/hnc-system/secrets/hnc-webhook-server-cert');
      const ca = Buffer.from(secret.data['ca.crt']!, 'base64').toString('utf8');
      const leaves = topology.namespaces.filter((ns) => !descendants(parent, ns).length && !ns.includes('-mv-')).slice(0, 200);
      const rootRole = sources.find((s) => s.namespace === topology.root && s.kind === 'roles');
      const targets = {
        root: topology.root,
        leaves,
        otherParent: topology.moveParents[1],
        copy: { namespace: leaves[0]!, name: rootRole?.name ?? 'bench-root-0', from: topology.root },
      };
      const labels: Record<string, Record<string, string>> = {};
      for (const ns of [...leaves, topology.root, targets.copy.namespace]) labels[ns] = tracker.labelsOf(ns);
      const direct = await LoadGenerator.start({ port: plane.webhookPort, ca, targets, labels });
      const idleWithWebhooks = memory(await hnc.stats(), hnc.baseline);
      // Steady (issue 18, item 2, with the admission thread): after V8's memory reducer has had its turn.
      // It gives back what each heap grew into during the start, but only 8 s after the last full
      // collection and in up to three rounds: RSS right after the start is up to 15 MB above where it settles.
      await sleep(opts.webhookSteadyMs);
      const steadyWithWebhooks = memory(await hnc.stats(), hnc.baseline);
      log(
        `${name}: RSS with webhooks on ${idleWithWebhooks.rssMB} MB right after the start, ${steadyWithWebhooks.rssMB} MB ${opts.webhookSteadyMs / 1000} s later (admission thread's heap ${steadyWithWebhooks.admissionHeapUsedMB ?? '?'} / ${steadyWithWebhooks.admissionHeapTotalMB ?? '?'} MB)`,
      );
      const serverLoop = async () => {
        const st = await hnc.stats(true);
        return { server: { ...st.eventLoop, gcMaxMs: st.gc.maxMs, gcTotalMs: st.gc.totalMs }, admission: st.admissionEventLoop };
      };
      const loops = (l: Awaited<ReturnType<typeof serverLoop>>) => ({
        serverEventLoop: l.server,
        ...(l.admission ? { admissionEventLoop: l.admission } : {}),
      });
      await direct.warm(Math.min(400, opts.webhookRequests));
      // What the whole machine did during a load: 500 reviews/s on two cores shares them with the
      // API server (the SubjectAccessReviews) and the generator.
      const loadCpu = (gen = direct) => ({ at: performance.now(), cpu: sampleCpu({ ...pids(), generator: gen.pid }) });
      const loadCores = (from: ReturnType<typeof loadCpu>, gen = direct) => {
        const d = cpuDelta(from.cpu, sampleCpu({ ...pids(), generator: gen.pid }));
        const s = (performance.now() - from.at) / 1000;
        // Cores busy on average; what the hypervisor stole, as milliseconds in all (its ticks are 10 ms:
        // one stall of a virtual CPU is a few ticks, lost in an average).
        return Object.fromEntries(
          Object.entries(d).map(([k, v]) =>
            k.startsWith('steal') ? [k.replace('steal', 'stolenMs'), round(v * 1000, 0)] : [k, round(v / s, 2)],
          ),
        );
      };
      const open: Array<LatencyResult & EventLoops> = [];
      const metricsPort = (await hnc.stats()).metricsPort;
      const serverHist = () => (metricsPort ? hncWebhookHistogram(metricsPort).catch(() => undefined) : Promise.resolve(undefined));
      // The review floor at rest, right before HNC's own loads, at the highest rate.
      let reviewFloor: NonNullable<ScenarioResult['webhooks']>['reviewFloor'];
      let reviewFloorAtRest: NonNullable<typeof reviewFloor>['atRest'] | undefined;
      const reviewFloorServer = opts.reviewFloor && opts.webhookRates.length ? await ReviewFloorServer.start() : undefined;
      const reviewFloorGen = reviewFloorServer
        ? await LoadGenerator.start({ port: reviewFloorServer.port, ca: reviewFloorServer.ca, targets, labels })
        : undefined;
      if (reviewFloorGen) {
        const rate = Math.max(...opts.webhookRates);
        await reviewFloorGen.warm(Math.min(400, opts.webhookRequests));
        await serverLoop();
        const c0 = loadCpu(reviewFloorGen);
        const res = await reviewFloorGen.run({ mode: 'open', rate }, Math.max(50, Math.round(rate * opts.webhookSeconds)));
        reviewFloorAtRest = { ...res, ...loops(await serverLoop()), coresBusy: loadCores(c0, reviewFloorGen) };
        reviewFloor = { atRest: reviewFloorAtRest };
        log(
          `${name}: review floor at ${rate}/s (a bare TLS server with a fixed answer, in HNC's CPU group): p50 ${res.overall.p50.toFixed(2)} ms, p99 ${res.overall.p99.toFixed(2)} ms, max ${res.overall.max.toFixed(1)} ms (generator late p99 ${res.sendLateness.p99.toFixed(2)} ms)`,
        );
      }
      for (const rate of opts.webhookRates) {
        await serverLoop();
        const hb = await serverHist();
        const c0 = loadCpu();
        const res = await direct.run({ mode: 'open', rate }, Math.max(50, Math.round(rate * opts.webhookSeconds)));
        const coresBusy = loadCores(c0);
        const ha = await serverHist();
        const r = { ...res, ...loops(await serverLoop()), serverSide: hb && ha ? histogramDelta(hb, ha) : undefined, coresBusy };
        open.push(r);
        log(
          `${name}: webhook at ${rate}/s: p50 ${r.overall.p50.toFixed(2)} ms, p99 ${r.overall.p99.toFixed(2)} ms from the scheduled send (from the actual send p99 ${r.fromSend.p99.toFixed(2)} ms; generator late p99 ${r.sendLateness.p99.toFixed(2)} ms, max ${r.sendLateness.max.toFixed(1)} ms, its event loop max ${r.clientEventLoop.max.toFixed(1)} ms, ${r.clientCpuPercent.toFixed(0)} % of a core; at most ${r.maxInFlight} in flight, ${r.newConnections} new connections); event-loop delay max: HNC main ${r.serverEventLoop.max.toFixed(1)} ms (longest GC ${r.serverEventLoop.gcMaxMs.toFixed(1)} ms), admission thread ${r.admissionEventLoop?.max.toFixed(1) ?? '–'} ms (longest GC ${r.admissionEventLoop?.gcMaxMs.toFixed(1) ?? '–'} ms); HNC's own histogram: ${r.serverSide ? (100 * r.serverSide.within5ms).toFixed(1) : '?'} % answered within 5 ms`,
        );
      }
      let duringPropagation: NonNullable<ScenarioResult['webhooks']>['duringPropagation'];
      // 7b. The same load while one new root Role is copied to every descendant: the webhook must
      // not wait on reconciling (docs/benchmarks.md, "webhook tail during propagation"). `gen` is
      // HNC's load generator, or the review floor's.
      const copyTracker = tracker;
      const copyTrial = async (gen: LoadGenerator, roleName: string) => {
        const rate = Math.max(...opts.webhookRates);
        const load = { mode: 'open' as const, rate };
        const src: Source = { kind: 'roles', namespace: topology.root, name: roleName };
        const grown = expectedState(parent, [...sources, src]);
        await serverLoop();
        const hb = await serverHist();
        const c0 = loadCpu(gen);
        const running = gen.run(load, Math.round(rate * opts.webhookPropagationSeconds), true);
        await sleep(500); // the load at its pace before the propagation starts
        copyTracker.expect(grown);
        const from = performance.timeOrigin + performance.now();
        // A write the webhook did not answer in time is refused by the API server (failurePolicy
        // Fail): counted, and tried again, as a user would.
        let refused = 0;
        for (;;) {
          try {
            await admin.create(collection('roles', topology.root), sourceBody('roles', src.name));
            break;
          } catch (err) {
            if (!String(err).includes('failed calling webhook') || ++refused > 20) throw err;
          }
        }
        const done = await copyTracker.whenConverged(600_000);
        const to = performance.timeOrigin + done;
        const res = await running;
        const coresBusy = loadCores(c0, gen);
        const ha = await serverHist();
        // HNC's own histogram says something of HNC's load only, not of the floor's.
        const serverSide = hb && ha && gen === direct ? histogramDelta(hb, ha) : undefined;
        const all = { ...res, ...loops(await serverLoop()), serverSide, coresBusy };
        const samples = all.samples ?? [];
        delete all.samples;
        const last = samples.reduce((m, x) => Math.max(m, x.at), 0);
        copyTracker.expect(expected);
        await admin.delete(`${collection('roles', topology.root)}/${src.name}`);
        await copyTracker.whenConverged(600_000);
        await hnc.idle();
        return { load, window: { samples, from, to }, all, propagationMs: to - from, covered: last >= to, refused };
      };
      // Several trials pool their windows: the p99 of one 2 s copy at 500/s is its tenth-slowest review.
      // The whole load's figures (event loops, cores) are the trial with the highest p99's.
      type CopyTrial = Awaited<ReturnType<typeof copyTrial>>;
      const pooled = (trials: CopyTrial[]) => {
        const p99s = trials.map((t) => windowOf(t.window.samples, t.load, t.window.from, t.window.to).overall.p99);
        const worst = trials[p99s.indexOf(Math.max(...p99s))]!;
        const times = trials.map((t) => t.propagationMs).sort((x, y) => x - y);
        return {
          rate: worst.load.rate,
          during: windowsOf(
            trials.map((t) => t.window),
            worst.load,
          ),
          all: worst.all,
          propagationMs: times[Math.floor((times.length - 1) / 2)]!,
          covered: trials.every((t) => t.covered),
          refused: trials.reduce((n, t) => n + t.refused, 0),
          trialP99s: p99s.map((x) => round(x, 2)),
        };
      };
      if (opts.webhookPropagationSeconds > 0 && opts.webhookRates.length) {
        const hncTrials: CopyTrial[] = [];
        const floorTrials: CopyTrial[] = [];
        // HNC's and the floor's trials alternate, so that both meet the same minutes of the machine.
        for (let i = 0; i < Math.max(1, opts.webhookPropagationTrials); i++) {
          hncTrials.push(await copyTrial(direct, `bench-webhook-tail-${i + 1}`));
          if (reviewFloorGen) floorTrials.push(await copyTrial(reviewFloorGen, `bench-webhook-tail-floor-${i + 1}`));
        }
        const { rate, during, all, propagationMs, covered, refused, trialP99s } = pooled(hncTrials);
        duringPropagation = {
          during,
          all,
          copies: D,
          propagationMs,
          floorMs: (D / floor.writesPerSecond) * 1000,
          covered,
          refusedCreates: refused,
          trialP99s,
        };
        log(
          `${name}: webhook at ${rate}/s while a Role is copied to ${D} namespaces (${hncTrials.length} trials, p99 each ${trialP99s.join(', ')} ms; ${refused} refused creates; median ${propagationMs.toFixed(0)} ms, floor ${duringPropagation.floorMs.toFixed(0)} ms): p50 ${during.overall.p50.toFixed(2)} ms, p99 ${during.overall.p99.toFixed(2)} ms, max ${during.overall.max.toFixed(1)} ms (from the actual send p99 ${during.fromSend.p99.toFixed(2)} ms; at most ${during.maxInFlight} in flight, ${during.requests} reviews, generator late p99 ${during.sendLateness.p99.toFixed(2)} ms${all.clientPolicy && all.clientPolicy !== 'normal' ? ` at ${all.clientPolicy}` : ''}, ${during.newConnections} new connections${duringPropagation.covered ? '' : ', the load ended before the propagation'}); event-loop delay max: HNC main ${all.serverEventLoop.max.toFixed(1)} ms, admission thread ${all.admissionEventLoop?.max.toFixed(1) ?? '–'} ms, generator ${all.clientEventLoop.max.toFixed(1)} ms`,
        );
        if (reviewFloorAtRest && floorTrials.length) {
          const f = pooled(floorTrials);
          reviewFloor = {
            atRest: reviewFloorAtRest,
            duringCopy: { during: f.during, all: f.all, propagationMs: f.propagationMs, covered: f.covered, trialP99s: f.trialP99s },
          };
          log(
            `${name}: review floor at ${f.rate}/s while a Role is copied (p99 each ${f.trialP99s.join(', ')} ms; median ${f.propagationMs.toFixed(0)} ms): p50 ${f.during.overall.p50.toFixed(2)} ms, p99 ${f.during.overall.p99.toFixed(2)} ms, max ${f.during.overall.max.toFixed(1)} ms (${f.during.requests} reviews)`,
          );
        }
      }
      await reviewFloorGen?.stop();
      await reviewFloorServer?.stop();
      await serverLoop();
      const sat = await direct.run({ mode: 'closed', concurrency: opts.webhookConcurrency }, opts.webhookRequests);
      const saturation = { ...sat, ...loops(await serverLoop()) };
      await direct.stop();
      const afterLoads = memory(await hnc.stats(), hnc.baseline);
      log(
        `${name}: webhook saturation: ${saturation.perSecond.toFixed(0)} reviews/s at ${opts.webhookConcurrency} in flight (p50 ${saturation.overall.p50.toFixed(1)} ms)`,
      );
      const api = await apiserverClient(admin, targets);
      await api.warm(Math.min(100, opts.webhookRequests));
      const wh0 = await scrape(admin);
      const viaApi = await api.run(
        { mode: 'open', rate: opts.apiserverRate },
        Math.max(50, Math.round(opts.apiserverRate * opts.webhookSeconds)),
      );
      const wh1 = await scrape(admin);
      log(
        `${name}: dry-run through the API server at ${opts.apiserverRate}/s: p50 ${viaApi.overall.p50.toFixed(1)} ms, p99 ${viaApi.overall.p99.toFixed(1)} ms`,
      );

      // Propagation with the objects webhook in the path of every copy.
      const wc: number[] = [];
      const wd: number[] = [];
      const wt0 = await scrape(admin);
      for (let i = 0; i < opts.webhookTrials; i++) {
        const r = await trial(1000 + i);
        wc.push(r.create);
        wd.push(r.delete);
      }
      const wt1 = await scrape(admin);
      const calls = webhookDelta(wt0, wt1);
      webhooks = {
        restartWrites: {
          first: restart.first!,
          last: restart.last!,
          objectsChangedLast: restart.changed,
          restarts: Math.max(1, opts.webhookRestarts),
        },
        direct: open,
        duringPropagation,
        ...(reviewFloor ? { reviewFloor } : {}),
        saturation,
        memory: { idle: idleWithWebhooks, steady: steadyWithWebhooks, afterLoads },
        apiserver: viaApi,
        apiserverHistogram: webhookDelta(wh0, wh1),
      };
      withWebhooks = {
        create: summarize(wc),
        delete: summarize(wd),
        webhookCalls: Object.fromEntries(Object.entries(calls).map(([k, v]) => [k, v.calls])),
        copyWrites: 2 * D * opts.webhookTrials,
      };
    }
    await hnc.kill();
    await (await next).kill();

    return {
      ...result(warmMemory),
      propagation: {
        descendants: D,
        create,
        update: summarize(updates),
        delete: summarize(deletes),
        floorSeconds: round(propFloor, 4),
        p50RatioToFloor: round(create.p50 / 1000 / propFloor, 2),
        p99RatioToFloor: round(create.p99 / 1000 / propFloor, 2),
        writes: propWrites,
        cpu: windows.trial.cpu,
        eventLoop: propLoop,
        pairedFloors: paired,
        withWebhooks,
      },
      move: { size: topology.moveSize, trials: moveSummary, minimumPerMove: round(moveMinimum.total / moveTrials, 1), writes: moveWrites },
      webhooks,
    };
  } finally {
    await tracker?.stop().catch(() => undefined);
    for (const c of children) await c.kill().catch(() => undefined);
    // HNC's webhook configurations outlive it: remove them, so the next topology on this plane is not refused.
    for (const kind of [
      'validatingwebhookconfigurations/hnc-validating-webhook-configuration',
      'mutatingwebhookconfigurations/hnc-mutating-webhook-configuration',
    ]) {
      await admin.delete(`/apis/admissionregistration.k8s.io/v1/${kind}`).catch(() => undefined);
    }
  }
}

/** A ClusterRole and its ClusterRoleBinding that let the webhook load's user re-parent namespaces. */
async function grantLoadUser(admin: KubeClient): Promise<void> {
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  const create = (path: string, body: object) =>
    admin.create(path, body).catch((err: unknown) => {
      if (!isAlreadyExists(err)) throw err;
    });
  await create(`${rbac}/clusterroles`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'hnc-bench-hierarchy-editor' },
    rules: [{ apiGroups: ['hnc.x-k8s.io'], resources: ['hierarchyconfigurations'], verbs: ['get', 'update'] }],
  });
  await create(`${rbac}/clusterrolebindings`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'hnc-bench-hierarchy-editor' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'hnc-bench-hierarchy-editor' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: LOAD_USER.username }],
  });
}
