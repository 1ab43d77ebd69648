// Timing whole commands (the built kubectl-hns bundle, kubectl) for the plugin's benchmarks.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The built kubectl-hns bundle; throws, saying how to build it, when it is missing. */
export function pluginBundle(): string {
  const bundle = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'kubectl-hns.mjs');
  if (!existsSync(bundle)) throw new Error(`no ${bundle}: run npm run build:plugin first`);
  return bundle;
}

export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** One run of a command: its wall time (ms) and stdout; throws if it fails. */
function runOnce(cmd: string, args: string[], env: NodeJS.ProcessEnv): { ms: number; stdout: string } {
  const start = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { env, encoding: 'utf8', maxBuffer: 512 * 1024 * 1024 });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr}`);
  return { ms, stdout: r.stdout };
}

/** Runs a command `runs` times: its median wall time (ms) and its last stdout. */
export function timeCommandOutput(cmd: string, args: string[], env: NodeJS.ProcessEnv, runs: number): { ms: number; stdout: string } {
  const all = Array.from({ length: runs }, () => runOnce(cmd, args, env));
  return { ms: Math.round(median(all.map((r) => r.ms))), stdout: all.at(-1)?.stdout ?? '' };
}

/** Runs a command `runs` times: its median wall time (ms) and its stdout's line count, the same every run. */
export function timeCommand(cmd: string, args: string[], env: NodeJS.ProcessEnv, runs: number): { ms: number; lines: number } {
  const times: number[] = [];
  let lines = -1;
  for (let i = 0; i < runs; i++) {
    const r = runOnce(cmd, args, env);
    times.push(r.ms);
    const n = r.stdout.split('\n').filter((l) => l !== '').length;
    if (lines >= 0 && n !== lines) throw new Error(`${args.join(' ')}: ${n} lines, then ${lines}`);
    lines = n;
  }
  return { ms: Math.round(median(times)), lines };
}
