// Desired state of namespaces, HierarchyConfigurations and anchors, computed from the hierarchy
// model alone, and the minimal change from what exists. Reconcilers only execute these plans.
import {
  AnchorState,
  Annotation,
  ConditionType,
  Finalizer,
  Label,
  NamespaceReason,
  Singleton,
  API_VERSION,
  Kind,
  treeLabel,
  treeLabelNamespace,
} from '../api/constants.js';
import type { Condition, HierarchyConfiguration, MetaKVP, SubnamespaceAnchor } from '../api/types.js';
import { jsonEqual } from '../util/equal.js';
import type { Hierarchy, NamespaceCondition } from './hierarchy.js';

export interface Metadata {
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** A JSON merge patch of metadata: a key set to null is removed. */
export interface MetadataPatch {
  labels?: Record<string, string | null>;
  annotations?: Record<string, string | null>;
}

// ---- namespaces --------------------------------------------------------------------------------

/** The labels and annotations a namespace should have, given what it has now (docs/behaviour.md §3.1, §3.4-§3.6). */
export function desiredNamespaceMetadata(h: Hierarchy, ns: string, current: Metadata): Metadata {
  return { labels: desiredNamespaceLabels(h, ns, current.labels), annotations: desiredNamespaceAnnotations(h, ns, current.annotations) };
}

// Both below build their answer in one pass, in the order copying `current`, deleting what HNC
// manages and adding what it wants would give (a kept key keeps its place, new keys come after):
// the propagation planner asks this of every namespace it plans (destinationLabels), and copying,
// deleting and re-adding keys unique to each namespace was most of a large preview's hierarchy part.

/** The labels of desiredNamespaceMetadata. */
export function desiredNamespaceLabels(h: Hierarchy, ns: string, current: Readonly<Record<string, string>>): Record<string, string> {
  const labels: Record<string, string> = {};
  if (!h.isManaged(ns)) {
    for (const k of Object.keys(current)) if (k !== Label.includedNamespace) labels[k] = current[k]!;
    return labels;
  }
  const external = h.isExternal(ns);
  for (const k of Object.keys(current)) {
    // HNC strips nothing from an external namespace; it only makes sure of its own depth label.
    if (!external && (treeLabelNamespace(k) !== undefined || h.policy.isManagedLabel(k))) continue;
    labels[k] = current[k]!;
  }
  labels[Label.includedNamespace] = 'true';
  if (external) {
    labels[treeLabel(ns)] = '0';
    return labels;
  }
  Object.assign(labels, h.treeLabels(ns), h.inheritedManaged(ns, 'labels'));
  return labels;
}

/** The annotations of desiredNamespaceMetadata. */
export function desiredNamespaceAnnotations(h: Hierarchy, ns: string, current: Readonly<Record<string, string>>): Record<string, string> {
  const annotations: Record<string, string> = {};
  const strip = h.isManaged(ns) && !h.isExternal(ns);
  for (const k of Object.keys(current)) if (!strip || !h.policy.isManagedAnnotation(k)) annotations[k] = current[k]!;
  if (strip) Object.assign(annotations, h.inheritedManaged(ns, 'annotations'));
  return annotations;
}

/** The smallest merge patch from current to desired metadata, or undefined if they agree. */
export function metadataPatch(current: Metadata, desired: Metadata): MetadataPatch | undefined {
  const diff = (cur: Record<string, string>, want: Record<string, string>) => {
    const out: Record<string, string | null> = {};
    for (const [k, v] of Object.entries(want)) if (cur[k] !== v) out[k] = v;
    // Own keys only: `in` would also find "constructor", "toString"... (legal label keys) on every object.
    for (const k of Object.keys(cur)) if (!Object.hasOwn(want, k)) out[k] = null;
    return Object.keys(out).length ? out : undefined;
  };
  const labels = diff(current.labels, desired.labels);
  const annotations = diff(current.annotations, desired.annotations);
  if (!labels && !annotations) return undefined;
  return { ...(labels && { labels }), ...(annotations && { annotations }) };
}

// ---- HierarchyConfigurations ---------------------------------------------------------------------

export type HierarchyAction = { action: 'none' } | { action: 'create' | 'update'; object: HierarchyConfiguration };

/**
 * What to do with a namespace's HierarchyConfiguration. `current` is the cached object (or
 * undefined); `now` stamps conditions that are new. Conditions that did not change keep their
 * lastTransitionTime, so an unchanged namespace is never rewritten.
 */
export function planHierarchy(h: Hierarchy, ns: string, current: HierarchyConfiguration | undefined, now: string): HierarchyAction {
  const facts = h.namespace(ns);
  if (!facts) return { action: 'none' };
  const base: HierarchyConfiguration = current
    ? structuredClone(current)
    : { apiVersion: API_VERSION, kind: Kind.HierarchyConfiguration, metadata: { name: Singleton.hierarchy, namespace: ns } };
  const finalizers = new Set(base.metadata.finalizers ?? []);
  const spec = { ...(base.spec ?? {}) };
  const status = { ...(base.status ?? {}) };

  if (!h.isManaged(ns)) {
    // Unmanaged: release the finalizer and forget children; the object itself is left (docs/behaviour.md §3.1).
    finalizers.delete(Finalizer.hasSubnamespace);
    delete status.children;
  } else {
    // While the namespace is being deleted, only anchors still holding their own finalizer need
    // this one: once they have released their subnamespaces, nothing here may wait for
    // kube-controller-manager's retry of a namespace with finalized content.
    const needed = facts.deleting ? h.anchorsHoldingFinalizer(ns) : h.anchorsIn(ns).length > 0;
    if (current?.metadata.deletionTimestamp) {
      // Being deleted by a user: let it go unless the namespace itself is going and needs it (docs/behaviour.md §3.3, §1.7).
      // Its status is still synced below, as HNC does: that is where DeletingCRD shows (docs/behaviour.md §3.7).
      if (!facts.deleting || !needed) finalizers.delete(Finalizer.hasSubnamespace);
    } else if (needed && !h.hierarchyCrdDeleting) finalizers.add(Finalizer.hasSubnamespace);
    else finalizers.delete(Finalizer.hasSubnamespace);
    const subnsOf = h.subnamespaceOf(ns);
    if (subnsOf) {
      // A subnamespace's parent and managed metadata come from its anchor (docs/behaviour.md §4.1).
      spec.parent = subnsOf;
      const anchor = h.anchor(subnsOf, ns);
      if (anchor) {
        setKvps(spec, 'labels', anchor.labels);
        setKvps(spec, 'annotations', anchor.annotations);
      }
    }
    const children = h.forest.children(ns);
    if (children.length) status.children = children;
    else delete status.children;
    const conditions = withTimes(namespaceConditions(h, ns), current?.status?.conditions, now);
    if (conditions.length) status.conditions = conditions;
    else delete status.conditions;
  }

  const desired: HierarchyConfiguration = { ...base, spec, status };
  desired.metadata = { ...base.metadata };
  if (finalizers.size) desired.metadata.finalizers = [...finalizers];
  else delete desired.metadata.finalizers;
  if (!Object.keys(status).length) delete desired.status;

  if (!current) {
    const trivial =
      !spec.parent && !status.children && !status.conditions && !finalizers.size && !spec.labels?.length && !spec.annotations?.length;
    // No object for a plain root with nothing to say, nor for a namespace on its way out.
    if (trivial || facts.deleting || h.hierarchyCrdDeleting) return { action: 'none' };
    return { action: 'create', object: desired };
  }
  const same =
    jsonEqual(current.spec ?? {}, desired.spec ?? {}) &&
    jsonEqual(current.status ?? {}, desired.status ?? {}) &&
    jsonEqual(current.metadata.finalizers ?? [], desired.metadata.finalizers ?? []);
  return same ? { action: 'none' } : { action: 'update', object: desired };
}

/** All conditions a namespace reports: AncestorHaltActivities first, then its own (docs/behaviour.md §2.1). */
export function namespaceConditions(h: Hierarchy, ns: string): NamespaceCondition[] {
  const own = h.ownConditions(ns);
  const haltedAncestor = own.some((c) => c.type === ConditionType.ActivitiesHalted) ? undefined : h.haltedAncestor(ns);
  if (haltedAncestor === undefined) return [...own];
  return [
    {
      type: ConditionType.ActivitiesHalted,
      reason: NamespaceReason.AncestorHaltActivities,
      message: `Propagation paused in "${ns}" and its descendants due to ActivitiesHalted condition on ancestor "${haltedAncestor}"`,
    },
    ...own,
  ];
}

/** An Event to record on a namespace whose conditions changed. */
export interface ConditionEvent {
  type: 'Warning' | 'Normal';
  reason: string;
  message: string;
}

/** The Events a change of conditions calls for: a Warning for each that appears, a Normal one for each that clears. */
export function conditionEvents(before: readonly Condition[], after: readonly Condition[]): ConditionEvent[] {
  const key = (c: Condition) => `${c.type}/${c.reason}/${c.message}`;
  const had = new Set(before.map(key));
  const has = new Set(after.map(key));
  return [
    ...after.filter((c) => !had.has(key(c))).map((c) => ({ type: 'Warning' as const, reason: c.reason, message: c.message })),
    ...before
      .filter((c) => !has.has(key(c)))
      .map((c) => ({
        type: 'Normal' as const,
        reason: `${c.reason}Cleared`,
        message: `Condition ${c.type} (${c.reason}) cleared: ${c.message}`,
      })),
  ];
}

function withTimes(conditions: NamespaceCondition[], existing: readonly Condition[] | undefined, now: string): Condition[] {
  return conditions.map((c) => {
    const same = existing?.find((e) => e.type === c.type && e.reason === c.reason && e.message === c.message && e.status === 'True');
    // Every condition, AncestorHaltActivities too (HNC stamped that one with the epoch), carries
    // the time it became true.
    return { type: c.type, status: 'True', reason: c.reason, message: c.message, lastTransitionTime: same?.lastTransitionTime ?? now };
  });
}

function setKvps(spec: { labels?: MetaKVP[]; annotations?: MetaKVP[] }, kind: 'labels' | 'annotations', kvps: readonly MetaKVP[]): void {
  if (kvps.length) spec[kind] = kvps.map((kv) => ({ key: kv.key, value: kv.value }));
  else delete spec[kind];
}

// ---- anchors -------------------------------------------------------------------------------------

export interface AnchorPlan {
  /** The status to report; undefined leaves it as it is. */
  state: AnchorState | undefined;
  finalizer: boolean;
  /** Metadata of the subnamespace to create, when it is missing. */
  create?: Metadata;
  deleteNamespace: boolean;
}

/** What the anchor `parent/child` should look like and do (docs/behaviour.md §4). */
export function planAnchor(h: Hierarchy, parent: string, child: string): AnchorPlan {
  const anchor = h.anchor(parent, child);
  const none: AnchorPlan = { state: undefined, finalizer: false, deleteNamespace: false };
  if (!anchor || !h.isManaged(parent)) return none;
  if (!h.isManaged(child)) return { ...none, state: AnchorState.Forbidden };
  const ns = h.namespace(child);
  let state = !ns ? AnchorState.Missing : ns.annotations[Annotation.subnamespaceOf] !== parent ? AnchorState.Conflict : AnchorState.Ok;
  // An anchor in Conflict whose namespace then goes (e.g. a detached subnamespace was deleted)
  // stays in Conflict and creates nothing: the namespace was not its to bring back (as HNC).
  if (!ns && anchor.state === AnchorState.Conflict) state = AnchorState.Conflict;
  // Uninstalling: finalize without cascading any deletion (docs/behaviour.md §3.7).
  if (h.anchorCrdDeleting) return { ...none, state };
  // The anchor's own namespace is being deleted: the anchor will be deleted too, whatever happens.
  const parentDeleting = h.namespace(parent)?.deleting === true;
  if (!anchor.deleting && !parentDeleting) {
    return {
      state,
      finalizer: true,
      deleteNamespace: false,
      ...(state === AnchorState.Missing && { create: newSubnamespaceMetadata(h, parent, child) }),
    };
  }
  if (state !== AnchorState.Ok) return { ...none, state };
  // An anchor deleted alone waits for its namespace to be gone. In a namespace being deleted it
  // lets go as soon as its namespace's deletion is issued, so kube-controller-manager finds no
  // finalizer and each level of a cascade does not wait for its retry.
  if (ns!.deleting) return { state, finalizer: !parentDeleting, deleteNamespace: false };
  // A namespace grafted by a user was not created for this anchor: it is never deleted with it
  // (it then reports SubnamespaceAnchorMissing); an admin who may delete it removes grafted-by.
  if (ns!.annotations[Annotation.graftedBy] !== undefined) return { ...none, state };
  // The webhook refuses this deletion; if it was bypassed, keep the namespace (it then reports
  // SubnamespaceAnchorMissing) rather than cascade without permission.
  if (h.forest.children(child).length > 0 && !h.allowsCascadingDeletion(child)) return { ...none, state };
  return { state, finalizer: !parentDeleting, deleteNamespace: true };
}

/**
 * The anchor as it should be once its plan ran: our finalizer present or not, its status the
 * plan's state (Ok when `created`, the subnamespace just made, so that both go in one write).
 * Undefined when that is what it already is: an unchanged anchor is never rewritten.
 */
export function desiredAnchor(current: SubnamespaceAnchor, plan: AnchorPlan, created = false): SubnamespaceAnchor | undefined {
  const state = created ? AnchorState.Ok : plan.state;
  const finalizers = new Set(current.metadata.finalizers ?? []);
  if (plan.finalizer) finalizers.add(Finalizer.anchor);
  else finalizers.delete(Finalizer.anchor);
  const desired: SubnamespaceAnchor = structuredClone(current);
  if (finalizers.size) desired.metadata.finalizers = [...finalizers];
  else delete desired.metadata.finalizers;
  if (state !== undefined) desired.status = { ...(desired.status ?? {}), status: state };
  const same =
    jsonEqual(desired.metadata.finalizers ?? [], current.metadata.finalizers ?? []) &&
    jsonEqual(desired.status ?? {}, current.status ?? {});
  return same ? undefined : desired;
}

/**
 * The metadata a new subnamespace is created with: already labelled as the hierarchy reconciler
 * would label it, so that its creation needs no second write.
 */
export function newSubnamespaceMetadata(h: Hierarchy, parent: string, child: string): Metadata {
  const labels: Record<string, string> = { [Label.includedNamespace]: 'true', [treeLabel(child)]: '0' };
  for (const [k, v] of Object.entries(h.treeLabels(parent))) labels[k] = String(Number(v) + 1);
  const anchor = h.anchor(parent, child);
  const legal = (kind: 'labels' | 'annotations') =>
    Object.fromEntries(
      (anchor?.[kind] ?? [])
        .filter((kv) => (kind === 'labels' ? h.policy.isManagedLabel(kv.key) : h.policy.isManagedAnnotation(kv.key)))
        .map((kv) => [kv.key, kv.value]),
    );
  Object.assign(labels, legal('labels'), h.inheritedManaged(parent, 'labels'));
  const annotations = { [Annotation.subnamespaceOf]: parent, ...legal('annotations'), ...h.inheritedManaged(parent, 'annotations') };
  return { labels, annotations };
}
