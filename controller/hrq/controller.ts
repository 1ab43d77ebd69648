// Hierarchical resource quotas (docs/hrq.md). Two reconcilers over the QuotaCache:
// - per namespace, the ResourceQuota singleton `hrq.hnc.x-k8s.io`: its spec.hard is the strictest
//   limit per resource over the HRQs in the namespace and its ancestors; created, updated and
//   deleted to match (and recreated when someone deletes it). The API server's own quota system
//   then counts the namespace's usage into its status.used.
// - per HRQ, the status: hard, the subtree's usage, and the printer-column summaries.
// Everything is derived from the caches, so the periodic sync only re-enqueues and writes nothing
// when all is in place.
import { API_VERSION, HRQ_RESOURCE_QUOTA_NAME, Kind, Label, SelectorAnnotation } from '../../core/api/constants.js';
import type { HierarchicalResourceQuota } from '../../core/api/types.js';
import { parseResourceList, sameQuantities, resourceListText, type Quantities } from '../../core/hrq/hrq.js';
import { roundUpToMilli } from '../../core/quantity/quantity.js';
import { jsonEqual } from '../../core/util/equal.js';
import { isAlreadyExists, isConflict, isNotFound } from '../../kube/client.js';
import type { EventRecorder } from '../../kube/events.js';
import { WriteExpectations } from '../../kube/expectations.js';
import type { Logger } from '../../kube/log.js';
import { hrqPath, isSingleton, singletonPath, type QuotaCache, type ResourceQuotaObject } from '../../kube/quota-cache.js';
import { WorkQueue } from '../../kube/watch/workqueue.js';
import type { Writer } from '../../kube/writer.js';
import { EventReason } from '../../core/api/constants.js';

export interface HrqControllerDeps {
  quotas: QuotaCache;
  writer: Writer;
  events: EventRecorder;
  log: Logger;
  workers: number;
  /** Re-checks everything this often (HNC's --hrq-sync-interval; 0: never). */
  syncIntervalMs: number;
  isLeader: () => boolean;
  /** Told after each pass over a namespace's singleton whether writing it failed (copies wait for it: gate.ts). */
  singletonWriteFailed?: (ns: string, failed: boolean) => void;
}

/** What the API server will store for these limits (it keeps ResourceQuota limits in whole milli-units). */
const asStored = (limits: Quantities): Quantities => new Map([...limits].map(([r, q]) => [r, roundUpToMilli(q)]));

export class HrqController {
  private readonly singletonQueue = new WorkQueue({ name: 'hrq-singletons', itemBackoff: { initialMs: 100, maxMs: 30_000 } });
  private readonly statusQueue = new WorkQueue({ name: 'hrq-status', itemBackoff: { initialMs: 100, maxMs: 30_000 } });
  private readonly expectations = new WriteExpectations();
  private readonly unsubscribe: Array<() => void> = [];
  private timer?: ReturnType<typeof setInterval>;

  constructor(private readonly deps: HrqControllerDeps) {}

  private get model() {
    return this.deps.quotas.model;
  }

  private get forest() {
    return this.deps.quotas.hierarchy.hierarchy.forest;
  }

  async start(): Promise<void> {
    const { quotas } = this.deps;
    this.unsubscribe.push(
      quotas.onChange((change) => {
        if (change.kind === 'hrq') {
          this.statusQueue.add(`${change.namespace}/${change.name}`);
          // The limits of the whole subtree may have changed.
          for (const ns of this.forest.subtree(change.namespace)) this.singletonQueue.add(ns);
        } else {
          this.singletonQueue.add(change.namespace);
          for (const k of this.model.hrqsOver(change.namespace)) this.statusQueue.add(`${k.namespace}/${k.name}`);
        }
      }),
      // A move or a deletion changes the limits of the moved subtree and the usage of the old and
      // new ancestors: every HRQ is re-checked (cheap: nothing is written if its status holds).
      quotas.hierarchy.onAffected((affected) => {
        if (affected.namespaces.size === 0) return;
        for (const ns of affected.namespaces) this.singletonQueue.add(ns);
        this.enqueueAllHrqs();
      }),
    );
    await quotas.whenSynced;
    await quotas.hierarchy.whenSynced;
    const guard = (what: string, fn: (key: string, rid: string) => Promise<void>) => async (key: string, rid: string) => {
      if (!this.deps.isLeader()) return;
      try {
        await fn(key, rid);
      } catch (err) {
        this.deps.log.warn({ rid, reconciler: what, key, err: (err as Error).message }, 'reconcile failed; will retry');
        throw err;
      }
    };
    this.singletonQueue.run(
      guard('hrq-singleton', (ns, rid) => this.reconcileSingleton(ns, rid)),
      this.deps.workers,
    );
    this.statusQueue.run(
      guard('hrq-status', (key, rid) => this.reconcileStatus(key, rid)),
      this.deps.workers,
    );
    this.resyncAll();
    if (this.deps.syncIntervalMs > 0) {
      this.timer = setInterval(() => this.resyncAll(), this.deps.syncIntervalMs);
      this.timer.unref();
    }
  }

  /** Every HRQ's status and every namespace's singleton (also on becoming leader). */
  resyncAll(): void {
    for (const ns of this.deps.quotas.hierarchy.hierarchy.namespaceNames()) this.singletonQueue.add(ns);
    for (const rq of this.deps.quotas.singletons.store.list()) this.singletonQueue.add(rq.metadata.namespace);
    this.enqueueAllHrqs();
  }

