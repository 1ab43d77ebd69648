// The controller: the reconcilers that work from the shared caches and the hierarchy model.
// Workers start once every cache has synced, so the first reconciles see the whole forest (no
// false ParentMissing at start-up, and a restart with everything in place writes nothing).
import type { Affected } from '../core/hierarchy/hierarchy.js';
import { HierarchyPolicy } from '../core/hierarchy/policy.js';
import type { KubeClient } from '../kube/client.js';
import { HierarchyCache } from '../kube/hierarchy-cache.js';
import { createLogger, type Logger } from '../kube/log.js';
import { WorkQueue } from '../kube/watch/workqueue.js';
import { queueMetrics, type Metrics } from '../kube/metrics.js';
import { Writer } from '../kube/writer.js';
import { AnchorReconciler } from './anchors/reconciler.js';
import { ConfigController } from './config/reconciler.js';
import { EventRecorder } from '../kube/events.js';
import type { PropagationOptions } from '../core/propagation/decide.js';
import { HierarchyReconciler } from './hierarchy/reconciler.js';
import { HrqController } from './hrq/controller.js';
import { SingletonGate } from './hrq/gate.js';
import { QuotaCache } from '../kube/quota-cache.js';

export interface ManagerOptions {
  client: KubeClient;
  policy?: HierarchyPolicy;
  logger?: Logger;
  /** The caches to share with the webhooks; made here when not given. */
  cache?: HierarchyCache;
  /** Concurrent reconciles per queue (HNC's --max-reconciles; default 10). */
  workers?: number;
  /** Concurrent namespace reconciles per propagated type (--max-object-reconciles; default 32). */
  objectWorkers?: number;
  /** Client-side writes/s for each resource type (default 50; burst 1.5x). */
  qps?: number;
  /** What is never copied or propagated (--unpropagated-label/annotation, --nopropagation-label). */
  propagation?: PropagationOptions;
  /**
   * Whether this replica may write (leader election). Every replica keeps its caches and model
   * (its webhooks answer from them); only the leader reconciles. Default: always.
   */
  isLeader?: () => boolean;
  metrics?: Metrics;
  /** Hierarchical resource quotas (--enable-hrq); off when absent. */
  hrq?: { syncIntervalMs: number; quotas?: QuotaCache };
}

export class Manager {
  readonly cache: HierarchyCache;
  readonly writer: Writer;
  readonly log: Logger;
  private readonly queues: { namespaces: WorkQueue; anchors: WorkQueue };
  private readonly ownsCache: boolean;
  readonly config: ConfigController;
  private readonly isLeader: () => boolean;
  private anchors?: AnchorReconciler;
  private readonly events: EventRecorder;
  private readonly unsubscribe: Array<() => void> = [];
  /** The HRQ reconcilers and their caches, when HRQs are enabled. */
  readonly hrq?: { controller: HrqController; quotas: QuotaCache; ownsQuotas: boolean };

  constructor(private readonly opts: ManagerOptions) {
    this.log = opts.logger ?? createLogger({ name: 'hnc-manager' });
    this.ownsCache = !opts.cache;
    this.cache = opts.cache ?? new HierarchyCache(opts.client, opts.policy ?? new HierarchyPolicy(), this.log);
    this.writer = new Writer(opts.client, {
      qps: opts.qps,
      onWrite: opts.metrics ? (verb, _path, ok) => opts.metrics!.apiWrites.inc({ verb, result: ok ? 'success' : 'error' }) : undefined,
    });
    const backoff = { initialMs: 50, maxMs: 30_000 };
    this.queues = {
      namespaces: new WorkQueue({ name: 'namespaces', itemBackoff: backoff, metrics: queueMetrics(opts.metrics, 'hierarchy') }),
      anchors: new WorkQueue({ name: 'anchors', itemBackoff: backoff, metrics: queueMetrics(opts.metrics, 'anchors') }),
    };
    this.isLeader = opts.isLeader ?? (() => true);
    this.unsubscribe.push(this.cache.onAffected((a) => this.enqueue(a)));
    const events = new EventRecorder(this.writer, this.log);
    this.events = events;
    const quotas = opts.hrq && (opts.hrq.quotas ?? new QuotaCache(opts.client, this.cache, this.log));
    // Copies wait for a namespace's HRQ singleton to be in force, so users let in by a RoleBinding copy are counted.
    const gate = quotas && new SingletonGate(quotas, this.log.child({ reconciler: 'objects' }));
    this.config = new ConfigController({
      client: opts.client,
      cache: this.cache,
      writer: this.writer,
      events,
      log: this.log.child({ reconciler: 'objects' }),
      workers: opts.objectWorkers ?? 32,
      options: opts.propagation,
      isLeader: this.isLeader,
      metrics: opts.metrics,
      holdCopies: gate && ((ns) => gate.hold(ns)),
    });
    if (opts.hrq && quotas && gate) {
      this.unsubscribe.push(gate.onWake((namespaces) => this.config.replan(namespaces)));
      const controller = new HrqController({
        quotas,
        writer: this.writer,
        events,
        log: this.log.child({ reconciler: 'hrq' }),
        workers: opts.workers ?? 10,
        syncIntervalMs: opts.hrq.syncIntervalMs,
        isLeader: this.isLeader,
        singletonWriteFailed: (ns, failed) => gate.writeFailed(ns, failed),
      });
      this.hrq = { controller, quotas, ownsQuotas: !opts.hrq.quotas };
    }
  }

