// What one hierarchy change would do (`kubectl hns set/create/delete --dry-run`, docs/kubectl-hns.md),
// computed from the objects as they are, with the controller's own decisions: the Hierarchy model
// for tree labels and halts (core/hierarchy), `planNamespace` for copies (core/propagation).
// Pure: the plugin reads the cluster and renders the answer.
import { applyPlan, diffAccess, grantsOf, type AccessChange, type Grant, type RoleBindingObject } from '../access/access.js';
import { Label, PropagationMode, RBAC_GROUP, treeLabelNamespace } from '../api/constants.js';
import type { Hierarchy } from '../hierarchy/hierarchy.js';
import { inheritedFrom, isCopy, type PropagatableObject } from '../propagation/copy.js';
import {
  SourceSet,
  destinationLabels,
  isEmptyPlan,
  planNamespace,
  skipReason,
  type NamespacePlan,
  type PropagationContext,
  type PropagationOptions,
  type PropagationType,
  type Source,
} from '../propagation/decide.js';
import { selectorMatches, type LabelSelector, type Operator } from '../propagation/selectors.js';
import { jsonEqual } from '../util/equal.js';
import { applyChange, hierarchyModel, type HierarchyChange, type HierarchySnapshot } from './model.js';

/** A propagated type with the objects of it the preview may use (sources and copies alike). */
export interface TypeObjects {
  readonly type: PropagationType & { readonly resource: string };
  readonly objects: readonly PropagatableObject[];
}

/** A Kubernetes LabelSelector object (matchLabels and matchExpressions), as NetworkPolicies hold them. */
export interface LabelSelectorObject {
  matchLabels?: Record<string, string> | null;
  matchExpressions?: { key: string; operator: string; values?: string[] | null }[] | null;
}

/** The part of a networking.k8s.io/v1 NetworkPolicy a preview reads. */
export interface NetworkPolicyObject {
  metadata?: { name?: string; namespace?: string };
  spec?: {
    ingress?: { from?: { namespaceSelector?: LabelSelectorObject | null }[] | null }[] | null;
    egress?: { to?: { namespaceSelector?: LabelSelectorObject | null }[] | null }[] | null;
  };
}

export interface PreviewInput extends HierarchySnapshot {
  readonly types: readonly TypeObjects[];
  readonly networkPolicies: readonly NetworkPolicyObject[];
  /** ClusterRole names, to tell bindings to missing roles apart; undefined when they could not be read. */
  readonly clusterRoles?: readonly string[];
  readonly options?: PropagationOptions;
}

/** One tree label that appears, disappears or changes its depth. */
export interface TreeLabelChange {
  readonly key: string;
  readonly before?: string;
  readonly after?: string;
}

export interface NamespaceLabelChanges {
  readonly namespace: string;
  /** Sorted by key. */
  readonly treeLabels: TreeLabelChange[];
}

/** A NetworkPolicy whose namespaceSelectors start or stop matching namespaces. */
export interface NetworkPolicyChange {
  readonly namespace: string;
  readonly name: string;
  /** Namespaces a namespaceSelector of the policy matches after the change and not before, sorted. */
  readonly startsMatching: string[];
  readonly stopsMatching: string[];
}

export interface CopyChange {
  readonly group: string;
  readonly kind: string;
  readonly resource: string;
  readonly namespace: string;
  readonly name: string;
  /** The namespace of the source the copy is (or was) made from. */
  readonly source: string;
  /** For updates: the copy is deleted and created again (an immutable field changes). */
  readonly recreate?: boolean;
  /** For deletes: why the copy goes. */
  readonly reason?: 'no-source' | 'removed-mode' | 'namespace-deleted';
}

/** A user's object that would keep a source from being copied (reported, never overwritten). */
export interface CopyConflict {
  readonly group: string;
  readonly kind: string;
  readonly resource: string;
  readonly namespace: string;
  readonly name: string;
  readonly source: string;
}

export interface CopyChanges {
  readonly create: CopyChange[];
  readonly update: CopyChange[];
  readonly delete: CopyChange[];
  readonly conflicts: CopyConflict[];
}

