// The admission worker's entry point (webhooks/admission-thread.ts starts it): serves the webhooks
// over HTTPS on a thread of its own, deciding from its own HierarchyCache (its own watches of
// namespaces, HierarchyConfigurations, anchors and CRDs), so that no review waits for the main
// thread's reconciles, writes or garbage collection. What only the main thread knows arrives as
// messages (admission-protocol.ts): the propagated types and their sources' names, certificate
// renewals, credentials, the HRQ decisions, stop. It imports nothing of the controller.
import { readFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { HierarchyPolicy } from '../core/hierarchy/policy.js';
import { KubeClient } from '../kube/client.js';
import { HierarchyCache } from '../kube/hierarchy-cache.js';
import type { Headers } from '../kube/kubeconfig.js';
import { createLogger } from '../kube/log.js';
import { trimYoungGenerationWhenIdle } from '../kube/young-generation.js';
import type { Decision } from '../core/validation/decision.js';
import type { AdmissionWorkerData, FromWorker, ReviewRecord, ThreadDelay, ToWorker } from './admission-protocol.js';
import { PROBE_PATH } from './configurations.js';
import { AdmissionHandlers } from './handlers.js';
import { apiLookups, lookupClient } from './lookups.js';
import { PropagationIndex } from './propagation-index.js';
import { ALLOW_WHEN_CUT_OFF, ALLOW_WHILE_STARTING, JUDGED_WHEN_CUT_OFF, routeAdmission } from './routes.js';
import { WebhookServer } from './server.js';

/** Sockets for the worker's watches. */
const SOCKETS = 32;

if (!parentPort) throw new Error('webhooks/admission-worker is a worker thread entry point, started by webhooks/admission-thread.ts');
const port = parentPort;
const data = workerData as AdmissionWorkerData;
const send = (m: FromWorker) => port.postMessage(m);

// What the main thread records (the metrics of answered reviews) and writes (log lines), sent in
// batches: a message per review would cost the worker as much as writing its answer, and wake the
// main thread (which may be reconciling on the same cores) 500 times a second at 500 reviews/s.
// The metrics are read through a flush (Metrics.syncWebhooksWith), so a scrape still counts every
// review answered before it.
const BATCH_MS = 250;
let records: ReviewRecord[] = [];
let lines: string[] = [];
let batchTimer: NodeJS.Timeout | undefined;
function flush(id?: number): void {
  clearTimeout(batchTimer);
  batchTimer = undefined;
  if (records.length || lines.length || id !== undefined) send({ t: 'batch', records, lines, ...(id !== undefined ? { id } : {}) });
  records = [];
  lines = [];
}
function later(): void {
  batchTimer ??= setTimeout(flush, BATCH_MS);
}

// Every line goes to the main thread's logger (its level, format and destination), in batches (flush below).
const logger = createLogger({
  name: 'hnc',
  level: data.logLevel,
  format: 'json',
  destination: {
    write: (line: string) => {
      lines.push(line);
      // A warning or worse is not held back (the worker may be about to fail).
      if (/^\{"level":[4-6]0/.test(line)) flush();
      else later();
    },
  },
});
let headers: Headers | undefined = data.client.headers;
/** Whether the main thread hears from the API server (its watches then follow the cluster, as this thread's do). */
let reaches = true;
const client = KubeClient.fromSnapshot(data.client, () => headers, { maxSockets: SOCKETS });
// The calls a review waits on, on connections of their own (webhooks/lookups.ts).
const lookups = lookupClient(client);
// Only what the model reads of each object: the handlers read the model, never the objects.
const cache = new HierarchyCache(client, new HierarchyPolicy(data.policy), logger, { factsOnly: true });
const propagation = new PropagationIndex(() => cache.hierarchy, data.propagation);
const handlers = new AdmissionHandlers({
  hierarchy: () => cache.hierarchy,
  manager: data.manager,
  propagation: propagation.view,
  lookups: apiLookups(lookups),
});

// This thread's own event-loop delay and GC pauses (the main thread's say nothing of them), asked for by the main thread.
const LOOP_RESOLUTION_MS = 10;
const loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
loop.enable();
let gc = { maxMs: 0, totalMs: 0 };
/** This thread's nanoseconds on a CPU and waiting in the run queue (Linux); undefined elsewhere. */
function schedstat(): [run: number, wait: number] | undefined {
  try {
    const [run, wait] = readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map(Number);
    return run !== undefined && wait !== undefined && Number.isFinite(run + wait) ? [run, wait] : undefined;
  } catch {
    return undefined;
  }
}
let since = { at: performance.now(), sched: schedstat() };
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gc.maxMs = Math.max(gc.maxMs, e.duration);
    gc.totalMs += e.duration;
  }
}).observe({ entryTypes: ['gc'] });
function delay(reset: boolean): ThreadDelay {
  // The histogram counts the sampling interval itself: subtract it to get the delay.
  const ms = (ns: number) => Math.max(0, ns / 1e6 - LOOP_RESOLUTION_MS);
  const { heapUsed, heapTotal } = process.memoryUsage();
  const now = { at: performance.now(), sched: schedstat() };
  const sched =
    now.sched && since.sched ? { cpuMs: (now.sched[0] - since.sched[0]) / 1e6, runQueueMs: (now.sched[1] - since.sched[1]) / 1e6 } : {};
  const out: ThreadDelay = {
    p50: ms(loop.percentile(50)),
    p99: ms(loop.percentile(99)),
    max: ms(loop.max),
    gcMaxMs: gc.maxMs,
    gcTotalMs: gc.totalMs,
    wallMs: now.at - since.at,
    ...sched,
    heapUsed,
    heapTotal,
  };
  if (reset) {
    loop.reset();
    gc = { maxMs: 0, totalMs: 0 };
    since = now;
  }
  return out;
}

