// Propagation decisions for one type, as pure functions of the hierarchy model and the objects
// (docs/behaviour.md §5.2-§5.8), with the safety rules of hnc-ts on top of HNC's:
// * only objects carrying `hnc.x-k8s.io/inherited-from` (copies HNC made) are ever updated or
//   deleted; an object a user made with a source's name is a conflict: reported, never touched
//   (HNC overwrote it);
// * an unchanged copy is never rewritten.
//
// Which source reaches a namespace: among same-named sources in its strict ancestors, from the
// root down, the first that "should propagate" there (selectors, mode, built-in exclusions). So
// the highest ancestor wins. Nothing is written into a namespace that is halted or below a halted
// one: its copies stay as they are until the halt is lifted.
import {
  Annotation,
  PropagationMode,
  SECRET_TYPE_HELM_RELEASE,
  SECRET_TYPE_SA_TOKEN,
  UNPROPAGATED_CONFIGMAPS,
  DEFAULT_NOPROPAGATION_LABEL,
  EventReason,
} from '../api/constants.js';
import { isPropagating } from '../api/types.js';
import type { Hierarchy } from '../hierarchy/hierarchy.js';
import { desiredNamespaceLabels } from '../hierarchy/plan.js';
import {
  DEFAULT_COPY_POLICY,
  desiredCopy,
  inheritedFrom,
  isCurrentCopy,
  isCopy,
  needsRecreate,
  updatedCopy,
  type CopyPolicy,
  type PropagatableObject,
  type TypeRef,
} from './copy.js';
import { evaluateSelectors, parseSelectors } from './selectors.js';

/** A propagated type and the mode HNCConfiguration gives it. */
export interface PropagationType extends TypeRef {
  readonly mode: PropagationMode;
}

export interface PropagationOptions {
  /** Which labels and annotations are never copied. Default: DEFAULT_COPY_POLICY. */
  readonly copy?: CopyPolicy;
  /** --nopropagation-label: objects with any of these exact labels are never propagated. Default: Rancher's. */
  readonly noPropagationLabels?: readonly { readonly key: string; readonly value: string }[];
}

/** Everything one decision needs. */
export interface PropagationContext {
  readonly hierarchy: Hierarchy;
  readonly type: PropagationType;
  readonly sources: SourceSet;
  readonly options?: PropagationOptions;
}

export interface Source {
  readonly namespace: string;
  readonly name: string;
  readonly object: PropagatableObject;
}

/** The source objects of one type, indexed by namespace and by name. Copies are never sources. */
export class SourceSet {
  private readonly byNamespace = new Map<string, Map<string, Source>>();
  private readonly byName = new Map<string, Set<string>>();

  constructor(sources: Iterable<Source> = []) {
    for (const s of sources) this.set(s);
  }

  /** Adds or replaces a source; a copy (inherited-from label) is refused and removes any entry. */
  set(source: Source): void {
    if (isCopy(source.object)) {
      this.delete(source.namespace, source.name);
      return;
    }
    let inNs = this.byNamespace.get(source.namespace);
    if (!inNs) this.byNamespace.set(source.namespace, (inNs = new Map()));
    inNs.set(source.name, source);
    let nss = this.byName.get(source.name);
    if (!nss) this.byName.set(source.name, (nss = new Set()));
    nss.add(source.namespace);
  }

  delete(namespace: string, name: string): boolean {
    const inNs = this.byNamespace.get(namespace);
    if (!inNs?.delete(name)) return false;
    if (inNs.size === 0) this.byNamespace.delete(namespace);
    const nss = this.byName.get(name);
    nss?.delete(namespace);
    if (nss?.size === 0) this.byName.delete(name);
    return true;
  }

  get(namespace: string, name: string): Source | undefined {
    return this.byNamespace.get(namespace)?.get(name);
  }

  /** The sources in one namespace. */
  in(namespace: string): Source[] {
    return [...(this.byNamespace.get(namespace)?.values() ?? [])];
  }

  /** The namespaces holding a source of this name, sorted. */
  holding(name: string): string[] {
    return [...(this.byName.get(name) ?? [])].sort();
  }

  get size(): number {
    let n = 0;
    for (const m of this.byNamespace.values()) n += m.size;
    return n;
  }

  *[Symbol.iterator](): IterableIterator<Source> {
    for (const m of this.byNamespace.values()) yield* m.values();
  }
}

