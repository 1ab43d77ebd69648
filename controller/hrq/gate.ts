// Holds the copies of propagated objects out of a namespace under an HRQ until its ResourceQuota
// singleton is in force (core/hrq/hrq.ts, copiesWaitForSingleton). The object propagators ask
// hold() before planning a namespace; a namespace held is remembered, and woken (planned again)
// when what held it changes: its singleton arrives or is counted, an HRQ changes, or HNC fails to
// write the singleton. Nothing is written here, and nothing waits where no HRQ applies.
import { HRQ_RESOURCE_QUOTA_NAME } from '../../core/api/constants.js';
import { copiesWaitForSingleton, UNCOUNTED_WAIT_MS, type SingletonWait } from '../../core/hrq/hrq.js';
import type { Logger } from '../../kube/log.js';
import { isSingleton, type QuotaCache } from '../../kube/quota-cache.js';

export type GateQuotas = Pick<QuotaCache, 'model' | 'synced' | 'singletons' | 'onChange' | 'hierarchy'>;

export class SingletonGate {
  /** Namespaces held, with when their singleton was first seen uncounted (performance.now()). */
  private readonly held = new Map<string, number | undefined>();
  /** Namespaces whose singleton HNC could not write at its last attempt. */
  private readonly failed = new Set<string>();
  private wake: (namespaces: string[]) => void = () => {};

  constructor(
    private readonly quotas: GateQuotas,
    private readonly log: Logger,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Whether copies into `ns` must wait now (a propagator asks before planning it). */
  hold(ns: string): SingletonWait {
    const h = this.quotas.hierarchy.hierarchy;
    const rq = this.quotas.singletons.store.get(`${ns}/${HRQ_RESOURCE_QUOTA_NAME}`);
    const counted = rq !== undefined && (!isSingleton(rq) || rq.status?.used !== undefined);
    const uncountedSince = rq && !counted ? (this.held.get(ns) ?? this.now()) : undefined;
    const uncountedForMs = uncountedSince === undefined ? 0 : this.now() - uncountedSince;
    const decision = copiesWaitForSingleton({
      synced: this.quotas.synced,
      limited: h.forest.exists(ns) && this.quotas.model.limited(ns),
      deleting: h.namespace(ns)?.deleting === true,
      writeFailed: this.failed.has(ns),
      singleton: rq && { counted, uncountedForMs },
    });
    if (decision.wait) {
      if (!this.held.has(ns)) this.log.info({ namespace: ns }, 'holding copies until the HRQ ResourceQuota is in force');
      this.held.set(ns, uncountedSince);
    } else if (this.held.delete(ns) && uncountedForMs >= UNCOUNTED_WAIT_MS) {
      this.log.warn({ namespace: ns }, 'writing copies although the quota system has not counted the HRQ ResourceQuota yet');
    }
    return decision;
  }

  /** The HRQ controller's last write of `ns`'s singleton failed (true) or went through (false). */
  writeFailed(ns: string, failed: boolean): void {
    if (!failed) {
      this.failed.delete(ns);
      return;
    }
    this.failed.add(ns);
    if (this.held.has(ns)) {
      this.log.warn({ namespace: ns }, 'writing copies without the HRQ ResourceQuota: it could not be written');
      this.wake([ns]);
    }
  }

  /**
   * Calls `wake` with the held namespaces that may have to be planned again after a change of the
   * quota caches: a singleton's namespace, or all of them when an HRQ changed (its limits may be gone).
   */
  onWake(wake: (namespaces: string[]) => void): () => void {
    this.wake = wake;
    return this.quotas.onChange((change) => {
      const namespaces = change.kind === 'hrq' ? [...this.held.keys()] : this.held.has(change.namespace) ? [change.namespace] : [];
      if (namespaces.length > 0) wake(namespaces);
    });
  }
}