  isIdle(): boolean {
    return [this.singletonQueue, this.statusQueue].every((q) => {
      const s = q.stats();
      return s.depth + s.processing + s.delayed === 0;
    });
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    for (const u of this.unsubscribe.splice(0)) u();
    await Promise.all([this.singletonQueue.shutdown(), this.statusQueue.shutdown()]);
  }

  private enqueueAllHrqs(): void {
    for (const ns of this.model.namespacesWithHrqs()) for (const name of this.model.hrqNames(ns)) this.statusQueue.add(`${ns}/${name}`);
  }

  /** `rid` names this reconcile on its log lines (kube/log-context.ts). */
  async reconcileSingleton(ns: string, rid?: string): Promise<void> {
    try {
      await this.writeSingleton(ns, rid);
      this.deps.singletonWriteFailed?.(ns, false);
    } catch (err) {
      // A stale cache (409) or a race with a deletion (404) is retried quietly from fresher data.
      if (!isConflict(err) && !isNotFound(err) && !isAlreadyExists(err)) {
        this.warnHrqsOver(ns, `could not write the ResourceQuota ${HRQ_RESOURCE_QUOTA_NAME} in namespace ${ns}: ${(err as Error).message}`);
        this.deps.singletonWriteFailed?.(ns, true);
      }
      throw err;
    }
  }

  private async writeSingleton(ns: string, rid?: string): Promise<void> {
    const { writer, log } = this.deps;
    const current = this.deps.quotas.singletons.store.get(`${ns}/${HRQ_RESOURCE_QUOTA_NAME}`);
    if (this.expectations.stale(ns, current?.metadata.resourceVersion)) return;
    const h = this.deps.quotas.hierarchy.hierarchy;
    const exists = this.forest.exists(ns);
    const limits = exists ? this.model.limits(ns) : new Map<string, never>();
    if (limits.size === 0) {
      if (!current || !isSingleton(current)) return;
      // The uid and version make sure only the object we saw (ours, unchanged since) is deleted.
      await writer.delete(singletonPath(ns), {
        preconditions: { uid: current.metadata.uid, resourceVersion: current.metadata.resourceVersion },
      });
      this.expectations.wrote(ns, current.metadata.resourceVersion);
      log.info({ rid, namespace: ns }, 'deleted the HRQ ResourceQuota: no HRQ limits this namespace any more');
      return;
    }
    if (h.namespace(ns)?.deleting) return; // a namespace on its way out takes its singleton with it
    const stored = asStored(limits);
    const hard = resourceListText(stored);
    if (!current) {
      const rq: ResourceQuotaObject = {
        apiVersion: 'v1',
        kind: 'ResourceQuota',
        metadata: {
          name: HRQ_RESOURCE_QUOTA_NAME,
          namespace: ns,
          labels: { [Label.hrq]: 'true' },
          annotations: { [SelectorAnnotation.none]: 'true' },
        },
        spec: { hard },
      };
      await writer.create(singletonPath(ns, false), rq);
      this.expectations.wrote(ns, undefined);
      log.info({ rid, namespace: ns, hard }, 'created the HRQ ResourceQuota');
      return;
    }
    if (!isSingleton(current)) {
      const message = `a ResourceQuota named ${HRQ_RESOURCE_QUOTA_NAME} exists without the label ${Label.hrq}=true; HNC does not take over objects it did not create, so the hierarchical quotas above this namespace are not enforced in it`;
      log.warn({ rid, namespace: ns }, message);
      this.warnHrqsOver(ns, message);
      return;
    }
    const labelled = current.metadata.annotations?.[SelectorAnnotation.none] === 'true';
    if (labelled && sameQuantities(parseResourceList(current.spec?.hard).quantities, stored)) return;
    await writer.replace(singletonPath(ns), {
      ...current,
      metadata: { ...current.metadata, annotations: { ...current.metadata.annotations, [SelectorAnnotation.none]: 'true' } },
      spec: { ...current.spec, hard },
    });
    this.expectations.wrote(ns, current.metadata.resourceVersion);
    log.info({ rid, namespace: ns, hard }, 'updated the HRQ ResourceQuota');
  }

  async reconcileStatus(key: string, rid?: string): Promise<void> {
    const hrq = this.deps.quotas.hrqs.store.get(key);
    if (!hrq) return;
    if (this.expectations.stale(`hrq/${key}`, hrq.metadata.resourceVersion)) return;
    const { namespace, name } = hrq.metadata as { namespace: string; name: string };
    const status = this.model.status(namespace, name);
    if (!status || jsonEqual(hrq.status ?? {}, status)) return;
    const next: HierarchicalResourceQuota = { ...hrq, apiVersion: API_VERSION, kind: Kind.HierarchicalResourceQuota, status };
    await this.deps.writer.replace(hrqPath(namespace, name), next);
    this.expectations.wrote(`hrq/${key}`, hrq.metadata.resourceVersion);
    this.deps.log.info({ rid, namespace, name, used: status.used }, 'updated HRQ status');
  }

  private warnHrqsOver(ns: string, message: string): void {
    for (const { namespace, name } of this.model.hrqsOver(ns)) {
      const hrq = this.deps.quotas.hrqs.store.get(`${namespace}/${name}`);
      void this.deps.events.warn(
        { apiVersion: API_VERSION, kind: Kind.HierarchicalResourceQuota, namespace, name, uid: hrq?.metadata.uid },
        EventReason.CannotWriteResourceQuota,
        message,
      );
    }
  }
}