  get hierarchy() {
    return this.cache.hierarchy;
  }

  /** Starts the caches (if ours), waits until they have synced, then starts the reconcilers. */
  async start(): Promise<void> {
    if (this.ownsCache) await this.cache.start();
    else await this.cache.whenSynced;
    const workers = this.opts.workers ?? 10;
    const hierarchy = new HierarchyReconciler(
      this.hierarchy,
      this.cache.namespaces.store,
      this.cache.hierarchies.store,
      this.writer,
      this.log.child({ reconciler: 'hierarchy' }),
      this.events,
    );
    const anchors = new AnchorReconciler(
      this.hierarchy,
      this.cache.anchors.store,
      this.cache.namespaces.store,
      this.writer,
      this.log.child({ reconciler: 'anchor' }),
    );
    this.anchors = anchors;
    for (const key of this.hierarchy.anchorKeys()) anchors.observe(key);
    this.queues.namespaces.run((key, rid) => this.guard('hierarchy', key, rid, () => hierarchy.reconcile(key, rid)), workers);
    this.queues.anchors.run((key, rid) => this.guard('anchor', key, rid, () => anchors.reconcile(key, rid)), workers);
    await this.config.start();
    if (this.hrq) {
      await this.hrq.quotas.start();
      await this.hrq.controller.start();
    }
    this.log.info({ namespaces: this.hierarchy.namespaceNames().length }, 'caches synced; reconcilers running');
  }

  /** Re-reconciles everything: a new leader takes over from whatever state the last one left. */
  resyncAll(): void {
    for (const ns of this.hierarchy.namespaceNames()) this.queues.namespaces.add(ns);
    for (const a of this.hierarchy.anchorKeys()) this.queues.anchors.add(a);
    this.config.resyncAll();
    this.hrq?.controller.resyncAll();
  }

  /** Stops taking work, lets in-flight reconciles finish, and stops the caches (if ours). */
  async stop(): Promise<void> {
    for (const u of this.unsubscribe.splice(0)) u();
    await Promise.all(Object.values(this.queues).map((q) => q.shutdown()));
    await this.config.stop();
    if (this.hrq) {
      await this.hrq.controller.stop();
      if (this.hrq.ownsQuotas) await this.hrq.quotas.stop();
    }
    if (this.ownsCache) await this.cache.stop();
  }

  /** Resolves once no reconcile is queued, running or scheduled (for tests and benchmarks). */
  async idle(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const busy = () =>
      !this.config.isIdle() ||
      (this.hrq !== undefined && !this.hrq.controller.isIdle()) ||
      Object.values(this.queues).some((q) => {
        const s = q.stats();
        return s.depth + s.processing + s.delayed > 0;
      });
    // Two quiet looks in a row: a watch event of our own last write may still be in flight.
    for (let quiet = 0; quiet < 2;) {
      if (Date.now() > deadline) throw new Error('the manager did not become idle in time');
      await new Promise((r) => setTimeout(r, 50));
      quiet = busy() ? 0 : quiet + 1;
    }
  }

  private async guard(reconciler: string, key: string, rid: string, fn: () => Promise<void>): Promise<void> {
    // A replica that does not lead drops the key; resyncAll() brings every key back on election.
    if (!this.isLeader()) return;
    try {
      await fn();
    } catch (err) {
      this.log.warn({ rid, reconciler, key, err: (err as Error).message }, 'reconcile failed; will retry');
      throw err;
    }
  }

  private enqueue(affected: Affected): void {
    for (const ns of affected.namespaces) this.queues.namespaces.add(ns);
    for (const a of affected.anchors) {
      this.anchors?.observe(a);
      this.queues.anchors.add(a);
    }
  }
}
