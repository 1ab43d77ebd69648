// Small helpers: a bounded-concurrency runner, percentiles, CPU time of processes, formatting.
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

/** Runs `fn` over `items` with at most `concurrency` calls in flight; rejects on the first error. */
export async function pool<T>(items: readonly T[], concurrency: number, fn: (item: T, i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

export function percentile(sorted: readonly number[], q: number): number {
  if (!sorted.length) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i]!;
}

export interface Summary {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export function summarize(values: readonly number[]): Summary {
  const s = [...values].sort((a, b) => a - b);
  const mean = s.reduce((a, b) => a + b, 0) / (s.length || 1);
  return { n: s.length, p50: percentile(s, 0.5), p90: percentile(s, 0.9), p99: percentile(s, 0.99), max: s[s.length - 1] ?? NaN, mean };
}

let clkTck: number | undefined;
function ticksPerSecond(): number {
  if (clkTck === undefined) {
    try {
      clkTck = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clkTck = 100;
    }
  }
  return clkTck;
}

/** CPU seconds (user + system) a process has used, from /proc; undefined if it is gone. */
export function processCpuSeconds(pid: number | undefined): number | undefined {
  if (!pid) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After the command: state is field 3, utime 14 and stime 15 (1-based in proc(5)).
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond();
  } catch {
    return undefined;
  }
}

export type CpuSample = Record<string, number | undefined>;

/**
 * Busy CPU seconds of the whole machine (every core), from /proc/stat; time the hypervisor stole
 * from a virtual CPU is not counted as busy.
 */
function machineBusySeconds(): number | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
    // cpu user nice system idle iowait irq softirq steal ...
    const f = line.trim().split(/\s+/).slice(1, 8).map(Number);
    return (f.reduce((a, b) => a + b, 0) - f[3]! - f[4]!) / ticksPerSecond();
  } catch {
    return undefined;
  }
}

export function sampleCpu(pids: Record<string, number | undefined>): CpuSample {
  const out: CpuSample = {};
  for (const [name, pid] of Object.entries(pids)) out[name] = processCpuSeconds(pid);
  const own = process.cpuUsage();
  out.bench = own.user / 1e6 + own.system / 1e6;
  out.machine = machineBusySeconds();
  return out;
}

/**
 * CPU seconds used by each process between two samples; `machine` is every core's busy time, and
 * `others` what processes outside the benchmark used meanwhile (contention: another job on the box).
 */
export function cpuDelta(a: CpuSample, b: CpuSample): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(b)) if (v !== undefined && a[k] !== undefined) out[k] = round(v - a[k]!, 2);
  if (out.machine !== undefined) {
    const ours = Object.entries(out)
      .filter(([k]) => k !== 'machine')
      .reduce((x, [, v]) => x + v, 0);
    out.others = round(Math.max(0, out.machine - ours), 2);
  }
  return out;
}

export function round(x: number, digits = 3): number {
  if (!Number.isFinite(x)) return x;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export const mb = (bytes: number): number => round(bytes / (1024 * 1024), 1);

export function log(line: string): void {
  const t = new Date().toISOString().slice(11, 19);
  process.stderr.write(`[bench ${t}] ${line}\n`);
}
