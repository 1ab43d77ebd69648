// The figures table has a settle row for every fault kind, injected or not, and says when a
// kind's quiet points did not all settle.
import { describe, expect, it } from 'vitest';
import { FAULT_KINDS, type Fault } from './faults.js';
import { figures, table, type QuietPoint } from './figures.js';

const fault = (kind: Fault['kind']): Fault => ({ kind, detail: '', startedAt: 0, endedAt: 1 });
const quiet = (kind: Fault['kind'], settled: boolean): QuietPoint => ({
  at: '',
  fault: kind,
  settled,
  settleSeconds: settled ? 3 : undefined,
  quietSeconds: settled ? 1 : undefined,
  divergences: [],
  lost: [],
});

describe('figures table', () => {
  it('has a settle row for every fault kind', () => {
    const f = figures({
      seed: 7,
      minutes: 1,
      quietPoints: [quiet('restart-etcd', true), quiet('rotate-webhook-cert', true), quiet('rotate-webhook-cert', false)],
      faults: [fault('restart-etcd'), fault('rotate-webhook-cert'), fault('rotate-webhook-cert'), fault('cut-replica')],
      requests: [],
      overAdmissions: [],
      quotaSamples: 0,
      judged: { right: 0, questionable: [] },
    });
    const t = table(f);
    for (const k of FAULT_KINDS) expect(t).toContain(`settle after ${k} (s)`);
    expect(t).toMatch(/settle after restart-etcd \(s\) +p50 3, max 3 after its end; p50 1, max 1 after the load stopped \(n=1\)/);
    expect(t).toMatch(/settle after rotate-webhook-cert \(s\) +.*\(n=1\); 1 of 2 did not settle/);
    expect(t).toMatch(/settle after cut-replica \(s\) +injected 1, no quiet point after it settled/);
    expect(t).toMatch(/settle after kill-replica \(s\) +not injected/);
  });

  it('puts each HNC-unavailable failure on the last fault begun before it and ended less than a minute before, and counts quota raises', () => {
    const at = (ms: number) => new Date(ms).toISOString();
    const refused = (ms: number, message: string) => ({
      t: at(ms),
      who: 'soak-lead-a',
      op: 'create service',
      target: '',
      ms: 1,
      ok: false,
      refusal: { kind: 'hnc-unavailable' as const, message },
    });
    const raise = 'admission webhook "resourcesquotasstatus.hnc.x-k8s.io" denied the request: this HNC replica no longer leads';
    const f = figures({
      seed: 7,
      minutes: 1,
      quietPoints: [],
      faults: [
        { kind: 'kill-replica', detail: '', startedAt: 100_000, endedAt: 100_001 },
        { kind: 'freeze-replica', detail: '', startedAt: 110_000, endedAt: 140_000 },
      ],
      requests: [
        refused(105_000, raise),
        refused(120_000, raise),
        refused(175_000, 'failed calling webhook'),
        refused(50_000, 'x'),
        refused(201_000, 'y'),
      ],
      overAdmissions: [],
      quotaSamples: 0,
      judged: { right: 0, questionable: [] },
    });
    expect(f.unavailableByFault).toEqual({ 'kill-replica': 1, 'freeze-replica': 2, none: 2 });
    expect(f.unavailableQuotaRaises).toBe(2);
    expect(table(f)).toMatch(/of which quota raises; by the last fault before +2; kill-replica 1, freeze-replica 2, none 2/);
  });
});
