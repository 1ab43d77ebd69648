import { describe, expect, it } from 'vitest';
import { cpuDelta } from './util.js';

describe('cpuDelta', () => {
  it('gives each process its CPU seconds between two samples, and the rest of the machine’s busy time to other processes', () => {
    // 8 s busy on the machine: HNC 3, the benchmark 1, so 4 by other processes.
    const d = cpuDelta({ hnc: 10, bench: 1, machine: 100 }, { hnc: 13, bench: 2, machine: 108 });
    expect(d).toMatchObject({ hnc: 3, bench: 1, machine: 8, others: 4 });
  });

  it('never counts negative time for other processes, and leaves out a process gone before the second sample', () => {
    const d = cpuDelta({ hnc: 0, gone: 5, machine: 0 }, { hnc: 1, gone: undefined, machine: 0.5 });
    expect(d.others).toBe(0);
    expect(d).not.toHaveProperty('gone');
  });
});