/** A namespace that would be halted by the change: nothing is propagated into it, its copies stay. */
export interface HaltedNamespace {
  readonly namespace: string;
  /** The halted namespace (itself or the ancestor) and its condition's message. */
  readonly haltedAt: string;
  readonly message: string;
}

export interface Preview {
  readonly change: HierarchyChange;
  readonly createdNamespaces: string[];
  readonly deletedNamespaces: string[];
  /** Namespaces whose ancestry, labels or halted state change, sorted. */
  readonly affectedNamespaces: string[];
  readonly labels: NamespaceLabelChanges[];
  readonly networkPolicies: NetworkPolicyChange[];
  readonly copies: CopyChanges;
  readonly halted: HaltedNamespace[];
  /** Who gains, loses or keeps through other bindings which role in which namespace (core/access). */
  readonly access: AccessChange[];
}

// ---- the model before and after ---------------------------------------------------------------------

/**
 * What one namespace is in one model: its place in the hierarchy (read before any object is, see
 * startPreview) and, once the objects are known, its plans.
 */
interface NamespaceState {
  /** Its proper ancestors, root first. */
  readonly ancestors: readonly string[];
  /** Halted or below a halted namespace. */
  readonly halted: boolean;
  /** The labels the hierarchy reconciler would give it (tree and managed labels included). */
  readonly labels: Readonly<Record<string, string>>;
  /** Its plan (planNamespace) for each type, in the input's order; set by finish. */
  plans: readonly NamespacePlan[];
}

/** The namespaces that exist in one model, read in that model. */
type Side = ReadonlyMap<string, NamespaceState>;

/** One type's objects by namespace and its sources. */
interface PreparedType {
  readonly type: TypeObjects['type'];
  readonly byNamespace: ReadonlyMap<string, readonly PropagatableObject[]>;
  readonly sources: readonly Source[];
}

/**
 * Sources become frozen shallow copies: propagation prepares a frozen source once for all its
 * copies (as for the watch caches' objects), and a source reaches every namespace below it.
 */
function prepareType({ type, objects }: TypeObjects): PreparedType {
  const byNamespace = new Map<string, PropagatableObject[]>();
  const sources: Source[] = [];
  for (const o of objects) {
    const { namespace, name } = o.metadata ?? {};
    if (namespace === undefined) continue;
    const copy = isCopy(o);
    const object = copy || Object.isFrozen(o) ? o : Object.freeze({ ...o });
    let list = byNamespace.get(namespace);
    if (!list) byNamespace.set(namespace, (list = []));
    list.push(object);
    if (name !== undefined && !copy) sources.push({ namespace, name, object });
  }
  return { type, byNamespace, sources };
}

/** A propagation context per type on `h`, without the sources in namespaces `skip` (deleted ones). */
function contexts(
  h: Hierarchy,
  types: readonly PreparedType[],
  skip: ReadonlySet<string>,
  options?: PropagationOptions,
): PropagationContext[] {
  return types.map((t) => ({
    hierarchy: h,
    type: t.type,
    sources: new SourceSet(skip.size ? t.sources.filter((s) => !skip.has(s.namespace)) : t.sources),
    ...(options && { options }),
  }));
}

/** A namespace's place in `h`; planNamespace memoizes nothing more than the labels read here. */
function readPlace(h: Hierarchy, ns: string): NamespaceState {
  return { ancestors: h.forest.ancestors(ns), halted: h.isHaltedOrBelowHalted(ns), labels: destinationLabels(h, ns), plans: [] };
}

/** The subtree of `root` in `h` (a move, a cycle, a halt all stay within it; a deletion's too). */
const subtreeOf = (h: Hierarchy, root: string): string[] => (h.forest.has(root) ? [root, ...h.forest.descendants(root)] : [root]);

