import { afterEach, describe, expect, it, vi } from 'vitest';
import { WorkQueue } from './workqueue.js';
import type { QueueHandler } from './workqueue.js';

/** A promise the test resolves by hand, to hold a handler mid-flight. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** Lets queued microtasks and resolved promises run (the queue starts handlers from a microtask). */
const settle = () => vi.advanceTimersByTimeAsync(0);

afterEach(() => {
  vi.useRealTimers();
});

describe('WorkQueue', () => {
  it('holds a key once however often it is added', async () => {
    vi.useFakeTimers();
    const q = new WorkQueue();
    q.add('a');
    q.add('b');
    q.add('a');
    q.add('a');
    expect(q.length).toBe(2);
    const seen: string[] = [];
    q.run((key) => {
      seen.push(key);
    });
    await settle();
    expect(seen).toEqual(['a', 'b']);
    expect(q.stats()).toMatchObject({ depth: 0, processing: 0, adds: 2 });
  });

  it('hands each reconcile its own request id (the rid of its log lines), a new one when the key runs again', async () => {
    const q = new WorkQueue();
    const seen: Array<[string, string]> = [];
    let reAdded = false;
    q.add('a');
    q.add('b');
    const done = new Promise<void>((resolve) =>
      q.run(async (key, rid) => {
        seen.push([key, rid]);
        await new Promise((r) => setTimeout(r, 1));
        if (seen.length === 2 && !reAdded) {
          reAdded = true;
          q.add('a'); // a second reconcile of the same key gets an id of its own
        }
        if (seen.length === 3) resolve();
      }, 2),
    );
    await done;
    await q.shutdown();
    expect(seen.map(([k]) => k)).toEqual(['a', 'b', 'a']);
    for (const [, rid] of seen) expect(rid).toMatch(/^[0-9a-f]{8}$/);
    expect(new Set(seen.map(([, rid]) => rid)).size).toBe(3);
  });

  it('never runs the same key twice at once, and re-runs it once if re-added while running', async () => {
    vi.useFakeTimers();
    const q = new WorkQueue();
    const g = gate();
    let running = 0;
    let maxRunning = 0;
    const runs: string[] = [];
    q.run(async (key) => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      runs.push(key);
      if (runs.length === 1) await g.promise;
      running--;
    }, 4);
    q.add('a');
    await settle();
    expect(runs).toEqual(['a']);
    // Re-added three times while its handler runs, with free workers available.
    q.add('a');
    q.add('a');
    q.add('a');
    await settle();
    expect(runs).toEqual(['a']);
    expect(q.stats()).toMatchObject({ processing: 1, depth: 0 });
    g.open();
    await settle();
    expect(runs).toEqual(['a', 'a']);
    expect(maxRunning).toBe(1);
  });

  it('runs at most `workers` handlers at once', async () => {
    vi.useFakeTimers();
    const q = new WorkQueue();
    const gates = new Map<string, ReturnType<typeof gate>>();
    let running = 0;
    let maxRunning = 0;
    q.run(async (key) => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      const g = gate();
      gates.set(key, g);
      await g.promise;
      running--;
    }, 3);
    for (let i = 0; i < 10; i++) q.add(`k${i}`);
    await settle();
    expect(running).toBe(3);
    expect(q.length).toBe(7);
    // Finish one handler at a time; each frees a slot for the next key.
    for (let done = 0; done < 10; done++) {
      const [key, g] = [...gates][0]!;
      gates.delete(key);
      g.open();
      await settle();
      expect(running).toBeLessThanOrEqual(3);
    }
    expect(maxRunning).toBe(3);
    expect(q.length).toBe(0);
    expect(running).toBe(0);
  });

  it('retries a failing key with exponential backoff and forgets it on success', async () => {
    vi.useFakeTimers();
    const error = vi.fn();
    const q = new WorkQueue({ itemBackoff: { initialMs: 100, maxMs: 1000 }, logger: { debug: vi.fn(), warn: vi.fn(), error } });
    const times: number[] = [];
    let failuresLeft = 4;
    const start = Date.now();
    q.run(() => {
      times.push(Date.now() - start);
      if (failuresLeft-- > 0) throw new Error('not yet');
    });
    q.add('a');
    await vi.advanceTimersByTimeAsync(5000);
    // Attempts at 0, then +100, +200, +400, +800.
    expect(times).toEqual([0, 100, 300, 700, 1500]);
    expect(error).toHaveBeenCalledTimes(4);
    expect(q.numRequeues('a')).toBe(0);
    expect(q.stats().retries).toBe(4);
  });

  it('caps the per-key backoff at maxMs', async () => {
    vi.useFakeTimers();
    const q = new WorkQueue({ itemBackoff: { initialMs: 100, maxMs: 300 } });
    const times: number[] = [];
    const start = Date.now();
    q.run(() => {
      times.push(Date.now() - start);
      if (times.length < 5) return { requeue: true };
    });
    q.add('a');
    await vi.advanceTimersByTimeAsync(5000);
    expect(times).toEqual([0, 100, 300, 600, 900]);
  });

  it('limits retries of all keys together with a token bucket', async () => {
    vi.useFakeTimers();
    // Per-key backoff is negligible; the bucket allows 2 at once, then 10 per second.
    const q = new WorkQueue({ itemBackoff: { initialMs: 1, maxMs: 1 }, retryLimit: { qps: 10, burst: 2 } });
    const retries: number[] = [];
    const start = Date.now();
    const tried = new Set<string>();
    q.run((key) => {
      if (!tried.has(key)) {
        tried.add(key);
        throw new Error('first try fails');
      }
      retries.push(Date.now() - start);
    }, 10);
    for (let i = 0; i < 5; i++) q.add(`k${i}`);
    await vi.advanceTimersByTimeAsync(2000);
    expect(retries).toEqual([1, 1, 100, 200, 300]);
  });

  it('requeueAfter looks again later without backoff and resets failures', async () => {
    vi.useFakeTimers();
    const q = new WorkQueue({ itemBackoff: { initialMs: 100, maxMs: 1000 } });
    const times: number[] = [];
    const start = Date.now();
    const results = [() => Promise.reject(new Error('x')), () => ({ requeueAfter: 5000 }), () => undefined];
    q.run(() => {
      times.push(Date.now() - start);
      return results[times.length - 1]!();
    });
    q.add('a');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(times).toEqual([0, 100, 5100]);
    expect(q.numRequeues('a')).toBe(0);
  });

  it('addAfter keeps the earliest time for a key', async () => {
    vi.useFakeTimers();
    const q = new WorkQueue();
    const times: number[] = [];
    const start = Date.now();
    q.run(() => {
      times.push(Date.now() - start);
    });
    q.addAfter('a', 500);
    q.addAfter('a', 200);
    q.addAfter('a', 900);
    expect(q.stats().delayed).toBe(1);
    await vi.advanceTimersByTimeAsync(2000);
    expect(times).toEqual([200]);
  });

  it('shutdown() drops the backlog, ignores adds and resolves when running handlers finish', async () => {
    vi.useFakeTimers();
    const q = new WorkQueue();
    const g = gate();
    const started: string[] = [];
    let finished = 0;
    const handler: QueueHandler = async (key) => {
      started.push(key);
      await g.promise;
      finished++;
    };
    q.run(handler, 2);
    for (const k of ['a', 'b', 'c', 'd']) q.add(k);
    q.addAfter('e', 10);
    await settle();
    expect(started).toEqual(['a', 'b']);
    let drained = false;
    const done = q.shutdown().then(() => (drained = true));
    q.add('f');
    await settle();
    expect(drained).toBe(false);
    expect(q.length).toBe(0);
    g.open();
    await done;
    expect(finished).toBe(2);
    await vi.advanceTimersByTimeAsync(100);
    expect(started).toEqual(['a', 'b']);
    expect(q.shuttingDown).toBe(true);
  });

  it('shutdown() of an idle queue resolves at once', async () => {
    const q = new WorkQueue();
    q.run(() => {});
    await q.shutdown();
    await q.shutdown();
  });

  it('lets the event loop in between slices of handlers that finish without I/O', async () => {
    const q = new WorkQueue();
    let done = 0;
    const busy = (ms: number) => {
      const until = performance.now() + ms;
      while (performance.now() < until);
    };
    for (let i = 0; i < 100; i++) q.add(`k${i}`);
    const all = new Promise<void>((resolve) =>
      q.run(() => {
        busy(0.5);
        if (++done === 100) resolve();
      }, 4),
    );
    // Work from outside the queue (an admission review, a watch event) gets a turn long before
    // the 50 ms of handlers are over; without slices every handler would run first.
    const seenAt = await new Promise<number>((resolve) => setImmediate(() => resolve(done)));
    expect(seenAt).toBeGreaterThan(0);
    expect(seenAt).toBeLessThan(100);
    await all;
    expect(done).toBe(100);
  });

  it('reports metrics through hooks', async () => {
    vi.useFakeTimers();
    const metrics = { add: vi.fn(), retry: vi.fn(), depth: vi.fn(), done: vi.fn() };
    const q = new WorkQueue({ metrics, itemBackoff: { initialMs: 10, maxMs: 10 } });
    let first = true;
    q.run(() => {
      if (first) {
        first = false;
        throw new Error('once');
      }
    });
    q.add('a');
    q.add('a');
    await vi.advanceTimersByTimeAsync(50);
    expect(metrics.add).toHaveBeenCalledTimes(2); // the first add and the retry; the duplicate is not counted
    expect(metrics.retry).toHaveBeenCalledWith('a', 10);
    expect(metrics.done).toHaveBeenCalledWith('a', expect.any(Number), true);
    expect(metrics.done).toHaveBeenLastCalledWith('a', expect.any(Number), false);
    expect(metrics.depth).toHaveBeenLastCalledWith(0);
  });
});
