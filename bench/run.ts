// `npm run bench [-- --quick | --size N | --topology wide,full,skewer,org | ...]`
//
// Benchmarks HNC on the real local control plane (a fresh, throwaway one per topology) and writes
// bench/results/<date>-<size>.json and .md. See docs/benchmarks.md for what each figure means.
// Benchmarks are not tests: nothing here fails on a time.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { goManagerBinary } from './hnc-go.js';
import { buildChild, killAllChildren } from './hnc-process.js';
import { runHrq, type HrqOptions } from './hrq-phase.js';
import { Plane } from './plane.js';
import { markdown, type RunReport } from './report.js';
import { ColdStartTimeout, runScenario, type ScenarioOptions } from './scenario.js';
import { TOPOLOGIES, type TopologyName } from './topology.js';
import { log } from './util.js';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..');

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    size: { type: 'string' },
    topology: { type: 'string' },
    objects: { type: 'string' },
    'inner-objects': { type: 'string' },
    'move-size': { type: 'string' },
    'max-chain': { type: 'string' },
    trials: { type: 'string' },
    'move-trials': { type: 'string' },
    'webhook-requests': { type: 'string' },
    'webhook-concurrency': { type: 'string' },
    'webhook-rates': { type: 'string' },
    'webhook-seconds': { type: 'string' },
    'webhook-propagation-seconds': { type: 'string' },
    'webhook-propagation-trials': { type: 'string' },
    'no-review-floor': { type: 'boolean', default: false },
    'shared-plane': { type: 'boolean' },
    'keep-logs': { type: 'boolean', default: false },
    'cold-timeout': { type: 'string' },
    'floor-writes': { type: 'string' },
    'hnc-qps': { type: 'string' },
    'hnc-workers': { type: 'string' },
    'hnc-object-workers': { type: 'string' },
    'cold-only': { type: 'boolean', default: false },
    'no-webhooks': { type: 'boolean', default: false },
    'steady-seconds': { type: 'string' },
    'hrq-size': { type: 'string' },
    'hrq-only': { type: 'boolean', default: false },
    'hrq-rates': { type: 'string' },
    'hrq-seconds': { type: 'string' },
    profile: { type: 'boolean', default: false },
    controller: { type: 'string' },
    out: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
  strict: true,
});

const USAGE = `Usage: npm run bench -- [--quick | --size N] [--topology wide,full,skewer,org] [options]

  --quick                 about 100 namespaces per topology, fewer trials (under two minutes)
  --size N                namespaces per topology (default 1000)
  --topology LIST         which topologies (default all four)
  --objects N             source objects at the root (default 10)
  --inner-objects N       source objects in each of three inner namespaces (default 2)
  --move-size N           namespaces in the moved subtree (default 100; 20 with --quick)
  --max-chain N           the skewer is cut to this depth (default 1000)
  --trials N              one-object propagation trials, each between two floors (default 10; 1 with --quick)
  --move-trials N         subtree moves (default 4; 2 with --quick)
  --webhook-rates LIST    offered rates (reviews/s) of the open-loop webhook loads (default 100,500; 500 with --quick)
  --webhook-seconds N     seconds of each open-loop webhook load (default 6; 1 with --quick)
  --webhook-propagation-seconds N  seconds of load at the highest rate while one new root Role is copied (default 6; 0: skip)
  --webhook-propagation-trials N   copies, each under a load of its own, pooled into the figures (default 1)
  --no-review-floor       skip the review floor (the same loads against a TLS server that only answers)
  --webhook-requests N    reviews of the closed-loop saturation run (default 3000; 300 with --quick)
  --webhook-concurrency N in-flight reviews of the saturation run (default 16)
  --no-webhooks           skip the webhook phase
  --cold-only             per topology only the floor, the cold start, its steady state and a warm restart
  --floor-writes N        writes per concurrency level of the write floor (default 2000; 300 with --quick)
  --hnc-qps N             HNC's client-side write QPS limit (default 100000: unthrottled; HNC's default is 50)
  --hnc-workers N         HNC's --max-reconciles (default 10, as shipped)
  --hnc-object-workers N  HNC's --max-object-reconciles (default 32, as shipped)
  --steady-seconds N      the idle window for steady-state CPU (default 10; 1 with --quick)
  --cold-timeout S        give up on a topology whose cold start has not converged after S seconds (default 600)
  --shared-plane          one control plane for every topology (default with --quick; else one each)
  --hrq-size N            namespaces of the HRQ phase, HRQs at several depths (default --size; 0: skip)
  --hrq-only              run only the HRQ phase (no topologies)
  --hrq-rates LIST        offered rates (reviews/s) of the quota webhook loads (default 100,500; 500 with --quick)
  --hrq-seconds N         seconds of each quota webhook load (default 6; 1 with --quick)
  --controller NAME       hnc-ts (default) or hnc-go: HNC's Go manager v1.1.0, built once from the Go module proxy
                          (bench/hnc-go-build.sh), measured through the same phases (no HRQ phase, no --profile)
  --profile               V8 CPU profiles of the HNC processes and a heap snapshot at steady state, in bench/results/profiles/
  --keep-logs             keep the control plane's and HNC's logs in bench/results/logs/
  --out DIR               where results go (default bench/results)
`;

