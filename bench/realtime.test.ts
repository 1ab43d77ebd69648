import { describe, expect, it } from 'vitest';
import type { execFileSync } from 'node:child_process';
import { generatorRealtimePriority, raiseGenerator, useRealtimeGenerator } from './realtime.js';

type Run = typeof execFileSync;

describe('the load generator at SCHED_FIFO (--generator-realtime)', () => {
  it("does nothing until asked, then moves the generator's main thread with chrt", () => {
    const calls: string[][] = [];
    const run = ((cmd: string, args: string[]) => {
      calls.push([cmd, ...args]);
      return Buffer.alloc(0);
    }) as unknown as Run;
    expect(raiseGenerator(42, run)).toBeUndefined();
    expect(calls).toEqual([]);

    useRealtimeGenerator(5);
    expect(generatorRealtimePriority()).toBe(5);
    expect(raiseGenerator(42, run)).toEqual({ applied: true, policy: 'SCHED_FIFO 5' });
    expect(calls).toEqual([['chrt', '--fifo', '--pid', '5', '42']]);
  });

  it("says why when chrt refuses, with chrt's own words", () => {
    useRealtimeGenerator(1);
    const refuse = (() => {
      throw Object.assign(new Error('Command failed'), {
        stderr: Buffer.from("chrt: failed to set pid 42's policy: Operation not permitted\n"),
      });
    }) as unknown as Run;
    const r = raiseGenerator(42, refuse);
    expect(r).toEqual({ applied: false, reason: expect.stringContaining('Operation not permitted') });
    expect(r && !r.applied && r.reason).toContain('CAP_SYS_NICE');
  });

  it('refuses a priority outside 1-99', () => {
    expect(() => useRealtimeGenerator(0)).toThrow(/1 to 99/);
    expect(() => useRealtimeGenerator(100)).toThrow(/1 to 99/);
  });
});
