import { describe, expect, it } from 'vitest';
import { limiter, mapLimit } from './concurrency.js';

describe('concurrency', () => {
  it('limiter: never more calls in flight than the limit, every call answered in turn', async () => {
    const limit = limiter(3);
    let inFlight = 0;
    let most = 0;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        limit(async () => {
          inFlight++;
          most = Math.max(most, inFlight);
          await new Promise<void>((resolve) => setImmediate(resolve));
          inFlight--;
          if (i === 7) throw new Error('seven');
          return i;
        }).catch((err: unknown) => (err as Error).message),
      ),
    );
    expect(most).toBe(3);
    expect(results[7]).toBe('seven');
    expect(results.filter((r) => typeof r === 'number')).toHaveLength(19);
  });

  it('mapLimit: the answers in the order of the items, whatever order they finish in', async () => {
    const items = [5, 1, 4, 2, 3];
    const out = await mapLimit(items, 2, async (n) => {
      for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve));
      return n * 10;
    });
    expect(out).toEqual([50, 10, 40, 20, 30]);
  });
});