// ---- should a source propagate into a namespace? ---------------------------------------------------

/** Why an object is never propagated whatever its selectors say (docs/behaviour.md §5.5), or undefined. */
export function builtInExclusion(obj: PropagatableObject, type: TypeRef, options: PropagationOptions = {}): string | undefined {
  const o = obj as { type?: unknown };
  const meta = obj.metadata ?? {};
  if (type.group === '' && type.kind === 'Secret') {
    if (o.type === SECRET_TYPE_SA_TOKEN) return 'service account token Secrets are never propagated';
    if (o.type === SECRET_TYPE_HELM_RELEASE) return 'Helm release Secrets are never propagated';
  }
  if (type.group === '' && type.kind === 'ConfigMap' && (UNPROPAGATED_CONFIGMAPS as readonly string[]).includes(meta.name ?? '')) {
    return `the ConfigMap ${meta.name} is created in every namespace by the cluster and never propagated`;
  }
  for (const { key, value } of options.noPropagationLabels ?? [DEFAULT_NOPROPAGATION_LABEL]) {
    if (meta.labels?.[key] === value) return `objects labelled ${key}=${value} are never propagated`;
  }
  if (meta.annotations?.[Annotation.openshiftDescription] !== undefined)
    return `objects annotated ${Annotation.openshiftDescription} are never propagated`;
  if ((meta.finalizers?.length ?? 0) > 0) return 'Objects with finalizers cannot be propagated';
  return undefined;
}

/** Whether a source propagates into one namespace (not to be confused with an admission Decision). */
export interface PropagationDecision {
  readonly propagate: boolean;
  /** A selector annotation that does not parse (the object propagates nowhere). */
  readonly error?: string;
}

/**
 * Whether a source should propagate into a namespace with the given labels (its full label set),
 * under the type's mode: docs/behaviour.md §5.4 in full (selectors, then built-in exclusions, Remove and Ignore).
 */
export function shouldPropagate(
  obj: PropagatableObject,
  destinationLabels: Readonly<Record<string, string>>,
  type: PropagationType,
  options: PropagationOptions = {},
): PropagationDecision {
  if (!isPropagating(type.mode)) return { propagate: false };
  const d = evaluateSelectors(obj.metadata?.annotations, destinationLabels, type.mode);
  if (!d.propagate) return d;
  if (builtInExclusion(obj, type, options) !== undefined) return { propagate: false };
  return { propagate: true };
}

export interface SourceWarning {
  readonly reason: EventReason;
  readonly message: string;
}

/**
 * The Warning events a source deserves (docs/behaviour.md §2.4): CannotParseSelector per selector annotation that
 * does not parse, CannotPropagateObject for an object with finalizers. Only for types whose mode
 * propagates.
 */
export function sourceWarnings(obj: PropagatableObject, type: PropagationType): SourceWarning[] {
  if (!isPropagating(type.mode)) return [];
  const out: SourceWarning[] = parseSelectors(obj.metadata?.annotations).errors.map((e) => ({
    reason: EventReason.CannotParseSelector,
    message: e.message,
  }));
  if ((obj.metadata?.finalizers?.length ?? 0) > 0)
    out.push({ reason: EventReason.CannotPropagateObject, message: 'Objects with finalizers cannot be propagated' });
  return out;
}

// ---- one destination namespace ---------------------------------------------------------------------

/** The labels a namespace is matched with: the full set the hierarchy reconciler gives it. */
export function destinationLabels(h: Hierarchy, ns: string): Readonly<Record<string, string>> {
  return h.memo('destination-labels', ns, () => desiredNamespaceLabels(h, ns, h.namespace(ns)?.labels ?? {}));
}

/** Why nothing at all is decided for a namespace, or undefined if it can receive copies. */
export type SkipReason = 'ignored' | 'unmanaged' | 'not-synced' | 'halted';

export function skipReason(ctx: PropagationContext, ns: string): SkipReason | undefined {
  const h = ctx.hierarchy;
  if (!isPropagating(ctx.type.mode) && ctx.type.mode !== PropagationMode.Remove) return 'ignored';
  if (!h.isManaged(ns)) return 'unmanaged';
  if (!h.forest.exists(ns)) return 'not-synced';
  if (h.isHaltedOrBelowHalted(ns)) return 'halted';
  return undefined;
}

