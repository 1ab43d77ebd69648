// `tsx bench/admission-cpu.ts [--size 1000] [--rate 500] [--seconds 6] [--concurrency 16] [--thread] [--young MB]
//   [--http lean|node|fixed] [--profile DIR] [--server-cpus LIST] [--generator-cpus LIST] [--generator-realtime N]`
//
// What one review costs the webhook server, without a cluster: HNC's webhook server and handlers
// (webhooks/routes.ts, the same code the admission worker serves) in a child process with the
// image's node flags, deciding from a hierarchy model of a wide tree (a root and `size - 1`
// children, a propagated root Role), and the benchmark's load generator (bench/load-generator.ts,
// the same mix as `npm run bench`) in a process of its own. Prints, for an open-loop load at
// `rate` and a closed loop at `concurrency`: the client's latency, the server's CPU ms per
// review, its event-loop delay and GC pauses. `--thread` serves from a worker thread as the
// manager does (`--young` sets that worker's resourceLimits.maxYoungGenerationSizeMb). The one
// review kind that asks the API server (SubjectAccessReviews) is answered here after a turn of
// the event loop, without an API server: its figures are the webhook's own part only. Not a
// test: nothing here fails on a time. `--server-cpus` and `--generator-cpus` pin each process
// (taskset, every thread) and `--generator-realtime` raises the generator's event loop as `npm run
// bench` does, so that `--http fixed` measures the machine's own floor for a review in the
// cluster runs' layout (docs/benchmarks.md, "The review floor").
import type { ChildProcess } from 'node:child_process';
import { execFileSync, fork } from 'node:child_process';
import { parseArgs } from 'node:util';
import { CertificateAuthority } from '../kube/pki.js';
import { child, depthLabel, ROOT, SOURCE, type FromServer, type HttpMode, type ToServer, type Usage } from './admission-cpu-server.js';
import { bundle, LoadGenerator } from './hnc-process.js';
import { shippedNodeFlags } from './node-flags.js';
import { useRealtimeGenerator } from './realtime.js';
import type { LatencyResult } from './webhook-load.js';

const { values: flags } = parseArgs({
  options: {
    size: { type: 'string', default: '1000' },
    rate: { type: 'string', default: '500' },
    seconds: { type: 'string', default: '6' },
    concurrency: { type: 'string', default: '16' },
    thread: { type: 'boolean', default: false },
    young: { type: 'string' },
    http: { type: 'string', default: 'lean' },
    profile: { type: 'string' },
    'server-cpus': { type: 'string' },
    'generator-cpus': { type: 'string' },
    'generator-realtime': { type: 'string' },
  },
  strict: true,
});

await main();

/** Pins every thread of `pid` (those it starts later inherit it) to `cpus`, as a CPU set would. */
function pin(pid: number | undefined, cpus: string | undefined): void {
  if (pid !== undefined && cpus) execFileSync('taskset', ['--all-tasks', '--pid', '--cpu-list', cpus, String(pid)], { stdio: 'ignore' });
}

async function main(): Promise<void> {
  if (flags['generator-realtime']) useRealtimeGenerator(Number(flags['generator-realtime']));
  const size = Number(flags.size);
  const ca = await CertificateAuthority.create('admission-cpu');
  const serving = await ca.issue({ commonName: 'hnc-webhook', usage: 'server', ips: ['127.0.0.1'] });
  const prof = flags.profile ? ['--cpu-prof', `--cpu-prof-dir=${flags.profile}`] : [];
  const args = [...(flags.thread ? ['--thread'] : []), ...(flags.young ? ['--young', flags.young] : [])];
  // Bundled as the benchmark bundles HNC (the worker is started from the same file).
  const built = await bundle('admission-cpu-server');
  const server: ChildProcess = fork(built.file, args, {
    execArgv: [...shippedNodeFlags(), ...built.execArgv, ...prof],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  pin(server.pid, flags['server-cpus']);
  const replies: Array<(m: FromServer) => void> = [];
  server.on('message', (m: FromServer) => replies.shift()?.(m));
  const ask = (m: ToServer) => new Promise<FromServer>((r) => (replies.push(r), server.send(m)));
  const { port } = (await ask({ t: 'start', cert: serving.cert, key: serving.key, size, http: flags.http as HttpMode })) as {
    port: number;
  };
  const leaves = Array.from({ length: Math.min(200, size - 2) }, (_, i) => child(i + 2));
  const labels: Record<string, Record<string, string>> = { [ROOT]: { [depthLabel(ROOT)]: '0' } };
  for (const ns of leaves) labels[ns] = { [depthLabel(ns)]: '0', [depthLabel(ROOT)]: '1' };
  const gen = await LoadGenerator.start({
    port,
    ca: ca.certPem,
    targets: { root: ROOT, leaves, otherParent: child(1), copy: { namespace: leaves[0]!, name: SOURCE, from: ROOT } },
    labels,
  });
  pin(gen.pid, flags['generator-cpus']);
  const usage = async () => ((await ask({ t: 'usage' })) as { usage: Usage }).usage;
  const report = (what: string, r: LatencyResult & { clientCpuPercent: number; clientPolicy?: string }, u: Usage) => {
    const f = (x: number) => x.toFixed(2);
    process.stdout.write(
      `${what}: ${r.requests} reviews, ${r.perSecond.toFixed(0)}/s; client p50 / p99 / max ${f(r.overall.p50)} / ${f(r.overall.p99)} / ${f(r.overall.max)} ms ` +
        `(without SARs p99 ${f(r.bySubjectAccessReview.without.p99)}; generator late p99 ${f(r.sendLateness.p99)}, CPU ${r.clientCpuPercent.toFixed(0)} %, ${r.clientPolicy ?? 'normal'})\n` +
        `  server: ${(u.cpuMs / Math.max(1, u.reviews)).toFixed(3)} CPU ms per review (${u.cpuMs.toFixed(0)} ms for ${u.reviews}), busy ${(u.busyMs / Math.max(1, u.reviews)).toFixed(3)} ms per review; ` +
        `event-loop delay p50 / p99 / max ${f(u.loop.p50)} / ${f(u.loop.p99)} / ${f(u.loop.max)} ms; GC ${u.gc.count} pauses, ${f(u.gc.totalMs)} ms, longest ${f(u.gc.maxMs)} ms\n`,
    );
  };
  await gen.warm(2000);
  await usage();
  const rate = Number(flags.rate);
  const open = await gen.run({ mode: 'open', rate }, Math.round(rate * Number(flags.seconds)));
  report(`open loop at ${rate}/s`, open, await usage());
  const conc = Number(flags.concurrency);
  const closed = await gen.run({ mode: 'closed', concurrency: conc }, Math.round(rate * Number(flags.seconds)));
  report(`closed loop, ${conc} in flight`, closed, await usage());
  await gen.stop();
  server.disconnect();
  await new Promise((r) => server.once('exit', r));
}
