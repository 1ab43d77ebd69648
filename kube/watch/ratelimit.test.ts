import { afterEach, describe, expect, it, vi } from 'vitest';
import { Backoff, backoffDelay, sleep, TokenBucket } from './ratelimit.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('backoffDelay', () => {
  it('grows exponentially up to the cap', () => {
    const opts = { initialMs: 5, maxMs: 1000 };
    expect([0, 1, 2, 3, 10, 1e6].map((n) => backoffDelay(n, opts))).toEqual([5, 10, 20, 40, 1000, 1000]);
  });

  it('spreads by the jitter fraction', () => {
    const opts = { initialMs: 1000, maxMs: 1000, jitter: 0.5 };
    expect(backoffDelay(0, { ...opts, random: () => 0 })).toBe(500);
    expect(backoffDelay(0, { ...opts, random: () => 0.5 })).toBe(1000);
    expect(backoffDelay(0, { ...opts, random: () => 0.999999 })).toBe(1500);
  });
});

describe('Backoff', () => {
  it('grows on repeated failures and starts over after a healthy period', () => {
    let now = 0;
    const b = new Backoff({ initialMs: 100, maxMs: 1000, resetAfterMs: 5000, now: () => now });
    expect([b.next(), b.next(), b.next()]).toEqual([100, 200, 400]);
    now += 4999;
    expect(b.next()).toBe(800);
    now += 5001;
    expect(b.next()).toBe(100);
    b.reset();
    expect(b.failures).toBe(0);
    expect(b.next()).toBe(100);
  });
});

describe('TokenBucket', () => {
  it('allows a burst, then refills at qps', () => {
    let now = 0;
    const t = new TokenBucket({ qps: 2, burst: 3, now: () => now });
    expect([t.tryTake(), t.tryTake(), t.tryTake(), t.tryTake()]).toEqual([true, true, true, false]);
    now += 500;
    expect([t.tryTake(), t.tryTake()]).toEqual([true, false]);
    now += 10_000;
    expect([t.tryTake(), t.tryTake(), t.tryTake(), t.tryTake()]).toEqual([true, true, true, false]);
  });

  it('reserve() hands out future slots in order', () => {
    const now = 0;
    const t = new TokenBucket({ qps: 10, burst: 1, now: () => now });
    expect([t.reserve(), t.reserve(), t.reserve()]).toEqual([0, 100, 200]);
  });

  it('take() waits for a token, and gives it back when aborted', async () => {
    vi.useFakeTimers();
    const t = new TokenBucket({ qps: 10, burst: 1 });
    await t.take();
    const took: number[] = [];
    const start = Date.now();
    const second = t.take().then(() => took.push(Date.now() - start));
    await vi.advanceTimersByTimeAsync(99);
    expect(took).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    await second;
    expect(took).toEqual([100]);

    const ac = new AbortController();
    const third = t.take(ac.signal);
    ac.abort(new Error('cancelled'));
    await expect(third).rejects.toThrow('cancelled');
    // The aborted caller's slot went back: the next one waits 100 ms, not 200.
    const fourth = t.take();
    await vi.advanceTimersByTimeAsync(100);
    await fourth;
  });

  it('rejects nonsense settings', () => {
    expect(() => new TokenBucket({ qps: 0, burst: 1 })).toThrow();
    expect(() => new TokenBucket({ qps: 1, burst: 0 })).toThrow();
  });
});

describe('sleep', () => {
  it('resolves after the delay or rejects on abort', async () => {
    vi.useFakeTimers();
    const done = vi.fn();
    void sleep(50).then(done);
    await vi.advanceTimersByTimeAsync(49);
    expect(done).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(done).toHaveBeenCalled();
    const ac = new AbortController();
    const p = sleep(1000, ac.signal);
    ac.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
    await expect(sleep(1, ac.signal)).rejects.toThrow('stop');
  });
});
