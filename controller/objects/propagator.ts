// Propagation of one type: a cache of every object of the type, the set of its sources, and a
// queue of namespaces to bring in line with the plan core/propagation computes. Writes touch only
// copies (objects with our inherited-from label); a user's object in the way is reported.
import type { PropagationMode } from '../../core/api/constants.js';
import type { Hierarchy } from '../../core/hierarchy/hierarchy.js';
import { inheritedFrom, InternPool, isCopy, slimCopy, type PropagatableObject } from '../../core/propagation/copy.js';
import {
  SourceSet,
  namespacesToReplan,
  sourceWarnings,
  type PropagationContext,
  type PropagationOptions,
} from '../../core/propagation/decide.js';
import type { KubeClient } from '../../kube/client.js';
import { collectionPath } from '../../kube/discovery.js';
import type { HierarchyCache } from '../../kube/hierarchy-cache.js';
import type { Logger } from '../../kube/log.js';
import { queueMetrics, type Metrics } from '../../kube/metrics.js';
import { Reflector } from '../../kube/watch/reflector.js';
import { WorkQueue, type ReconcileResult } from '../../kube/watch/workqueue.js';
import type { SingletonWait } from '../../core/hrq/hrq.js';
import type { Events, Writes } from '../../kube/writes.js';
import { CopyReconciler, typeKey, type Obj, type ResolvedType } from './copies.js';

export { typeKey, type ResolvedType } from './copies.js';

export class TypePropagator {
  private readonly reflector: Reflector<Obj>;
  /** What the cached copies of this type share (their sources' content, names, labels). */
  private readonly interned = new InternPool();
  private readonly sources = new SourceSet();
  private readonly queue: WorkQueue;
  private mode: PropagationMode;
  private running = false;
  /** Brings one namespace's copies in line (every write of this type goes through it). */
  private readonly copies: CopyReconciler;
  /** When a source change first asked for a namespace to be re-planned (propagation latency). */
  private readonly pendingSince = new Map<string, number>();

  constructor(
    readonly type: ResolvedType,
    private readonly deps: {
      client: KubeClient;
      cache: HierarchyCache;
      writer: Writes;
      events: Events;
      log: Logger;
      options?: PropagationOptions;
      workers: number;
      isLeader: () => boolean;
      metrics?: Metrics;
      onCounts?: () => void;
      /** A source of this type appeared (present) or went: the admission worker's conflict checks (webhooks/admission-thread.ts). */
      onSource?: (namespace: string, name: string, present: boolean) => void;
      /** Whether copies must stay out of a namespace for now (its HRQ singleton is not in force yet: controller/hrq/gate.ts). */
      holdCopies?: (ns: string) => SingletonWait;
    },
  ) {
    this.mode = type.mode;
    this.reflector = new Reflector<Obj>({
      client: deps.client,
      path: collectionPath({ group: type.group, version: type.version, resource: type.resource, namespaced: false }),
      name: typeKey(type),
      // Copies are cached slim (their content as canonical text): they are most of the cache.
      transform: (o) => {
        delete (o.metadata as { managedFields?: unknown }).managedFields;
        return slimCopy(o, this.interned) as Obj;
      },
      logger: deps.log,
    });
    this.queue = new WorkQueue({
      name: typeKey(type),
      itemBackoff: { initialMs: 50, maxMs: 30_000 },
      metrics: queueMetrics(deps.metrics, typeKey(type)),
    });
    this.reflector.addHandler((event, obj, old) => this.onObject(event, obj, old));
    this.copies = new CopyReconciler({
      type,
      objects: this.reflector.store,
      context: () => this.context(),
      writes: deps.writer,
      events: deps.events,
      log: deps.log,
      setConflicts: (ns, conflicts) => deps.cache.update((h) => h.setObjectConflicts(ns, typeKey(type), conflicts)),
      onCounts: () => deps.onCounts?.(),
      requeue: (ns) => this.queue.add(ns),
    });
  }

  get hierarchy(): Hierarchy {
    return this.deps.cache.hierarchy;
  }

  /** The type's propagation context right now (the webhooks decide from it too). */
  context(): PropagationContext {
    return { hierarchy: this.hierarchy, type: { ...this.type, mode: this.mode }, sources: this.sources, options: this.deps.options };
  }

  async start(): Promise<void> {
    this.reflector.start();
    await this.reflector.synced;
    this.queue.run((ns, rid) => this.reconcile(ns, rid), this.deps.workers);
    this.running = true;
    this.warnAboutSources();
    this.replanAll();
  }

