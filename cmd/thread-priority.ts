// Lowers the scheduling priority of the calling thread only: on Linux a thread's nice value is its
// own (setpriority(PRIO_PROCESS, 0) names the calling thread), so the main thread (reconciling,
// writing) can yield the CPU to the admission thread without slowing the reviews
// (docs/webhooks.md, "The admission thread"). A thread inherits its creator's value when it is
// started, so threads started before keep theirs (the admission worker, V8's platform threads,
// libuv's pool once used); one started later from the lowered thread is lowered too. An
// unprivileged process can only lower its priority, never raise it back.
import os from 'node:os';

/**
 * The manager's controller thread, with the webhooks on their own thread: nice 10. While one Role
 * propagated to 999 namespaces at 500 reviews/s it took the reviews' p99 from about a second to
 * 51 ms on a loaded two-core machine (docs/benchmarks.md, "The webhook tail while one Role propagates").
 */
export const RECONCILER_NICE = 10;

export type PriorityResult = { applied: true; from: number; to: number } | { applied: false; reason: string };

/** Sets the calling thread's nice value to `nice` if that lowers its priority; says why not otherwise. */
export function lowerThisThreadPriority(nice: number, platform: NodeJS.Platform = process.platform): PriorityResult {
  if (nice <= 0) return { applied: false, reason: 'not asked (0)' };
  // Elsewhere the call would lower every thread of the process, the admission thread's too.
  if (platform !== 'linux') return { applied: false, reason: `per-thread priority is Linux only (this is ${platform})` };
  const target = Math.min(19, nice);
  const from = os.getPriority(0);
  if (from >= target) return { applied: false, reason: `the thread's nice value is already ${from}` };
  try {
    os.setPriority(0, target);
  } catch (err) {
    return { applied: false, reason: `setpriority failed: ${(err as Error).message}` };
  }
  return { applied: true, from, to: os.getPriority(0) };
}
