import { describe, expect, it } from 'vitest';
import { Reachability } from './reachability.js';

describe('Reachability', () => {
  it('is cut off only after failures with no answer for the whole window', () => {
    let t = 0;
    const r = new Reachability(5_000, () => t);
    expect([r.failing, r.cutOff]).toEqual([false, false]);
    r.failed();
    t = 4_999;
    r.failed();
    expect([r.failing, r.cutOff]).toEqual([true, false]);
    t = 5_000;
    expect(r.cutOff).toBe(true);
    // One answer ends it, and the window starts again with the next failure.
    r.answered();
    expect([r.failing, r.cutOff]).toEqual([false, false]);
    t = 20_000;
    r.failed();
    expect(r.cutOff).toBe(false);
    t = 25_000;
    expect(r.cutOff).toBe(true);
  });

  it('is never cut off by time alone: an idle process that answered last is fine', () => {
    let t = 0;
    const r = new Reachability(5_000, () => t);
    r.answered();
    t = 60_000;
    expect(r.cutOff).toBe(false);
    expect(r.quietMs).toBe(60_000);
  });
});
