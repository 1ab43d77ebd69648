// The HNC process under test: the same startHnc() as `npm start` and the integration tests, in a
// process of its own so that its memory and CPU time are its own. The benchmark drives it over the
// IPC channel (start, idle, stats, stop) and it exits when the benchmark goes away.
import { readFileSync } from 'node:fs';
import { writeHeapSnapshot } from 'node:v8';
import { startHnc, type Hnc } from '../cmd/hnc.js';
import { managerFlagsFrom } from '../cmd/flags.js';
import { RECONCILER_NICE } from '../cmd/thread-priority.js';
import { KubeClient } from '../kube/client.js';
import { MANAGER_SERVICE_ACCOUNT } from '../kube/install.js';
import { createLogger } from '../kube/log.js';
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import type { ThreadDelay } from '../webhooks/admission-protocol.js';

export interface StartRequest {
  kubeconfig: string;
  webhooks: boolean;
  webhookPort: number;
  qps: number;
  workers: number;
  objectWorkers: number;
  logFile: string;
  /** Hierarchical resource quotas (--enable-hrq), synced every minute as by default. */
  hrq?: boolean;
  /** Reconcile only while holding this Lease; the webhooks of a follower forward usage raises to the leader. */
  leaderElection?: { id: string };
  /** The port written into the webhook configurations, when not this process's own (a second replica). */
  registerPort?: number;
}

export type ChildCall =
  | { type: 'start'; start: StartRequest }
  | { type: 'idle'; timeoutMs: number }
  | { type: 'stats'; resetEventLoop?: boolean; collect?: boolean }
  | { type: 'stop' }
  | { type: 'heap-snapshot'; file: string };
export type ChildRequest = { id: number } & ChildCall;

export interface ChildStats {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  /** Of the RSS, bytes backed by files (node's own binary) and anonymous (heaps); Linux only. */
  rssFile?: number;
  rssAnon?: number;
  /** Microseconds of CPU since the process started. */
  cpuUser: number;
  cpuSystem: number;
  /** Peak resident set (bytes) since the process started. */
  maxRss: number;
  writes: Record<string, number>;
  writesTotal: number;
  namespaces: number;
  webhookPort?: number;
  /** Port of HNC's own /metrics (127.0.0.1), when started with webhooks. */
  metricsPort?: number;
  /** With leader election: whether this process holds the Lease. */
  leading?: boolean;
  /** Event-loop delay (ms) since the last reset: how long work waited for the one thread. */
  eventLoop: { p50: number; p99: number; max: number };
  /** The admission thread's own event-loop delay (ms) and GC pauses since the last reset (stats only, webhooks on a thread). */
  admissionEventLoop?: ThreadDelay;
  /** Garbage-collection pauses since the last reset; scavenges (the young generation) apart. */
  gc: { count: number; totalMs: number; maxMs: number; minorMs: number };
}

const noGc = () => ({ count: 0, totalMs: 0, maxMs: 0, minorMs: 0 });
let gc = noGc();
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gc.count++;
    gc.totalMs += e.duration;
    gc.maxMs = Math.max(gc.maxMs, e.duration);
    if ((e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) gc.minorMs += e.duration;
  }
}).observe({ entryTypes: ['gc'] });

const RESOLUTION_MS = 5;
const loop = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
loop.enable();
// The histogram counts the sampling interval itself: subtract it to get the delay.
const delay = (ns: number) => Math.max(0, ns / 1e6 - RESOLUTION_MS);

let hnc: Hnc | undefined;

function rssParts(): { rssFile?: number; rssAnon?: number } {
  try {
    const status = readFileSync('/proc/self/status', 'utf8');
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]) * 1024;
    return { rssFile: kb('RssFile'), rssAnon: kb('RssAnon') };
  } catch {
    return {};
  }
}

function stats(): ChildStats {
  const m = process.memoryUsage();
  const cpu = process.cpuUsage();
  return {
    rss: m.rss,
    heapUsed: m.heapUsed,
    heapTotal: m.heapTotal,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
    ...rssParts(),
    cpuUser: cpu.user,
    cpuSystem: cpu.system,
    maxRss: process.resourceUsage().maxRSS * 1024,
    writes: hnc ? { ...hnc.manager.writer.counts } : {},
    writesTotal: hnc?.manager.writer.total ?? 0,
    namespaces: hnc?.manager.hierarchy.namespaceNames().length ?? 0,
    webhookPort: hnc?.webhooks?.port,
    metricsPort: hnc?.probePorts.metrics,
    leading: hnc?.leader?.isLeader,
    eventLoop: { p50: delay(loop.percentile(50)), p99: delay(loop.percentile(99)), max: delay(loop.max) },
    gc: { ...gc },
  };
}

async function handle(req: ChildRequest): Promise<unknown> {
  switch (req.type) {
    case 'start': {
      const s = req.start;
      const flags = managerFlagsFrom({});
      const client = await KubeClient.fromKubeconfig(s.kubeconfig);
      const logger = createLogger({ name: 'hnc-bench', file: s.logFile });
      const t0 = performance.now();
      hnc = await startHnc({
        client,
        policy: flags.policy,
        namespace: MANAGER_SERVICE_ACCOUNT.namespace,
        logger,
        workers: s.workers,
        objectWorkers: s.objectWorkers,
        qps: s.qps,
        propagation: flags.propagation,
        // HNC's own metrics (its webhook latency histogram) with the webhooks.
        metricsAddress: s.webhooks ? '127.0.0.1:0' : '',
        webhooks: s.webhooks
          ? {
              port: s.webhookPort,
              host: '127.0.0.1',
              endpoint: (port) => ({ url: `https://127.0.0.1:${s.registerPort ?? port}` }),
              // The shipped defaults, as the image runs the manager.
              reconcilerNice: RECONCILER_NICE,
            }
          : false,
        hrq: s.hrq ? { syncIntervalMs: 60_000 } : undefined,
        leaderElection: s.leaderElection,
      });
      return { startedMs: performance.now() - t0, ...stats() };
    }
    case 'idle':
      if (!hnc) throw new Error('not started');
      await hnc.manager.idle(req.timeoutMs);
      return stats();
    case 'stats': {
      // A full collection first (the process runs with --expose-gc): what remains is live data.
      if (req.collect) (globalThis as { gc?: () => void }).gc?.();
      const admissionEventLoop = await hnc?.webhooks?.admissionEventLoop(req.resetEventLoop === true);
      const out = { ...stats(), ...(admissionEventLoop ? { admissionEventLoop } : {}) };
      if (req.resetEventLoop) {
        loop.reset();
        gc = noGc();
      }
      return out;
    }
    case 'heap-snapshot':
      // What the live heap is made of (open in Chrome DevTools' Memory tab).
      return { file: writeHeapSnapshot(req.file) };
    case 'stop':
      await hnc?.stop();
      hnc = undefined;
      return stats();
  }
}

process.on('message', (msg: ChildRequest) => {
  handle(msg).then(
    (result) => process.send?.({ id: msg.id, ok: true, result }),
    (err: unknown) => process.send?.({ id: msg.id, ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
  );
});
// The benchmark went away (or killed us): nothing to clean up that the control plane needs.
process.on('disconnect', () => process.exit(0));
process.send?.({ id: 0, ok: true, result: { loaded: true, ...stats() } });
