// The fault choice: kills of etcd and kube-apiserver share the supervisor's restart budget, and a
// forced order (SOAK_FAULTS) comes first, skipping a kill the budget no longer allows.
import { describe, expect, it } from 'vitest';
import { MAX_RESTARTS, RESTART_WINDOW_MS } from '../local-cluster/control-plane.js';
import { FAULT_KINDS, FaultInjector, allowedKinds, type FaultTarget } from './faults.js';
import { Prng } from './prng.js';

describe('fault choice', () => {
  it('counts etcd and kube-apiserver kills together against the supervisor budget, one restart spare', () => {
    const now = 100 * RESTART_WINDOW_MS;
    expect(allowedKinds([], now)).toEqual([...FAULT_KINDS]);
    const kills = Array.from({ length: MAX_RESTARTS - 1 }, (_, i) => now - 1000 * (i + 1));
    expect(allowedKinds(kills, now)).not.toContain('restart-etcd');
    expect(allowedKinds(kills, now)).not.toContain('restart-apiserver');
    expect(allowedKinds(kills, now)).toContain('rotate-webhook-cert');
    // Out of the window, they count no more.
    expect(allowedKinds(kills, now + RESTART_WINDOW_MS)).toEqual([...FAULT_KINDS]);
  });

  it('injects the forced kinds first, in order, then seeded ones', () => {
    const injector = new FaultInjector({} as FaultTarget, new Prng(7), [
      'restart-etcd',
      'restart-apiserver',
      'restart-etcd',
      'cut-replica',
    ]);
    const now = Date.now();
    expect(injector.choose(now)).toBe('restart-etcd');
    injector.recordControlPlaneKill(now);
    expect(injector.choose(now)).toBe('restart-apiserver');
    injector.recordControlPlaneKill(now);
    // A third kill would leave the supervisor no restart for a real crash: skipped.
    expect(injector.choose(now)).toBe('cut-replica');
    for (let i = 0; i < 50; i++) expect(['restart-etcd', 'restart-apiserver']).not.toContain(injector.choose(now));
  });
});
