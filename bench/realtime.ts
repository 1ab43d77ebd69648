// The load generator as a measuring instrument with a core when it needs one: `--generator-realtime`
// runs its event loop's thread at SCHED_FIFO (chrt), so that it sends each review on time and reads each answer
// when it arrives, instead of waiting behind the API server, etcd and HNC for one of this
// machine's two cores. In a cluster the webhook's client is the API server, on other cores than
// HNC's pod; on two shared cores the generator alone was late by 2.6-3.8 ms at p99, most of a 3 ms
// budget (docs/benchmarks.md, "The webhook tail while one Role propagates"). The controller under
// test and the control plane keep the normal policy: only the instrument is raised.
import { execFileSync } from 'node:child_process';

export type RealtimeResult = { applied: true; policy: string } | { applied: false; reason: string };

let wanted: number | undefined;

/** Asks for every load generator started after this to run at SCHED_FIFO `priority` (1-99). */
export function useRealtimeGenerator(priority: number): void {
  if (!Number.isInteger(priority) || priority < 1 || priority > 99)
    throw new Error(`--generator-realtime needs a priority from 1 to 99, not ${priority}`);
  wanted = priority;
}

/** What was asked, for the report: undefined when the generator runs at the normal policy. */
export function generatorRealtimePriority(): number | undefined {
  return wanted;
}

/**
 * Moves the main thread of `pid` (the generator's event loop: it sends the reviews and reads the
 * answers) to SCHED_FIFO at the asked priority; V8's and libuv's helper threads keep the normal
 * policy. Says why not where it cannot (no chrt, not permitted): the run then
 * measures with a generator at the normal policy, and its report says so.
 */
export function raiseGenerator(pid: number | undefined, run: typeof execFileSync = execFileSync): RealtimeResult | undefined {
  if (wanted === undefined) return undefined;
  if (pid === undefined) return { applied: false, reason: 'the generator has no process id' };
  try {
    // Its main thread only (the tid of a process's main thread is its pid): with every thread at
    // SCHED_FIFO on one pinned CPU, a thread waiting for one of V8's helper threads kept the CPU from
    // it (at 500 reviews/s the generator used 62-90 % of the core against 17 % flat, until throttled).
    run('chrt', ['--fifo', '--pid', String(wanted), String(pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim();
    return { applied: false, reason: `chrt failed: ${stderr || (err as Error).message} (SCHED_FIFO needs root or CAP_SYS_NICE)` };
  }
  return { applied: true, policy: `SCHED_FIFO ${wanted}` };
}