function int(name: string, v: string | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a whole number, not ${JSON.stringify(v)}`);
  return n;
}

const rates = (name: string, v: string) =>
  v
    .split(',')
    .map((x) => int(name, x.trim(), 0))
    .filter((x) => x > 0);

/** The topologies, the controller, and every phase's options, from the command line. */
function parseOptions() {
  const quick = flags.quick;
  const size = int('size', flags.size, quick ? 100 : 1000);
  const topologies = flags['hrq-only'] ? [] : ((flags.topology ?? TOPOLOGIES.join(',')).split(',').map((t) => t.trim()) as TopologyName[]);
  for (const t of topologies)
    if (!TOPOLOGIES.includes(t)) throw new Error(`unknown topology ${JSON.stringify(t)}; choose from ${TOPOLOGIES.join(', ')}`);
  const controller = flags.controller ?? 'hnc-ts';
  if (controller !== 'hnc-ts' && controller !== 'hnc-go')
    throw new Error(`--controller must be hnc-ts or hnc-go, not ${JSON.stringify(controller)}`);
  const hrqSize = int('hrq-size', flags['hrq-size'], controller === 'hnc-go' ? 0 : size);
  if (controller === 'hnc-go' && (hrqSize > 0 || flags.profile))
    throw new Error('--controller hnc-go runs without the HRQ phase and --profile');
  const opts: ScenarioOptions = {
    size,
    rootObjects: int('objects', flags.objects, 10),
    innerObjects: int('inner-objects', flags['inner-objects'], 2),
    moveSize: int('move-size', flags['move-size'], quick ? 20 : 100),
    maxChain: int('max-chain', flags['max-chain'], 1000),
    trials: Math.max(1, int('trials', flags.trials, quick ? 1 : 10)),
    moveTrials: Math.max(2, int('move-trials', flags['move-trials'], quick ? 2 : 4)),
    webhookRequests: int('webhook-requests', flags['webhook-requests'], quick ? 300 : 3000),
    webhookSeconds: int('webhook-seconds', flags['webhook-seconds'], quick ? 1 : 6),
    webhookRestarts: quick ? 1 : 2,
    webhooksFor: (t) => !flags['no-webhooks'] && (!quick || t === topologies[topologies.length - 1]),
    coldTimeoutMs: 1000 * int('cold-timeout', flags['cold-timeout'], 600),
    coldSteadyMs: quick ? 0 : 1000 * int('steady-seconds', flags['steady-seconds'], 10),
    webhookSteadyMs: quick ? 0 : 30_000,
    quietMs: quick ? 1200 : 2000,
    webhookConcurrency: int('webhook-concurrency', flags['webhook-concurrency'], 16),
    webhookRates: rates('webhook-rates', flags['webhook-rates'] ?? (quick ? '500' : '100,500')),
    webhookPropagationSeconds: int('webhook-propagation-seconds', flags['webhook-propagation-seconds'], 6),
    reviewFloor: !flags['no-review-floor'],
    webhookPropagationTrials: int('webhook-propagation-trials', flags['webhook-propagation-trials'], 1),
    floorWrites: int('floor-writes', flags['floor-writes'], quick ? 300 : 2000),
    floorConcurrency: quick ? [16, 64] : [8, 32, 64],
    setupConcurrency: 32,
    steadyMs: 1000 * int('steady-seconds', flags['steady-seconds'], quick ? 1 : 10),
    hncQps: int('hnc-qps', flags['hnc-qps'], 100_000),
    hncWorkers: int('hnc-workers', flags['hnc-workers'], 10),
    hncObjectWorkers: int('hnc-object-workers', flags['hnc-object-workers'], 32),
    coldOnly: flags['cold-only'],
    controller,
  };
  const hrq: HrqOptions = {
    size: hrqSize,
    rates: rates('hrq-rates', flags['hrq-rates'] ?? (quick ? '500' : '100,500')),
    seconds: int('hrq-seconds', flags['hrq-seconds'], quick ? 1 : 6),
    replicas: true,
    quietMs: opts.quietMs,
    timeoutMs: opts.coldTimeoutMs,
    setupConcurrency: opts.setupConcurrency,
    hncQps: opts.hncQps,
    hncWorkers: opts.hncWorkers,
    hncObjectWorkers: opts.hncObjectWorkers,
  };
  return { quick, size, topologies, opts, hrq, shared: flags['shared-plane'] ?? quick };
}

function newReport(parsed: ReturnType<typeof parseOptions>): RunReport {
  const cpu = cpus();
  return {
    run: {
      startedAt: new Date().toISOString(),
      // Paths inside the repository relative to it: a report names no folder of the machine it ran on.
      command: `npm run bench -- ${process.argv
        .slice(2)
        .map((a) => (a.startsWith(`${REPO}/`) ? relative(REPO, a) : a))
        .join(' ')}`.trim(),
      machine: {
        cores: cpu.length,
        cpuModel: cpu[0]?.model ?? '?',
        memoryGB: Math.round(totalmem() / 2 ** 30),
        node: process.version,
        platform: `${process.platform}/${process.arch}`,
        loadAverageAtStart: loadavg(),
      },
      versions: {},
      options: {
        topologies: parsed.topologies,
        hrqSize: parsed.hrq.size,
        ...parsed.opts,
        webhooksFor: flags['no-webhooks'] ? 'none' : parsed.quick ? `${parsed.topologies[parsed.topologies.length - 1]} only` : 'all',
        profileDir: undefined,
        sharedPlane: parsed.shared,
      },
    },
    results: [],
    errors: [],
  };
}

/** Where the report is written, and the control plane the phases share, stopped once done with. */
class Runner {
  plane: Plane | undefined;
  interrupted = false;

  constructor(
    readonly parsed: ReturnType<typeof parseOptions>,
    readonly report: RunReport,
    readonly base: string,
    readonly logDir: string | undefined,
  ) {}

  save(): void {
    writeFileSync(`${this.base}.json`, JSON.stringify(this.report, null, 2) + '\n');
    writeFileSync(`${this.base}.md`, markdown(this.report));
  }

  async planeFor(what: string): Promise<Plane> {
    if (!this.plane) log(`starting a control plane for ${what}`);
    return (this.plane ??= await Plane.start(this.parsed.opts));
  }

  /** Stops the control plane; the processes it left running (there should be none). */
  async stopPlane(label: string): Promise<string[]> {
    const p = this.plane;
    this.plane = undefined;
    const left = (await p?.stop(this.logDir && join(this.logDir, label))) ?? [];
    if (left.length) log(`WARNING: still running after the control plane stopped: ${left.join(', ')}`);
    return left;
  }

  failed(topology: string, err: unknown): void {
    const partial = err instanceof ColdStartTimeout ? err.partial : undefined;
    const error = partial ? (err as Error).message : ((err as Error).stack ?? String(err));
    log(`${topology} failed: ${error}`);
    this.report.errors.push({ topology, error, ...(partial ? { partial } : {}) });
  }

  /** On Ctrl-C: every child ended, the results so far saved. */
  onSignal(signal: string): void {
    if (this.interrupted) process.exit(130);
    this.interrupted = true;
    log(`${signal}: ending HNC and the control plane; results so far are in ${this.base}.md`);
    killAllChildren();
    this.report.errors.push({ topology: 'run', error: `interrupted by ${signal}` });
    this.save();
    void (this.plane?.stop() ?? Promise.resolve()).finally(() => process.exit(130));
  }

  async topologies(): Promise<void> {
    const { topologies, opts, shared } = this.parsed;
    for (const t of topologies) {
      if (this.interrupted) break;
      try {
        const r = await runScenario(t, opts, await this.planeFor(shared ? 'every topology' : t), shared);
        if (!shared) r.leftoverProcesses = await this.stopPlane(t);
        this.report.results.push(r);
        this.report.run.versions = r.versions;
      } catch (err) {
        this.failed(t, err);
        if (!shared) await this.stopPlane(t);
      }
      this.report.run.finishedAt = new Date().toISOString();
      this.save();
    }
  }

  async hrq(): Promise<void> {
    if (this.parsed.hrq.size === 0 || this.interrupted) return;
    try {
      const p = await this.planeFor('the HRQ phase');
      this.report.hrq = await runHrq(p, this.parsed.hrq);
      this.report.run.versions = { kubernetes: p.version, binaries: p.cp.binaries.source.split('/').pop() ?? p.cp.binaries.source };
    } catch (err) {
      this.failed('hrq', err);
    }
    if (!this.parsed.shared) await this.stopPlane('hrq');
    this.save();
  }
}

async function main(): Promise<void> {
  if (flags.help) {
    process.stdout.write(USAGE);
    return;
  }
  const parsed = parseOptions();
  const { quick, size, opts } = parsed;
  const outDir = flags.out ?? join(REPO, 'bench', 'results');
  const label = `${new Date().toISOString().replace(/[:]/g, '-').slice(0, 19)}-${quick ? 'quick' : `n${size}`}`;
  if (flags.profile) opts.profileDir = join(outDir, 'profiles', label);
  mkdirSync(outDir, { recursive: true });
  const runner = new Runner(
    parsed,
    newReport(parsed),
    join(outDir, `${label}${flags['hrq-only'] ? '-hrq' : ''}${opts.controller === 'hnc-go' ? '-hnc-go' : ''}`),
    flags['keep-logs'] ? join(outDir, 'logs', label) : undefined,
  );
  process.on('SIGINT', () => runner.onSignal('SIGINT'));
  process.on('SIGTERM', () => runner.onSignal('SIGTERM'));
  await buildChild();
  // Built (or found in the cache) before any control plane starts: a cold build takes minutes.
  if (opts.controller === 'hnc-go') log(`HNC's Go manager: ${await goManagerBinary()}`);
  const t0 = Date.now();
  await runner.topologies();
  await runner.hrq();
  const left = await runner.stopPlane('shared');
  const { report } = runner;
  if (parsed.shared) for (const r of report.results) r.leftoverProcesses = left;
  report.run.finishedAt = new Date().toISOString();
  runner.save();
  log(`done in ${((Date.now() - t0) / 1000).toFixed(0)} s: ${runner.base}.md and .json`);
  process.stdout.write(markdown(report));
  // Keep-alive connections to the (stopped) control plane would hold the process open a while.
  process.exit(report.errors.length ? 1 : 0);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(2);
});
