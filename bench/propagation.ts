// One object to every descendant: a new source at the root, an update of it, its deletion, each
// timed until the watches see every copy in place (or gone). Each trial runs between two floors
// of its own (bench/paired-floor.ts); writes and CPU are counted over the trials' windows only, so
// the floors' writes, and HNC's count of sources in HNCConfiguration's status (the floor's objects
// are sources that propagate nowhere), stay out of the trials' figures and are reported apart.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Writer } from '../kube/writer.js';
import type { ChildStats } from './hnc-child.js';
import { waitQuiet, writeDelta, type Snapshot, type WriteDelta } from './metrics.js';
import type { TopologyRun } from './options.js';
import { pairPhase, runFloor, summarizePairs, type PairedTrial, type RunCost, type Timing } from './paired-floor.js';
import { addMinimum, writesReport, ZERO, type PairedFloors, type PropagationResult } from './results.js';
import { collection, contentMark, type Arrivals } from './tracker.js';
import { expectedState, minimumWrites, SOURCE_KINDS, sourceBody, type MinimumWrites, type Source, type SourceKind } from './topology.js';
import { cpuDelta, log, round, sampleCpu, summarize } from './util.js';

/** Resolves when `a` is done, or fails after 600 s naming what did not arrive. */
function arrived(a: Arrivals, what: string): Promise<number> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    a.done,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: ${a.missing} copies not seen within 600 s`)), 600_000);
    }),
  ]).finally(() => clearTimeout(timer));
}

interface TrialTimes {
  create: Timing;
  update: Timing;
  delete: Timing;
  minimum: MinimumWrites;
}

/** Creates `bench-prop-i` at the root, updates it, deletes it; each phase timed until every copy is seen. */
async function oneObject(run: TopologyRun, i: number, kind: SourceKind): Promise<TrialTimes> {
  const { admin, tracker, topology, parent, sources, expected, descendants, hnc } = run;
  const src: Source = { kind, namespace: topology.root, name: `bench-prop-${i}` };
  const path = `${collection(kind, topology.root)}/${src.name}`;
  const keys = descendants.map((ns) => `${kind}/${ns}/${src.name}`);
  const perNs = (a: Arrivals, from: number) => keys.map((k) => a.at.get(k)! - from);
  const grown = expectedState(parent, [...sources, src]);
  const came = tracker.arrivals(keys, true);
  const went = tracker.arrivals(keys, false);
  try {
    tracker.expect(grown);
    const ta = performance.now();
    await admin.create(collection(kind, topology.root), sourceBody(kind, src.name));
    const tb = await tracker.whenConverged(600_000);
    await hnc.idle();
    // Every copy rewritten with the source's new content: one update each.
    const body = sourceBody(kind, src.name, true);
    const changed = tracker.arrivals(keys, true, false, contentMark(kind, body));
    let update: Timing;
    try {
      const { metadata } = await admin.get<{ metadata: Record<string, unknown> }>(path);
      const at = performance.now();
      await admin.replace(path, { ...body, metadata: { ...metadata, ...(body.metadata as object) } });
      update = { allMs: (await arrived(changed, `the update of ${path}`)) - at, perNamespaceMs: perNs(changed, at) };
    } finally {
      changed.release();
    }
    await hnc.idle();
    tracker.expect(expected);
    const tc = performance.now();
    await admin.delete(path);
    const td = await tracker.whenConverged(600_000);
    await hnc.idle();
    const updates = { ...ZERO, copies: { ...ZERO.copies, [kind]: keys.length }, total: keys.length };
    return {
      create: { allMs: tb - ta, perNamespaceMs: perNs(came, ta) },
      update,
      delete: { allMs: td - tc, perNamespaceMs: perNs(went, tc) },
      minimum: addMinimum(addMinimum(minimumWrites(expected, grown), updates), minimumWrites(grown, expected)),
    };
  } finally {
    came.release();
    went.release();
  }
}

/** Writes, CPU and HNC's event loop summed over the windows of one kind (the trials', the floors'). */
interface Window {
  writes: WriteDelta;
  manager: number;
  cpu: Record<string, number>;
  loop: PropagationResult['eventLoop'];
}

const newWindow = (): Window => ({
  writes: { total: 0, byRequest: {}, byResource: {}, conflicts: 0, errors: 0 },
  manager: 0,
  cpu: {},
  loop: { p50: 0, p99: 0, max: 0, gcMaxMs: 0, gcTotalMs: 0, gcMinorMs: 0 },
});

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

/**
 * Runs `fn` as one window of `w`, from a quiet point to the next. Both heaps are collected first
 * (HNC's, and this process's, whose client is the floor's), so that the garbage one run leaves is
 * paid by no other run.
 */
async function measured<T>(run: TopologyRun, w: Window, quiet: { at: Snapshot }, fn: () => Promise<T>): Promise<{ out: T; cost: RunCost }> {
  const { hnc, admin, opts } = run;
  await hnc.collected();
  collectOwnHeap();
  const c0 = sampleCpu(run.pids());
  const hw0 = (await hnc.stats(true)).writesTotal;
  const out = await fn();
  const c1 = sampleCpu(run.pids());
  const st = await hnc.stats();
  const q = await waitQuiet(admin, opts.quietMs);
  const cpu = cpuDelta(c0, c1);
  addWindow(w, { writes: writeDelta(quiet.at, q), manager: st.writesTotal - hw0, cpu, stats: st });
  quiet.at = q;
  const ms = (k: string) => round(1000 * (cpu[k] ?? NaN), 1);
  return { out, cost: { hncCpuMs: ms('hnc'), hncGcMs: round(st.gc.totalMs, 1), apiserverCpuMs: ms('kube-apiserver') } };
}

/** The floor loop beside trial `i`: the same writes of the same kind into the same namespaces. */
function floorRun(run: TopologyRun, writer: Writer, i: number, which: 'before' | 'after') {
  const kind = SOURCE_KINDS[i % 3]!;
  const name = `bench-floor-${i}-${which}`;
  const updated = sourceBody(kind, name, true);
  return runFloor({
    writes: writer,
    tracker: run.tracker,
    kind,
    name,
    namespaces: run.descendants,
    concurrency: run.opts.hncObjectWorkers,
    like: sourceBody(kind, name),
    updated: { like: updated, mark: contentMark(kind, updated) },
    timeoutMs: 600_000,
    distinctNames: run.opts.controller === 'hnc-go',
  });
}

/** `opts.trials` trials of one object to every descendant, each between two floors of its own. */
export async function propagationTrials(run: TopologyRun): Promise<PropagationResult> {
  const { opts, hnc, plane } = run;
  const floorWriter = new Writer(plane.asManager, { qps: opts.hncQps });
  const windows = { trial: newWindow(), floor: newWindow() };
  const pairs: PairedTrial[] = [];
  let minimum = ZERO;
  const quiet = { at: await waitQuiet(run.admin, opts.quietMs) };
  const floor = (i: number, which: 'before' | 'after') =>
    measured(run, windows.floor, quiet, async () => {
      const f = await floorRun(run, floorWriter, i, which);
      await hnc.idle();
      return f;
    });
  for (let i = 0; i < opts.trials; i++) {
    const kind = SOURCE_KINDS[i % 3]!;
    const before = await floor(i, 'before');
    const { out: t, cost } = await measured(run, windows.trial, quiet, () => oneObject(run, i, kind));
    const after = await floor(i, 'after');
    minimum = addMinimum(minimum, t.minimum);
    const pair: PairedTrial = {
      kind,
      create: pairPhase(t.create, before.out.create, after.out.create),
      update: pairPhase(t.update, before.out.update, after.out.update),
      delete: pairPhase(t.delete, before.out.delete, after.out.delete),
      cost: { before: before.cost, trial: cost, after: after.cost },
    };
    pairs.push(pair);
    log(
      `${run.name}: trial ${i + 1}/${opts.trials} (${kind}) ÷ its floors: create ${pair.create.ratio.toFixed(2)}, update ${pair.update.ratio.toFixed(2)}, delete ${pair.delete.ratio.toFixed(2)}`,
    );
  }
  return summarizeTrials(run, pairs, windows, minimum);
}

/** The trials' figures: times, ratios to the write floor and to their own floors, writes against the minimum. */
function summarizeTrials(
  run: TopologyRun,
  pairs: PairedTrial[],
  windows: { trial: Window; floor: Window },
  minimum: MinimumWrites,
): PropagationResult {
  const { opts, tracker, plane } = run;
  const D = run.descendants.length;
  const floorWrites = D * 3 * 2 * opts.trials;
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
  const create = summarize(pairs.map((p) => p.create.hnc.allMs));
  const floorSeconds = D / plane.floor.writesPerSecond;
  log(
    `${run.name}: one object to ${D} descendants ÷ its own floors, median of ${pairs.length}: create ${paired.create.ratio.median.toFixed(2)}, update ${paired.update.ratio.median.toFixed(2)}, delete ${paired.delete.ratio.median.toFixed(2)}`,
  );
  return {
    descendants: D,
    create,
    update: summarize(pairs.map((p) => p.update.hnc.allMs)),
    delete: summarize(pairs.map((p) => p.delete.hnc.allMs)),
    floorSeconds: round(floorSeconds, 4),
    p50RatioToFloor: round(create.p50 / 1000 / floorSeconds, 2),
    p99RatioToFloor: round(create.p99 / 1000 / floorSeconds, 2),
    // The benchmark's own three writes of each source are not HNC's.
    writes: writesReport(windows.trial.writes, windows.trial.manager, minimum, 3 * opts.trials),
    cpu: windows.trial.cpu,
    eventLoop: windows.trial.loop,
    pairedFloors: paired,
  };
}
