// The webhook load generator, in a worker thread of its own: its event loop and heap are not the
// benchmark's, so a garbage collection of the benchmark's caches never shows up as webhook latency.
import { parentPort, workerData } from 'node:worker_threads';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { directClient, quotaStatusReview, type Load, type LoadTargets } from './webhook-load.js';

export interface LoadWorkerData {
  port: number;
  ca: string;
  targets: LoadTargets;
  /** HNC labels of the target namespaces (the reviews carry them, as the API server's would). */
  labels: Record<string, Record<string, string>>;
  /** Send the API server's HRQ usage raises over these namespaces instead of HNC's usual mix. */
  quotaNamespaces?: string[];
}

export type LoadWorkerCall = { type: 'warm'; count: number } | { type: 'run'; load: Load; count: number; keepSamples?: boolean };
export type LoadWorkerRequest = { id: number } & LoadWorkerCall;

const data = workerData as LoadWorkerData;
const quota = data.quotaNamespaces;
const client = directClient(
  data.port,
  data.ca,
  data.targets,
  (ns) => data.labels[ns] ?? {},
  quota ? (i) => quotaStatusReview(quota, i) : undefined,
);
const RESOLUTION_MS = 5;
const loop = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
loop.enable();
// The histogram counts the sampling interval itself: subtract it to get the delay.
const delay = (ns: number) => Math.max(0, ns / 1e6 - RESOLUTION_MS);

parentPort!.on('message', (msg: LoadWorkerRequest) => {
  loop.reset();
  const run = msg.type === 'warm' ? client.warm(msg.count) : client.run(msg.load, msg.count, msg.keepSamples);
  run.then(
    (result) =>
      parentPort!.postMessage({
        id: msg.id,
        ok: true,
        result: { ...result, clientEventLoop: { p50: delay(loop.percentile(50)), p99: delay(loop.percentile(99)), max: delay(loop.max) } },
      }),
    (err: unknown) => parentPort!.postMessage({ id: msg.id, ok: false, error: String(err) }),
  );
});