export interface DesiredCopy {
  /** The namespace of the source it is copied from. */
  readonly source: string;
  /** The source object itself. */
  readonly from: PropagatableObject;
  /** The copy as it should be in the destination namespace (made when first read). */
  readonly object: PropagatableObject;
}

/**
 * The copies a namespace should hold, by name: for each name, the source of the highest ancestor
 * that propagates into it. Empty when the namespace is skipped (see skipReason) or the mode is
 * Remove.
 */
export function desiredCopies(ctx: PropagationContext, ns: string): Map<string, DesiredCopy> {
  const out = new Map<string, DesiredCopy>();
  if (skipReason(ctx, ns) !== undefined || ctx.type.mode === PropagationMode.Remove) return out;
  const h = ctx.hierarchy;
  const labels = destinationLabels(h, ns);
  for (const anc of h.forest.ancestors(ns)) {
    for (const src of ctx.sources.in(anc)) {
      if (out.has(src.name)) continue; // a higher ancestor already provides this name
      if (!shouldPropagate(src.object, labels, ctx.type, ctx.options).propagate) continue;
      out.set(src.name, new LazyDesiredCopy(anc, src.object, ns, ctx.options?.copy ?? DEFAULT_COPY_POLICY));
    }
  }
  return out;
}

// The two classes below make their object when it is first read. Classes rather than object
// literals with a getter: a literal makes its getter (and a closure) anew for each of the tens of
// thousands of copies a large move plans, a class shares one.

