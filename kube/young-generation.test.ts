// The idle trimmer of V8's young generation (kube/young-generation.ts): when it scavenges, how it
// backs off, and, in a node process with the image's flags, that the young generation a burst
// grew really goes back to its smallest size once the thread is idle.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createLogger } from './log.js';
import {
  MAX_BACKOFF_INTERVALS,
  QUICK_RETRIES,
  SMALLEST_YOUNG_BYTES,
  TrimSchedule,
  trimYoungGenerationWhenIdle,
  type ThreadHeap,
} from './young-generation.js';

const MB = 1024 * 1024;
const grown = 16 * MB;
const idle = { youngBytes: grown, utilization: 0.01 };
/** A young generation given back: V8 14 (Node 26) goes down to 256 KB once idle. */
const small = SMALLEST_YOUNG_BYTES / 2;

function lines() {
  const out: { msg: string; level: number }[] = [];
  const logger = createLogger({
    level: 'debug',
    format: 'json',
    destination: { write: (l: string) => out.push(JSON.parse(l) as { msg: string; level: number }) },
  });
  return { logger, out };
}

describe('TrimSchedule', () => {
  it('scavenges a grown young generation of an idle thread, never a busy one or a small one', () => {
    const s = new TrimSchedule();
    expect(s.next({ youngBytes: grown, utilization: 0.5 })).toBe(false);
    expect(s.next({ youngBytes: SMALLEST_YOUNG_BYTES, utilization: 0 })).toBe(false);
    expect(s.next(idle)).toBe(true);
  });

  it('retries at once twice (the first scavenges after a burst rarely shrink), then backs off up to the cap', () => {
    const s = new TrimSchedule();
    const waits: number[] = [];
    for (let attempt = 0; attempt < 10; attempt++) {
      let skipped = 0;
      while (!s.next(idle)) skipped++;
      waits.push(skipped);
      s.scavenged(grown, grown);
    }
    expect(QUICK_RETRIES).toBe(2);
    expect(waits).toEqual([0, 0, 0, 2, 4, 8, 16, MAX_BACKOFF_INTERVALS, MAX_BACKOFF_INTERVALS, MAX_BACKOFF_INTERVALS]);
  });

  it('starts over once the young generation shrank or is small again', () => {
    const s = new TrimSchedule();
    for (let i = 0; i < 5; i++) {
      while (!s.next(idle));
      s.scavenged(grown, grown);
    }
    expect(s.next(idle)).toBe(false); // backing off
    expect(s.next({ youngBytes: small, utilization: 0 })).toBe(false);
    expect(s.next(idle)).toBe(true); // a new burst grew it again: asked at once
    s.scavenged(grown, 4 * MB);
    expect(s.next({ youngBytes: 4 * MB, utilization: 0 })).toBe(true);
  });
});

describe('trimYoungGenerationWhenIdle', () => {
  it('says once that it cannot work without gc exposed, and does nothing', () => {
    const { logger, out } = lines();
    const heap: ThreadHeap = { youngBytes: () => grown, utilization: () => 0, scavenge: undefined };
    trimYoungGenerationWhenIdle({ logger, heap, intervalMs: 1 }).stop();
    expect(out.map((l) => l.msg)).toEqual(['the young generation is not given back when idle: node runs without --expose-gc']);
  });

  it('scavenges while idle until the young generation is small, then stops asking', async () => {
    const { logger, out } = lines();
    let young = grown;
    let scavenges = 0;
    const heap: ThreadHeap = {
      youngBytes: () => young,
      utilization: () => 0,
      // As V8 14 does: the second scavenge after the burst finds the rate low and shrinks it to
      // 1 MB, the third to its smallest.
      scavenge: () => {
        scavenges++;
        if (scavenges === 2) young = MB;
        if (scavenges === 3) young = small;
      },
    };
    const trimmer = trimYoungGenerationWhenIdle({ logger, heap, intervalMs: 5 });
    await expect.poll(() => young, { timeout: 5_000 }).toBe(small);
    await new Promise((r) => setTimeout(r, 50));
    trimmer.stop();
    expect(scavenges).toBe(3);
    expect(out.filter((l) => l.msg === 'idle: young generation scavenged')).toHaveLength(3);
  });
});

// A real node with the image's young-generation flags: a burst grows the young generation to its
// maximum, and once idle the trimmer takes it back, in steps, to its smallest size.
const script = `
import { getHeapSpaceStatistics } from 'node:v8';
import { SMALLEST_YOUNG_BYTES, trimYoungGenerationWhenIdle } from './kube/young-generation.ts';
import { createLogger } from './kube/log.ts';
const young = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
const kept = new Array(20000);
for (let i = 0; i < 1e6; i++) kept[i % 20000] = { i, s: 'x' + i, a: [i, i] };
const grown = young();
const trimmer = trimYoungGenerationWhenIdle({ logger: createLogger({ level: 'silent' }), intervalMs: 200 });
const t0 = Date.now();
while (young() > SMALLEST_YOUNG_BYTES && Date.now() - t0 < 30000) await new Promise((r) => setTimeout(r, 50));
trimmer.stop();
console.log(JSON.stringify({ grown, after: young(), kept: kept.length }));
`;

describe('in a node process with --expose-gc --max-semi-space-size=8', () => {
  it('gives the grown young generation back once idle', { timeout: 60_000 }, async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--expose-gc', '--max-semi-space-size=8', '--import', 'tsx', '--input-type=module', '-e', script],
      { cwd: join(import.meta.dirname, '..') },
    );
    const out = JSON.parse(stdout) as { grown: number; after: number };
    expect(out.grown).toBeGreaterThanOrEqual(8 * MB);
    expect(out.after).toBeLessThanOrEqual(SMALLEST_YOUNG_BYTES);
  });
});
