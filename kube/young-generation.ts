// Gives V8's young generation back once a thread is idle. The image runs node with a young
// generation of up to 2 × 8 MB (--max-semi-space-size=8; V8 14's own limit lets it reach about
// 56 MB): a burst of writes (a propagation to thousands of namespaces, a cold start) is collected
// with a quarter of the scavenges a 2 MB one takes. V8 grows the young generation during such a
// burst but does not shrink it by itself while nothing allocates: its memory reducer judges the
// allocation rate from the samples of its collections, and with no collection after the burst
// it keeps finding the burst's rate high. A scavenge that finds the rate low shrinks the young
// generation, in steps (16 MB, then 1 MB, then its initial 2 × 256 KB), and V8 returns the freed
// pages to the system a collection or two later. So when the thread has been idle for a while,
// this runs a scavenge of the (nearly empty) young generation, and again an interval later until
// it is back at its initial size (three to five intervals after a burst): a small cluster's steady
// memory is that of the smallest young generation (docs/benchmarks.md, "A young generation for
// bursts, given back when idle").
// Needs node's --expose-gc (the image's ENTRYPOINT); without it, it says so once and does nothing.
import { getHeapSpaceStatistics } from 'node:v8';
import { performance } from 'node:perf_hooks';
import type { Logger } from './log.js';

/** How often the thread's idleness and young generation are looked at. */
export const TRIM_INTERVAL_MS = 3_000;
/** A thread busier than this share of an interval is not idle (its event loop's utilization). */
export const IDLE_UTILIZATION = 0.05;
/**
 * A young generation (both semi-spaces) above this has grown since the start: V8 14 (Node 26)
 * starts at 2 × 256 KB. A scavenge may leave 1 MB; the pages it freed go back to the system only
 * as it is scavenged on, down to this.
 */
export const SMALLEST_YOUNG_BYTES = 512 * 1024;

/** One look at the thread: its young generation's size and how busy its event loop was since the last look. */
export interface YoungGenerationReading {
  youngBytes: number;
  utilization: number;
}

/**
 * V8 judges the rate over about the last 5 s of its collections' samples, so the scavenges one and
 * two intervals after a burst may still see the burst: they are retried at once.
 */
export const QUICK_RETRIES = 2;
/** Scavenges that did not shrink the young generation are retried after 2, 4, … up to this many intervals. */
export const MAX_BACKOFF_INTERVALS = 32;

/**
 * When to scavenge: the young generation has grown and the thread was idle for the last interval.
 * The first scavenges after a burst rarely shrink it (V8 measures the rate over its last
 * collections' samples, which reach back into the burst), the next one does; a thread that stays idle but keeps
 * allocating (V8 then keeps the size) is asked again less and less often.
 */
export class TrimSchedule {
  private failures = 0;
  private wait = 0;

  /** Called once per interval with what was read; true: scavenge now. */
  next(r: YoungGenerationReading): boolean {
    if (r.youngBytes <= SMALLEST_YOUNG_BYTES) {
      this.failures = 0;
      this.wait = 0;
      return false;
    }
    if (this.wait > 0) {
      this.wait--;
      return false;
    }
    return r.utilization < IDLE_UTILIZATION;
  }

  /** What a scavenge did: the young generation's size before and after. */
  scavenged(before: number, after: number): void {
    if (after < before || after <= SMALLEST_YOUNG_BYTES) {
      this.failures = 0;
      return;
    }
    // The first misses are expected (see above): retry at once; then back off.
    this.failures++;
    this.wait = this.failures <= QUICK_RETRIES ? 0 : Math.min(2 ** (this.failures - QUICK_RETRIES), MAX_BACKOFF_INTERVALS);
  }
}

/** What the trimmer reads and does: this thread's V8 heap, or a test's. */
export interface ThreadHeap {
  youngBytes(): number;
  /** The event loop's utilization since the previous call (0-1). */
  utilization(): number;
  /** A young-generation collection, or undefined where gc is not exposed. */
  scavenge: (() => void) | undefined;
}

export function thisThreadHeap(): ThreadHeap {
  let last = performance.eventLoopUtilization();
  const gc = (globalThis as { gc?: (o?: { type: 'minor' | 'major' }) => void }).gc;
  return {
    youngBytes: () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0,
    utilization: () => {
      const now = performance.eventLoopUtilization();
      const u = performance.eventLoopUtilization(now, last).utilization;
      last = now;
      return u;
    },
    scavenge: gc && (() => gc({ type: 'minor' })),
  };
}

export interface YoungGenerationTrimmer {
  stop(): void;
}

/** Looks every intervalMs; scavenges while the young generation is above its smallest and the thread idle. */
export function trimYoungGenerationWhenIdle(opts: { logger: Logger; intervalMs?: number; heap?: ThreadHeap }): YoungGenerationTrimmer {
  const heap = opts.heap ?? thisThreadHeap();
  const scavenge = heap.scavenge;
  if (!scavenge) {
    opts.logger.info('the young generation is not given back when idle: node runs without --expose-gc');
    return { stop: () => {} };
  }
  const schedule = new TrimSchedule();
  const timer = setInterval(() => {
    const reading = { youngBytes: heap.youngBytes(), utilization: heap.utilization() };
    if (!schedule.next(reading)) return;
    scavenge();
    // The scavenge's own time is not the thread's work: the next interval starts after it.
    heap.utilization();
    const after = heap.youngBytes();
    schedule.scavenged(reading.youngBytes, after);
    opts.logger.debug({ youngBytes: reading.youngBytes, after }, 'idle: young generation scavenged');
  }, opts.intervalMs ?? TRIM_INTERVAL_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