class LazyDesiredCopy implements DesiredCopy {
  readonly #namespace: string;
  readonly #policy: CopyPolicy;
  #made: PropagatableObject | undefined;
  constructor(
    readonly source: string,
    readonly from: PropagatableObject,
    namespace: string,
    policy: CopyPolicy,
  ) {
    this.#namespace = namespace;
    this.#policy = policy;
  }
  get object(): PropagatableObject {
    return (this.#made ??= desiredCopy(this.from, this.source, this.#namespace, this.#policy));
  }
}

class PlannedCreate implements CopyCreate {
  readonly source: string;
  readonly from: PropagatableObject;
  readonly #want: DesiredCopy;
  constructor(
    readonly name: string,
    want: DesiredCopy,
  ) {
    this.source = want.source;
    this.from = want.from;
    this.#want = want;
  }
  get object(): PropagatableObject {
    return this.#want.object;
  }
}

export interface CopyCreate {
  readonly name: string;
  readonly source: string;
  /** The source object the copy is made from. */
  readonly from: PropagatableObject;
  /** The object to create (made when first read: a preview never needs most of them). */
  readonly object: PropagatableObject;
}

export interface CopyUpdate {
  readonly name: string;
  readonly source: string;
  readonly existing: PropagatableObject;
  /**
   * The object to write: for an update, the desired copy with the existing resourceVersion (and
   * the finalizers, ownerReferences and status others hold); when `recreate`, the object to create
   * after deleting `existing`.
   */
  readonly object: PropagatableObject;
  /** An immutable field changes (e.g. a RoleBinding's roleRef): delete, then create. */
  readonly recreate: boolean;
}

export interface CopyDelete {
  readonly name: string;
  readonly existing: PropagatableObject;
  /** The namespace the copy says it came from. */
  readonly inheritedFrom: string;
  readonly reason: 'removed-mode' | 'no-source';
}

/** A user's object with the name of a source that would propagate here: left alone, reported. */
export interface Conflict {
  readonly name: string;
  /** The namespace of the source that would have been copied here. */
  readonly source: string;
  readonly existing: PropagatableObject;
}

export interface NamespacePlan {
  readonly namespace: string;
  /** Set when nothing is decided for the namespace (all lists are then empty). */
  readonly skipped: SkipReason | undefined;
  readonly create: CopyCreate[];
  readonly update: CopyUpdate[];
  readonly delete: CopyDelete[];
  readonly conflicts: Conflict[];
  /** Names of copies that are already as desired (counted as propagated, never rewritten). */
  readonly inSync: string[];
}

/**
 * What to do in namespace `ns`, given every object of the type it holds now. Updates and deletes
 * only ever target objects carrying the inherited-from label; objects being deleted are left to
 * finish. Lists are sorted by name.
 */
export function planNamespace(ctx: PropagationContext, ns: string, existing: Iterable<PropagatableObject>): NamespacePlan {
  const plan: NamespacePlan = {
    namespace: ns,
    skipped: skipReason(ctx, ns),
    create: [],
    update: [],
    delete: [],
    conflicts: [],
    inSync: [],
  };
  if (plan.skipped !== undefined) return plan;

  const desired = desiredCopies(ctx, ns);
  const present = new Set<string>();
  for (const obj of existing) {
    const name = obj.metadata?.name;
    if (name === undefined) continue;
    present.add(name);
    if (obj.metadata?.deletionTimestamp !== undefined) continue; // going away; replanned when gone
    const want = desired.get(name);
    const from = inheritedFrom(obj);
    if (from === undefined) {
      // A user's object: never touched. It is a conflict if a source should be copied here.
      if (want) plan.conflicts.push({ name, source: want.source, existing: obj });
    } else if (!want) {
      plan.delete.push({
        name,
        existing: obj,
        inheritedFrom: from,
        reason: ctx.type.mode === PropagationMode.Remove ? 'removed-mode' : 'no-source',
      });
    } else if (isCurrentCopy(obj, want.from, want.source, ctx.options?.copy ?? DEFAULT_COPY_POLICY)) {
      plan.inSync.push(name);
    } else {
      const recreate = needsRecreate(obj, want.object, ctx.type);
      plan.update.push({
        name,
        source: want.source,
        existing: obj,
        object: recreate ? want.object : updatedCopy(obj, want.object),
        recreate,
      });
    }
  }
  for (const [name, want] of desired) {
    if (!present.has(name)) plan.create.push(new PlannedCreate(name, want));
  }
  const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  plan.create.sort(byName);
  plan.update.sort(byName);
  plan.delete.sort(byName);
  plan.conflicts.sort(byName);
  plan.inSync.sort();
  return plan;
}

/** True if the plan writes nothing. */
export function isEmptyPlan(plan: NamespacePlan): boolean {
  return plan.create.length === 0 && plan.update.length === 0 && plan.delete.length === 0;
}

// ---- what a source change affects ------------------------------------------------------------------

export interface SourceChange {
  readonly namespace: string;
  readonly name: string;
  /** The source as it was (undefined if it did not exist or was not known as a source). */
  readonly before?: PropagatableObject;
  /** The source as it is now (undefined if it was deleted or became a copy). */
  readonly after?: PropagatableObject;
}

/**
 * The namespaces to re-plan for one name after a source changed: the descendants of the source's
 * namespace that can receive copies (managed, synced, not halted) and into which the source
 * propagates before or after the change. Elsewhere the change decides nothing: the source was not
 * a candidate there either way. Empty when the source's namespace is itself halted (copies stay
 * put until the halt is lifted, which re-plans the subtree). `hasCopy` adds namespaces holding a
 * copy of that name from this namespace (e.g. left behind by an earlier run), so they are
 * cleaned up too.
 */
export function namespacesToReplan(ctx: PropagationContext, change: SourceChange, hasCopy?: (ns: string) => boolean): string[] {
  const h = ctx.hierarchy;
  if (!h.forest.exists(change.namespace) || h.isHaltedOrBelowHalted(change.namespace)) return [];
  const out: string[] = [];
  for (const ns of h.forest.descendants(change.namespace)) {
    if (skipReason(ctx, ns) !== undefined) continue;
    if (hasCopy?.(ns)) {
      out.push(ns);
      continue;
    }
    const labels = destinationLabels(h, ns);
    const reaches = (obj: PropagatableObject | undefined) =>
      obj !== undefined && !isCopy(obj) && shouldPropagate(obj, labels, ctx.type, ctx.options).propagate;
    if (reaches(change.before) || reaches(change.after)) out.push(ns);
  }
  return out;
}

/**
 * The descendants of `namespace` that hold a source named `name` into which `obj` would
 * propagate, sorted: what the objects webhook refuses (409, docs/behaviour.md §7.6), since that source would
 * otherwise stand in the way of the new one. Selectors are evaluated against each destination's
 * labels (docs/behaviour.md §7.6; HNC used the source namespace's labels here).
 */
export function conflictingDescendants(ctx: PropagationContext, namespace: string, name: string, obj: PropagatableObject): string[] {
  const h = ctx.hierarchy;
  if (!h.forest.exists(namespace)) return [];
  return ctx.sources
    .holding(name)
    .filter((ns) => ns !== namespace && h.forest.isAncestor(namespace, ns) && h.isManaged(ns))
    .filter((ns) => shouldPropagate(obj, destinationLabels(h, ns), ctx.type, ctx.options).propagate);
}
