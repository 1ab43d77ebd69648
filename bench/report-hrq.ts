// The report's section on the HRQ phase (bench/hrq.ts).
import type { HrqResult } from './hrq-phase.js';
import { f, ms, pass, table, type Row } from './report-format.js';

/** The HRQ phase's table (bench/hrq.ts). */
export function hrqMarkdown(h: HrqResult): string[] {
  const lat = (r: HrqResult['webhook'][number] | undefined) => {
    if (!r) return '–';
    const denied = Object.values(r.byRequest).reduce((n, x) => n + x.denied, 0);
    const errors = Object.values(r.byRequest).reduce((n, x) => n + x.errors, 0);
    const server = r.serverSide ? `; HNC's own: mean ${ms(r.serverSide.meanMs)}, p99 ≤ ${ms(r.serverSide.p99UpperMs)}` : '';
    return `${ms(r.overall.p50)} / ${ms(r.overall.p99)} / ${ms(r.overall.max)} (${r.requests} reviews, ${denied} refused${errors ? `, ${errors} errors ❌` : ''}${server})`;
  };
  const w = h.coldStart.writes;
  const warm = h.warmRestart;
  const changed = warm.objectsChanged.changed + warm.objectsChanged.created + warm.objectsChanged.deleted;
  const rows: Array<[string, string, string]> = [
    [
      'namespaces (depth, fan-out); HRQs (by depth)',
      '',
      `${h.shape.namespaces} (${h.shape.depth}, ${h.shape.fanOut}); ${h.shape.hrqs} (${Object.entries(h.shape.hrqsByDepth)
        .map(([d, n]) => `${d}: ${n}`)
        .join(', ')})`,
    ],
    ['floor: API server writes/s (at concurrency)', '', `${f(h.floor.writesPerSecond, 0)} (${h.floor.concurrency})`],
    [
      'cold start with HRQs: seconds until every singleton and HRQ status is right (floor s)',
      '',
      `${f(h.coldStart.seconds)} (${f(h.coldStart.floorSeconds)}; caches synced at ${f(h.coldStart.cachesSyncedSeconds)})`,
    ],
    ['cold start ÷ floor', '', f(h.coldStart.ratioToFloor)],
    [
      'HRQ writes: singletons + HRQ statuses ÷ minimum',
      '1.00',
      `(${w.singletons} + ${w.hrqStatus}) ÷ (${w.minimum.singletons} + ${w.minimum.hrqStatus}) = ${f(w.ratio, 3)}${pass(w.ratio === 1)}`,
    ],
    [
      "all of HNC's writes then (the quota system's status writes apart)",
      '',
      `${w.apiserver.total}: ${Object.entries(w.apiserver.byResource)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')} (quota system: ${w.quotaSystem})`,
    ],
    [
      'warm restart: writes at the API server / by the manager / objects changed',
      '0',
      `${warm.writes.total} / ${warm.managerWrites} / ${changed}${pass(warm.writes.total === 0 && warm.managerWrites === 0 && changed === 0)}`,
    ],
    ['warm restart: seconds to idle', '', f(warm.seconds)],
  ];
  for (const r of h.webhook) rows.push([`quota webhook p50 / p99 / max ms at ${r.offered}/s (one replica, direct)`, '', lat(r)]);
  for (const r of h.forwarding?.leader ?? []) rows.push([`… two replicas, sent to the leader, at ${r.offered}/s`, '', lat(r)]);
  for (const r of h.forwarding?.follower ?? []) {
    const l = h.forwarding!.leader.find((x) => x.offered === r.offered);
    rows.push([
      `… sent to the follower (forwarded), at ${r.offered}/s; p50 / p99 cost of forwarding`,
      '',
      `${lat(r)}; +${ms(r.overall.p50 - (l?.overall.p50 ?? NaN))} / +${ms(r.overall.p99 - (l?.overall.p99 ?? NaN))}`,
    ]);
  }
  if (h.forwarding)
    rows.push(['second replica start: writes', '0', `${h.forwarding.secondReplicaWrites}${pass(h.forwarding.secondReplicaWrites === 0)}`]);
  return [
    '## Hierarchical quotas',
    '',
    ...table(
      ['hrq'],
      rows.map(([a, b, c]): Row => [a, b, [c]]),
    ),
    '',
  ];
}
