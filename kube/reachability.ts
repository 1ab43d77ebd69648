// Whether this process still reaches the API server. A replica cut off from it (a network
// partition, a lost route, a firewall rule) keeps running: its watches hang without an error, so
// its caches silently stop following the cluster, while its webhook server, still reachable from
// the API server, would go on deciding from them (found by the soak: legal moves refused as
// cycles, sources refused as overwrites, from a stale forest; docs/reliability.md).
//
// Every request tells whether the API server answered (any status) or not (a network error, a
// timeout). A request that hangs tells nothing, so the caller also probes after a quiet spell and,
// after a failure, until an answer comes; only a run of failures with no answer for
// CUT_OFF_AFTER_MS counts as cut off, so one dropped connection never does.

export const CUT_OFF_AFTER_MS = 3_000;

export class Reachability {
  /** When the first failure with no answer since happened. */
  private failingSince: number | undefined;
  private readonly onRegain = new Set<() => void>();
  private lastAnswerAt: number;

  constructor(
    private readonly afterMs = CUT_OFF_AFTER_MS,
    private readonly now: () => number = Date.now,
  ) {
    this.lastAnswerAt = now();
  }

  /** The API server answered a request (whatever its status). */
  answered(): void {
    this.failingSince = undefined;
    this.lastAnswerAt = this.now();
  }

  /** Milliseconds since the last answer. */
  get quietMs(): number {
    return this.now() - this.lastAnswerAt;
  }

  /** A request got no answer (its connection failed or it timed out). */
  failed(): void {
    this.failingSince ??= this.now();
  }

  /** Requests have failed since the last answer: time to probe. */
  get failing(): boolean {
    return this.failingSince !== undefined;
  }

  /** No answer for afterMs since requests began to fail. */
  get cutOff(): boolean {
    return this.failingSince !== undefined && this.now() - this.failingSince >= this.afterMs;
  }

  /**
   * A cut-off has ended (its observer decides when): connections opened before it may still hang
   * (TCP backs its retransmissions off for tens of seconds after packets were dropped), so every
   * watch on them starts again from where it was.
   */
  regained(): void {
    for (const fn of [...this.onRegain]) fn();
  }

  /** Runs `fn` on every regained(); returns what stops that. */
  onRegained(fn: () => void): () => void {
    this.onRegain.add(fn);
    return () => this.onRegain.delete(fn);
  }
}
