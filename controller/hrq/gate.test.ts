import { describe, expect, it } from 'vitest';
import { HRQ_RESOURCE_QUOTA_NAME, Label } from '../../core/api/constants.js';
import { forest } from '../../core/forest/dsl.js';
import { parseResourceList, QuotaModel, UNCOUNTED_WAIT_MS } from '../../core/hrq/hrq.js';
import type { QuotaChange, ResourceQuotaObject } from '../../kube/quota-cache.js';
import { Store } from '../../kube/watch/store.js';
import { silentLog } from '../testing.js';
import { SingletonGate, type GateQuotas } from './gate.js';

/** A gate over the tree `team -> sub, free` with an HRQ in `team`, and what it wakes. */
function setup() {
  const f = forest('team -> sub, free');
  const model = new QuotaModel(f);
  model.setHrq('team', 'q', parseResourceList({ services: '1' }).quantities);
  const store = new Store<ResourceQuotaObject>();
  const listeners = new Set<(c: QuotaChange) => void>();
  const deleting = new Set<string>();
  const quotas = {
    model,
    synced: true,
    singletons: { store },
    onChange: (l: (c: QuotaChange) => void) => (listeners.add(l), () => listeners.delete(l)),
    hierarchy: { hierarchy: { forest: f, namespace: (ns: string) => ({ deleting: deleting.has(ns) }) } },
  };
  let clock = 0;
  const gate = new SingletonGate(quotas as unknown as GateQuotas, silentLog, () => clock);
  const woken: string[][] = [];
  gate.onWake((namespaces) => woken.push(namespaces));
  /** The singleton's watch event (undefined: deleted), as the quota cache tells its listeners. */
  const singleton = (ns: string, status?: { used: Record<string, string> }, labels: Record<string, string> = { [Label.hrq]: 'true' }) => {
    const rq: ResourceQuotaObject = { metadata: { name: HRQ_RESOURCE_QUOTA_NAME, namespace: ns, labels }, status };
    store.upsert(rq);
    for (const l of listeners) l({ kind: 'usage', namespace: ns });
  };
  const hrqChanged = (ns: string, name: string) => {
    for (const l of listeners) l({ kind: 'hrq', namespace: ns, name });
  };
  return { gate, quotas, model, woken, singleton, hrqChanged, deleting, tick: (ms: number) => (clock += ms) };
}

describe('the singleton gate', () => {
  it('holds copies out of a namespace under an HRQ until its singleton is counted, and wakes it then', () => {
    const { gate, woken, singleton } = setup();
    expect(gate.hold('sub')).toEqual({ wait: true });
    expect(gate.hold('team')).toEqual({ wait: true });
    singleton('sub');
    expect(woken).toEqual([['sub']]);
    expect(gate.hold('sub')).toEqual({ wait: true, recheckInMs: UNCOUNTED_WAIT_MS });
    singleton('sub', { used: { services: '0' } });
    expect(woken).toEqual([['sub'], ['sub']]);
    expect(gate.hold('sub')).toEqual({ wait: false });
    // Not held any more: the singleton's later changes (every usage change) wake nothing.
    singleton('sub', { used: { services: '1' } });
    expect(woken).toHaveLength(2);
  });

  it('never holds where no HRQ applies, nor before the quota caches have listed', () => {
    const { gate, quotas, woken, singleton } = setup();
    expect(gate.hold('free')).toEqual({ wait: false });
    expect(gate.hold('nowhere')).toEqual({ wait: false });
    quotas.synced = false;
    expect(gate.hold('sub')).toEqual({ wait: false });
    singleton('free');
    expect(woken).toEqual([]);
  });

  it('lets copies go when the singleton cannot be written, or is not counted in time', () => {
    const { gate, woken, singleton, tick } = setup();
    expect(gate.hold('sub').wait).toBe(true);
    gate.writeFailed('sub', true);
    expect(woken).toEqual([['sub']]);
    expect(gate.hold('sub')).toEqual({ wait: false });
    gate.writeFailed('sub', false);
    singleton('sub');
    expect(gate.hold('sub')).toEqual({ wait: true, recheckInMs: UNCOUNTED_WAIT_MS });
    tick(4000);
    expect(gate.hold('sub')).toEqual({ wait: true, recheckInMs: UNCOUNTED_WAIT_MS - 4000 });
    tick(UNCOUNTED_WAIT_MS);
    expect(gate.hold('sub')).toEqual({ wait: false });
  });

  it('wakes every namespace it holds when an HRQ changes, and lets them go once no HRQ applies', () => {
    const { gate, model, woken, hrqChanged } = setup();
    gate.hold('sub');
    gate.hold('team');
    model.setHrq('team', 'q', undefined);
    hrqChanged('team', 'q');
    expect(woken).toEqual([['sub', 'team']]);
    expect([gate.hold('sub'), gate.hold('team')]).toEqual([{ wait: false }, { wait: false }]);
  });

  it('does not wait for a user’s ResourceQuota of the singleton’s name, nor in a namespace being deleted', () => {
    const { gate, singleton, deleting } = setup();
    singleton('sub', undefined, {});
    expect(gate.hold('sub')).toEqual({ wait: false });
    deleting.add('team');
    expect(gate.hold('team')).toEqual({ wait: false });
  });
});