  /** The namespace and name of every source (a late subscriber to onSource catches up from these). */
  sourceNames(): Array<{ namespace: string; name: string }> {
    return [...this.sources].map((s) => ({ namespace: s.namespace, name: s.name }));
  }

  async stop(): Promise<void> {
    await this.queue.shutdown();
    await this.reflector.stop();
  }

  /** A new mode from HNCConfiguration: every namespace is re-planned. */
  setMode(mode: PropagationMode): void {
    if (mode === this.mode) return;
    this.mode = mode;
    this.warnAboutSources();
    this.replanAll();
  }

  /**
   * The Warning events of sources that cannot be propagated as they are (a selector that does not
   * parse, finalizers), for the objects already there when the type starts or its mode changes to
   * Propagate: otherwise they would only appear when each object is next modified.
   */
  private warnAboutSources(): void {
    if (!this.running) return;
    const type = this.context().type;
    for (const source of this.sources)
      for (const w of sourceWarnings(source.object, type))
        void this.deps.events.warn(this.copies.target(source.object as Obj), w.reason, w.message);
  }

  get currentMode(): PropagationMode {
    return this.mode;
  }

  get numSources(): number {
    return this.sources.size;
  }

  get numPropagated(): number {
    return this.copies.numPropagated;
  }

  /** The hierarchy changed for these namespaces: their copies may have to change. */
  namespacesChanged(namespaces: Iterable<string>): void {
    if (!this.running) return;
    for (const ns of namespaces) this.queue.add(ns);
  }

  /** Resolves once nothing is queued or running (tests, benchmarks). */
  isIdle(): boolean {
    const s = this.queue.stats();
    return s.depth + s.processing + s.delayed === 0;
  }

  resyncAll(): void {
    this.replanAll();
  }

  private replanAll(): void {
    if (!this.running) return;
    for (const ns of this.hierarchy.namespaceNames()) this.queue.add(ns);
  }

  private onObject(event: string, obj: Obj, old?: Obj): void {
    const ns = obj.metadata.namespace;
    const name = obj.metadata.name;
    const before = this.sources.get(ns, name)?.object;
    if (event === 'DELETED' || isCopy(obj)) this.sources.delete(ns, name);
    else this.sources.set({ namespace: ns, name, object: obj });
    const after = this.sources.get(ns, name)?.object;
    if ((before === undefined) !== (after === undefined)) {
      this.deps.onSource?.(ns, name, after !== undefined);
      // The count of sources is in HNCConfiguration's status too: without this, objects created
      // one after another where nothing propagates (leaf namespaces, `propagate none`) had the
      // status written again on each of its own watch events, about twice a second.
      this.deps.onCounts?.();
    }
    if (!this.running) return;
    // The namespace itself: a copy changed or went, or a user's object appeared in the way (not
    // for the echo of our own write: that namespace was planned with it).
    if (!(isCopy(obj) && this.copies.isEchoOfOwnWrite(event as 'ADDED' | 'MODIFIED' | 'DELETED', obj))) this.queue.add(ns);
    if (before !== undefined || after !== undefined) {
      const store = this.reflector.store;
      const hasCopy = (d: string) => inheritedFrom((store.get(`${d}/${name}`) ?? {}) as PropagatableObject) === ns;
      const replan = namespacesToReplan(this.context(), { namespace: ns, name, before, after }, hasCopy);
      for (const d of replan) {
        if (!this.pendingSince.has(d)) this.pendingSince.set(d, performance.now());
        this.queue.add(d);
      }
      if (replan.length)
        this.deps.log.info(
          { namespace: ns, name, type: typeKey(this.type), event, descendants: replan.length },
          'source changed: bringing its copies in line',
        );
      if (after)
        for (const w of sourceWarnings(after, this.context().type))
          void this.deps.events.warn(this.copies.target(after as Obj), w.reason, w.message);
    }
    void old;
  }

  private async reconcile(ns: string, rid: string): Promise<ReconcileResult> {
    if (!this.deps.isLeader()) return;
    // A RoleBinding copied into a namespace before its HRQ singleton is in force would let users
    // create objects the quota never sees; the gate wakes the namespace when that changes.
    const hold = this.deps.holdCopies?.(ns);
    if (hold?.wait) return hold.recheckInMs === undefined ? undefined : { requeueAfter: hold.recheckInMs };
    if ((await this.copies.reconcile(ns, rid)) === 'skipped') return;
    const since = this.pendingSince.get(ns);
    if (since !== undefined) {
      this.pendingSince.delete(ns);
      this.deps.metrics?.propagationSeconds.observe({ type: typeKey(this.type) }, (performance.now() - since) / 1000);
    }
  }
}
