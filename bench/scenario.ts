// One topology, measured from start to end on its control plane: the cold start against the
// write floor, the steady state, a warm restart, one object to every descendant between floors
// of its own, subtree moves, and the webhooks under load. Every figure comes from this one run.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { hierarchyConfigurationPath } from '../core/api/paths.js';
import { GoHncProcess } from './hnc-go.js';
import { HncProcess, type Controller } from './hnc-process.js';
import type { StartRequest } from './hnc-child.js';
import { scrape, waitQuiet, writeDelta } from './metrics.js';
import { subtreeMoves } from './move.js';
import type { ScenarioOptions, TopologyRun } from './options.js';
import { Plane } from './plane.js';
import { propagationTrials } from './propagation.js';
import { afterGc, cpuSeconds, memory, writesReport, type ScenarioResult } from './results.js';
import { collection, Tracker } from './tracker.js';
import {
  buildTopology,
  describe,
  descendants,
  expectedState,
  minimumWrites,
  placeSources,
  sourceBody,
  type TopologyName,
} from './topology.js';
import { cpuDelta, log, pool, round, sampleCpu, sleep } from './util.js';
import { verifyByListing, versionDiff, versions } from './verify.js';
import { webhookPhase } from './webhook-phase.js';

export type { ScenarioOptions } from './options.js';

/** The cold start did not converge within --cold-timeout: the topology's other phases are skipped. */
export class ColdStartTimeout extends Error {
  override name = 'ColdStartTimeout';
  constructor(
    readonly topology: string,
    readonly partial: { seconds: number; minimumWrites: number; floorSeconds: number; progress: unknown; writesSoFar: number },
  ) {
    super(
      `the cold start had not converged after ${partial.seconds} s (floor ${partial.floorSeconds} s): ${JSON.stringify(partial.progress)}; ${partial.writesSoFar} of ${partial.minimumWrites} writes made`,
    );
  }
}

/** The topology and its sources written as an admin, without HNC: no labels, no copies. */
async function setUp(
  plane: Plane,
  opts: ScenarioOptions,
  topology: ReturnType<typeof buildTopology>,
  sources: ReturnType<typeof placeSources>,
) {
  const { admin } = plane;
  const t0 = performance.now();
  await pool(topology.namespaces, opts.setupConcurrency, (ns) => admin.create('/api/v1/namespaces', { metadata: { name: ns } }));
  const withParent = topology.namespaces.filter((ns) => topology.parent.get(ns) !== undefined);
  await pool(withParent, opts.setupConcurrency, (ns) =>
    admin.create(hierarchyConfigurationPath(ns), {
      apiVersion: 'hnc.x-k8s.io/v1alpha2',
      kind: 'HierarchyConfiguration',
      metadata: { name: 'hierarchy', namespace: ns },
      spec: { parent: topology.parent.get(ns) },
    }),
  );
  await pool(sources, opts.setupConcurrency, (s) => admin.create(collection(s.kind, s.namespace), sourceBody(s.kind, s.name)));
  const seconds = (performance.now() - t0) / 1000;
  const t1 = performance.now();
  // The controller-manager writes namespaces' finalizers and service accounts: wait until it is done.
  await waitQuiet(admin, opts.quietMs);
  return {
    seconds: round(seconds, 2),
    writes: topology.namespaces.length + withParent.length + sources.length,
    settleSeconds: round((performance.now() - t1) / 1000, 2),
  };
}

/** HNC's processes: the next one is spawned ahead (its code loaded) so that a restart times HNC, not node's start-up. */
class Processes {
  readonly all: Controller[] = [];
  private upcoming: Promise<Controller>;

  constructor(
    private readonly run: { name: TopologyName; plane: Plane; opts: ScenarioOptions },
    private readonly profileDir: string | undefined,
  ) {
    this.upcoming = this.spawn();
  }

  private spawn(): Promise<Controller> {
    const p = this.run.opts.controller === 'hnc-go' ? GoHncProcess.spawn() : HncProcess.spawn({ cpuProfileDir: this.profileDir });
    void p.then(
      (c) => this.all.push(c),
      () => undefined,
    );
    return p;
  }

  /** The process spawned ahead; another is spawned behind it. */
  next(): Promise<Controller> {
    const p = this.upcoming;
    this.upcoming = this.spawn();
    return p;
  }

  start(hnc: Controller, label: string, webhooks: boolean): ReturnType<Controller['start']> {
    const { plane, opts, name } = this.run;
    const request: StartRequest = {
      kubeconfig: plane.identity.kubeconfigPath,
      webhooks,
      webhookPort: plane.webhookPort,
      qps: opts.hncQps,
      workers: opts.hncWorkers,
      objectWorkers: opts.hncObjectWorkers,
      logFile: join(plane.cp.stateDir, 'logs', `hnc-${name}-${label}.log`),
    };
    return hnc.start(request);
  }

