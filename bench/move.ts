// Moving a subtree: the move subtree's parent changed between its two parents, back and forth,
// each move timed until the watches see every moved namespace's tree labels (and copies) right.
import { hierarchyConfigurationPath } from '../core/api/paths.js';
import { scrape, waitQuiet, writeDelta } from './metrics.js';
import type { TopologyRun } from './options.js';
import { addMinimum, writesReport, ZERO, type ScenarioResult } from './results.js';
import { expectedState, minimumWrites } from './topology.js';
import { log, round, summarize } from './util.js';

export async function subtreeMoves(run: TopologyRun): Promise<NonNullable<ScenarioResult['move']>> {
  const { admin, tracker, topology, parent, sources, expected, hnc, opts } = run;
  const path = hierarchyConfigurationPath(topology.moveRoot, 'hierarchy');
  let minimum = ZERO;
  const moves: number[] = [];
  const m0 = await scrape(admin);
  const w0 = (await hnc.stats()).writesTotal;
  let current = expected;
  const trials = opts.moveTrials % 2 === 0 ? opts.moveTrials : opts.moveTrials + 1; // end where it began
  for (let i = 0; i < trials; i++) {
    const to = topology.moveParents[(i + 1) % 2]!;
    const moved = new Map(parent);
    moved.set(topology.moveRoot, to);
    const next = i % 2 === 0 ? expectedState(moved, sources) : expected;
    minimum = addMinimum(minimum, minimumWrites(current, next));
    const hc = await admin.get<{ spec: { parent?: string } }>(path);
    tracker.expect(next);
    const t0 = performance.now();
    await admin.replace(path, { ...hc, spec: { ...hc.spec, parent: to } });
    moves.push((await tracker.whenConverged(600_000)) - t0);
    await hnc.idle();
    current = next;
  }
  const m1 = await waitQuiet(admin, opts.quietMs);
  // The benchmark's own write of the parent, once per move, is not HNC's.
  const writes = writesReport(writeDelta(m0, m1), (await hnc.stats()).writesTotal - w0, minimum, trials);
  const summary = summarize(moves);
  log(`${run.name}: moving ${topology.moveSize} namespaces: p50 ${summary.p50.toFixed(0)} ms, max ${summary.max.toFixed(0)} ms`);
  return { size: topology.moveSize, trials: summary, minimumPerMove: round(minimum.total / trials, 1), writes };
}
