// The controller: the reconcilers that work from the shared caches and the hierarchy model.
// Workers start once every cache has synced, so the first reconciles see the whole forest (no
// false ParentMissing at start-up, and a restart with everything in place writes nothing).
import type { Affected } from '../core/hierarchy/hierarchy.js';
import { HierarchyPolicy } from '../core/hierarchy/policy.js';
import type { KubeClient } from '../kube/client.js';
import { HierarchyCache } from '../kube/hierarchy-cache.js';
import { createLogger, type Logger } from '../kube/log.js';
import { WorkQueue } from '../kube/watch/workqueue.js';
import { Writer } from '../kube/writer.js';
import { AnchorReconciler } from './anchors/reconciler.js';
import { ConfigController } from './config/reconciler.js';
import { EventRecorder } from '../kube/events.js';
import type { PropagationOptions } from '../core/propagation/decide.js';
import { HierarchyReconciler } from './hierarchy/reconciler.js';

export interface ManagerOptions {
  client: KubeClient;
  policy?: HierarchyPolicy;
  logger?: Logger;
  /** The caches to share with the webhooks; made here when not given. */
  cache?: HierarchyCache;
  /** Concurrent reconciles per queue (HNC's --max-reconciles; default 10). */
  workers?: number;
  /** Client-side write QPS limit (default 50; burst 1.5x). */
  qps?: number;
  /** What is never copied or propagated (--unpropagated-label/annotation, --nopropagation-label). */
  propagation?: PropagationOptions;
}

export class Manager {
  readonly cache: HierarchyCache;
  readonly writer: Writer;
  readonly log: Logger;
  private readonly queues = {
    namespaces: new WorkQueue({ name: 'namespaces', itemBackoff: { initialMs: 50, maxMs: 30_000 } }),
    anchors: new WorkQueue({ name: 'anchors', itemBackoff: { initialMs: 50, maxMs: 30_000 } }),
  };
  private readonly ownsCache: boolean;
  readonly config: ConfigController;

  constructor(private readonly opts: ManagerOptions) {
    this.log = opts.logger ?? createLogger({ name: 'hnc-manager' });
    this.ownsCache = !opts.cache;
    this.cache = opts.cache ?? new HierarchyCache(opts.client, opts.policy ?? new HierarchyPolicy(), this.log);
    this.writer = new Writer(opts.client, { qps: opts.qps });
    this.cache.onAffected((a) => this.enqueue(a));
    const events = new EventRecorder(opts.client, this.log);
    this.config = new ConfigController({ client: opts.client, cache: this.cache, writer: this.writer, events, log: this.log.child({ reconciler: 'objects' }), workers: opts.workers ?? 10, options: opts.propagation });
  }

  get hierarchy() {
    return this.cache.hierarchy;
  }

  /** Starts the caches (if ours), waits until they have synced, then starts the reconcilers. */
  async start(): Promise<void> {
    if (this.ownsCache) await this.cache.start();
    else await this.cache.whenSynced;
    const workers = this.opts.workers ?? 10;
    const hierarchy = new HierarchyReconciler(this.hierarchy, this.cache.namespaces.store, this.cache.hierarchies.store, this.writer, this.log.child({ reconciler: 'hierarchy' }));
    const anchors = new AnchorReconciler(this.hierarchy, this.cache.anchors.store, this.writer, this.log.child({ reconciler: 'anchor' }));
    this.queues.namespaces.run((key) => this.guard('hierarchy', key, () => hierarchy.reconcile(key)), workers);
    this.queues.anchors.run((key) => this.guard('anchor', key, () => anchors.reconcile(key)), workers);
    await this.config.start();
    this.log.info({ namespaces: this.hierarchy.namespaceNames().length }, 'caches synced; reconcilers running');
  }

  /** Stops taking work, lets in-flight reconciles finish, and stops the caches (if ours). */
  async stop(): Promise<void> {
    await Promise.all(Object.values(this.queues).map((q) => q.shutdown()));
    await this.config.stop();
    if (this.ownsCache) await this.cache.stop();
  }

  /** Resolves once no reconcile is queued, running or scheduled (for tests and benchmarks). */
  async idle(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const busy = () =>
      !this.config.isIdle() ||
      Object.values(this.queues).some((q) => {
        const s = q.stats();
        return s.depth + s.processing + s.delayed > 0;
      });
    // Two quiet looks in a row: a watch event of our own last write may still be in flight.
    for (let quiet = 0; quiet < 2; ) {
      if (Date.now() > deadline) throw new Error('the manager did not become idle in time');
      await new Promise((r) => setTimeout(r, 50));
      quiet = busy() ? 0 : quiet + 1;
    }
  }

  private async guard(reconciler: string, key: string, fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (err) {
      this.log.warn({ reconciler, key, err: (err as Error).message }, 'reconcile failed; will retry');
      throw err;
    }
  }

  private enqueue(affected: Affected): void {
    for (const ns of affected.namespaces) this.queues.namespaces.add(ns);
    for (const a of affected.anchors) this.queues.anchors.add(a);
  }
}
