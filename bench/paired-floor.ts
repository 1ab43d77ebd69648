// The floor of one propagation trial, measured right beside it on the same machine: the same
// number of writes of the same kind into the same descendant namespaces, made by a bare loop with
// HNC's identity, client and concurrency, and seen by the same watches as HNC's copies. A floor
// measured once per run (before the cold start) and trials minutes later see different machines
// when other jobs share it; a floor beside each trial, taken in alternating order, sees the same
// one (docs/benchmarks.md, "What is measured").
import { SelectorAnnotation } from '../core/api/constants.js';
import type { Writes } from '../kube/writes.js';
import { collection, type Tracker } from './tracker.js';
import type { SourceKind } from './topology.js';
import { percentile, pool, round } from './util.js';

/** One of the floor's objects: like a source, labelled for the floor's watch, and never propagated. */
export function floorBody(name: string, like: Record<string, unknown>): Record<string, unknown> {
  const metadata = { name, labels: { bench: 'floor' }, annotations: { [SelectorAnnotation.none]: 'true' } };
  return { ...like, metadata };
}

/** How long every object took to be in place, and each namespace's object (ms from the first request). */
export interface Timing {
  allMs: number;
  perNamespaceMs: number[];
}

export interface FloorRun {
  create: Timing;
  delete: Timing;
  /** Writes the loop made (creates and deletes). */
  writes: number;
}

/**
 * Creates one object of `kind` named `name` in each namespace at `concurrency`, until the watches
 * see them all, then deletes them, until the watches see them all gone. Deletes name the uid each
 * create answered (as HNC's deletes do), so nothing but the floor's own objects can go.
 */
export async function runFloor(args: {
  writes: Writes;
  tracker: Tracker;
  kind: SourceKind;
  name: string;
  namespaces: readonly string[];
  concurrency: number;
  /** The content of each object (a source's body: the same size and kind of write as a copy's). */
  like: Record<string, unknown>;
  timeoutMs: number;
}): Promise<FloorRun> {
  const { writes, tracker, kind, name, namespaces, concurrency, timeoutMs } = args;
  const key = (ns: string) => `${kind}/${ns}/${name}`;
  const body = floorBody(name, args.like);
  const uids = new Map<string, string | undefined>();
  const timed = async (present: boolean, write: (ns: string) => Promise<void>): Promise<Timing> => {
    const arrivals = tracker.arrivals(namespaces.map(key), present, true);
    try {
      const t0 = performance.now();
      await pool(namespaces, concurrency, write);
      let timer: NodeJS.Timeout | undefined;
      const last = await Promise.race([
        arrivals.done,
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`the floor's ${present ? 'creates' : 'deletes'}: ${arrivals.missing} not seen within ${timeoutMs} ms`)),
            timeoutMs,
          );
        }),
      ]).finally(() => clearTimeout(timer));
      return { allMs: last - t0, perNamespaceMs: namespaces.map((ns) => arrivals.at.get(key(ns))! - t0) };
    } finally {
      arrivals.release();
    }
  };
  const create = await timed(true, async (ns) => {
    const stored = await writes.create<{ metadata?: { uid?: string } }>(collection(kind, ns), body, { answer: 'metadata' });
    uids.set(ns, stored?.metadata?.uid);
  });
  const del = await timed(false, async (ns) => {
    await writes.delete(`${collection(kind, ns)}/${name}`, { preconditions: { uid: uids.get(ns) } });
  });
  return { create, delete: del, writes: 2 * namespaces.length };
}

/** One phase (create or delete) of a trial beside its floor: HNC's times ÷ the floor's. */
export interface PairedPhase {
  hnc: { allMs: number; p50Ms: number; p99Ms: number };
  floor: { allMs: number; p50Ms: number; p99Ms: number };
  /** Every copy in place ÷ every floor object in place. */
  ratio: number;
  /** The per-namespace p50 and p99 ÷ the floor's. */
  p50Ratio: number;
  p99Ratio: number;
}

function shape(t: Timing): { allMs: number; p50Ms: number; p99Ms: number } {
  const s = [...t.perNamespaceMs].sort((a, b) => a - b);
  return { allMs: round(t.allMs, 1), p50Ms: round(percentile(s, 0.5), 1), p99Ms: round(percentile(s, 0.99), 1) };
}

export function pairPhase(hnc: Timing, floor: Timing): PairedPhase {
  const h = shape(hnc);
  const f = shape(floor);
  return {
    hnc: h,
    floor: f,
    ratio: round(h.allMs / f.allMs, 3),
    p50Ratio: round(h.p50Ms / f.p50Ms, 3),
    p99Ratio: round(h.p99Ms / f.p99Ms, 3),
  };
}

export interface PairedTrial {
  kind: SourceKind;
  /** Which ran first: drift over time (another job starting) then counts against each side in turn. */
  order: 'floor-first' | 'trial-first';
  create: PairedPhase;
  delete: PairedPhase;
}

/** Ratios over the trials: the median (the target's figure), the p99 (with ten trials, the worst) and the best. */
export interface RatioSummary {
  median: number;
  p99: number;
  min: number;
}

export interface PairedSummary {
  ratio: RatioSummary;
  p50Ratio: RatioSummary;
  p99Ratio: RatioSummary;
}

function ratios(values: number[]): RatioSummary {
  const s = [...values].sort((a, b) => a - b);
  return { median: round(median(s), 3), p99: round(percentile(s, 0.99), 3), min: round(s[0] ?? NaN, 3) };
}

/** The median of sorted values (the mean of the middle two for an even count). */
export function median(sorted: readonly number[]): number {
  if (!sorted.length) return NaN;
  const m = sorted.length >> 1;
  return sorted.length % 2 ? sorted[m]! : (sorted[m - 1]! + sorted[m]!) / 2;
}

export function summarizePairs(trials: readonly PairedTrial[], phase: 'create' | 'delete'): PairedSummary {
  const of = (f: (p: PairedPhase) => number) => ratios(trials.map((t) => f(t[phase])));
  return { ratio: of((p) => p.ratio), p50Ratio: of((p) => p.p50Ratio), p99Ratio: of((p) => p.p99Ratio) };
}
