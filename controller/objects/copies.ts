// Brings one namespace's copies of one type in line with the plan core/propagation computes:
// creates, updates (or deletes and recreates, when an immutable field changed) and deletes copies,
// reports conflicts and failures, and counts the copies confirmed in place. It works from a store
// of the type's objects, the propagation context and the writes it may make, so a unit test builds
// it from memory (copies.test.ts); the propagator (propagator.ts) feeds it from a watch and a queue.
import { EventReason, GROUP } from '../../core/api/constants.js';
import type { PropagatableObject } from '../../core/propagation/copy.js';
import { planNamespace, type PropagationContext, type PropagationType } from '../../core/propagation/decide.js';
import { isAlreadyExists, isConflict, isNotFound } from '../../kube/client.js';
import { collectionPath } from '../../kube/discovery.js';
import { WriteExpectations } from '../../kube/expectations.js';
import type { Logger } from '../../kube/log.js';
import type { ReadonlyStore } from '../../kube/watch/store.js';
import type { EventTarget, Events, Writes } from '../../kube/writes.js';

export interface ResolvedType extends PropagationType {
  readonly version: string;
  readonly resource: string;
}

/** A copy's write needs only the new resourceVersion from the answer (kube/writes.ts). */
const METADATA = { answer: 'metadata' } as const;

export type Obj = PropagatableObject & { metadata: NonNullable<PropagatableObject['metadata']> & { name: string; namespace: string } };

export const typeKey = (t: { group: string; resource: string }): string => (t.group ? `${t.resource}.${t.group}` : t.resource);

export interface CopyReconcilerDeps {
  type: ResolvedType;
  /** Every object of the type, in every namespace (the watch cache). */
  objects: ReadonlyStore<Obj>;
  /** The propagation context now (the mode and the sources change between reconciles). */
  context: () => PropagationContext;
  writes: Writes;
  events: Events;
  log: Logger;
  /** Records the namespace's conflicts of this type in the hierarchy model (its condition). */
  setConflicts: (ns: string, conflicts: string[]) => void;
  /** Called when the number of copies confirmed in place changed. */
  onCounts?: () => void;
  /**
   * A watch event that arrived while our write of that copy was in flight turned out not to be
   * that write's echo: the namespace must be planned again (the propagator queues it).
   */
  requeue?: (ns: string) => void;
  expectations?: WriteExpectations;
}

/** What a reconcile did: `skipped` when it planned nothing (halted, not synced, or the cache is behind our writes). */
export type CopyReconcileResult = 'done' | 'skipped';

export class CopyReconciler {
  /** Copies written whose watch events may not have arrived yet, by namespace (read-your-writes). */
  private readonly expectations: WriteExpectations;
  private readonly written = new Map<string, Set<string>>();
  /** Copies confirmed in place per namespace (numPropagatedObjects). */
  private readonly propagated = new Map<string, number>();
  /**
   * What our last successful write of a copy left, until its watch event arrives: "ns/name" -> the
   * resourceVersion the server answered, or `gone:<uid>` for a delete.
   */
  private readonly landing = new Map<string, string>();
  /** Namespaces whose last reconcile was skipped for a cache behind our writes: their next event must bring them back. */
  private readonly waiting = new Set<string>();
  /**
   * Copies with a write of ours in flight: "ns/name" -> the marks (as in `landing`) of the watch
   * events that arrived before the answer. Under load the event often beats the answer; whether
   * it was the echo is decided when the answer comes.
   */
  private readonly inFlight = new Map<string, string[]>();

  constructor(private readonly deps: CopyReconcilerDeps) {
    this.expectations = deps.expectations ?? new WriteExpectations();
  }

  /** Copies confirmed in place, in every namespace. */
  get numPropagated(): number {
    let n = 0;
    for (const c of this.propagated.values()) n += c;
    return n;
  }

  /** Copies confirmed in place in one namespace. */
  propagatedIn(ns: string): number {
    return this.propagated.get(ns) ?? 0;
  }

