// `npm run bench [-- --quick | --size N | --topology wide,full,skewer,org | ...]`
//
// Benchmarks HNC on the real local control plane (a fresh, throwaway one per topology) and writes
// bench/results/<date>-<size>.json and .md. See docs/benchmarks.md for what each figure means.
// Benchmarks are not tests: nothing here fails on a time.
import { benchNodeEnv, benchNodeFlags } from './node-flags.js';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ColdStartTimeout, Plane, runScenario, type ScenarioOptions } from './scenario.js';
import { TOPOLOGIES, type TopologyName } from './topology.js';
import { markdown, type RunReport } from './report.js';
import { buildChild, killAllChildren } from './hnc-process.js';
import { log } from './util.js';
import { generatorRealtimePriority, useRealtimeGenerator } from './realtime.js';
import { runHrq } from './hrq.js';
import { goManagerBinary } from './hnc-go.js';
import { activateCpuGroups, CgroupsUnavailable, CpuGroups, parseCpus, parseShares, placeInCpuGroup } from './cgroups.js';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..');

const HERE = dirname(fileURLToPath(import.meta.url));

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
    'no-review-floor': { type: 'boolean', default: false },
    'webhook-propagation-trials': { type: 'string' },
    'apiserver-rate': { type: 'string' },
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
    cgroups: { type: 'boolean', default: false },
    'cgroup-shares': { type: 'string' },
    'cgroup-cpus': { type: 'string' },
    'generator-realtime': { type: 'string' },
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
  --trials N              single-object propagation trials, each between two floors (default 10; 1 with --quick)
  --move-trials N         subtree moves (default 4; 2 with --quick)
  --webhook-requests N    reviews of the closed-loop (saturation) webhook run (default 3000; 300 with --quick)
  --webhook-seconds N     seconds of each open-loop webhook load (default 6; 1 with --quick)
  --webhook-rates LIST    offered rates (reviews/s) of the open-loop webhook loads (default 100,500; 500 with --quick)
  --webhook-propagation-seconds N  seconds of open-loop load at the highest rate while one new root Role propagates (default 6; 0: skip)
  --webhook-propagation-trials N  copies, each under a load of its own, pooled into the figures while propagating (default 1)
  --no-review-floor  skip the review floor: the same loads against a bare TLS server with a fixed answer in HNC's CPU group
  --apiserver-rate N      offered rate of dry-run requests through the API server (default 100)
  --webhook-concurrency N in-flight reviews of the closed-loop saturation run (default 16)
  --shared-plane          one control plane for every topology (default with --quick; else one each)
  --keep-logs             keep the control plane's and HNC's logs in bench/results/logs/
  --cold-timeout S        give up on a topology whose cold start has not converged after S seconds (default 600)
  --floor-writes N        writes per concurrency level of the floor (default 2000; 300 with --quick)
  --hnc-qps N             HNC's client-side write QPS limit (default 100000: unthrottled; HNC's default is 50)
  --hnc-workers N         HNC's --max-reconciles (default 10, as shipped)
  --hnc-object-workers N  HNC's --max-object-reconciles (default 32, as shipped)
  --cold-only             per topology only the floor, the cold start, its steady state and a warm restart (e.g. to time HNC's defaults: --hnc-qps 50)
  --no-webhooks           skip the webhook phase (HNC restarted with its webhooks, their load, propagation with webhooks on)
  --steady-seconds N      the idle window for steady-state CPU (default 10; 1 with --quick)
  --hrq-size N            namespaces of the HRQ phase, HRQs at several depths (default --size; 0: skip)
  --hrq-only              run only the HRQ phase (no topologies)
  --hrq-rates LIST        offered rates (reviews/s) of the quota webhook loads (default 100,500; 500 with --quick)
  --hrq-seconds N         seconds of each quota webhook load (default 6; 1 with --quick)
  --profile               write V8 CPU profiles of the HNC processes to bench/results/profiles/ (one per process, in start order: cold start, warm restart + propagation + moves, webhooks), and a heap snapshot at steady state after the cold start
  --controller NAME       hnc-ts (default) or hnc-go: HNC's Go manager, built once from the Go module proxy
                          (bench/hnc-go-build.sh), measured through the same phases (no HRQ phase, no --profile)
  --cgroups               run the control plane (etcd, kube-apiserver, kube-controller-manager), the controller under test,
                          the load generator and the benchmark itself each in a CPU group of its own (cgroup v1, as kubelet
                          does per pod; needs root); without it all run flat in one group, sharing the cores per thread
  --cgroup-shares SPEC    the groups' cpu.shares with --cgroups: equal (default, 1024 each), requests (as kubelet sets them
                          from CPU requests: control-plane 563, controller 102, load 256, harness 102) or group=N,...
  --cgroup-cpus SPEC      with --cgroups, which CPUs a group may run on (cgroup v1 cpuset), e.g. controller=1,control-plane=0,
                          load=0,harness=0 (a core of its own, as kubelet's static CPU manager gives a Guaranteed pod);
                          unset groups keep every CPU; + joins CPUs in a list (0+2)
  --generator-realtime N  run the webhook load generator's threads at SCHED_FIFO priority N (1-99; needs root or CAP_SYS_NICE):
                          the measuring instrument gets a core when it needs one, as the API server, HNC's real client, has
                          cores of its own in a cluster; HNC and the control plane keep the normal policy. Each webhook
                          figure in the report names the policy the generator ran at
  --out DIR               where results go (default bench/results)
`;

/** Whether Linux groups processes by session for CPU shares (then another session's `nice` does not free the cores). */
function schedulerAutogroup(): boolean | undefined {
  try {
    return readFileSync('/proc/sys/kernel/sched_autogroup_enabled', 'utf8').trim() === '1';
  } catch {
    return undefined;
  }
}

function int(name: string, v: string | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a whole number, not ${JSON.stringify(v)}`);
  return n;
}

