// Read-your-writes for reconcilers that plan from a watch cache. After a write, the cache still
// holds the object as it was until the watch event of the write arrives; a reconcile that runs in
// between would plan from stale data and fail (409) or repeat a create (AlreadyExists), each a
// wasted write. So each write records the resourceVersion it replaced, and a reconcile whose
// cached object still has that version skips: the watch event re-enqueues the key anyway.
export class WriteExpectations {
  private readonly pending = new Map<string, { staleVersion: string | undefined; at: number }>();

  constructor(private readonly maxWaitMs = 5_000) {}

  /** A write of `key` succeeded; the cache showed `staleVersion` (undefined: the object did not exist). */
  wrote(key: string, staleVersion: string | undefined): void {
    this.pending.set(key, { staleVersion, at: Date.now() });
  }

  /** True while the cache still shows what our last write replaced (bounded by maxWaitMs). */
  stale(key: string, cachedVersion: string | undefined): boolean {
    const p = this.pending.get(key);
    if (!p) return false;
    if (p.staleVersion === cachedVersion && Date.now() - p.at < this.maxWaitMs) return true;
    this.pending.delete(key);
    return false;
  }
}
