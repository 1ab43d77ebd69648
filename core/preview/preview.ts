// What one hierarchy change would do (`kubectl hns set/create/delete --dry-run`, docs/kubectl-hns.md),
// computed from the objects as they are, with the controller's own decisions: the Hierarchy model
// for tree labels and halts (core/hierarchy), `planNamespace` for copies (core/propagation).
// Pure: the plugin reads the cluster and renders the answer.
import { applyPlan, diffAccess, grantsOf, type AccessChange, type RoleBindingObject } from '../access/access.js';
import { RBAC_GROUP, treeLabelNamespace } from '../api/constants.js';
import type { Hierarchy } from '../hierarchy/hierarchy.js';
import { inheritedFrom, isCopy, type PropagatableObject } from '../propagation/copy.js';
import {
  SourceSet,
  destinationLabels,
  isEmptyPlan,
  planNamespace,
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

/** The models before and after, and the namespaces the change touches. */
export interface PreviewModels {
  readonly before: Hierarchy;
  readonly after: Hierarchy;
  readonly created: string[];
  readonly deleted: string[];
  readonly affected: string[];
}

export function previewModels(snapshot: HierarchySnapshot, change: HierarchyChange): PreviewModels {
  const before = hierarchyModel(snapshot);
  const after = hierarchyModel(snapshot);
  const { created, deleted } = applyChange(after, change);
  return { before, after, created, deleted, affected: affectedNamespaces(before, after, candidates(before, after, change)) };
}

/**
 * The namespaces a change can affect at all: the subtree of the namespace it changes, in either
 * model (a move, a cycle, a halt all stay within it); for a deletion, the subtrees of the deleted
 * namespaces. Everything else keeps its ancestry, so nothing else need be compared.
 */
function candidates(before: Hierarchy, after: Hierarchy, change: HierarchyChange): Set<string> {
  const root = change.op === 'set-parent' ? change.namespace : change.child;
  const out = new Set<string>([root]);
  for (const h of [before, after]) if (h.forest.has(root)) for (const d of h.forest.descendants(root)) out.add(d);
  return out;
}

const sortStrings = (xs: Iterable<string>): string[] => [...xs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

/**
 * The namespaces (of `names`, by default all) in either model whose ancestry, halted state or labels
 * (tree and managed, as the hierarchy reconciler would write them) differ, or that exist in one
 * model only.
 */
export function affectedNamespaces(
  before: Hierarchy,
  after: Hierarchy,
  names: Iterable<string> = new Set([...before.namespaceNames(), ...after.namespaceNames()]),
): string[] {
  const out: string[] = [];
  for (const ns of names) {
    const b = before.namespace(ns);
    const a = after.namespace(ns);
    if (!b || !a) {
      out.push(ns);
      continue;
    }
    if (
      !jsonEqual(before.forest.ancestors(ns), after.forest.ancestors(ns)) ||
      before.isHaltedOrBelowHalted(ns) !== after.isHaltedOrBelowHalted(ns) ||
      !jsonEqual(destinationLabels(before, ns), destinationLabels(after, ns))
    )
      out.push(ns);
  }
  return sortStrings(out);
}

/** The labels a namespace would carry in a model, or undefined if it does not exist there. */
const labelsIn = (h: Hierarchy, ns: string): Readonly<Record<string, string>> | undefined =>
  h.namespace(ns) ? destinationLabels(h, ns) : undefined;

export function treeLabelChanges(models: PreviewModels): NamespaceLabelChanges[] {
  const out: NamespaceLabelChanges[] = [];
  for (const ns of models.affected) {
    const b = treeLabelsOf(labelsIn(models.before, ns));
    const a = treeLabelsOf(labelsIn(models.after, ns));
    const changes: TreeLabelChange[] = [];
    for (const key of sortStrings(new Set([...Object.keys(b), ...Object.keys(a)]))) {
      if (b[key] !== a[key])
        changes.push({ key, ...(b[key] !== undefined && { before: b[key] }), ...(a[key] !== undefined && { after: a[key] }) });
    }
    if (changes.length) out.push({ namespace: ns, treeLabels: changes });
  }
  return out;
}

function treeLabelsOf(labels: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(labels ?? {})) if (treeLabelNamespace(k) !== undefined) out[k] = v;
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
export function networkPolicyChanges(models: PreviewModels, policies: readonly NetworkPolicyObject[]): NetworkPolicyChange[] {
  const out: NetworkPolicyChange[] = [];
  for (const np of policies) {
    const selectors = namespaceSelectors(np);
    if (!selectors.length) continue;
    const matches = (labels: Readonly<Record<string, string>> | undefined) => !!labels && selectors.some((s) => selectorMatches(s, labels));
    const startsMatching: string[] = [];
    const stopsMatching: string[] = [];
    for (const ns of models.affected) {
      const b = matches(labelsIn(models.before, ns));
      const a = matches(labelsIn(models.after, ns));
      if (a && !b) startsMatching.push(ns);
      if (b && !a) stopsMatching.push(ns);
    }
    if (startsMatching.length || stopsMatching.length)
      out.push({ namespace: np.metadata?.namespace ?? '', name: np.metadata?.name ?? '', startsMatching, stopsMatching });
  }
  return out.sort((x, y) => (x.namespace + '/' + x.name < y.namespace + '/' + y.name ? -1 : 1));
}

// ---- copies ---------------------------------------------------------------------------------------

/** One type's objects by namespace, and each affected namespace's plan in either model, made once. */
export interface TypePlans {
  readonly type: TypeObjects['type'];
  readonly byNamespace: ReadonlyMap<string, PropagatableObject[]>;
  /** The namespace's plan in a model; undefined where the namespace does not exist in it. */
  plan(model: 'before' | 'after', ns: string): NamespacePlan | undefined;
}

export function typePlans(models: PreviewModels, { type, objects }: TypeObjects, options?: PropagationOptions): TypePlans {
  const gone = new Set(models.deleted);
  const byNamespace = new Map<string, PropagatableObject[]>();
  for (const o of objects) {
    const ns = o.metadata?.namespace;
    if (ns === undefined) continue;
    let list = byNamespace.get(ns);
    if (!list) byNamespace.set(ns, (list = []));
    list.push(o);
  }
  // The sources (copies never are), once; the model after a deletion has fewer.
  const all: Source[] = [];
  for (const o of objects) {
    const { namespace, name } = o.metadata ?? {};
    if (namespace !== undefined && name !== undefined && !isCopy(o)) all.push({ namespace, name, object: o });
  }
  const sources = (skip: ReadonlySet<string>) => new SourceSet(skip.size ? all.filter((s) => !skip.has(s.namespace)) : all);
  let contexts: { before: PropagationContext; after: PropagationContext } | undefined;
  const cache = new Map<string, NamespacePlan | undefined>();
  return {
    type,
    byNamespace,
    plan(model, ns) {
      const key = `${model}\0${ns}`;
      if (cache.has(key)) return cache.get(key);
      const h = models[model];
      let plan: NamespacePlan | undefined;
      if (h.namespace(ns) && !(model === 'after' && gone.has(ns))) {
        if (!contexts) {
          const before = sources(new Set());
          contexts = {
            before: { hierarchy: models.before, type, sources: before, ...(options && { options }) },
            after: { hierarchy: models.after, type, sources: gone.size ? sources(gone) : before, ...(options && { options }) },
          };
        }
        plan = planNamespace(contexts[model], ns, byNamespace.get(ns) ?? []);
      }
      cache.set(key, plan);
      return plan;
    },
  };
}

/**
 * The copies the controller would create, update and delete because of the change, and the user
 * objects that would block a copy: each affected namespace planned by `planNamespace` in the model
 * after the change, against what it holds now, less what the same plan in the model before the
 * change already calls for (work the controller has pending anyway). Copies in deleted namespaces
 * go with them.
 */
export function copyChanges(models: PreviewModels, plans: readonly TypePlans[]): CopyChanges {
  const out: CopyChanges = { create: [], update: [], delete: [], conflicts: [] };
  const gone = new Set(models.deleted);
  for (const p of plans) {
    const { type } = p;
    const entry = (ns: string, name: string, source: string) => ({
      group: type.group,
      kind: type.kind,
      resource: type.resource,
      namespace: ns,
      name,
      source,
    });
    for (const ns of models.affected) {
      if (gone.has(ns)) {
        for (const o of p.byNamespace.get(ns) ?? []) {
          const from = inheritedFrom(o);
          if (from !== undefined) out.delete.push({ ...entry(ns, o.metadata?.name ?? '', from), reason: 'namespace-deleted' });
        }
        continue;
      }
      const planned = p.plan('after', ns);
      if (!planned) continue;
      const already = pendingKeys(p.plan('before', ns));
      for (const c of planned.create) if (!already.has(`create/${c.name}/${c.source}`)) out.create.push(entry(ns, c.name, c.source));
      for (const u of planned.update)
        if (!already.has(`update/${u.name}/${u.source}`)) out.update.push({ ...entry(ns, u.name, u.source), recreate: u.recreate });
      for (const d of planned.delete)
        if (!already.has(`delete/${d.name}/${d.inheritedFrom}`))
          out.delete.push({ ...entry(ns, d.name, d.inheritedFrom), reason: d.reason });
      for (const c of planned.conflicts)
        if (!already.has(`conflict/${c.name}/${c.source}`)) out.conflicts.push(entry(ns, c.name, c.source));
    }
  }
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

/** Affected namespaces that the change halts (they were not halted before). */
export function newlyHalted(models: PreviewModels): HaltedNamespace[] {
  const out: HaltedNamespace[] = [];
  for (const ns of models.affected) {
    const { before, after } = models;
    if (!after.namespace(ns) || !after.isHaltedOrBelowHalted(ns) || (before.namespace(ns) && before.isHaltedOrBelowHalted(ns))) continue;
    const haltedAt = after.isHalted(ns) ? ns : (after.haltedAncestor(ns) ?? ns);
    const condition = after.ownConditions(haltedAt).find((c) => c.type === 'ActivitiesHalted');
    out.push({ namespace: ns, haltedAt, message: condition?.message ?? '' });
  }
  return out;
}

/**
 * Who gains and loses which role where (core/access): the grants of the RoleBindings the affected
 * namespaces would hold once their plans are carried out, in the model before and after the
 * change (so pending work is not put down to it). A deleted namespace holds nothing after.
 */
export function accessChanges(models: PreviewModels, plans: readonly TypePlans[], clusterRoles?: readonly string[]): AccessChange[] {
  const ofKind = (kind: string) => plans.find((p) => p.type.group === RBAC_GROUP && p.type.kind === kind);
  const bindings = ofKind('RoleBinding');
  if (!bindings) return [];
  const roles = ofKind('Role');
  const held = (p: TypePlans, model: 'before' | 'after'): PropagatableObject[] =>
    models.affected.flatMap((ns) => {
      const plan = p.plan(model, ns);
      return plan ? applyPlan(p.byNamespace.get(ns) ?? [], plan) : [];
    });
  const grants = (model: 'before' | 'after') =>
    grantsOf(held(bindings, model) as RoleBindingObject[], {
      sorted: false,
      roles: { ...(roles && { roles: held(roles, model) }), ...(clusterRoles && { clusterRoles }) },
    });
  return diffAccess(grants('before'), grants('after'));
}

/**
 * Each object as a frozen shallow copy: propagation prepares a source once for all its copies, and
 * remembers which copies are current, only for objects that cannot change (as the watch caches
 * hold them). A preview plans every affected namespace several times; this keeps that cheap.
 */
const frozen = (types: readonly TypeObjects[]): TypeObjects[] =>
  types.map((t) => ({ type: t.type, objects: t.objects.map((o) => (Object.isFrozen(o) ? o : Object.freeze({ ...o }))) }));

/** Everything a preview shows but admission (the plugin asks the server for that). */
export function previewChange(input: PreviewInput, change: HierarchyChange): Preview & { models: PreviewModels } {
  const models = previewModels(input, change);
  const plans = frozen(input.types).map((t) => typePlans(models, t, input.options));
  return {
    change,
    createdNamespaces: models.created,
    deletedNamespaces: models.deleted,
    affectedNamespaces: models.affected,
    labels: treeLabelChanges(models),
    networkPolicies: networkPolicyChanges(models, input.networkPolicies),
    copies: copyChanges(models, plans),
    halted: newlyHalted(models),
    access: accessChanges(models, plans, input.clusterRoles),
    models,
  };
}
