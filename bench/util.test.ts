import { describe, expect, it } from 'vitest';
import { cpuDelta } from './util.js';

describe('cpuDelta', () => {
  it('keeps what the hypervisor stole apart: neither the benchmark’s processes nor other processes used it', () => {
    const before = { hnc: 10, bench: 1, machine: 100, steal: 5, 'steal:cpu0': 2, 'steal:cpu1': 3 };
    // 8 s busy on the machine: HNC 3, the benchmark 1, 2 stolen (0.5 on CPU 0, 1.5 on CPU 1), so 2 by other processes.
    const after = { hnc: 13, bench: 2, machine: 108, steal: 7, 'steal:cpu0': 2.5, 'steal:cpu1': 4.5 };
    const d = cpuDelta(before, after);
    expect(d).toMatchObject({ hnc: 3, bench: 1, machine: 8, steal: 2, 'steal:cpu0': 0.5, 'steal:cpu1': 1.5 });
    expect(d.others).toBe(2);
  });

  it('counts every busy second not the benchmark’s as other processes when nothing was stolen', () => {
    const d = cpuDelta({ hnc: 0, machine: 0, steal: 0 }, { hnc: 1, machine: 4, steal: 0 });
    expect(d.others).toBe(3);
  });
});
