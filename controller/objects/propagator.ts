// Propagation of one type: a cache of every object of the type, the set of its sources, and a
// queue of namespaces to bring in line with the plan core/propagation computes. Writes touch only
// copies (objects with our inherited-from label); a user's object in the way is reported.
import type { PropagationMode } from '../../core/api/constants.js';
import { EventReason, GROUP } from '../../core/api/constants.js';
import type { Hierarchy } from '../../core/hierarchy/hierarchy.js';
import { inheritedFrom, InternPool, isCopy, slimCopy, type PropagatableObject } from '../../core/propagation/copy.js';
import {
  SourceSet,
  namespacesToReplan,
  planNamespace,
  sourceWarnings,
  type PropagationContext,
  type PropagationOptions,
  type PropagationType,
} from '../../core/propagation/decide.js';
import { isAlreadyExists, isConflict, isNotFound } from '../../kube/client.js';
import { collectionPath } from '../../kube/discovery.js';
import type { EventRecorder } from '../../kube/events.js';
import type { HierarchyCache } from '../../kube/hierarchy-cache.js';
import type { Logger } from '../../kube/log.js';
import { Reflector } from '../../kube/watch/reflector.js';
import { WorkQueue } from '../../kube/watch/workqueue.js';
import { WriteExpectations } from '../../kube/expectations.js';
import type { Writer } from '../../kube/writer.js';
import type { KubeClient } from '../../kube/client.js';
import { queueMetrics, type Metrics } from '../../kube/metrics.js';

export interface ResolvedType extends PropagationType {
  readonly version: string;
  readonly resource: string;
}

type Obj = PropagatableObject & { metadata: NonNullable<PropagatableObject['metadata']> & { name: string; namespace: string } };

export const typeKey = (t: { group: string; resource: string }): string => (t.group ? `${t.resource}.${t.group}` : t.resource);

export class TypePropagator {
  private readonly reflector: Reflector<Obj>;
  /** What the cached copies of this type share (their sources' content, names, labels). */
  private readonly interned = new InternPool();
  private readonly sources = new SourceSet();
  private readonly queue: WorkQueue;
  private mode: PropagationMode;
  private running = false;
  /** Copies written whose watch events may not have arrived yet, by namespace (read-your-writes). */
  private readonly expectations = new WriteExpectations();
  private readonly written = new Map<string, Set<string>>();
  /** When a source change first asked for a namespace to be re-planned (propagation latency). */
  private readonly pendingSince = new Map<string, number>();
  /** Copies confirmed in place per namespace (numPropagatedObjects). */
  private readonly propagated = new Map<string, number>();

  constructor(
    readonly type: ResolvedType,
    private readonly deps: {
      client: KubeClient;
      cache: HierarchyCache;
      writer: Writer;
      events: EventRecorder;
      log: Logger;
      options?: PropagationOptions;
      workers: number;
      isLeader: () => boolean;
      metrics?: Metrics;
      onCounts?: () => void;
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
    this.queue.run((ns) => this.reconcile(ns), this.deps.workers);
    this.running = true;
    this.replanAll();
  }

  async stop(): Promise<void> {
    await this.queue.shutdown();
    await this.reflector.stop();
  }

  /** A new mode from HNCConfiguration: every namespace is re-planned. */
  setMode(mode: PropagationMode): void {
    if (mode === this.mode) return;
    this.mode = mode;
    this.replanAll();
  }

  get currentMode(): PropagationMode {
    return this.mode;
  }

  get numSources(): number {
    return this.sources.size;
  }

  get numPropagated(): number {
    let n = 0;
    for (const c of this.propagated.values()) n += c;
    return n;
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
    if (!this.running) return;
    // The namespace itself: a copy changed or went, or a user's object appeared in the way.
    this.queue.add(ns);
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
          void this.deps.events.warn(this.target(after as Obj), w.reason, w.message);
    }
    void old;
  }

  private cacheBehind(ns: string): boolean {
    const names = this.written.get(ns);
    if (!names) return false;
    for (const name of names) {
      if (this.expectations.stale(`${ns}/${name}`, this.reflector.store.get(`${ns}/${name}`)?.metadata.resourceVersion)) return true;
      names.delete(name);
    }
    this.written.delete(ns);
    return false;
  }

  private target(obj: Obj) {
    return {
      apiVersion: obj.apiVersion,
      kind: obj.kind ?? this.type.kind,
      namespace: obj.metadata.namespace,
      name: obj.metadata.name,
      uid: obj.metadata.uid,
    };
  }