  /**
   * True when a watch event only shows one of our own writes landing as we made it: the namespace
   * was planned with that write in mind, so it needs no reconcile for it (a source at the root
   * would otherwise cost every descendant a second, empty reconcile). Anything else (someone
   * else's change, a namespace waiting for the cache) is not an echo. An event of a copy whose
   * write is still in flight is held (true): when the answer comes, the namespace is queued
   * again (`requeue`) unless the event was exactly that write.
   */
  isEchoOfOwnWrite(event: 'ADDED' | 'MODIFIED' | 'DELETED', obj: Obj): boolean {
    const ns = obj.metadata.namespace;
    const key = `${ns}/${obj.metadata.name}`;
    const seen = event === 'DELETED' ? `gone:${obj.metadata.uid}` : obj.metadata.resourceVersion;
    const mark = this.landing.get(key);
    if (mark === undefined) {
      // Before the answer to our write of it: held until the answer says whose it was.
      const early = this.waiting.has(ns) ? undefined : this.inFlight.get(key);
      if (early === undefined || seen === undefined) return false;
      early.push(seen);
      return true;
    }
    this.landing.delete(key);
    if (mark !== seen || this.waiting.has(ns)) return false;
    // The cache has caught up with this write: nothing left to wait for.
    this.expectations.stale(key, obj.metadata.resourceVersion);
    const names = this.written.get(ns);
    names?.delete(obj.metadata.name);
    if (names?.size === 0) this.written.delete(ns);
    return true;
  }

