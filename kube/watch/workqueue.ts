// A work queue of string keys with client-go's guarantees:
// - a key waiting in the queue is held once, however often it is added (dedup);
// - a key is never handed to two handlers at once; one added while being processed is queued
//   again, once, when its handler finishes (so the handler always sees the latest state);
// - failures are retried with per-key exponential backoff, and all retries together are held to
//   a token bucket so a widespread failure cannot turn into a retry storm.
import { backoffDelay, TokenBucket } from './ratelimit.js';
import type { BackoffOptions, TokenBucketOptions } from './ratelimit.js';
import { newRequestId } from '../log-context.js';
import { noopLogger } from './logger.js';
import type { Logger } from './logger.js';

/**
 * What a handler may ask for:
 * - nothing (or undefined): done, the key's failure count is forgotten;
 * - `requeueAfter: ms`: done for now, look again after `ms` (no backoff, failures forgotten);
 * - `requeue: true`: not done, retry with backoff as if it had thrown (without logging an error).
 * Throwing also retries with backoff, and logs the error.
 */
export type ReconcileResult = void | undefined | { requeue?: boolean; requeueAfter?: number };
/** `rid` is this reconcile's own id, for the handler's log lines (kube/log-context.ts). */
export type QueueHandler = (key: string, rid: string) => ReconcileResult | Promise<ReconcileResult>;

/** Optional hooks for metrics (e.g. prom-client counters and gauges). */
export interface QueueMetrics {
  /** A key entered the queue (adds of a key already queued are not counted). */
  add?(key: string): void;
  /** A key was scheduled for a retry after `delayMs`. */
  retry?(key: string, delayMs: number): void;
  /** The number of keys waiting to be processed changed. */
  depth?(depth: number): void;
  /** A handler finished, after `durationMs`; `failed` if it threw. */
  done?(key: string, durationMs: number, failed: boolean): void;
}

export interface WorkQueueOptions {
  /** For logs. */
  name?: string;
  /** Per-key retry backoff; client-go's default is 5 ms doubling up to 1000 s. */
  itemBackoff?: BackoffOptions;
  /** Overall limit on retries; client-go's default is 10 qps, burst 100. `false` disables it. */
  retryLimit?: TokenBucketOptions | false;
  logger?: Logger;
  metrics?: QueueMetrics;
}

export interface QueueStats {
  /** Keys waiting to be processed. */
  depth: number;
  /** Keys being processed now. */
  processing: number;
  /** Keys scheduled for later by addAfter or a retry. */
  delayed: number;
  /** Total keys that entered the queue. */
  adds: number;
  /** Total retries scheduled. */
  retries: number;
}

/**
 * How long queue work may run in one turn of the event loop before it lets the loop go on. Shared
 * by every queue of the process: each yields once the turn's slice, whoever started it, is used.
 */
const SLICE_MS = 5;
const slice = { open: false, start: 0 };

const DEFAULT_ITEM_BACKOFF: BackoffOptions = { initialMs: 5, maxMs: 1_000_000 };
const DEFAULT_RETRY_LIMIT: TokenBucketOptions = { qps: 10, burst: 100 };

export class WorkQueue {
  // FIFO of keys as an array with a moving head, so taking from the front is O(1).
  private queue: string[] = [];
  private head = 0;
  /** Keys that need processing: queued, or re-added while being processed. */
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly delayed = new Map<string, { at: number; timer: ReturnType<typeof setTimeout> }>();
  private readonly failures = new Map<string, number>();
  private readonly itemBackoff: BackoffOptions;
  private readonly retryBucket: TokenBucket | undefined;
  private readonly log: Logger;
  private readonly name: string;
  private handler: QueueHandler | undefined;
  private workers = 0;
  private active = 0;
  private pumpScheduled = false;
  private closing = false;
  private drained: Promise<void> | undefined;
  private resolveDrained: (() => void) | undefined;
  private adds = 0;
  private retries = 0;

  constructor(private readonly opts: WorkQueueOptions = {}) {
    this.itemBackoff = opts.itemBackoff ?? DEFAULT_ITEM_BACKOFF;
    const limit = opts.retryLimit ?? DEFAULT_RETRY_LIMIT;
    this.retryBucket = limit === false ? undefined : new TokenBucket(limit);
    this.log = opts.logger ?? noopLogger;
    this.name = opts.name ?? 'workqueue';
  }

  /** Queues a key unless it is already queued. Ignored after shutdown. */
  add(key: string): void {
    if (this.closing || this.dirty.has(key)) return;
    this.dirty.add(key);
    this.adds++;
    this.opts.metrics?.add?.(key);
    // A key being processed goes back in the queue when its handler finishes, not before.
    if (this.processing.has(key)) return;
    this.push(key);
  }

  /** Queues a key after `ms`. If the key is already waiting, the earlier time wins. */
  addAfter(key: string, ms: number): void {
    if (this.closing) return;
    if (ms <= 0) return this.add(key);
    const at = performance.now() + ms;
    const existing = this.delayed.get(key);
    if (existing) {
      if (existing.at <= at) return;
      clearTimeout(existing.timer);
    }
    const timer = setTimeout(() => {
      this.delayed.delete(key);
      this.add(key);
    }, ms);
    this.delayed.set(key, { at, timer });
  }

