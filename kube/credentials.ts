// Whether the API server keeps rejecting who this process says it is (issue #31). A pod that was
// force-deleted, or whose node is partitioned, keeps running with a bound service-account token
// the API server no longer accepts: its watches cannot resume, so its caches freeze, while its
// webhook server would go on answering on the API server's kept-alive connections from them. Each
// answer's status is told here; a rejection that persists is fatal for the caller to act on.
//
// One 401 is not enough: a token rotated on disk or an exec credential about to be refreshed can be
// refused once, and the client reads its credentials anew after a 401 (kube/client.ts). Only a run
// of 401s with nothing accepted in between, long enough for that re-read to have been tried, counts.

/** What makes a rejection persistent: this many 401s in a row, the first and the last this far apart. */
export const PERSISTENT_REJECTION = { answers: 3, ms: 5_000 } as const;

/** The API server rejected this process's credentials for good (the caller's cue to stop). */
export class CredentialsRejectedError extends Error {
  override name = 'CredentialsRejectedError';
  constructor(
    /** How many 401s in a row. */
    readonly rejections: number,
    /** From the first of them to the last. */
    readonly forMs: number,
    /** The request the last one answered, e.g. `GET /api/v1/namespaces`. */
    readonly lastRequest: string,
  ) {
    super(
      `the API server rejects this process's credentials (401 Unauthorized, ${rejections} answers in a row over ${(forMs / 1000).toFixed(1)} s, ` +
        `the last to ${lastRequest}), even read anew: its token or certificate was revoked (a deleted pod, service account or secret)`,
    );
  }
}

export interface RejectionOptions {
  answers?: number;
  ms?: number;
  now?: () => number;
}

/**
 * Counts the API server's answers: a 401 is a rejection of the credentials; any other status says
 * the server authenticated the request (a 403 or a 500 too), which ends a run of rejections.
 * Network errors say nothing and are not told. Once persistent, it stays so.
 */
export class CredentialRejections {
  private firstAt: number | undefined;
  private count = 0;
  private error: CredentialsRejectedError | undefined;
  private readonly listeners = new Set<(err: CredentialsRejectedError) => void>();
  private readonly answers: number;
  private readonly ms: number;
  private readonly now: () => number;

  constructor(opts: RejectionOptions = {}) {
    this.answers = opts.answers ?? PERSISTENT_REJECTION.answers;
    this.ms = opts.ms ?? PERSISTENT_REJECTION.ms;
    this.now = opts.now ?? Date.now;
  }

  /** The rejection, once persistent. */
  get rejected(): CredentialsRejectedError | undefined {
    return this.error;
  }

  /** True while the last answer was a 401 (the credentials should be read anew). */
  get suspect(): boolean {
    return this.count > 0;
  }

  /** One answer of the API server to `request` (e.g. `GET /api/v1/namespaces`). */
  answered(status: number, request: string): void {
    if (this.error) return;
    if (status !== 401) {
      this.count = 0;
      this.firstAt = undefined;
      return;
    }
    const t = this.now();
    this.firstAt ??= t;
    this.count++;
    if (this.count < this.answers || t - this.firstAt < this.ms) return;
    this.error = new CredentialsRejectedError(this.count, t - this.firstAt, request);
    for (const listener of this.listeners) listener(this.error);
  }

  /** Calls `listener` once the rejection is persistent (at once if it already is); returns a function that removes it. */
  onRejected(listener: (err: CredentialsRejectedError) => void): () => void {
    if (this.error) listener(this.error);
    else this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
