// Rate limiting and backoff shared by the reflector, the work queue and the writer, so
// there is exactly one implementation of "how long to wait".

/** How an exponential backoff grows. Delays are in milliseconds. */
export interface BackoffOptions {
  /** Delay after the first failure. */
  initialMs: number;
  /** Upper bound on any delay (before jitter). */
  maxMs: number;
  /** Growth per failure; 2 by default. */
  factor?: number;
  /**
   * Random spread as a fraction of the delay: 0.2 turns 1000 ms into 800..1200 ms. Jitter keeps
   * many clients that failed together from retrying together.
   */
  jitter?: number;
  /** Source of randomness in [0, 1); injectable for tests. */
  random?: () => number;
}

/** Delay before retry number `attempt` (0 = first retry): initial * factor^attempt, capped, jittered. */
export function backoffDelay(attempt: number, opts: BackoffOptions): number {
  const factor = opts.factor ?? 2;
  // Cap the exponent too, so a huge attempt count never overflows to Infinity or NaN.
  const raw = opts.initialMs * Math.pow(factor, Math.min(Math.max(attempt, 0), 64));
  const base = Math.min(raw, opts.maxMs);
  const jitter = opts.jitter ?? 0;
  if (jitter <= 0) return base;
  const r = (opts.random ?? Math.random)();
  return Math.max(0, Math.round(base * (1 - jitter + 2 * jitter * r)));
}

export interface StatefulBackoffOptions extends BackoffOptions {
  /**
   * Forget past failures when the last one is older than this: a client that worked for a while
   * starts again from `initialMs`, while one failing in a tight loop keeps growing.
   */
  resetAfterMs?: number;
  now?: () => number;
}

/** A backoff that remembers its failures, for one retrying loop (e.g. a reflector's reconnects). */
export class Backoff {
  private attempt = 0;
  private lastFailure = -Infinity;
  private readonly now: () => number;

  constructor(private readonly opts: StatefulBackoffOptions) {
    this.now = opts.now ?? (() => performance.now());
  }

  /** Records a failure and returns how long to wait before the next try. */
  next(): number {
    const now = this.now();
    if (this.opts.resetAfterMs !== undefined && now - this.lastFailure > this.opts.resetAfterMs) this.attempt = 0;
    this.lastFailure = now;
    return backoffDelay(this.attempt++, this.opts);
  }

  reset(): void {
    this.attempt = 0;
    this.lastFailure = -Infinity;
  }

  /** Failures counted since the last reset. */
  get failures(): number {
    return this.attempt;
  }
}

export interface TokenBucketOptions {
  /** Tokens added per second. */
  qps: number;
  /** Bucket size: how many calls may go at once after a quiet period. */
  burst: number;
  now?: () => number;
}

/**
 * A token bucket. Tokens may go negative: `reserve()` always grants a slot and says how long the
 * caller must wait for it, so callers that queue up are served in order without polling.
 */
export class TokenBucket {
  private tokens: number;
  private last: number;
  private readonly now: () => number;

  constructor(private readonly opts: TokenBucketOptions) {
    if (!(opts.qps > 0) || !(opts.burst >= 1)) throw new Error(`token bucket needs qps > 0 and burst >= 1, got ${opts.qps}/${opts.burst}`);
    this.now = opts.now ?? (() => performance.now());
    this.tokens = opts.burst;
    this.last = this.now();
  }

  private refill(): void {
    const now = this.now();
    // max(0, …): a clock that steps back must not drain the bucket.
    this.tokens = Math.min(this.opts.burst, this.tokens + (Math.max(0, now - this.last) * this.opts.qps) / 1000);
    this.last = now;
  }

  /** Takes a token now if one is available. */
  tryTake(): boolean {
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Takes a token, possibly borrowed from the future, and returns the wait in ms (0 = go now). */
  reserve(): number {
    this.refill();
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens * 1000) / this.opts.qps);
  }

  /** Waits for a token. If `signal` aborts first, the token is given back and this rejects. */
  async take(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    const wait = this.reserve();
    if (wait === 0) return;
    try {
      await sleep(wait, signal);
    } catch (err) {
      this.tokens += 1;
      throw err;
    }
  }
}

/**
 * setTimeout as a promise that an AbortSignal can cut short (rejecting with the signal's reason).
 * Uses the global timer rather than node:timers/promises so fake timers in tests control it.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