  async stopAll(): Promise<void> {
    for (const c of this.all) await c.kill().catch(() => undefined);
    await (await this.upcoming.catch(() => undefined))?.kill().catch(() => undefined);
  }
}

/** HNC started on the topology: timed until the watches see every label, hierarchy and copy right, then checked by listing. */
async function coldStart(run: TopologyRun, procs: Processes) {
  const { admin, tracker, plane, name, opts, expected } = run;
  const minimum = minimumWrites(tracker.observed(), expected);
  const floorSeconds = minimum.total / plane.floor.writesPerSecond;
  log(`${name}: cold start (minimum ${minimum.total} writes, floor ${floorSeconds.toFixed(2)} s)`);
  const m0 = await scrape(admin);
  const cpu0 = sampleCpu(run.pids());
  await run.hnc.stats(true); // event-loop delay and GC pauses from here
  const t0 = performance.now();
  const ticker = setInterval(
    () => log(`${name}: cold start ${((performance.now() - t0) / 1000).toFixed(0)} s: ${JSON.stringify(tracker.progress())}`),
    15_000,
  );
  let started;
  let converged;
  try {
    started = await procs.start(run.hnc, 'cold', false);
    converged = await tracker.whenConverged(opts.coldTimeoutMs);
  } catch (err) {
    if (!/not converged/.test((err as Error).message)) throw err;
    // Not a failure of the benchmark: the figure is "more than the timeout"; say how far it got.
    const progress = { seconds: round((performance.now() - t0) / 1000, 1), progress: tracker.progress() };
    throw new ColdStartTimeout(name, {
      ...progress,
      minimumWrites: minimum.total,
      floorSeconds: round(floorSeconds, 2),
      writesSoFar: writeDelta(m0, await scrape(admin)).total,
    });
  } finally {
    clearInterval(ticker);
  }
  const seconds = (converged - t0) / 1000;
  const idle = await run.hnc.idle();
  const idleSeconds = (performance.now() - t0) / 1000;
  const cpu = cpuDelta(cpu0, sampleCpu(run.pids()));
  const writes = writesReport(writeDelta(m0, await waitQuiet(admin, opts.quietMs)), (await run.hnc.stats()).writesTotal, minimum);
  const verified = await verifyByListing(admin, expected);
  log(
    `${name}: converged in ${seconds.toFixed(2)} s (${(seconds / floorSeconds).toFixed(2)} × the floor); ${writes.apiserver.total} writes for a minimum of ${minimum.total}; verified by listing: ${verified.ok}`,
  );
  return {
    seconds: round(seconds, 3),
    cachesSyncedSeconds: round(started.startedMs / 1000, 3),
    idleSeconds: round(idleSeconds, 3),
    floorSeconds: round(floorSeconds, 3),
    ratioToFloor: round(seconds / floorSeconds, 2),
    writes,
    verified,
    cpu,
    managerCpuSeconds: round(cpuSeconds(idle), 2),
    eventLoop: { ...idle.eventLoop, gcMaxMs: idle.gc.maxMs, gcTotalMs: idle.gc.totalMs },
    memory: memory(idle, run.hnc.baseline),
  };
}

/** HNC's CPU (% of a core) over an idle window. */
async function idleCpu(hnc: Controller, ms: number): Promise<number> {
  if (!ms) return NaN;
  const s0 = await hnc.stats();
  await sleep(ms);
  return round((100 * (cpuSeconds(await hnc.stats()) - cpuSeconds(s0))) / (ms / 1000), 2);
}

/** A new process with everything in place: it must write nothing and change no object. */
async function warmRestart(run: TopologyRun, procs: Processes) {
  const rv0 = await versions(run.admin);
  await run.hnc.stop();
  run.hnc = await procs.next();
  const m0 = await scrape(run.admin);
  const t0 = performance.now();
  await procs.start(run.hnc, 'warm', false);
  const idle = await run.hnc.idle();
  const seconds = (performance.now() - t0) / 1000;
  const writes = writeDelta(m0, await waitQuiet(run.admin, run.opts.quietMs));
  const warm = {
    seconds: round(seconds, 2),
    writes,
    managerWrites: (await run.hnc.stats()).writesTotal,
    objectsChanged: versionDiff(rv0, await versions(run.admin)),
    managerCpuSeconds: round(cpuSeconds(idle), 2),
  };
  log(
    `${run.name}: warm restart idle in ${seconds.toFixed(2)} s; ${writes.total} writes at the API server, ${warm.managerWrites} by the manager`,
  );
  return warm;
}

