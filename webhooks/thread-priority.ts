// Raises the admission thread's own scheduling priority, when asked (--admission-nice N, N < 0) and
// permitted: on Linux a thread's nice value is its own (setpriority(PRIO_PROCESS, 0) names the
// calling thread), so the reviews' thread can win a core from the API server's threads and other
// processes' on the same node without raising the reconciling thread. Raising needs CAP_SYS_NICE,
// which Pod Security's "baseline" and "restricted" levels do not allow a container to add, so it is
// opt-in and refused with a reason where not permitted. It acts among the threads of one CPU group
// only: a container's cgroup still gets the share its CPU request gives it against other pods
// (docs/webhooks.md, "The admission thread").
import os from 'node:os';

export type RaiseResult = { applied: true; from: number; to: number } | { applied: false; reason: string };

/** Sets the calling thread's nice value to `nice` (-20 to -1) if that raises its priority; says why not otherwise. */
export function raiseThisThreadPriority(nice: number, platform: NodeJS.Platform = process.platform): RaiseResult {
  if (nice >= 0) return { applied: false, reason: 'not asked (0)' };
  // Elsewhere the call would raise every thread of the process, the reconciling one's too.
  if (platform !== 'linux') return { applied: false, reason: `per-thread priority is Linux only (this is ${platform})` };
  const target = Math.max(-20, nice);
  const from = os.getPriority(0);
  if (from <= target) return { applied: false, reason: `the thread's nice value is already ${from}` };
  try {
    os.setPriority(0, target);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException & { info?: { code?: string } }).info?.code ?? (err as NodeJS.ErrnoException).code;
    return {
      applied: false,
      reason: `setpriority failed (${code ?? (err as Error).message}): raising a thread's priority needs CAP_SYS_NICE, which Pod Security "baseline" does not allow adding`,
    };
  }
  return { applied: true, from, to: os.getPriority(0) };
}
