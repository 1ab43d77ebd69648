// The report's webhook figures: HNC's p99 at rest and while copying, beside the review floor's in
// the same run (their ratio is the figure to compare across machines), saturation, and whether a
// restart with webhooks wrote anything.
import { f, ms, pass, rowsOf, table, type Row } from './report-format.js';
import type { ScenarioResult, WebhookResult } from './results.js';
import type { LatencyResult } from './webhook-load.js';

/** A warning where the load generator itself sent late (p99 over 1 ms): the figure then measures the instrument too. */
const late = (d: LatencyResult) => (d.sendLateness.p99 > 1 ? ` ⚠ the load generator sent late, p99 ${ms(d.sendLateness.p99)} ms` : '');
const errors = (d: LatencyResult) => Object.values(d.byRequest).reduce((n, x) => n + x.errors, 0);
const triple = (d: LatencyResult) => `${ms(d.overall.p50)} / ${ms(d.overall.p99)} / ${ms(d.overall.max)}`;

function loadRows(results: readonly ScenarioResult[], rates: number[]): Row[] {
  const { rows, row } = rowsOf(results);
  const wh = (fn: (w: WebhookResult) => string) => (r: ScenarioResult) => (r.webhooks ? fn(r.webhooks) : '–');
  for (const rate of rates) {
    row(
      `webhook at ${rate} reviews/s, p50 / p99 / max ms (errors)`,
      '',
      wh((w) => {
        const d = w.direct.find((x) => x.offered === rate);
        return d ? `${triple(d)} (${errors(d)})${late(d)}` : '–';
      }),
    );
    row(
      `… HNC's own histogram at ${rate}/s: answered within 5 ms`,
      '≥ 99 %',
      wh((w) => {
        const h = w.direct.find((x) => x.offered === rate)?.serverSide;
        return h ? `${f(100 * h.within5ms, 1)} %${pass(h.within5ms >= 0.99)}` : '–';
      }),
    );
  }
  row(
    'webhook while a Role is copied to every namespace, p50 / p99 / max ms (each copy’s p99)',
    '',
    wh((w) => {
      const d = w.duringPropagation;
      return d
        ? `${triple(d.during)} (${d.trialP99s.map(ms).join(', ')})${d.covered ? '' : ' (the load ended first)'}${late(d.during)}`
        : '–';
    }),
  );
  row(
    'review floor, p50 / p99 / max ms: at rest; during its copies',
    '',
    wh((w) => {
      const rf = w.reviewFloor;
      return rf ? `${triple(rf.atRest)}; ${rf.duringCopy ? triple(rf.duringCopy.during) : '–'}` : '–';
    }),
  );
  row(
    'HNC’s webhook p99 ÷ the review floor’s: at rest; during the copies',
    '',
    wh((w) => {
      const top = w.direct.find((d) => d.offered === Math.max(...w.direct.map((x) => x.offered)));
      const rf = w.reviewFloor;
      if (!rf || !top) return '–';
      const during =
        w.duringPropagation && rf.duringCopy ? f(w.duringPropagation.during.overall.p99 / rf.duringCopy.during.overall.p99) : '–';
      return `${f(top.overall.p99 / rf.atRest.overall.p99)}; ${during}`;
    }),
  );
  row(
    'webhook saturation: reviews/s (p50 ms) at fixed concurrency',
    '',
    wh((w) => `${f(w.saturation.perSecond, 0)} (${ms(w.saturation.overall.p50)}) at ${w.saturation.offered}`),
  );
  row(
    'restart with webhooks: write requests (objects changed)',
    '0',
    wh((w) => {
      const c = w.restartWrites.objectsChangedLast;
      return `${w.restartWrites.last.total} (${c.changed + c.created + c.deleted})${w.restartWrites.restarts < 2 ? ' (first start)' : pass(w.restartWrites.last.total === 0)}`;
    }),
  );
  return rows;
}

/** Latency by kind of review at the highest rate, at rest and during the copies. */
function byRequest(results: readonly ScenarioResult[], rate: number): string[] {
  const rest = (r: ScenarioResult) => r.webhooks?.direct.find((d) => d.offered === rate)?.byRequest ?? {};
  const during = (r: ScenarioResult) => r.webhooks?.duringPropagation?.during.byRequest ?? {};
  const names = [...new Set(results.flatMap((r) => [...Object.keys(rest(r)), ...Object.keys(during(r))]))];
  const cell = (s: LatencyResult['byRequest'][string] | undefined) => (s ? `${ms(s.p50)} / ${ms(s.p99)}` : '–');
  return [
    `Webhook latency by request at ${rate} reviews/s, p50 / p99 ms (at rest; while a Role is copied):`,
    '',
    `| request | ${results.map((r) => r.topology).join(' | ')} |`,
    `|---|${results.map(() => '---').join('|')}|`,
    ...names.map((n) => `| ${n} | ${results.map((r) => `${cell(rest(r)[n])}; ${cell(during(r)[n])}`).join(' | ')} |`),
    '',
  ];
}

export function webhookSections(results: readonly ScenarioResult[]): string[] {
  const withWebhooks = results.filter((r) => r.webhooks);
  if (!withWebhooks.length) return [];
  const rates = [...new Set(withWebhooks.flatMap((r) => r.webhooks!.direct.map((d) => d.offered)))].sort((a, b) => a - b);
  const lines = [
    '## Webhooks',
    '',
    ...table(
      withWebhooks.map((r) => r.topology),
      loadRows(withWebhooks, rates),
    ),
    '',
  ];
  const top = rates[rates.length - 1];
  return top === undefined ? lines : [...lines, ...byRequest(withWebhooks, top)];
}