/** The steady state after the cold start (CPU, memory after a full collection), then a warm restart and its steady CPU. */
async function steadyThenWarm(run: TopologyRun, procs: Processes, profileDir: string | undefined) {
  const { opts, name } = run;
  const cpuPercentAfterColdStart = await idleCpu(run.hnc, opts.coldSteadyMs);
  const steadyMemory = afterGc(memory(await run.hnc.stats(), run.hnc.baseline), await run.hnc.collected());
  if (profileDir)
    log(`${name}: heap snapshot at steady state: ${(await run.hnc.heapSnapshot(join(profileDir, 'steady-state.heapsnapshot'))).file}`);
  const warm = await warmRestart(run, procs);
  const cpuPercentAfterWarmRestart = await idleCpu(run.hnc, opts.steadyMs);
  const steady = { seconds: opts.steadyMs / 1000, cpuPercentAfterColdStart, memory: steadyMemory, cpuPercentAfterWarmRestart };
  return { steady, warm };
}

/** The topology written, its watches started: what every phase after it shares. */
async function prepare(name: TopologyName, opts: ScenarioOptions, plane: Plane, procs: Processes, tracker: Tracker) {
  const topology = buildTopology(name, { size: opts.size, moveSize: opts.moveSize, maxChain: opts.maxChain });
  const sources = placeSources(topology, opts.rootObjects, opts.innerObjects);
  const shape = {
    ...describe(topology),
    sources: { root: opts.rootObjects, inner: sources.length - opts.rootObjects, innerNamespaces: topology.innerSourceNamespaces },
  };
  log(`${name}: ${shape.namespaces} namespaces, depth ${shape.depth}, max fan-out ${shape.maxFanOut}, ${sources.length} sources`);
  const setup = await setUp(plane, opts, topology, sources);
  // What HNC must reach: the topology, plus the other namespaces it manages here (roots).
  const parent = new Map(topology.parent);
  for (const ns of ['default', 'bench-floor']) parent.set(ns, undefined);
  const expected = expectedState(parent, sources);
  await tracker.start();
  tracker.expect(expected);
  const run: TopologyRun = {
    ...{ name, opts, plane, admin: plane.admin, tracker, topology, sources, parent, expected },
    descendants: descendants(parent, topology.root),
    hnc: await procs.next(),
    pids: () => ({ ...Plane.pidsOf(plane.cp), hnc: run.hnc.pid }),
  };
  return { run, shape, setup };
}

export async function runScenario(name: TopologyName, opts: ScenarioOptions, plane: Plane, shared: boolean): Promise<ScenarioResult> {
  const { admin, cp } = plane;
  let profileDir: string | undefined;
  if (opts.profileDir) mkdirSync((profileDir = join(opts.profileDir, name)), { recursive: true });
  const procs = new Processes({ name, plane, opts }, profileDir);
  const tracker = new Tracker(admin);
  try {
    const { run, shape, setup } = await prepare(name, opts, plane, procs, tracker);
    const coldStarted = await coldStart(run, procs);
    const { steady, warm } = await steadyThenWarm(run, procs, profileDir);
    const result = (memoryAfterWarmRestart: ScenarioResult['steadyState']['memoryAfterWarmRestart']): ScenarioResult => ({
      ...{ topology: name, shape, controlPlaneStartSeconds: round(cp.startSeconds, 2), sharedPlane: shared, setup, floor: plane.floor },
      coldStart: coldStarted,
      steadyState: { ...steady, memoryAfterWarmRestart },
      warmRestart: warm,
      versions: { kubernetes: plane.version, binaries: cp.binaries.source.split('/').pop() ?? cp.binaries.source },
      leftoverProcesses: [],
    });
    if (opts.coldOnly) return result(memory(await run.hnc.stats(), run.hnc.baseline));
    const propagation = await propagationTrials(run);
    const move = await subtreeMoves(run);
    const memoryAfter = afterGc(memory(await run.hnc.stats(), run.hnc.baseline), await run.hnc.collected());
    const webhooks = opts.webhooksFor(name) ? await webhookPhase(run, procs) : undefined;
    return { ...result(memoryAfter), propagation, move, ...(webhooks ? { webhooks } : {}) };
  } finally {
    await tracker.stop().catch(() => undefined);
    await procs.stopAll();
    // HNC's webhook configurations outlive it: remove them, so the next topology on this plane is not refused.
    for (const kind of [
      'validatingwebhookconfigurations/hnc-validating-webhook-configuration',
      'mutatingwebhookconfigurations/hnc-mutating-webhook-configuration',
    ])
      await admin.delete(`/apis/admissionregistration.k8s.io/v1/${kind}`).catch(() => undefined);
  }
}