const sortStrings = (xs: Iterable<string>): string[] => [...xs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

const sameStrings = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * The namespaces whose ancestry, halted state or labels (tree and managed, as the hierarchy
 * reconciler would write them) differ, or that exist on one side only; sorted.
 */
function affectedNamespaces(candidates: Iterable<string>, before: Side, after: Side): string[] {
  const out: string[] = [];
  for (const ns of candidates) {
    const b = before.get(ns);
    const a = after.get(ns);
    if (!b || !a || !sameStrings(b.ancestors, a.ancestors) || b.halted !== a.halted || !jsonEqual(b.labels, a.labels)) out.push(ns);
  }
  return sortStrings(out);
}

function treeLabelChanges(affected: readonly string[], before: Side, after: Side): NamespaceLabelChanges[] {
  const out: NamespaceLabelChanges[] = [];
  for (const ns of affected) {
    const b = treeLabelsOf(before.get(ns)?.labels);
    const a = treeLabelsOf(after.get(ns)?.labels);
    const keys = [...b.keys()];
    for (const k of a.keys()) if (!b.has(k)) keys.push(k);
    const changes: TreeLabelChange[] = [];
    for (const key of sortStrings(keys)) {
      const was = b.get(key);
      const will = a.get(key);
      if (was === will) continue;
      const change: { key: string; before?: string; after?: string } = { key };
      if (was !== undefined) change.before = was;
      if (will !== undefined) change.after = will;
      changes.push(change);
    }
    if (changes.length) out.push({ namespace: ns, treeLabels: changes });
  }
  return out;
}

/** The tree labels among a namespace's labels (a map: their keys are unique to each namespace). */
function treeLabelsOf(labels: Readonly<Record<string, string>> | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (labels) for (const k of Object.keys(labels)) if (treeLabelNamespace(k) !== undefined) out.set(k, labels[k]!);
  return out;
}

// ---- NetworkPolicies ----------------------------------------------------------------------------

const OPERATORS: Readonly<Record<string, Operator>> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' };

/** A LabelSelector object as a selector (Kubernetes' LabelSelectorAsSelector); undefined if an operator is unknown. */
export function labelSelectorFromObject(sel: LabelSelectorObject): LabelSelector | undefined {
  const requirements: LabelSelector['requirements'][number][] = [];
  for (const [key, value] of Object.entries(sel.matchLabels ?? {})) requirements.push({ key, operator: '=', values: [value] });
  for (const e of sel.matchExpressions ?? []) {
    const operator = OPERATORS[e.operator];
    if (!operator) return undefined;
    requirements.push({ key: e.key, operator, values: sortStrings(new Set(e.values ?? [])) });
  }
  return { requirements };
}

function namespaceSelectors(np: NetworkPolicyObject): LabelSelector[] {
  const peers = [...(np.spec?.ingress ?? []).flatMap((r) => r.from ?? []), ...(np.spec?.egress ?? []).flatMap((r) => r.to ?? [])];
  const out: LabelSelector[] = [];
  for (const p of peers) {
    if (!p.namespaceSelector) continue;
    const sel = labelSelectorFromObject(p.namespaceSelector);
    if (sel) out.push(sel);
  }
  return out;
}

/**
 * The NetworkPolicies with a namespaceSelector that starts or stops matching an affected namespace
 * (a namespace matches a policy when any of its peers' namespaceSelectors matches its labels).
 */
function networkPolicyChanges(
  affected: readonly string[],
  before: Side,
  after: Side,
  policies: readonly NetworkPolicyObject[],
): NetworkPolicyChange[] {
  const out: NetworkPolicyChange[] = [];
  for (const np of policies) {
    const selectors = namespaceSelectors(np);
    if (!selectors.length) continue;
    const matches = (labels: Readonly<Record<string, string>> | undefined) => !!labels && selectors.some((s) => selectorMatches(s, labels));
    const startsMatching: string[] = [];
    const stopsMatching: string[] = [];
    for (const ns of affected) {
      const b = matches(before.get(ns)?.labels);
      const a = matches(after.get(ns)?.labels);
      if (a && !b) startsMatching.push(ns);
      if (b && !a) stopsMatching.push(ns);
    }
    if (startsMatching.length || stopsMatching.length)
      out.push({ namespace: np.metadata?.namespace ?? '', name: np.metadata?.name ?? '', startsMatching, stopsMatching });
  }
  return out.sort((x, y) => (x.namespace + '/' + x.name < y.namespace + '/' + y.name ? -1 : 1));
}

// ---- copies ---------------------------------------------------------------------------------------

/**
 * The copies the controller would create, update and delete because of the change, and the user
 * objects that would block a copy: each affected namespace planned by `planNamespace` in the model
 * after the change, against what it holds now, less what the same plan in the model before the
 * change already calls for (work the controller has pending anyway). Copies in deleted namespaces
 * go with them.
 */
function copyChanges(
  types: readonly PreparedType[],
  affected: readonly string[],
  gone: ReadonlySet<string>,
  before: Side,
  after: Side,
): CopyChanges {
  const out: CopyChanges = { create: [], update: [], delete: [], conflicts: [] };
  types.forEach(({ type, byNamespace }, i) => {
    const entry = (ns: string, name: string, source: string) => ({
      group: type.group,
      kind: type.kind,
      resource: type.resource,
      namespace: ns,
      name,
      source,
    });
    for (const ns of affected) {
      if (gone.has(ns)) {
        for (const o of byNamespace.get(ns) ?? []) {
          const from = inheritedFrom(o);
          if (from !== undefined) out.delete.push({ ...entry(ns, o.metadata?.name ?? '', from), reason: 'namespace-deleted' });
        }
        continue;
      }
      const planned = after.get(ns)?.plans[i];
      if (!planned) continue;
      const already = pendingKeys(before.get(ns)?.plans[i]);
      // Most namespaces have nothing pending before the change: no key to make for them.
      const pending = already.size > 0;
      for (const c of planned.create)
        if (!pending || !already.has(`create/${c.name}/${c.source}`)) out.create.push(entry(ns, c.name, c.source));
      for (const u of planned.update)
        if (!pending || !already.has(`update/${u.name}/${u.source}`))
          out.update.push({ ...entry(ns, u.name, u.source), recreate: u.recreate });
      for (const d of planned.delete)
        if (!pending || !already.has(`delete/${d.name}/${d.inheritedFrom}`))
          out.delete.push(Object.assign(entry(ns, d.name, d.inheritedFrom), { reason: d.reason }));
      for (const c of planned.conflicts)
        if (!pending || !already.has(`conflict/${c.name}/${c.source}`)) out.conflicts.push(entry(ns, c.name, c.source));
    }
  });
  return out;
}

const NOTHING_PENDING: ReadonlySet<string> = new Set();

function pendingKeys(plan: NamespacePlan | undefined): ReadonlySet<string> {
  if (!plan || (isEmptyPlan(plan) && plan.conflicts.length === 0)) return NOTHING_PENDING;
  const keys = new Set<string>();
  for (const c of plan.create) keys.add(`create/${c.name}/${c.source}`);
  for (const u of plan.update) keys.add(`update/${u.name}/${u.source}`);
  for (const d of plan.delete) keys.add(`delete/${d.name}/${d.inheritedFrom}`);
  for (const c of plan.conflicts) keys.add(`conflict/${c.name}/${c.source}`);
  return keys;
}

/** Affected namespaces that the change halts (they were not halted before); `h` is the model after. */
function newlyHalted(h: Hierarchy, affected: readonly string[], before: Side, after: Side): HaltedNamespace[] {
  const out: HaltedNamespace[] = [];
  for (const ns of affected) {
    if (!after.get(ns)?.halted || before.get(ns)?.halted) continue;
    const haltedAt = h.isHalted(ns) ? ns : (h.haltedAncestor(ns) ?? ns);
    const condition = h.ownConditions(haltedAt).find((c) => c.type === 'ActivitiesHalted');
    out.push({ namespace: ns, haltedAt, message: condition?.message ?? '' });
  }
  return out;
}

// ---- access ---------------------------------------------------------------------------------------

/**
 * What a namespace holds once its plan is carried out (applyPlan, core/access), a created copy
 * seen only through what access reads of it: its name, namespace and inherited-from label, and its
 * source's body (roleRef, subjects), which a copy has unchanged (core/propagation/copy.ts). The
 * copy itself is not made: a large move creates tens of thousands.
 */
function held(
  existing: readonly PropagatableObject[],
  plan: NamespacePlan,
  ns: string,
  labelsFrom: (source: string) => Readonly<Record<string, string>>,
): PropagatableObject[] {
  if (isEmptyPlan(plan)) return existing as PropagatableObject[];
  // applyPlan adds the created copies last, in the plan's order: added here, without entries made for it.
  const out = applyPlan(existing, plan.create.length ? { ...plan, create: [] } : plan);
  for (const c of plan.create) out.push({ ...c.from, metadata: { name: c.name, namespace: ns, labels: labelsFrom(c.source) } });
  return out;
}

/**
 * Who gains and loses which role where (core/access): the grants of the RoleBindings each affected
 * namespace would hold once its plans are carried out, in the model before and after the change
 * (so pending work is not put down to it), namespace by namespace. A deleted namespace holds
 * nothing after.
 */
function accessChanges(
  types: readonly PreparedType[],
  affected: readonly string[],
  before: Side,
  after: Side,
  clusterRoles?: readonly string[],
): AccessChange[] {
  const indexOf = (kind: string) => types.findIndex((p) => p.type.group === RBAC_GROUP && p.type.kind === kind);
  const bindings = indexOf('RoleBinding');
  if (bindings < 0) return [];
  const roles = indexOf('Role');
  const clusterRoleNames = clusterRoles && new Set(clusterRoles);
  // A created copy's labels, as access reads them (inherited-from), one object per source namespace.
  const copyLabels = new Map<string, Readonly<Record<string, string>>>();
  const labelsFrom = (source: string) => {
    let labels = copyLabels.get(source);
    if (!labels) copyLabels.set(source, (labels = Object.freeze({ [Label.inheritedFrom]: source })));
    return labels;
  };
  const grants = (ns: string, state: NamespaceState | undefined): Grant[] => {
    if (!state) return [];
    const heldOf = (i: number) => held(types[i]!.byNamespace.get(ns) ?? [], state.plans[i]!, ns, labelsFrom);
    return grantsOf(heldOf(bindings) as RoleBindingObject[], {
      sorted: false,
      roles: { ...(roles >= 0 && { roles: heldOf(roles) }), ...(clusterRoleNames && { clusterRoles: clusterRoleNames }) },
    });
  };
  const out: AccessChange[] = [];
  // diffAccess orders by namespace first: namespace by namespace, in order, is the same order.
  for (const ns of affected) for (const c of diffAccess(grants(ns, before.get(ns)), grants(ns, after.get(ns)))) out.push(c);
  return out;
}

// ---- the whole preview ------------------------------------------------------------------------------

/** The objects a preview needs besides the hierarchy (PreviewInput without the snapshot). */
export type PreviewObjects = Pick<PreviewInput, 'types' | 'networkPolicies' | 'clusterRoles' | 'options'>;

/** What inSync is given: each type's sources, and its copies where the controller keeps none. */
export interface InSyncInput {
  /**
   * Each propagated type with its objects that are not copies (no inherited-from label), in every
   * namespace: a list with the label selector `!hnc.x-k8s.io/inherited-from`.
   */
  readonly sources: readonly TypeObjects[];
  /** For each type (the same order): its copies in the `unkept` namespaces, as they are. */
  readonly unkeptCopies: readonly (readonly PropagatableObject[])[];
  readonly options?: PropagationOptions;
}

/** The objects of each type a full read would give when every copy is as the controller keeps it. */
export interface InSyncCopies {
  /**
   * For each type: its sources and copies in the preview's scope (the copies the controller keeps
   * made by `planNamespace` from the sources alone, under the forest as it is; those in `unkept`
   * namespaces as read), each namespace's objects sorted by name as the API server lists them.
   */
  readonly types: TypeObjects[];
  /** For each type: its copies in every namespace, kept and unkept (what the API server should count). */
  readonly copies: number[];
  /**
   * For each type: the copies the controller counts in place when it has caught up (its
   * numPropagatedObjects): those it keeps, and those it left in halted namespaces.
   */
  readonly counted: number[];
}

/** A preview started on the hierarchy alone, waiting for the objects (see startPreview). */
export interface StartedPreview {
  /**
   * The namespaces whose objects the preview reads: the subtree the change concerns before and
   * after it, and the ancestors of each of those namespaces before and after (planNamespace reads a
   * namespace's own objects and its ancestors' sources; copies and access are read in affected
   * namespaces only). Objects of propagated types elsewhere cannot change the answer, so a caller
   * may leave them out of `finish`'s types (NetworkPolicies are read everywhere).
   */
  readonly scope: ReadonlySet<string>;
  /**
   * The namespaces where the controller keeps no copy (planNamespace skips them: not managed, or
   * halted or below a halted namespace), whose copies stay as they are; sorted.
   */
  readonly unkept: readonly string[];
  /**
   * The copies as the controller keeps them when it has caught up: in every namespace it keeps,
   * its own `planNamespace` run under the forest as it is, from the sources alone (what it would
   * create in an empty namespace is what an in-sync namespace holds). Whether the cluster is in
   * sync is the caller's to check (kubectl-plugin/commands/preview.ts compares `copies` with the
   * API server's and the controller's counts); `finish` on `types` then answers as on a full read.
   */
  inSync(input: InSyncInput): InSyncCopies;
  finish(objects: PreviewObjects): Preview;
}

/**
 * The part of a preview that needs no object: the controller's Hierarchy model as it is and as it
 * would be after the change (two models from the same snapshot, the second changed with the
 * setters a watch event would call, applyChange), and where each namespace of the changed subtree
 * stands in each (ancestors, halt, labels). The plugin runs it while the objects are still being
 * read, and reads only the objects in `scope`.
 */
export function startPreview(snapshot: HierarchySnapshot, change: HierarchyChange): StartedPreview {
  const h0 = hierarchyModel(snapshot);
  const h1 = hierarchyModel(snapshot);
  const root = change.op === 'set-parent' ? change.namespace : change.child;
  const candidates = new Set(subtreeOf(h0, root));
  const { created, deleted } = applyChange(h1, change);
  const gone = new Set(deleted);
  for (const ns of subtreeOf(h1, root)) candidates.add(ns);
  const before = new Map<string, NamespaceState>();
  const after = new Map<string, NamespaceState>();
  const scope = new Set<string>();
  for (const ns of candidates) {
    scope.add(ns);
    if (h0.namespace(ns)) {
      const state = readPlace(h0, ns);
      before.set(ns, state);
      for (const a of state.ancestors) scope.add(a);
    }
    if (h1.namespace(ns) && !gone.has(ns)) {
      const state = readPlace(h1, ns);
      after.set(ns, state);
      for (const a of state.ancestors) scope.add(a);
    }
  }
  const affected = affectedNamespaces(candidates, before, after);
  const unkept = new Set<string>();
  const anyType: PropagationContext = {
    hierarchy: h0,
    type: { group: '', kind: '', mode: PropagationMode.Propagate },
    sources: new SourceSet(),
  };
  const halted = new Set<string>();
  for (const ns of h0.namespaceNames()) {
    const skip = skipReason(anyType, ns);
    if (skip !== undefined) unkept.add(ns);
    if (skip === 'halted') halted.add(ns);
  }
  const planned: PlannedInSync = new WeakMap();
  return {
    scope,
    unkept: sortStrings(unkept),
    inSync: (input) => synthesize(h0, scope, unkept, halted, input, planned),
    finish(input: PreviewObjects): Preview {
      const types = input.types.map(prepareType);
      const plan = (
        side: Map<string, NamespaceState>,
        ctxs: readonly PropagationContext[],
        known?: (i: number) => InSyncPlans | undefined,
      ) => {
        const knownOf = ctxs.map((_, i) => known?.(i));
        for (const [ns, state] of side)
          state.plans = ctxs.map((ctx, i) => knownOf[i]?.plans.get(ns) ?? planNamespace(ctx, ns, types[i]!.byNamespace.get(ns) ?? []));
      };
      // Before the change, a namespace whose objects inSync made is planned already (see synthesize).
      plan(before, contexts(h0, types, new Set(), input.options), (i) => {
        const known = planned.get(input.types[i]!);
        return known && known.options === input.options ? known : undefined;
      });
      plan(after, contexts(h1, types, gone, input.options));
      return {
        change,
        createdNamespaces: created,
        deletedNamespaces: deleted,
        affectedNamespaces: affected,
        labels: treeLabelChanges(affected, before, after),
        networkPolicies: networkPolicyChanges(affected, before, after, input.networkPolicies),
        copies: copyChanges(types, affected, gone, before, after),
        halted: newlyHalted(h1, affected, before, after),
        access: accessChanges(types, affected, before, after, input.clusterRoles),
      };
    },
  };
}

const byName = (a: PropagatableObject, b: PropagatableObject): number => {
  const x = a.metadata?.name ?? '';
  const y = b.metadata?.name ?? '';
  return x < y ? -1 : x > y ? 1 : 0;
};

/**
 * For each type inSync made (its TypeObjects, as returned), the plans `planNamespace` gives, on the
 * model before the change, to the namespaces whose objects it made: their sources and exactly the
 * copies planned from the sources alone. Planned again on those objects, such a namespace has
 * every copy in sync and the same conflicts (a user's object where a source should be copied), so
 * finish need not plan it again when given the same objects and options.
 */
type PlannedInSync = WeakMap<TypeObjects, InSyncPlans>;

interface InSyncPlans {
  readonly options: PropagationOptions | undefined;
  readonly plans: ReadonlyMap<string, NamespacePlan>;
}

/** StartedPreview.inSync on the model before the change (`h`). */
function synthesize(
  h: Hierarchy,
  scope: ReadonlySet<string>,
  unkept: ReadonlySet<string>,
  halted: ReadonlySet<string>,
  input: InSyncInput,
  planned: PlannedInSync,
): InSyncCopies {
  const types: TypeObjects[] = [];
  const copies: number[] = [];
  const counted: number[] = [];
  input.sources.forEach((t, i) => {
    // A copy in the sources' list (a label added since) is left to the counts to catch.
    const prepared = prepareType({ type: t.type, objects: t.objects.filter((o) => !isCopy(o)) });
    const [ctx] = contexts(h, [prepared], new Set(), input.options);
    const inScope = new Map<string, PropagatableObject[]>();
    const add = (ns: string, o: PropagatableObject) => {
      let list = inScope.get(ns);
      if (!list) inScope.set(ns, (list = []));
      list.push(o);
    };
    let kept = 0;
    let left = 0;
    let leftHalted = 0;
    const plans = new Map<string, NamespacePlan>();
    for (const ns of h.namespaceNames()) {
      if (unkept.has(ns)) continue;
      const plan = planNamespace(ctx!, ns, prepared.byNamespace.get(ns) ?? []);
      kept += plan.create.length;
      if (!scope.has(ns)) continue;
      for (const c of plan.create) add(ns, c.object);
      // The plan on the objects made here: every copy made is in sync, nothing else changes.
      const inSync = plan.create.map((c) => c.name).sort();
      plans.set(ns, { ...plan, create: [], update: [], delete: [], inSync });
    }
    for (const o of input.unkeptCopies[i] ?? []) {
      const ns = o.metadata?.namespace;
      if (ns === undefined || !isCopy(o)) continue;
      left++;
      if (halted.has(ns)) leftHalted++;
      if (scope.has(ns)) {
        add(ns, o);
        plans.delete(ns); // objects read, not made: planned in finish
      }
    }
    for (const [ns, objects] of prepared.byNamespace) if (scope.has(ns)) for (const o of objects) add(ns, o);
    const objects: PropagatableObject[] = [];
    for (const list of inScope.values()) objects.push(...list.sort(byName));
    const made: TypeObjects = { type: t.type, objects };
    planned.set(made, { options: input.options, plans });
    types.push(made);
    copies.push(kept + left);
    counted.push(kept + leftHalted);
  });
  return { types, copies, counted };
}

/** Everything a preview shows but admission (the plugin asks the server for that). */
export function previewChange(input: PreviewInput, change: HierarchyChange): Preview {
  return startPreview(input, change).finish(input);
}
