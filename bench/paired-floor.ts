// The floor of one propagation trial, measured right beside it on the same machine: the same
// number of writes of the same kind into the same descendant namespaces, made by a bare loop with
// HNC's identity, client and concurrency, and seen by the same watches as HNC's copies. A floor
// measured once per run (before the cold start) and trials minutes later see different machines
// when other jobs share it. Each trial runs between two floors of its own, one right before and
// one right after it, and is compared with their mean: drift over the three cancels, and the ratio
// to each floor alone shows what order effect is left (docs/benchmarks.md, "What is measured").
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
  update: Timing;
  delete: Timing;
  /** Writes the loop made (creates, updates and deletes). */
  writes: number;
}

/**
 * Creates one object of `kind` named `name` in each namespace at `concurrency`, until the watches
 * see them all; replaces each with `updated`'s content (a PUT guarded by the resourceVersion the
 * create answered, as HNC updates a copy), until the watches see every one with the new content;
 * then deletes them, until the watches see them all gone. Deletes name the uid each create
 * answered (as HNC's deletes do), so nothing but the floor's own objects can go.
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
  /** The content after the update, and its mark as the watches read it (bench/tracker.ts, `contentMark`). */
  updated: { like: Record<string, unknown>; mark: string };
  timeoutMs: number;
  /**
   * A name of its own in each namespace (`name`-i): HNC's Go manager, told a source changed, looks
   * up the same name in every descendant and deletes one its cache does not have yet as a stale
   * copy, so same-named floor objects in nested namespaces were deleted under the floor (docs/benchmarks.md).
   */
  distinctNames?: boolean;
}): Promise<FloorRun> {
  const { writes, tracker, kind, name, namespaces, concurrency, timeoutMs } = args;
  const names = new Map(namespaces.map((ns, i) => [ns, args.distinctNames ? `${name}-${i}` : name]));
  const nameIn = (ns: string) => names.get(ns)!;
  const key = (ns: string) => `${kind}/${ns}/${nameIn(ns)}`;
  const body = (ns: string) => floorBody(nameIn(ns), args.like);
  const updated = (ns: string) => floorBody(nameIn(ns), args.updated.like) as { metadata: Record<string, unknown> };
  const stored = new Map<string, { uid?: string; resourceVersion?: string } | undefined>();
  const timed = async (present: boolean, write: (ns: string) => Promise<void>, mark?: string): Promise<Timing> => {
    const arrivals = tracker.arrivals(namespaces.map(key), present, true, mark);
    try {
      const t0 = performance.now();
      await pool(namespaces, concurrency, write);
      let timer: NodeJS.Timeout | undefined;
      const last = await Promise.race([
        arrivals.done,
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () =>
              reject(
                new Error(
                  `the floor's ${present ? (mark ? 'updates' : 'creates') : 'deletes'}: ${arrivals.missing} not seen within ${timeoutMs} ms`,
                ),
              ),
            timeoutMs,
          );
        }),
      ]).finally(() => clearTimeout(timer));
      return { allMs: last - t0, perNamespaceMs: namespaces.map((ns) => arrivals.at.get(key(ns))! - t0) };
    } finally {
      arrivals.release();
    }
  };
  type Answer = { metadata?: { uid?: string; resourceVersion?: string } };
  const create = await timed(true, async (ns) => {
    stored.set(ns, (await writes.create<Answer>(collection(kind, ns), body(ns), { answer: 'metadata' }))?.metadata);
  });
  const update = await timed(
    true,
    async (ns) => {
      const rv = stored.get(ns)?.resourceVersion;
      const u = updated(ns);
      const put = { ...u, metadata: { ...u.metadata, resourceVersion: rv } };
      await writes.replace<Answer>(`${collection(kind, ns)}/${nameIn(ns)}`, put, { answer: 'metadata' });
    },
    args.updated.mark,
  );
  const del = await timed(false, async (ns) => {
    await writes.delete(`${collection(kind, ns)}/${nameIn(ns)}`, { preconditions: { uid: stored.get(ns)?.uid } });
  });
  return { create, update, delete: del, writes: 3 * namespaces.length };
}

export type Phase = 'create' | 'update' | 'delete';
export const PHASES: readonly Phase[] = ['create', 'update', 'delete'];

/** One phase (create, update or delete) of a trial between its two floors: HNC's times ÷ theirs. */
export interface PairedPhase {
  /** `firstMs`: the first object in place (for HNC, from the source's write: its watch event and planning before the first copy). */
  hnc: { allMs: number; p50Ms: number; p99Ms: number; firstMs: number };
  /** The mean of the floor before and the floor after. */
  floor: { allMs: number; p50Ms: number; p99Ms: number; firstMs: number };
  /** Every copy in place ÷ every floor object in place. */
  ratio: number;
  /** The per-namespace p50 and p99 ÷ the floor's. */
  p50Ratio: number;
  p99Ratio: number;
  /** Every copy ÷ the floor before alone, and ÷ the floor after alone: the order effect, shown. */
  ratioBefore: number;
  ratioAfter: number;
}

function shape(t: Timing): { allMs: number; p50Ms: number; p99Ms: number; firstMs: number } {
  const s = [...t.perNamespaceMs].sort((a, b) => a - b);
  return {
    allMs: round(t.allMs, 1),
    p50Ms: round(percentile(s, 0.5), 1),
    p99Ms: round(percentile(s, 0.99), 1),
    firstMs: round(s[0] ?? NaN, 1),
  };
}

/** HNC's phase against the floors right before and right after it (their mean: linear drift cancels). */
export function pairPhase(hnc: Timing, before: Timing, after: Timing = before): PairedPhase {
  const h = shape(hnc);
  const b = shape(before);
  const a = shape(after);
  const f = {
    allMs: round((b.allMs + a.allMs) / 2, 1),
    p50Ms: round((b.p50Ms + a.p50Ms) / 2, 1),
    p99Ms: round((b.p99Ms + a.p99Ms) / 2, 1),
    firstMs: round((b.firstMs + a.firstMs) / 2, 1),
  };
  return {
    hnc: h,
    floor: f,
    ratio: round(h.allMs / f.allMs, 3),
    p50Ratio: round(h.p50Ms / f.p50Ms, 3),
    p99Ratio: round(h.p99Ms / f.p99Ms, 3),
    ratioBefore: round(h.allMs / b.allMs, 3),
    ratioAfter: round(h.allMs / a.allMs, 3),
  };
}

/** What one run (a floor or a trial) cost, in CPU ms of HNC and of the API server, and HNC's GC pauses. */
export interface RunCost {
  hncCpuMs: number;
  hncGcMs: number;
  apiserverCpuMs: number;
}

export interface PairedTrial {
  kind: SourceKind;
  create: PairedPhase;
  update: PairedPhase;
  delete: PairedPhase;
  /** The floor before, the trial, the floor after: what each cost (a trial's leftovers show in the floor after it). */
  cost?: { before: RunCost; trial: RunCost; after: RunCost };
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
  /** Against the floor before alone and the floor after alone. */
  ratioBefore: RatioSummary;
  ratioAfter: RatioSummary;
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

export function summarizePairs(trials: readonly PairedTrial[], phase: Phase): PairedSummary {
  const of = (f: (p: PairedPhase) => number) => ratios(trials.map((t) => f(t[phase])));
  return {
    ratio: of((p) => p.ratio),
    p50Ratio: of((p) => p.p50Ratio),
    p99Ratio: of((p) => p.p99Ratio),
    ratioBefore: of((p) => p.ratioBefore),
    ratioAfter: of((p) => p.ratioAfter),
  };
}