  private path(ns: string, name?: string): string {
    const base = collectionPath({ group: this.type.group, version: this.type.version, resource: this.type.resource, namespaced: true }, ns);
    return name ? `${base}/${name}` : base;
  }

  private async reconcile(ns: string): Promise<void> {
    if (!this.deps.isLeader()) return;
    if (this.cacheBehind(ns)) return; // the watch events of our last writes bring this key back
    const ctx = this.context();
    const existing = this.reflector.store.byNamespace(ns) as Obj[];
    const plan = planNamespace(ctx, ns, existing);
    if (plan.skipped === 'halted' || plan.skipped === 'not-synced') return; // copies stay while halted
    const log = this.deps.log;
    const failures: Error[] = [];
    const attempt = async (what: string, copyNs: string, name: string, source: string, fn: () => Promise<unknown>) => {
      try {
        const before = this.reflector.store.get(`${copyNs}/${name}`)?.metadata.resourceVersion;
        await fn();
        this.expectations.wrote(`${copyNs}/${name}`, before);
        let names = this.written.get(copyNs);
        if (!names) this.written.set(copyNs, (names = new Set()));
        names.add(name);
        // One line per copy is debug: a source at the root is one write per descendant. The
        // source's change is logged at info (onObject), failures as warnings.
        log.debug({ namespace: copyNs, name, type: typeKey(this.type), source }, what);
      } catch (err) {
        // A stale cache: the next pass sees the truth (no event for races).
        if (isConflict(err) || isAlreadyExists(err) || isNotFound(err)) {
          failures.push(err as Error);
          return;
        }
        failures.push(err as Error);
        const verb = what.startsWith('deleted') ? 'remove' : 'write';
        const msg = (err as Error).message;
        void this.deps.events.warn(
          { kind: this.type.kind, namespace: copyNs, name },
          EventReason.CannotUpdateObject,
          `Could not ${verb} from source namespace "${source}": ${msg}.`,
        );
        const src = this.sources.get(source, name)?.object as Obj | undefined;
        if (src)
          void this.deps.events.warn(
            this.target(src),
            EventReason.CannotPropagateObject,
            `Could not ${verb} to destination namespace "${copyNs}": ${msg}.`,
          );
      }
    };
    for (const c of plan.create)
      await attempt('created copy', ns, c.name, c.source, () => this.deps.writer.create(this.path(ns), c.object));
    for (const u of plan.update) {
      if (u.recreate) {
        // An immutable field changed (a RoleBinding's roleRef): delete our copy, then create it anew.
        await attempt('deleted copy to recreate it', ns, u.name, u.source, () =>
          this.deps.writer
            .delete(this.path(ns, u.name), { preconditions: { uid: u.existing.metadata?.uid } })
            .then(() => this.deps.writer.create(this.path(ns), u.object)),
        );
      } else {
        await attempt('updated copy', ns, u.name, u.source, () => this.deps.writer.replace(this.path(ns, u.name), u.object));
      }
    }
    for (const d of plan.delete) {
      // The preconditions make sure it is still our copy, as we saw it, that goes.
      await attempt('deleted copy', ns, d.name, d.inheritedFrom, () =>
        this.deps.writer.delete(this.path(ns, d.name), {
          preconditions: { uid: d.existing.metadata?.uid, resourceVersion: d.existing.metadata?.resourceVersion },
        }),
      );
    }
    const conflicts = plan.conflicts.map((c) => `${this.type.kind} "${c.name}" (from "${c.source}")`);
    this.deps.cache.update((h) => h.setObjectConflicts(ns, typeKey(this.type), conflicts));
    for (const c of plan.conflicts) {
      void this.deps.events.warn(
        this.target(c.existing as Obj),
        EventReason.CannotPropagateObject,
        `Not overwriting ${this.type.kind} "${c.name}": it was not created by HNC (no ${GROUP}/inherited-from label). Rename or remove it so that the one from namespace "${c.source}" can be propagated.`,
      );
    }
    const confirmed = plan.inSync.length + plan.create.length + plan.update.length - failures.length;
    if (this.propagated.get(ns) !== confirmed) {
      this.propagated.set(ns, Math.max(0, confirmed));
      this.deps.onCounts?.();
    }
    if (failures.length) throw failures[0];
    const since = this.pendingSince.get(ns);
    if (since !== undefined) {
      this.pendingSince.delete(ns);
      this.deps.metrics?.propagationSeconds.observe({ type: typeKey(this.type) }, (performance.now() - since) / 1000);
    }
  }
}