  /**
   * Throws the first failed write (after attempting every other one), for the queue to retry.
   * `rid` names this reconcile on its log lines (kube/log-context.ts).
   */
  async reconcile(ns: string, rid?: string): Promise<CopyReconcileResult> {
    if (this.cacheBehind(ns)) {
      this.waiting.add(ns);
      return 'skipped'; // the watch events of our last writes bring this key back
    }
    this.waiting.delete(ns);
    const { type, objects, writes, log } = this.deps;
    const ctx = this.deps.context();
    const plan = planNamespace(ctx, ns, objects.byNamespace(ns));
    if (plan.skipped === 'not-synced') {
      // A namespace deleted (or not seen yet) holds no copy in place: it leaves the count
      // (numPropagatedObjects), which `kubectl hns set --dry-run` compares with its own.
      if (this.propagated.delete(ns)) this.deps.onCounts?.();
      return 'skipped';
    }
    if (plan.skipped === 'halted') return 'skipped'; // copies stay while halted
    const failures: Error[] = [];
    /** Runs one planned write; false if it failed (reported, and retried by the queue). */
    const attempt = async (what: string, name: string, source: string, fn: () => Promise<unknown>, goneUid?: string): Promise<boolean> => {
      const key = `${ns}/${name}`;
      const early: string[] = [];
      this.inFlight.set(key, early);
      try {
        const before = objects.get(key)?.metadata.resourceVersion;
        const stored = (await fn()) as Partial<Obj> | undefined;
        this.inFlight.delete(key);
        this.expectations.wrote(key, before);
        const landed = goneUid !== undefined ? `gone:${goneUid}` : stored?.metadata?.resourceVersion;
        if (early.length > 0) {
          // The watch event came first (the cache already shows the write): the namespace needs
          // planning again only if that event was not exactly our write.
          if (early.length > 1 || early[0] !== landed) this.deps.requeue?.(ns);
        } else if (landed !== undefined && objects.get(key)?.metadata.resourceVersion === before) this.landing.set(key, landed);
        let names = this.written.get(ns);
        if (!names) this.written.set(ns, (names = new Set()));
        names.add(name);
        // One line per copy is debug: a source at the root is one write per descendant. The
        // source's change is logged at info (by the propagator), failures as warnings.
        log.debug({ rid, namespace: ns, name, type: typeKey(type), source }, what);
        return true;
      } catch (err) {
        // Whatever came meanwhile was not our write (it failed): the retry plans with it anyway.
        this.inFlight.delete(key);
        if (early.length > 0) this.deps.requeue?.(ns);
        failures.push(err as Error);
        // A stale cache: the next pass sees the truth (no event for races).
        if (isConflict(err) || isAlreadyExists(err) || isNotFound(err)) return false;
        const verb = what.startsWith('deleted') ? 'remove' : 'write';
        const msg = (err as Error).message;
        void this.deps.events.warn(
          { kind: type.kind, namespace: ns, name },
          EventReason.CannotUpdateObject,
          `Could not ${verb} from source namespace "${source}": ${msg}.`,
        );
        const src = ctx.sources.get(source, name)?.object as Obj | undefined;
        if (src)
          void this.deps.events.warn(
            this.target(src),
            EventReason.CannotPropagateObject,
            `Could not ${verb} to destination namespace "${ns}": ${msg}.`,
          );
        return false;
      }
    };
    // Copies in place afterwards: those already as desired, and those written now.
    let confirmed = plan.inSync.length;
    for (const c of plan.create)
      if (await attempt('created copy', c.name, c.source, () => writes.create(this.path(ns), c.object, METADATA))) confirmed++;
    for (const u of plan.update) {
      const ok = u.recreate
        ? // An immutable field changed (a RoleBinding's roleRef): delete our copy, then create it anew
          // (two attempts, so a failure is reported as the step that failed).
          (await attempt('deleted copy to recreate it', u.name, u.source, () =>
            writes.delete(this.path(ns, u.name), { preconditions: { uid: u.existing.metadata?.uid } }),
          )) && (await attempt('recreated copy', u.name, u.source, () => writes.create(this.path(ns), u.object, METADATA)))
        : await attempt('updated copy', u.name, u.source, () => writes.replace(this.path(ns, u.name), u.object, METADATA));
      if (ok) confirmed++;
    }
    for (const d of plan.delete) {
      // The preconditions make sure it is still our copy, as we saw it, that goes. A copy that
      // failed to go was never counted as propagated: its failure changes no count.
      await attempt(
        'deleted copy',
        d.name,
        d.inheritedFrom,
        () =>
          writes.delete(this.path(ns, d.name), {
            preconditions: { uid: d.existing.metadata?.uid, resourceVersion: d.existing.metadata?.resourceVersion },
          }),
        d.existing.metadata?.uid,
      );
    }
    const conflicts = plan.conflicts.map((c) => `${type.kind} "${c.name}" (from "${c.source}")`);
    this.deps.setConflicts(ns, conflicts);
    for (const c of plan.conflicts) {
      void this.deps.events.warn(
        this.target(c.existing as Obj),
        EventReason.CannotPropagateObject,
        `Not overwriting ${type.kind} "${c.name}": it was not created by HNC (no ${GROUP}/inherited-from label). Rename or remove it so that the one from namespace "${c.source}" can be propagated.`,
      );
    }
    if (this.propagated.get(ns) !== confirmed) {
      this.propagated.set(ns, confirmed);
      this.deps.onCounts?.();
    }
    if (failures.length) throw failures[0];
    return 'done';
  }

  /** An Event's target for one of this type's objects. */
  target(obj: Obj): EventTarget {
    return {
      apiVersion: obj.apiVersion,
      kind: obj.kind ?? this.deps.type.kind,
      namespace: obj.metadata.namespace,
      name: obj.metadata.name,
      uid: obj.metadata.uid,
    };
  }

  /** True while the cache still shows what one of our last writes in the namespace replaced. */
  private cacheBehind(ns: string): boolean {
    const names = this.written.get(ns);
    if (!names) return false;
    for (const name of names) {
      if (this.expectations.stale(`${ns}/${name}`, this.deps.objects.get(`${ns}/${name}`)?.metadata.resourceVersion)) return true;
      names.delete(name);
    }
    this.written.delete(ns);
    return false;
  }

  private path(ns: string, name?: string): string {
    const { group, version, resource } = this.deps.type;
    const base = collectionPath({ group, version, resource, namespaced: true }, ns);
    return name ? `${base}/${name}` : base;
  }
}
