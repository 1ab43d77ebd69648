// The webhook tail while HNC copies: the open-loop load at the highest rate while a new root Role
// is copied to every descendant; the reviews sent between the Role's creation and its last copy
// are summarized apart. With the review floor, its load and copies of its own alternate with
// HNC's, so both meet the same minutes of the machine. Several copies pool their windows: the
// p99 of one 2 s copy at 500 reviews/s would be its tenth-slowest review.
import type { LoadGenerator } from './hnc-process.js';
import { histogramDelta } from './metrics.js';
import type { TopologyRun } from './options.js';
import type { DuringCopies, WebhookLoad } from './results.js';
import { collection } from './tracker.js';
import { expectedState, sourceBody, type Source } from './topology.js';
import { log, round, sleep } from './util.js';
import { windowOf, windowsOf, type Load, type Sample } from './webhook-load.js';
import type { Probe } from './webhook-phase.js';

interface CopyTrial {
  load: Load;
  window: { samples: Sample[]; from: number; to: number };
  all: WebhookLoad;
  propagationMs: number;
  covered: boolean;
}

/** Creates `roleName` at the root, retrying one the API server refused for a late webhook answer (failurePolicy Fail). */
async function createRole(run: TopologyRun, roleName: string): Promise<void> {
  for (let refused = 0; ; refused++) {
    try {
      await run.admin.create(collection('roles', run.topology.root), sourceBody('roles', roleName));
      return;
    } catch (err) {
      if (!String(err).includes('failed calling webhook') || refused >= 20) throw err;
    }
  }
}

/** One Role copied to every descendant under `gen`'s load; the Role deleted after. */
async function copyTrial(run: TopologyRun, p: Probe, gen: LoadGenerator, roleName: string, hncs: boolean): Promise<CopyTrial> {
  const { opts, tracker, parent, sources, expected, topology } = run;
  const rate = Math.max(...opts.webhookRates);
  const load = { mode: 'open' as const, rate };
  const src: Source = { kind: 'roles', namespace: topology.root, name: roleName };
  await p.loops();
  const hb = hncs ? await p.histogram() : undefined;
  const running = gen.run(load, Math.round(rate * opts.webhookPropagationSeconds), true);
  await sleep(500); // the load at its pace before the copy starts
  tracker.expect(expectedState(parent, [...sources, src]));
  const from = performance.timeOrigin + performance.now();
  await createRole(run, roleName);
  const to = performance.timeOrigin + (await tracker.whenConverged(600_000));
  const { samples = [], ...res } = await running;
  const ha = hncs ? await p.histogram() : undefined;
  const all: WebhookLoad = { ...res, ...(await p.loops()), ...(hb && ha ? { serverSide: histogramDelta(hb, ha) } : {}) };
  const last = samples.reduce((m, x) => Math.max(m, x.at), 0);
  tracker.expect(expected);
  await run.admin.delete(`${collection('roles', topology.root)}/${roleName}`);
  await tracker.whenConverged(600_000);
  await run.hnc.idle();
  return { load, window: { samples, from, to }, all, propagationMs: to - from, covered: last >= to };
}

/** The trials' windows pooled; the whole load's figures are the trial with the highest p99's. */
function pooled(trials: CopyTrial[]): DuringCopies {
  const p99s = trials.map((t) => windowOf(t.window.samples, t.load, t.window.from, t.window.to).overall.p99);
  // A window with no review in it (a copy that began after its load ended, on a busy machine) has
  // no p99: it is never the worst (and `covered` says the load missed the copy).
  const ranked = p99s.map((x) => (Number.isFinite(x) ? x : -Infinity));
  const worst = trials[ranked.indexOf(Math.max(...ranked))]!;
  const times = trials.map((t) => t.propagationMs).sort((x, y) => x - y);
  return {
    during: windowsOf(
      trials.map((t) => t.window),
      worst.load,
    ),
    all: worst.all,
    propagationMs: times[Math.floor((times.length - 1) / 2)]!,
    covered: trials.every((t) => t.covered),
    trialP99s: p99s.map((x) => round(x, 2)),
  };
}

export async function loadDuringCopies(
  run: TopologyRun,
  p: Probe,
  direct: LoadGenerator,
  floor: LoadGenerator | undefined,
): Promise<{ hnc: DuringCopies & { copies: number; floorMs: number }; floor?: DuringCopies }> {
  const hncTrials: CopyTrial[] = [];
  const floorTrials: CopyTrial[] = [];
  for (let i = 0; i < Math.max(1, run.opts.webhookPropagationTrials); i++) {
    hncTrials.push(await copyTrial(run, p, direct, `bench-webhook-tail-${i + 1}`, true));
    if (floor) floorTrials.push(await copyTrial(run, p, floor, `bench-webhook-tail-floor-${i + 1}`, false));
  }
  const D = run.descendants.length;
  const hnc = { ...pooled(hncTrials), copies: D, floorMs: (D / run.plane.floor.writesPerSecond) * 1000 };
  log(
    `${run.name}: webhook p99 while a Role is copied to ${D} namespaces: ${hnc.during.overall.p99.toFixed(2)} ms (each ${hnc.trialP99s.join(', ')})`,
  );
  if (!floorTrials.length) return { hnc };
  const f = pooled(floorTrials);
  log(`${run.name}: review floor p99 while a Role is copied: ${f.during.overall.p99.toFixed(2)} ms (each ${f.trialP99s.join(', ')})`);
  return { hnc, floor: f };
}