async function main(): Promise<void> {
  if (flags.help) {
    process.stdout.write(USAGE);
    return;
  }
  const quick = flags.quick;
  const size = int('size', flags.size, quick ? 100 : 1000);
  const topologies = flags['hrq-only'] ? [] : ((flags.topology ?? TOPOLOGIES.join(',')).split(',').map((t) => t.trim()) as TopologyName[]);
  const controller = flags.controller ?? 'hnc-ts';
  if (controller !== 'hnc-ts' && controller !== 'hnc-go')
    throw new Error(`--controller must be hnc-ts or hnc-go, not ${JSON.stringify(controller)}`);
  const hrqSize = int('hrq-size', flags['hrq-size'], controller === 'hnc-go' ? 0 : size);
  if (controller === 'hnc-go' && (hrqSize > 0 || flags.profile))
    throw new Error('--controller hnc-go runs without the HRQ phase and --profile');
  for (const t of topologies)
    if (!TOPOLOGIES.includes(t)) throw new Error(`unknown topology ${JSON.stringify(t)}; choose from ${TOPOLOGIES.join(', ')}`);
  if ((flags['cgroup-shares'] !== undefined || flags['cgroup-cpus'] !== undefined) && !flags.cgroups)
    throw new Error('--cgroup-shares and --cgroup-cpus need --cgroups');
  const shares = parseShares(flags['cgroup-shares']);
  const cgroupCpus = parseCpus(flags['cgroup-cpus']);
  // Isolated or flat, said in the report and the file name: the two kinds of figures are never mixed up.
  let cpuGroups = 'flat: every process in one CPU group (the cores shared per thread)';
  let isolated = false;
  if (flags.cgroups) {
    try {
      const groups = CpuGroups.create(shares, undefined, cgroupCpus);
      // A FIFO generator in a group of its own needs a real-time budget there: 0.9 of each period
      // (at 500 reviews/s it uses about a third of a core; its saturation run, all it gets).
      if (flags['generator-realtime'] !== undefined) groups.allowRealtime('load', 900_000);
      activateCpuGroups(groups);
      placeInCpuGroup('harness', process.pid);
      cpuGroups = groups.describe();
      isolated = true;
      log(`CPU groups under ${groups.dir}: ${cpuGroups}`);
    } catch (err) {
      if (!(err instanceof CgroupsUnavailable)) throw err;
      log(`${err.message}; running flat (every process in one CPU group)`);
      cpuGroups = `flat (--cgroups asked for, not available: ${err.message.replace(/^--cgroups: /, '')})`;
    }
  }
  if (flags['generator-realtime'] !== undefined) useRealtimeGenerator(int('generator-realtime', flags['generator-realtime'], 0));
  const outDir = flags.out ?? join(HERE, 'results');
  const stamp = new Date().toISOString().replace(/[:]/g, '-').slice(0, 19);
  const base = join(
    outDir,
    `${stamp}-${quick ? 'quick' : `n${size}`}${flags['hrq-only'] ? '-hrq' : ''}${controller === 'hnc-go' ? '-hnc-go' : ''}${isolated ? (Object.keys(cgroupCpus).length ? '-cgroups-cpus' : '-cgroups') : ''}`,
  );
  const profileDir = flags.profile ? join(outDir, 'profiles', `${stamp}-${quick ? 'quick' : `n${size}`}`) : undefined;
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
    webhookTrials: quick ? 1 : 5,
    webhooksFor: (t) => !flags['no-webhooks'] && (!quick || t === topologies[topologies.length - 1]),
    coldTimeoutMs: 1000 * int('cold-timeout', flags['cold-timeout'], 600),
    coldSteadyMs: quick ? 0 : 1000 * int('steady-seconds', flags['steady-seconds'], 10),
    webhookSteadyMs: quick ? 0 : 30_000,
    quietMs: quick ? 1200 : 2000,
    webhookConcurrency: int('webhook-concurrency', flags['webhook-concurrency'], 16),
    webhookRates: (flags['webhook-rates'] ?? (quick ? '500' : '100,500'))
      .split(',')
      .map((x) => int('webhook-rates', x.trim(), 0))
      .filter((x) => x > 0),
    webhookPropagationSeconds: int('webhook-propagation-seconds', flags['webhook-propagation-seconds'], 6),
    reviewFloor: !flags['no-review-floor'],
    webhookPropagationTrials: int('webhook-propagation-trials', flags['webhook-propagation-trials'], 1),
    apiserverRate: int('apiserver-rate', flags['apiserver-rate'], 100),
    floorWrites: int('floor-writes', flags['floor-writes'], quick ? 300 : 2000),
    floorConcurrency: quick ? [16, 64] : [8, 32, 64],
    setupConcurrency: 32,
    steadyMs: 1000 * int('steady-seconds', flags['steady-seconds'], quick ? 1 : 10),
    hncQps: int('hnc-qps', flags['hnc-qps'], 100_000),
    hncWorkers: int('hnc-workers', flags['hnc-workers'], 10),
    hncObjectWorkers: int('hnc-object-workers', flags['hnc-object-workers'], 32),
    coldOnly: flags['cold-only'],
    hncNodeFlags: benchNodeFlags(),
    hncNodeEnv: Object.entries(benchNodeEnv()).map(([k, v]) => `${k}=${v}`),
    profileDir,
    controller,
  };
  const shared = flags['shared-plane'] ?? quick;
  const logDir = flags['keep-logs'] ? join(outDir, 'logs', `${stamp}-${quick ? 'quick' : `n${size}`}`) : undefined;
  mkdirSync(outDir, { recursive: true });
  const cpu = cpus();
  const report: RunReport = {
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
        schedulerAutogroup: schedulerAutogroup(),
      },
      versions: {},
      options: {
        topologies,
        hrqSize,
        ...opts,
        webhooksFor: flags['no-webhooks'] ? 'none' : quick ? `${topologies[topologies.length - 1]} only` : 'all',
        profileDir: undefined,
        sharedPlane: shared,
        cpuGroups,
        generatorRealtime: generatorRealtimePriority() ?? 'off',
      },
    },
    results: [],
    errors: [],
  };
  const save = () => {
    writeFileSync(`${base}.json`, JSON.stringify(report, null, 2) + '\n');
    writeFileSync(`${base}.md`, markdown(report));
  };
  let interrupted = false;
  let plane: Plane | undefined;
  const onSignal = (signal: string) => {
    if (interrupted) process.exit(130);
    interrupted = true;
    log(`${signal}: ending HNC and the control plane; results so far are in ${base}.md`);
    killAllChildren();
    report.errors.push({ topology: 'run', error: `interrupted by ${signal}` });
    save();
    void (plane?.stop() ?? Promise.resolve()).finally(() => process.exit(130));
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  await buildChild();
  // Built (or found in the cache) before any control plane starts: a cold build takes minutes.
  if (controller === 'hnc-go') log(`HNC's Go manager: ${await goManagerBinary()}`);
  const t0 = Date.now();
  const stopPlane = async (label: string) => {
    if (!plane) return [];
    const p = plane;
    plane = undefined;
    const left = await p.stop(logDir && join(logDir, label));
    if (left.length) log(`WARNING: still running after the control plane stopped: ${left.join(', ')}`);
    return left;
  };
  for (const t of topologies) {
    if (interrupted) break;
    try {
      if (!plane) {
        log(`starting a control plane${shared ? ' for every topology' : ` for ${t}`}`);
        plane = await Plane.start(opts);
      }
      const r = await runScenario(t, opts, plane, shared);
      if (!shared) r.leftoverProcesses = await stopPlane(t);
      report.results.push(r);
      report.run.versions = r.versions;
    } catch (err) {
      if (err instanceof ColdStartTimeout) {
        log(err.message);
        report.errors.push({ topology: t, error: err.message, partial: err.partial });
      } else {
        log(`${t} failed: ${(err as Error).stack ?? String(err)}`);
        report.errors.push({ topology: t, error: (err as Error).stack ?? String(err) });
      }
      if (!shared) await stopPlane(t);
    }
    report.run.finishedAt = new Date().toISOString();
    save();
  }
  if (hrqSize > 0 && !interrupted) {
    try {
      if (!plane) {
        log('starting a control plane for the HRQ phase');
        plane = await Plane.start(opts);
      }
      report.hrq = await runHrq(plane, {
        size: hrqSize,
        rates: (flags['hrq-rates'] ?? (quick ? '500' : '100,500'))
          .split(',')
          .map((x) => int('hrq-rates', x.trim(), 0))
          .filter((x) => x > 0),
        seconds: int('hrq-seconds', flags['hrq-seconds'], quick ? 1 : 6),
        replicas: true,
        quietMs: opts.quietMs,
        timeoutMs: opts.coldTimeoutMs,
        setupConcurrency: opts.setupConcurrency,
        hncQps: opts.hncQps,
        hncWorkers: opts.hncWorkers,
        hncObjectWorkers: opts.hncObjectWorkers,
      });
      report.run.versions = { kubernetes: plane.version, binaries: plane.cp.binaries.source.split('/').pop() ?? plane.cp.binaries.source };
    } catch (err) {
      log(`hrq failed: ${(err as Error).stack ?? String(err)}`);
      report.errors.push({ topology: 'hrq', error: (err as Error).stack ?? String(err) });
    }
    if (!shared) await stopPlane('hrq');
    save();
  }
  const left = await stopPlane('shared');
  if (shared && report.results.length) for (const r of report.results) r.leftoverProcesses = left;
  report.run.finishedAt = new Date().toISOString();
  save();
  log(`done in ${((Date.now() - t0) / 1000).toFixed(0)} s: ${base}.md and .json`);
  process.stdout.write(markdown(report));
  // Keep-alive connections to the (stopped) control plane would hold the process open a while.
  process.exit(report.errors.length ? 1 : 0);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(2);
});
