// The report's figures per topology: writes against the minimum, the cold start and propagation as
// ratios to the floors measured in the same run, the warm restart, moves, and HNC's memory.
import type { PairedPhase } from './paired-floor.js';
import { f, ms, pass, rowsOf, table, type Row } from './report-format.js';
import type { ScenarioResult, WritesReport } from './results.js';

/** Writes made ÷ the minimum; HNCConfiguration's status (its counts) is not part of the topology's minimum and is shown apart. */
function writesCell(w: WritesReport | undefined): string {
  if (!w) return '–';
  const config = w.apiserver.byResource.hncconfigurations ?? 0;
  const made = w.apiserver.total - config;
  return `${made} ÷ ${w.minimum.total} = ${f(made / w.minimum.total, 3)} (+ ${config})${pass(made === w.minimum.total)}`;
}

function coldStartRows(results: readonly ScenarioResult[]): Row[] {
  const { rows, row } = rowsOf(results);
  row('namespaces (depth, max fan-out)', '', (r) => `${r.shape.namespaces} (${r.shape.depth}, ${r.shape.maxFanOut})`);
  row('sources (root + inner)', '', (r) => `${r.shape.sources.root} + ${r.shape.sources.inner}`);
  row('floor: API server writes/s (at concurrency)', '', (r) => `${f(r.floor.writesPerSecond, 0)} (${r.floor.concurrency})`);
  row('cold start: seconds (floor seconds)', '', (r) => `${f(r.coldStart.seconds)} (${f(r.coldStart.floorSeconds)})`);
  row('cold start ÷ floor', '≤ 1.5', (r) => `${f(r.coldStart.ratioToFloor)}${pass(r.coldStart.ratioToFloor <= 1.5)}`);
  row('cold start: writes made ÷ minimum (+ HNCConfiguration status)', '1.00', (r) => writesCell(r.coldStart.writes));
  row('cold start: all copies and labels verified by listing', 'yes', (r) =>
    r.coldStart.verified.ok ? 'yes ✅' : `no ❌ ${JSON.stringify(r.coldStart.verified)}`,
  );
  row('warm restart: writes at the API server / by the manager / objects changed', '0', (r) => {
    const w = r.warmRestart;
    const changed = w.objectsChanged.changed + w.objectsChanged.created + w.objectsChanged.deleted;
    return `${w.writes.total} / ${w.managerWrites} / ${changed}${pass(w.writes.total === 0 && w.managerWrites === 0 && changed === 0)}`;
  });
  row('warm restart: seconds to idle', '', (r) => f(r.warmRestart.seconds));
  row("other processes' CPU s during the cold start (a busy machine moves every figure)", '', (r) => f(r.coldStart.cpu.others, 1));
  return rows;
}

function propagationRows(results: readonly ScenarioResult[]): Row[] {
  const { rows, row } = rowsOf(results);
  const pf = (r: ScenarioResult) => r.propagation?.pairedFloors;
  row('one object to every descendant: descendants', '', (r) => (r.propagation ? String(r.propagation.descendants) : '–'));
  for (const phase of ['create', 'update', 'delete'] as const)
    row(`${phase} ÷ its own floors: every copy, median (worst) of the trials; per-namespace p99 median`, '≤ 1.1; ≤ 1.3', (r) => {
      const p = pf(r)?.[phase];
      return p
        ? `${f(p.ratio.median)} (${f(p.ratio.p99)}); ${f(p.p99Ratio.median)}${pass(p.ratio.median <= 1.1 && p.p99Ratio.median <= 1.3)}`
        : '–';
    });
  row('create p50 / p99 ms (÷ the write floor)', '', (r) => {
    const p = r.propagation;
    return p ? `${ms(p.create.p50)} / ${ms(p.create.p99)} (${f(p.p50RatioToFloor)} / ${f(p.p99RatioToFloor)})` : '–';
  });
  row('propagation: writes made ÷ minimum (+ HNCConfiguration status)', '1.00', (r) => writesCell(r.propagation?.writes));
  row('the floors beside the trials: writes (at the API server) / objects left', '0 left', (r) => {
    const p = pf(r);
    return p
      ? `${p.floorWrites} (${p.floorWritesAtApiserver}) / ${p.floorObjectsLeft}${pass(p.floorObjectsLeft === 0 && p.floorWritesAtApiserver === p.floorWrites)}`
      : '–';
  });
  row('subtree move: namespaces, p50 / max ms', '', (r) =>
    r.move ? `${r.move.size}: ${ms(r.move.trials.p50)} / ${ms(r.move.trials.max)}` : '–',
  );
  row('subtree move: writes made ÷ minimum', '1.00', (r) =>
    r.move ? `${r.move.writes.apiserver.total} ÷ ${r.move.writes.minimum.total} = ${f(r.move.writes.ratio, 3)}` : '–',
  );
  return rows;
}

