// The soak's figures: what was lost, what diverged, what was over-admitted, how long HNC took to
// settle after each kind of fault, and how often a user's request failed because HNC was
// unavailable; printed as a table and written as JSON.
import { FAULT_KINDS, type Fault, type FaultKind } from './faults.js';
import type { OverAdmission } from './quota.js';
import type { RefusalKind, RequestRecord } from './requests.js';
import type { Judged } from './users.js';

export interface QuietPoint {
  at: string;
  fault?: FaultKind;
  settled: boolean;
  /** From the end of the fault until the checker found nothing to report. */
  settleSeconds?: number;
  /** From the end of the load until then. */
  quietSeconds?: number;
  divergences: string[];
  lost: string[];
}

export interface Figures {
  seed: number;
  minutes: number;
  objectsLost: number;
  lost: string[];
  quietPoints: number;
  divergentQuietPoints: number;
  divergences: string[];
  overAdmissions: number;
  overAdmissionSamples: OverAdmission[];
  quotaSamples: number;
  /** Per fault kind: seconds from the fault's end (p50, max), and from the load's stop (quietP50, quietMax), until settled. */
  settleSeconds: Partial<Record<FaultKind, { n: number; p50: number; max: number; quietP50: number; quietMax: number }>>;
  faults: Partial<Record<FaultKind, number>>;
  userRequests: number;
  failedBecauseHncUnavailable: number;
  hncUnavailableShare: number;
  /** Those failures by the fault that started last before each (if it ended less than 60 s before; "none" otherwise). */
  unavailableByFault: Partial<Record<FaultKind | 'none', number>>;
  /** Those failures that were a hierarchical-quota raise refused because no leader could decide it. */
  unavailableQuotaRaises: number;
  refusals: Partial<Record<RefusalKind, number>>;
  /** RBAC refusals sent while kube-apiserver restarted or in the 10 s after: its authorizer's caches were not filled yet. */
  rbacDuringApiserverRestart: number;
  refusalsJudgedRight: number;
  questionableRefusals: Array<{ op: string; message: string }>;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const round1 = (x: number) => Math.round(x * 10) / 10;

export function figures(input: {
  seed: number;
  minutes: number;
  quietPoints: QuietPoint[];
  faults: Fault[];
  requests: RequestRecord[];
  overAdmissions: OverAdmission[];
  quotaSamples: number;
  judged: Judged;
}): Figures {
  const lost = [...new Set(input.quietPoints.flatMap((q) => q.lost))];
  const settle: Figures['settleSeconds'] = {};
  for (const kind of new Set(input.faults.map((f) => f.kind))) {
    const settled = input.quietPoints.filter((q) => q.fault === kind && q.settled);
    const xs = settled.map((q) => q.settleSeconds!);
    const quiet = settled.map((q) => q.quietSeconds!);
    if (xs.length)
      settle[kind] = {
        n: xs.length,
        p50: round1(median(xs)),
        max: round1(Math.max(...xs)),
        quietP50: round1(median(quiet)),
        quietMax: round1(Math.max(...quiet)),
      };
  }
  const users = input.requests.filter((r) => r.who !== 'admin');
  const unavailableRecords = users.filter((r) => r.refusal?.kind === 'hnc-unavailable');
  const unavailable = unavailableRecords.length;
  const unavailableByFault: Figures['unavailableByFault'] = {};
  for (const r of unavailableRecords) {
    const kind = lastFaultBefore(input.faults, Date.parse(r.t))?.kind ?? 'none';
    unavailableByFault[kind] = (unavailableByFault[kind] ?? 0) + 1;
  }
  const refusals: Figures['refusals'] = {};
  for (const r of input.requests) if (r.refusal) refusals[r.refusal.kind] = (refusals[r.refusal.kind] ?? 0) + 1;
  const restarts = input.faults.filter((f) => f.kind === 'restart-apiserver');
  const duringRestart = (r: RequestRecord) => restarts.some((f) => Date.parse(r.t) >= f.startedAt && Date.parse(r.t) <= f.endedAt + 10_000);
  const faults: Figures['faults'] = {};
  for (const f of input.faults) faults[f.kind] = (faults[f.kind] ?? 0) + 1;
  return {
    seed: input.seed,
    minutes: input.minutes,
    objectsLost: lost.length,
    lost,
    quietPoints: input.quietPoints.length,
    divergentQuietPoints: input.quietPoints.filter((q) => !q.settled).length,
    divergences: [...new Set(input.quietPoints.flatMap((q) => q.divergences))].slice(0, 50),
    overAdmissions: input.overAdmissions.length,
    overAdmissionSamples: input.overAdmissions.slice(0, 20),
    quotaSamples: input.quotaSamples,
    settleSeconds: settle,
    faults,
    userRequests: users.length,
    failedBecauseHncUnavailable: unavailable,
    hncUnavailableShare: users.length ? unavailable / users.length : 0,
    unavailableByFault,
    unavailableQuotaRaises: unavailableRecords.filter((r) => QUOTA_RAISE.test(r.refusal!.message)).length,
    refusals,
    rbacDuringApiserverRestart: input.requests.filter((r) => r.refusal?.kind === 'rbac' && duringRestart(r)).length,
    refusalsJudgedRight: input.judged.right,
    questionableRefusals: input.judged.questionable.slice(0, 50),
  };
}

/** The webhook that judges hierarchical-quota raises. */
const QUOTA_RAISE = /resourcesquotasstatus\.hnc\.x-k8s\.io/;

/** The fault that started last at or before `t`, if it had not ended a minute before. */
function lastFaultBefore(faults: Fault[], t: number): Fault | undefined {
  const before = faults.filter((f) => f.startedAt <= t && t - f.endedAt <= 60_000);
  return before.sort((a, b) => b.startedAt - a.startedAt)[0];
}

/** The figures as a plain-text table, targets beside them. */
export function table(f: Figures): string {
  const rows: Array<[string, string, string]> = [
    ['objects lost', String(f.objectsLost), '0'],
    ['quiet points not settled within 60 s', `${f.divergentQuietPoints} of ${f.quietPoints}`, '0'],
    ['HRQ over-admission (samples over a limit)', `${f.overAdmissions} of ${f.quotaSamples}`, '0'],
    [
      'user requests failed: HNC unavailable',
      `${f.failedBecauseHncUnavailable} of ${f.userRequests} (${(f.hncUnavailableShare * 100).toFixed(2)} %)`,
      '< 0.1 %',
    ],
    [
      '  of which quota raises; by the last fault before',
      `${f.unavailableQuotaRaises}; ${
        Object.entries(f.unavailableByFault)
          .map(([k, n]) => `${k} ${n}`)
          .join(', ') || '-'
      }`,
      '',
    ],
    ...FAULT_KINDS.map((k): [string, string, string] => [`settle after ${k} (s)`, settleCell(f, k), '']),
    [
      'faults',
      Object.entries(f.faults)
        .map(([k, n]) => `${k} ${n}`)
        .join(', '),
      '',
    ],
    [
      'refusals by kind',
      Object.entries(f.refusals)
        .map(([k, n]) => `${k} ${n}`)
        .join(', '),
      '',
    ],
    ['rbac refusals while kube-apiserver restarted', String(f.rbacDuringApiserverRestart), ''],
    ['refusals judged right / questionable (rules, quota, RBAC)', `${f.refusalsJudgedRight} / ${f.questionableRefusals.length}`, ''],
  ];
  const w0 = Math.max(...rows.map((r) => r[0].length));
  const w1 = Math.max(...rows.map((r) => r[1].length));
  return rows.map(([a, b, c]) => `${a.padEnd(w0)}  ${b.padEnd(w1)}  ${c}`.trimEnd()).join('\n');
}

/** One fault kind's settle times, or why there are none: every kind has its row, injected or not. */
function settleCell(f: Figures, kind: FaultKind): string {
  const s = f.settleSeconds[kind];
  const n = f.faults[kind] ?? 0;
  if (!s) return n ? `injected ${n}, no quiet point after it settled` : 'not injected';
  const unsettled = n > s.n ? `; ${n - s.n} of ${n} did not settle` : '';
  return `p50 ${s.p50}, max ${s.max} after its end; p50 ${s.quietP50}, max ${s.quietMax} after the load stopped (n=${s.n})${unsettled}`;
}