// The HRQ webhooks read the main thread's quota caches: their reviews are decided there.
let nextRelay = 1;
const relayed = new Map<number, (d: Decision) => void>();
const relay = (path: string, review: Parameters<typeof handlers.object>[0]) =>
  new Promise<Decision>((resolve) => {
    const id = nextRelay++;
    relayed.set(id, resolve);
    send({ t: 'relay', id, path, review });
  });

const server = routeAdmission(
  new WebhookServer({
    host: data.host,
    port: data.port,
    cert: data.cert,
    key: data.key,
    isReady: () => cache.synced,
    allowWhileStarting: ALLOW_WHILE_STARTING,
    reachesApiServer: () => reaches,
    allowWhenCutOff: ALLOW_WHEN_CUT_OFF,
    judgedWhenCutOff: JUDGED_WHEN_CUT_OFF,
    logger,
    onReview: (path, verdict, ms) => {
      if (path === PROBE_PATH) send({ t: 'probe' });
      records.push([path, ms, verdict.allowed ? null : verdict.reason]);
      later();
    },
  }),
  handlers,
);
for (const path of data.relayed) server.route(path, (r) => relay(path, r));

port.on('message', (m: ToWorker) => {
  switch (m.t) {
    case 'cert':
      server.setCertificate(m.cert, m.key);
      break;
    case 'types':
      propagation.setTypes(m.types);
      break;
    case 'sources':
      propagation.apply(m.changes);
      break;
    case 'headers':
      headers = m.headers;
      break;
    case 'reach':
      // Back from a cut-off: this thread's watches start again too (kube/reachability.ts).
      if (m.ok && !reaches) client.reachability.regained();
      reaches = m.ok;
      break;
    case 'decided':
      relayed.get(m.id)?.(m.decision);
      relayed.delete(m.id);
      break;
    case 'loop':
      send({ t: 'loop', id: m.id, delay: delay(m.reset) });
      break;
    case 'flush':
      flush(m.id);
      break;
    case 'stop':
      void stop(m.drainMs);
      break;
  }
});

// The young generation a burst of reviews grew is given back once this thread is idle (its own heap; the image's --expose-gc).
const trimmer = trimYoungGenerationWhenIdle({ logger });

let stopping = false;
async function stop(drainMs: number): Promise<void> {
  stopping = true;
  trimmer.stop();
  await server.stop(drainMs);
  flush();
  // Nothing is asked of the API server any more: a list or watch in flight is cut, not waited for.
  client.close('the admission worker stopped');
  lookups.close('the admission worker stopped');
  await cache.stop();
  send({ t: 'stopped' });
}

const listening = await server.start();
send({ t: 'listening', port: listening });
// A cache that cannot start (other than by this stop) fails the worker: the main thread hears of it (onFatal).
cache.start().then(
  () => send({ t: 'synced' }),
  (err: unknown) => {
    if (!stopping) throw err;
  },
);
