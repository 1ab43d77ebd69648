// In processes of their own: a raised priority could not be lowered back in the test's process.
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { raiseThisThreadPriority } from './thread-priority.js';

const module = join(import.meta.dirname, 'thread-priority.ts');
// Node 20 does not pass a loader registered by --import to workers: the worker registers tsx itself (as webhooks/admission-thread.ts does).
const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api')).href.replace(/\.cjs$/, '.mjs');

// A worker thread raises itself to nice -5; the main thread prints the result and every thread's nice value from /proc.
const script = `
import { Worker } from 'node:worker_threads';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
const worker = new Worker(
  'import(${JSON.stringify(tsx)}).then((x) => { x.register(); return Promise.all([import("node:worker_threads"), import(${JSON.stringify(module)})]); }).then(([w, t]) => { w.parentPort.postMessage(t.raiseThisThreadPriority(-5)); setInterval(() => {}, 1000); })',
  { eval: true },
);
const result = await new Promise((r) => worker.once('message', r));
const nice = (tid) => Number(readFileSync('/proc/self/task/' + tid + '/stat', 'utf8').split(') ')[1].split(' ')[16]);
console.log(JSON.stringify({ base: os.getPriority(0), result, main: nice(process.pid), threads: readdirSync('/proc/self/task').map(nice) }));
await worker.terminate();
`;

interface Out {
  base: number;
  result: { applied: boolean; from?: number; to?: number; reason?: string };
  main: number;
  threads: number[];
}

async function run(prefix: string[]): Promise<Out> {
  const argv = [...prefix, process.execPath, '--import', 'tsx', '--input-type=module', '-e', script];
  const { stdout } = await promisify(execFile)(argv[0]!, argv.slice(1), { cwd: join(import.meta.dirname, '..') });
  return JSON.parse(stdout) as Out;
}

/** Whether this process may raise a thread's priority (CAP_SYS_NICE, bit 23 of the effective set). */
function hasSysNice(): boolean {
  const eff = /^CapEff:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
  return eff !== undefined && (BigInt(`0x${eff}`) & (1n << 23n)) !== 0n;
}

const setpriv = (() => {
  try {
    execFileSync('setpriv', ['--help'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

function expectRefused(out: Out): void {
  expect(out.result.applied).toBe(false);
  expect(out.result.reason).toMatch(
    /^setpriority failed \((EACCES|EPERM)\): raising a thread's priority needs CAP_SYS_NICE, which Pod Security "baseline" does not allow adding$/,
  );
  // Nothing changed: every thread still at the process's value.
  expect(out.threads.every((n) => n === out.base)).toBe(true);
}

describe('raiseThisThreadPriority', () => {
  it.runIf(process.platform === 'linux')(
    'raises the calling (admission) thread only where CAP_SYS_NICE is held, and says why not where it is not',
    { timeout: 60_000 },
    async () => {
      if (!hasSysNice()) {
        expectRefused(await run([]));
        return;
      }
      const out = await run([]);
      expect(out.result).toEqual({ applied: true, from: out.base, to: -5 });
      expect(out.threads.filter((n) => n === -5)).toHaveLength(1);
      expect(out.main).toBe(out.base);
      // The same process without the capability (as a container under Pod Security "baseline"): refused, nothing changed.
      if (setpriv) expectRefused(await run(['setpriv', '--inh-caps=-sys_nice', '--bounding-set=-sys_nice', '--']));
    },
  );

  it('does nothing when not asked or off Linux, and says why', () => {
    expect(raiseThisThreadPriority(0)).toEqual({ applied: false, reason: 'not asked (0)' });
    expect(raiseThisThreadPriority(-5, 'darwin')).toEqual({ applied: false, reason: 'per-thread priority is Linux only (this is darwin)' });
  });
});
