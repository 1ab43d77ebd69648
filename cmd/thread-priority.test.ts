// In a process of its own: the priority lowered here could not be raised back in the test's process.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { lowerThisThreadPriority } from './thread-priority.js';

const module = join(import.meta.dirname, 'thread-priority.ts');

// Starts a worker thread, then lowers the main thread, and prints each thread's nice value from /proc.
const script = `
import { Worker } from 'node:worker_threads';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
const { lowerThisThreadPriority } = await import(${JSON.stringify(module)});
const worker = new Worker(
  'Promise.all([import("node:worker_threads"), import("node:os")]).then(([w, os]) => { w.parentPort.postMessage(os.default.getPriority(0)); setInterval(() => {}, 1000); })',
  { eval: true },
);
const before = await new Promise((r) => worker.once('message', r));
const base = os.getPriority(0);
const result = lowerThisThreadPriority(base + 5);
const again = lowerThisThreadPriority(base + 2);
const nice = (tid) => Number(readFileSync('/proc/self/task/' + tid + '/stat', 'utf8').split(') ')[1].split(' ')[16]);
const threads = readdirSync('/proc/self/task').map(nice);
console.log(JSON.stringify({ base, before, result, again, main: nice(process.pid), threads }));
await worker.terminate();
`;

describe('lowerThisThreadPriority', () => {
  it.runIf(process.platform === 'linux')(
    'lowers the calling thread only: threads started before keep theirs; never raises',
    { timeout: 60_000 },
    async () => {
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        cwd: join(import.meta.dirname, '..'),
      });
      const out = JSON.parse(stdout) as {
        base: number;
        before: number;
        result: { applied: boolean; to?: number };
        again: { applied: boolean; reason?: string };
        main: number;
        threads: number[];
      };
      const target = Math.min(19, out.base + 5);
      if (out.base >= 19) {
        // Already at the lowest priority (a niced test run): nothing to lower, and it says so.
        expect(out.result).toMatchObject({ applied: false });
        return;
      }
      expect(out.result).toEqual({ applied: true, from: out.base, to: target });
      expect(out.main).toBe(target);
      // The worker and node's other threads were started before: still at the base value.
      expect(out.threads.filter((n) => n === out.base).length).toBeGreaterThanOrEqual(2);
      expect(out.threads.filter((n) => n === target)).toHaveLength(1);
      // Raising it back is not attempted (an unprivileged process may not).
      expect(out.again).toMatchObject({ applied: false, reason: `the thread's nice value is already ${target}` });
    },
  );

  it('does nothing when not asked or off Linux, and says why', () => {
    expect(lowerThisThreadPriority(0)).toEqual({ applied: false, reason: 'not asked (0)' });
    expect(lowerThisThreadPriority(10, 'darwin')).toEqual({ applied: false, reason: 'per-thread priority is Linux only (this is darwin)' });
  });
});