  /** Queues a key after its backoff: the longer of its own exponential delay and the retry bucket's. */
  addRateLimited(key: string): void {
    if (this.closing) return;
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    const delay = Math.max(backoffDelay(n, this.itemBackoff), this.retryBucket?.reserve() ?? 0);
    this.retries++;
    this.opts.metrics?.retry?.(key, delay);
    this.addAfter(key, delay);
  }

  /** Clears a key's failure count, so its next retry starts from the shortest backoff. */
  forget(key: string): void {
    this.failures.delete(key);
  }

  /** How many times a key has been retried since it was last forgotten. */
  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** Keys waiting to be processed. */
  get length(): number {
    return this.queue.length - this.head;
  }

  get shuttingDown(): boolean {
    return this.closing;
  }

  stats(): QueueStats {
    return { depth: this.length, processing: this.processing.size, delayed: this.delayed.size, adds: this.adds, retries: this.retries };
  }

  /** Starts processing with at most `workers` handlers running at once. Call once. */
  run(handler: QueueHandler, workers = 1): void {
    if (this.handler) throw new Error(`${this.name}: run() called twice`);
    if (!(workers >= 1)) throw new Error(`${this.name}: workers must be >= 1, got ${workers}`);
    this.handler = handler;
    this.workers = workers;
    this.schedulePump();
  }

  /**
   * Stops taking work: adds are ignored, queued and delayed keys are dropped, and no new handler
   * starts. Resolves when the handlers already running have finished. Dropping the backlog is on
   * purpose: a controller shuts down when it loses leadership or exits, and the next leader
   * rebuilds its queue from a fresh list anyway.
   */
  shutdown(): Promise<void> {
    if (!this.closing) {
      this.closing = true;
      for (const { timer } of this.delayed.values()) clearTimeout(timer);
      this.delayed.clear();
      this.queue = [];
      this.head = 0;
      this.dirty.clear();
      this.opts.metrics?.depth?.(0);
      this.drained = new Promise((resolve) => (this.resolveDrained = resolve));
      this.checkDrained();
    }
    return this.drained!;
  }

  private push(key: string): void {
    this.queue.push(key);
    this.opts.metrics?.depth?.(this.length);
    this.schedulePump();
  }

  private take(): string | undefined {
    if (this.head >= this.queue.length) return undefined;
    const key = this.queue[this.head++];
    // Compact now and then so the array does not grow forever.
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    return key;
  }

  // Handlers start from a microtask, never inside add(): a caller such as a reflector's event
  // handler must not find a reconcile running in the middle of its own call. Handlers that finish
  // without I/O (a namespace with nothing to write) would chain through microtasks and drain the
  // whole queue in one go, so once a slice of the event loop's turn has been used (SLICE_MS) the
  // next start waits for the loop's next turn (setImmediate): admission reviews, watch events and
  // answers are served between slices. Nothing is decided differently, only later.
  private schedulePump(): void {
    if (this.pumpScheduled || !this.handler) return;
    this.pumpScheduled = true;
    const run = () => {
      this.pumpScheduled = false;
      this.pump();
    };
    const now = performance.now();
    if (!slice.open) {
      // The first queue work of this turn of the loop: the slice ends with the turn.
      slice.open = true;
      slice.start = now;
      setImmediate(() => (slice.open = false));
    }
    if (now - slice.start < SLICE_MS) queueMicrotask(run);
    else setImmediate(run);
  }

  private pump(): void {
    while (!this.closing && this.handler && this.active < this.workers) {
      const key = this.take();
      if (key === undefined) return;
      this.dirty.delete(key);
      this.processing.add(key);
      this.active++;
      this.opts.metrics?.depth?.(this.length);
      void this.runOne(this.handler, key);
    }
  }

  private async runOne(handler: QueueHandler, key: string): Promise<void> {
    const start = performance.now();
    let failed = false;
    let result: ReconcileResult;
    // One reconcile, one id: every line it logs carries the same rid (kube/log-context.ts).
    const rid = newRequestId();
    try {
      result = await handler(key, rid);
    } catch (err) {
      failed = true;
      this.log.error({ rid, err, key, queue: this.name, retries: this.numRequeues(key) }, 'reconcile failed; will retry');
    }
    this.processing.delete(key);
    this.active--;
    try {
      const after = (result && result.requeueAfter) || 0;
      if (failed || (result && result.requeue && after <= 0)) this.addRateLimited(key);
      else if (after > 0) {
        this.forget(key);
        this.addAfter(key, after);
      } else this.forget(key);
      // Re-added while it ran: now it may go again.
      if (this.dirty.has(key) && !this.closing) this.push(key);
      this.opts.metrics?.done?.(key, performance.now() - start, failed);
    } catch (err) {
      // Only a metrics hook can throw here; never let it wedge a worker slot.
      this.log.warn({ err, key, queue: this.name }, 'work queue metrics hook failed');
    }
    this.checkDrained();
    this.schedulePump();
  }

  private checkDrained(): void {
    if (this.closing && this.active === 0) this.resolveDrained?.();
  }
}