function memoryRows(results: readonly ScenarioResult[]): Row[] {
  const { rows, row } = rowsOf(results);
  row('HNC RSS at steady state, MB (peak), without webhooks', '< 300 at 5,000 ns', (r) => {
    const m = r.steadyState.memory;
    return `${f(m.rssMB, 0)} (${f(m.peakRssMB, 0)})${r.shape.namespaces >= 4500 ? pass(m.peakRssMB < 300) : ''}`;
  });
  row(
    'HNC RSS with webhooks on, MB: after the start / steady / after the loads (peak)',
    '≤ 90 at 300 ns, ≤ 120 at 1,000, ≤ 230 at 5,000',
    (r) => {
      if (!r.webhooks) return '–';
      const { idle, steady = idle, afterLoads } = r.webhooks.memory;
      const n = r.shape.namespaces;
      const target = n <= 350 ? 90 : n <= 1100 ? 120 : n >= 4500 && n <= 5500 ? 230 : undefined;
      return `${f(idle.rssMB, 0)} / ${f(steady.rssMB, 0)}${target !== undefined ? pass(steady.rssMB <= target) : ''} / ${f(afterLoads.rssMB, 0)} (${f(afterLoads.peakRssMB, 0)})`;
    },
  );
  row(
    'live heap after a full GC, MB (RSS then)',
    '',
    (r) => `${f(r.steadyState.memory.heapLiveMB, 0)} (${f(r.steadyState.memory.rssAfterGcMB, 0)})`,
  );
  row('RSS after restart, propagation trials and moves, MB (peak)', '', (r) => {
    const m = r.steadyState.memoryAfterWarmRestart;
    return `${f(m.rssMB, 0)} (${f(m.peakRssMB, 0)})`;
  });
  row(
    'HNC CPU seconds: cold start / warm restart; at steady state, % of a core',
    '',
    (r) => `${f(r.coldStart.managerCpuSeconds)} / ${f(r.warmRestart.managerCpuSeconds)}; ${f(r.steadyState.cpuPercentAfterWarmRestart)}`,
  );
  return rows;
}

/** Each propagation trial beside its two floors. */
function trialTable(results: readonly ScenarioResult[]): string[] {
  const withPairs = results.filter((r) => r.propagation?.pairedFloors.trials.length);
  if (!withPairs.length) return [];
  const cell = (p: PairedPhase) => `${ms(p.hnc.allMs)} ÷ ${ms(p.floor.allMs)} = ${f(p.ratio)} (p99 ${f(p.p99Ratio)})`;
  return [
    'Each propagation trial ÷ the mean of its two floors (ms for every copy; the per-namespace p99 ratio):',
    '',
    '| topology | trial | kind | create | update | delete |',
    '|---|---|---|---|---|---|',
    ...withPairs.flatMap((r) =>
      r.propagation!.pairedFloors.trials.map(
        (t, i) => `| ${r.topology} | ${i + 1} | ${t.kind} | ${cell(t.create)} | ${cell(t.update)} | ${cell(t.delete)} |`,
      ),
    ),
    '',
  ];
}

export function topologySections(results: readonly ScenarioResult[]): string[] {
  const columns = results.map((r) => r.topology);
  return [
    ...table(columns, [...coldStartRows(results), ...propagationRows(results), ...memoryRows(results)]),
    '',
    ...trialTable(results),
    'Writes at the API server during the cold start, by request:',
    '',
    ...results.map(
      (r) =>
        `- ${r.topology}: ${Object.entries(r.coldStart.writes.apiserver.byRequest)
          .map(([k, v]) => `${k}: ${v}`)
          .join(', ')} (minimum: ${JSON.stringify(r.coldStart.writes.minimum)})`,
    ),
  ];
}
