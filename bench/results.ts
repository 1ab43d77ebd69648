// What a topology's run reports (the JSON of bench/results/), and the small helpers that fill it in.
import type { ThreadDelay } from '../webhooks/admission-protocol.js';
import type { ChildStats } from './hnc-child.js';
import type { HistogramSummary, WriteDelta } from './metrics.js';
import type { PairedSummary, PairedTrial } from './paired-floor.js';
import type { FloorResult } from './plane.js';
import type { describe, MinimumWrites, TopologyName } from './topology.js';
import { mb, round, type Summary } from './util.js';
import type { Verification } from './verify.js';
import type { LatencyResult } from './webhook-load.js';
import type { GeneratorStats } from './load-generator.js';

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

export const memory = (s: ChildStats, baseline: ChildStats | undefined): Memory => ({
  rssMB: mb(s.rss),
  heapUsedMB: mb(s.heapUsed),
  peakRssMB: mb(s.maxRss),
  baselineRssMB: mb(baseline?.rss ?? 0),
  ...(s.admissionEventLoop?.heapTotal !== undefined
    ? { admissionHeapUsedMB: mb(s.admissionEventLoop.heapUsed ?? 0), admissionHeapTotalMB: mb(s.admissionEventLoop.heapTotal) }
    : {}),
});
export const cpuSeconds = (s: ChildStats) => (s.cpuUser + s.cpuSystem) / 1e6;

/** The same figures after a full collection in HNC's process: the live data, and what RSS keeps beyond it. */
export function afterGc(m: Memory, gc: ChildStats): Memory {
  return {
    ...m,
    heapLiveMB: mb(gc.heapUsed),
    rssAfterGcMB: mb(gc.rss),
    heapTotalAfterGcMB: mb(gc.heapTotal),
    externalAfterGcMB: mb(gc.external),
    ...(gc.rssFile !== undefined ? { rssFileAfterGcMB: mb(gc.rssFile) } : {}),
    ...(gc.rssAnon !== undefined ? { rssAnonAfterGcMB: mb(gc.rssAnon) } : {}),
  };
}

export interface WritesReport {
  /** Measured at the API server (apiserver_request_total deltas, every write verb, leases excluded). */
  apiserver: WriteDelta;
  /** Write attempts the manager's Writer counted (manager.writer.total). */
  manager: number;
  minimum: MinimumWrites;
  /** apiserver.total ÷ minimum.total. */
  ratio: number;
}

/** HNC's event-loop delay (ms) and garbage collection during a phase. */
export interface LoopStats {
  p50: number;
  p99: number;
  max: number;
  gcMaxMs: number;
  gcTotalMs: number;
}

/** A webhook load as the client saw it, with HNC's side of it. */
export type WebhookLoad = LatencyResult &
  GeneratorStats & {
    /** HNC's own histogram of the time it took to answer (from the request's arrival to its answer). */
    serverSide?: HistogramSummary;
    serverEventLoop: LoopStats;
    /** The admission thread's own event-loop delay and GC pauses. */
    admissionEventLoop?: ThreadDelay;
  };

/** A load while Roles were copied to every descendant: the reviews sent during the copies, pooled. */
export interface DuringCopies {
  during: LatencyResult;
  /** The whole load of the trial with the highest p99. */
  all: WebhookLoad;
  /** Median time of the copies. */
  propagationMs: number;
  /** Whether every load outlasted its copy (else `during` covers only the copies' start). */
  covered: boolean;
  /** Each copy's own p99. */
  trialP99s: number[];
}

export interface ScenarioResult {
  topology: TopologyName;
  shape: ReturnType<typeof describe> & { sources: { root: number; inner: number; innerNamespaces: string[] } };
  controlPlaneStartSeconds: number;
  /** True when this topology shared its control plane with others (--quick): earlier topologies' namespaces were present. */
  sharedPlane: boolean;
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
    eventLoop: LoopStats;
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
  propagation?: PropagationResult;
  move?: { size: number; trials: Summary; minimumPerMove: number; writes: WritesReport };
  /** Absent for the topologies --quick runs without the webhook phase. */
  webhooks?: WebhookResult;
  versions: { kubernetes: string; binaries: string };
  leftoverProcesses: string[];
}

export interface PropagationResult {
  descendants: number;
  create: Summary;
  update: Summary;
  delete: Summary;
  /** Descendants ÷ the write floor. */
  floorSeconds: number;
  p50RatioToFloor: number;
  p99RatioToFloor: number;
  writes: WritesReport;
  cpu: Record<string, number>;
  eventLoop: LoopStats & { gcMinorMs: number };
  /** Each trial between two floors of its own (bench/paired-floor.ts). */
  pairedFloors: PairedFloors;
}

export interface WebhookResult {
  /** Writes of HNC's first start with webhooks and of its last (a restart with everything in place). */
  restartWrites: {
    first: WriteDelta;
    last: WriteDelta;
    objectsChangedLast: { changed: number; created: number; deleted: number };
    restarts: number;
  };
  /** Reviews straight to the webhook server, open loop at each offered rate. */
  direct: WebhookLoad[];
  /** The same load at the highest rate while a new root Role is copied to every descendant. */
  duringPropagation?: DuringCopies & { copies: number; floorMs: number };
  /** The review floor (bench/review-floor.ts): the same loads against a server that only answers. */
  reviewFloor?: { atRest: WebhookLoad; duringCopy?: DuringCopies };
  /** Closed loop: the most reviews/s HNC answers. */
  saturation: WebhookLoad;
  /** RSS with webhooks on: right after the start, after idling (steady), after the loads. */
  memory: { idle: Memory; steady?: Memory; afterLoads: Memory };
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

export function writesReport(apiserver: WriteDelta, manager: number, minimum: MinimumWrites, benchOwn = 0): WritesReport {
  const own = { ...apiserver, total: apiserver.total - benchOwn };
  return { apiserver: own, manager, minimum, ratio: round(own.total / Math.max(1, minimum.total), 4) };
}

export function addMinimum(a: MinimumWrites, b: MinimumWrites): MinimumWrites {
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
export const ZERO: MinimumWrites = {
  namespaces: 0,
  hierarchyconfigurations: 0,
  copies: { roles: 0, rolebindings: 0, networkpolicies: 0 },
  total: 0,
};
