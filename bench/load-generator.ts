// The webhook load generator, a process of its own (bench/hnc-process.ts starts it): neither the
// benchmark's event loop and garbage collections (its caches, the tracker's watches) nor HNC's run
// on its thread, so its lateness is its own, and reported: how late each review was sent after its
// scheduled time, its event-loop delay and the CPU it used.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { directClient, quotaStatusReview, type LatencyResult, type Load, type LoadTargets } from './webhook-load.js';

export interface LoadGeneratorData {
  port: number;
  ca: string;
  targets: LoadTargets;
  /** HNC labels of the target namespaces (the reviews carry them, as the API server's would). */
  labels: Record<string, Record<string, string>>;
  /** Send the API server's HRQ usage raises over these namespaces instead of HNC's usual mix. */
  quotaNamespaces?: string[];
  /** Connections kept open (bench/webhook-load.ts, DIRECT_POOL). */
  poolSize?: number;
}

export type LoadGeneratorCall =
  | { type: 'init'; data: LoadGeneratorData }
  | { type: 'warm'; count: number }
  | { type: 'run'; load: Load; count: number; keepSamples?: boolean };
export type LoadGeneratorRequest = { id: number } & LoadGeneratorCall;

/** The generator's own view of a run: its event-loop delay (ms) and CPU (% of one core). */
export interface GeneratorStats {
  clientEventLoop: { p50: number; p99: number; max: number };
  clientCpuPercent: number;
}

const RESOLUTION_MS = 5;
const loop = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
loop.enable();
// The histogram counts the sampling interval itself: subtract it to get the delay.
const delay = (ns: number) => Math.max(0, ns / 1e6 - RESOLUTION_MS);

let client: ReturnType<typeof directClient> | undefined;

async function handle(msg: LoadGeneratorRequest): Promise<unknown> {
  if (msg.type === 'init') {
    const { data } = msg;
    const quota = data.quotaNamespaces;
    client = directClient(
      data.port,
      data.ca,
      data.targets,
      (ns) => data.labels[ns] ?? {},
      quota ? (i) => quotaStatusReview(quota, i) : undefined,
      data.poolSize,
    );
    return {};
  }
  if (!client) throw new Error('the load generator was not initialised');
  loop.reset();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const result: LatencyResult = msg.type === 'warm' ? await client.warm(msg.count) : await client.run(msg.load, msg.count, msg.keepSamples);
  const cpu = process.cpuUsage(cpu0);
  const stats: GeneratorStats = {
    clientEventLoop: { p50: delay(loop.percentile(50)), p99: delay(loop.percentile(99)), max: delay(loop.max) },
    clientCpuPercent: (100 * (cpu.user + cpu.system)) / 1000 / (performance.now() - t0),
  };
  return { ...result, ...stats };
}

process.on('message', (msg: LoadGeneratorRequest) => {
  handle(msg).then(
    (result) => process.send?.({ id: msg.id, ok: true, result }),
    (err: unknown) => process.send?.({ id: msg.id, ok: false, error: String(err) }),
  );
});
// The benchmark went away: nothing to clean up.
process.on('disconnect', () => process.exit(0));
