// The hierarchy model: what the controller's caches say about namespaces, their
// HierarchyConfigurations and anchors, with the forest derived from it. Pure and synchronous:
// watch handlers feed it, reconcilers and webhooks read it. Each setter returns the namespaces
// and anchors whose desired state may have changed, so callers enqueue exactly those.
import { Annotation, ConditionType, MANAGED_BY_VALUE, NamespaceReason, treeLabelNamespace } from '../api/constants.js';
import type { MetaKVP } from '../api/types.js';
import { Forest } from '../forest/forest.js';
import type { HierarchyPolicy } from './policy.js';

export interface NamespaceFacts {
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly deleting: boolean;
}

export interface HierarchyFacts {
  /** spec.parent; '' is read as no parent. */
  readonly parent: string | undefined;
  readonly allowCascadingDeletion: boolean;
  readonly labels: readonly MetaKVP[];
  readonly annotations: readonly MetaKVP[];
  readonly deleting: boolean;
}

export interface AnchorFacts {
  readonly labels: readonly MetaKVP[];
  readonly annotations: readonly MetaKVP[];
  readonly deleting: boolean;
  /** The state the anchor reports (status.status), if any. */
  readonly state?: string;
  /** Whether it still carries HNC's finalizer (unknown counts as yes). */
  readonly finalizer?: boolean;
}

/** A condition as HNC computes it, before times are attached. */
export interface NamespaceCondition {
  readonly type: string;
  readonly reason: string;
  readonly message: string;
}

/** What to re-reconcile after a change: namespace names and anchor keys (`parent/child`). */
export interface Affected {
  readonly namespaces: Set<string>;
  readonly anchors: Set<string>;
}

export const anchorKey = (parent: string, child: string): string => `${parent}/${child}`;

/**
 * hnc-ts's own condition (HNC had none: it overwrote the user's object): a source could not be
 * propagated into the namespace because an object of the same name that HNC did not create is
 * there. It halts nothing.
 */
export const ObjectConflictCondition = { type: 'ObjectConflict', reason: 'CannotPropagateObject' } as const;

export function objectConflictMessage(descriptions: readonly string[]): string {
  const shown = descriptions.slice(0, 5).join('; ');
  const more = descriptions.length > 5 ? `; and ${descriptions.length - 5} more` : '';
  return `Not overwriting objects HNC did not create: ${shown}${more}. Rename or remove them to receive the propagated objects`;
}

export class Hierarchy {
  readonly forest = new Forest();
  private readonly namespaces = new Map<string, NamespaceFacts>();
  /**
   * The namespaces another tool manages (isExternal), kept as the namespaces change: the webhooks
   * look for the names they reserve on every namespace creation, without a pass over every namespace.
   */
  private readonly externals = new Set<string>();
  private readonly hierarchies = new Map<string, HierarchyFacts>();
  /** Anchors by the namespace they live in, then by name (the subnamespace's name). */
  private readonly anchors = new Map<string, Map<string, AnchorFacts>>();
  /** Namespaces holding an anchor of a given name, to find the anchors a namespace concerns. */
  private readonly anchorParents = new Map<string, Set<string>>();
  private crdsDeleting = { hierarchy: false, anchor: false };
  /** Objects not propagated into a namespace because a user's object holds the name, by type. */
  private readonly objectConflicts = new Map<string, Map<string, readonly string[]>>();
  /**
   * Answers derived from the inputs (conditions, halts, labels), kept until the next input
   * change: a propagation pass asks the same questions of every namespace, once per object.
   */
  private derived = new Map<string, Map<string, unknown>>();

  constructor(readonly policy: HierarchyPolicy) {}

  /**
   * Memoizes a pure function of the model's inputs until they next change. The answer is shared:
   * callers must not mutate it (objects are frozen).
   */
  memo<T>(kind: string, ns: string, compute: () => T): T {
    // A map per kind: no key to build (and hash) per question, as a joined string would be.
    let answers = this.derived.get(kind);
    if (!answers) this.derived.set(kind, (answers = new Map()));
    const known = answers.get(ns);
    if (known !== undefined || answers.has(ns)) return known as T;
    const value = compute();
    if (typeof value === 'object' && value !== null) Object.freeze(value);
    answers.set(ns, value);
    return value;
  }

  /**
   * Counts the changes to the model's inputs: an answer computed over every namespace (the
   * configuration's NamespaceCondition summary) stands as long as this number does.
   */
  get version(): number {
    return this.inputChanges;
  }
  private inputChanges = 0;

  private changed(): void {
    this.inputChanges++;
    if (this.derived.size) this.derived = new Map();
  }

  // ---- inputs ---------------------------------------------------------------------------------

  setNamespace(name: string, facts: NamespaceFacts | undefined): Affected {
    this.changed();
    const affected = emptyAffected();
    const wasExternal = this.isExternal(name);
    const before = this.namespaces.get(name);
    if (facts) this.namespaces.set(name, facts);
    else this.namespaces.delete(name);
    if (this.isExternal(name)) this.externals.add(name);
    else this.externals.delete(name);
    affected.namespaces.add(name);
    // The anchors named like this namespace report its state (Ok, Missing, Conflict); the anchor a
    // subnamespace names is looked at even when it is gone (its namespace may have come after it).
    for (const parent of this.anchorParents.get(name) ?? []) affected.anchors.add(anchorKey(parent, name));
    const subnamespaceOf = facts?.annotations[Annotation.subnamespaceOf];
    if (subnamespaceOf) affected.anchors.add(anchorKey(subnamespaceOf, name));
    // The anchors in a namespace whose deletion starts release their subnamespaces at once; those
    // seen before their namespace act once it appears.
    if (!before !== !facts || !!before?.deleting !== !!facts?.deleting)
      for (const child of this.anchorsIn(name)) affected.anchors.add(anchorKey(name, child));
    // An external namespace hands its tree labels down; turning external or back relabels below.
    if (wasExternal !== this.isExternal(name) || (wasExternal && before?.labels !== facts?.labels)) this.addSubtree(name, affected);
    this.syncStructure(name, affected);
    return affected;
  }

  setHierarchy(ns: string, facts: HierarchyFacts | undefined): Affected {
    this.changed();
    const affected = emptyAffected();
    const before = this.hierarchies.get(ns);
    if (facts) this.hierarchies.set(ns, facts);
    else this.hierarchies.delete(ns);
    affected.namespaces.add(ns);
    // Managed labels, annotations and cascading deletion are inherited: the subtree sees them.
    if (!before || !facts || !sameInherited(before, facts)) this.addSubtree(ns, affected);
    this.syncStructure(ns, affected);
    return affected;
  }

  setAnchor(parent: string, child: string, facts: AnchorFacts | undefined): Affected {
    this.changed();
    const affected = emptyAffected();
    let inParent = this.anchors.get(parent);
    if (facts) {
      if (!inParent) this.anchors.set(parent, (inParent = new Map()));
      inParent.set(child, facts);
      setAdd(this.anchorParents, child, parent);
    } else {
      inParent?.delete(child);
      if (inParent?.size === 0) this.anchors.delete(parent);
      setDelete(this.anchorParents, child, parent);
    }
    affected.anchors.add(anchorKey(parent, child));
    // The parent's finalizer and the subnamespace's labels and SubnamespaceAnchorMissing.
    affected.namespaces.add(parent);
    if (this.namespaces.has(child)) this.addSubtree(child, affected);
    return affected;
  }

  /** Whether the HNC CRDs are being deleted (uninstall, docs/behaviour.md §3.7). */
  setCrdsDeleting(state: { hierarchy: boolean; anchor: boolean }): Affected {
    this.changed();
    const affected = emptyAffected();
    if (state.hierarchy !== this.crdsDeleting.hierarchy) for (const ns of this.namespaces.keys()) affected.namespaces.add(ns);
    if (state.anchor !== this.crdsDeleting.anchor)
      for (const [p, m] of this.anchors) for (const c of m.keys()) affected.anchors.add(anchorKey(p, c));
    this.crdsDeleting = { ...state };
    return affected;
  }

  /**
   * Records the user objects of one type that block propagation into a namespace (beyond HNC,
   * which overwrote them). `descriptions` are ready-made texts; an empty list clears the type.
   */
  setObjectConflicts(ns: string, type: string, descriptions: readonly string[]): Affected {
    const affected = emptyAffected();
    const inNs = this.objectConflicts.get(ns) ?? new Map<string, readonly string[]>();
    const before = inNs.get(type) ?? [];
    if (before.length === descriptions.length && before.every((d, i) => d === descriptions[i])) return affected;
    this.changed();
    if (descriptions.length) inNs.set(type, [...descriptions]);
    else inNs.delete(type);
    if (inNs.size) this.objectConflicts.set(ns, inNs);
    else this.objectConflicts.delete(ns);
    affected.namespaces.add(ns);
    return affected;
  }

  // ---- facts --------------------------------------------------------------------------------

  namespace(ns: string): NamespaceFacts | undefined {
    return this.namespaces.get(ns);
  }

  hierarchy(ns: string): HierarchyFacts | undefined {
    return this.hierarchies.get(ns);
  }

  anchor(parent: string, child: string): AnchorFacts | undefined {
    return this.anchors.get(parent)?.get(child);
  }

  /** Names of the anchors in a namespace, sorted. */
  anchorsIn(ns: string): string[] {
    return [...(this.anchors.get(ns)?.keys() ?? [])].sort();
  }

  namespaceNames(): string[] {
    return [...this.namespaces.keys()];
  }

  /** The namespaces another tool manages (isExternal), sorted: usually none, never a pass over every namespace. */
  externalNamespaces(): string[] {
    return [...this.externals].sort();
  }

  anchorKeys(): string[] {
    return [...this.anchors].flatMap(([p, m]) => [...m.keys()].map((c) => anchorKey(p, c)));
  }

  get hierarchyCrdDeleting(): boolean {
    return this.crdsDeleting.hierarchy;
  }

  get anchorCrdDeleting(): boolean {
    return this.crdsDeleting.anchor;
  }

  isManaged(ns: string): boolean {
    return this.policy.isManaged(ns);
  }

  /** A namespace another tool manages (`hnc.x-k8s.io/managed-by`, docs/behaviour.md §3.6). */
  isExternal(ns: string): boolean {
    const v = this.namespaces.get(ns)?.annotations[Annotation.managedBy];
    return v !== undefined && v !== '' && v !== MANAGED_BY_VALUE;
  }

  /**
   * The parent named by the subnamespace-of annotation, if the namespace is a subnamespace. A
   * namespace being deleted is no longer one (as HNC), so its deletion never waits on its anchor.
   */
  subnamespaceOf(ns: string): string | undefined {
    if (this.isExternal(ns) || this.namespaces.get(ns)?.deleting) return undefined;
    const v = this.namespaces.get(ns)?.annotations[Annotation.subnamespaceOf];
    return v ? v : undefined;
  }

  /**
   * The parent the forest holds: none for externals, the anchor's namespace for subnamespaces.
   * A namespace being deleted leaves its parent at once (its copies go, the tree stops listing
   * it), rather than when its HierarchyConfiguration is finally removed.
   */
  effectiveParent(ns: string): string | undefined {
    if (this.namespaces.get(ns)?.deleting) return undefined;
    return this.declaredParent(ns);
  }

  /** The parent a namespace names (anchor's namespace or HC parent), whether or not it is being deleted. */
  private declaredParent(ns: string): string | undefined {
    if (this.isExternal(ns)) return undefined;
    const subnsOf = this.namespaces.get(ns)?.annotations[Annotation.subnamespaceOf];
    return subnsOf ? subnsOf : this.hierarchies.get(ns)?.parent || undefined;
  }

  // ---- conditions (docs/behaviour.md §2.1) ------------------------------------------------------

  /** The namespace's own conditions, one per type, in HNC's order (a later one of a type wins). */
  ownConditions(ns: string): readonly NamespaceCondition[] {
    return this.memo('conditions', ns, () => this.computeOwnConditions(ns));
  }

  private computeOwnConditions(ns: string): NamespaceCondition[] {
    const byType = new Map<string, NamespaceCondition>();
    const set = (type: string, reason: string, message: string) => byType.set(type, { type, reason, message });
    const hc = this.hierarchies.get(ns);
    const facts = this.namespaces.get(ns);
    if (this.crdsDeleting.hierarchy && (!hc || hc.deleting)) {
      set(
        ConditionType.ActivitiesHalted,
        NamespaceReason.DeletingCRD,
        'The HierarchyConfiguration CRD is being deleted; all propagation is disabled.',
      );
    }
    const subnsOf = this.subnamespaceOf(ns);
    if (subnsOf && facts && !facts.deleting && !this.anchor(subnsOf, ns)) {
      set(ConditionType.BadConfiguration, NamespaceReason.SubnamespaceAnchorMissing, 'The anchor is missing in the parent namespace');
    }
    const parent = this.effectiveParent(ns);
    if (parent !== undefined) {
      if (!this.isManaged(parent))
        set(ConditionType.ActivitiesHalted, NamespaceReason.IllegalParent, `Parent "${parent}" is an unmanaged namespace`);
      else if (!this.forest.exists(parent))
        set(ConditionType.ActivitiesHalted, NamespaceReason.ParentMissing, `Parent "${parent}" does not exist`);
    }
    const cycle = this.forest.cycleText(ns);
    if (cycle !== undefined) set(ConditionType.ActivitiesHalted, NamespaceReason.InCycle, `Namespace is a member of the cycle: ${cycle}`);
    const conflicts = [...(this.objectConflicts.get(ns)?.values() ?? [])].flat().sort();
    if (conflicts.length) set(ObjectConflictCondition.type, ObjectConflictCondition.reason, objectConflictMessage(conflicts));
    for (const key of this.illegalManaged(ns, 'labels')) {
      set(
        ConditionType.BadConfiguration,
        NamespaceReason.IllegalManagedLabel,
        `Not a legal managed label (set via --managed-namespace-label): ${key}`,
      );
    }
    for (const key of this.illegalManaged(ns, 'annotations')) {
      set(
        ConditionType.BadConfiguration,
        NamespaceReason.IllegalManagedAnnotation,
        `Not a legal managed annotation (set via --managed-namespace-annotation): ${key}`,
      );
    }
    return [...byType.values()];
  }

  /** Halted by its own ActivitiesHalted condition. */
  isHalted(ns: string): boolean {
    return this.ownConditions(ns).some((c) => c.type === ConditionType.ActivitiesHalted);
  }

  /** The nearest strict ancestor that is halted, if any (cycle-safe). */
  haltedAncestor(ns: string): string | undefined {
    const ancestors = this.forest.ancestors(ns);
    for (let i = ancestors.length - 1; i >= 0; i--) if (this.isHalted(ancestors[i]!)) return ancestors[i];
    return undefined;
  }

  /** Halted itself or below a halted ancestor: nothing may be propagated into it. */
  isHaltedOrBelowHalted(ns: string): boolean {
    return this.memo('halted-or-below', ns, () => this.isHalted(ns) || this.haltedAncestor(ns) !== undefined);
  }

  /**
   * Cascading deletion is allowed if the namespace or any ancestor allows it (docs/behaviour.md §4.3). An ancestor
   * being deleted has left its own parent in the forest, but what was allowed above it still
   * holds for the cascade it started. Cycle-safe.
   */
  allowsCascadingDeletion(ns: string): boolean {
    const seen = new Set<string>();
    for (let cur: string | undefined = ns; cur !== undefined && !seen.has(cur);) {
      seen.add(cur);
      if (this.hierarchies.get(cur)?.allowCascadingDeletion === true) return true;
      if (!this.forest.has(cur)) return false;
      cur = this.forest.parent(cur) ?? (this.namespaces.get(cur)?.deleting ? this.declaredParent(cur) : undefined);
    }
    return false;
  }

  /** Whether an anchor in `ns` still holds HNC's finalizer (a namespace's HC keeps its own for them). */
  anchorsHoldingFinalizer(ns: string): boolean {
    return this.anchorsIn(ns).some((child) => this.anchor(ns, child)?.finalizer !== false);
  }

  // ---- managed labels and annotations (docs/behaviour.md §3.5) ----------------------------------

  /** The managed labels or annotations a namespace itself provides (legal keys only). */
  ownManaged(ns: string, kind: 'labels' | 'annotations'): Record<string, string> {
    const legal = (k: string) => (kind === 'labels' ? this.policy.isManagedLabel(k) : this.policy.isManagedAnnotation(k));
    const out: Record<string, string> = {};
    if (this.isExternal(ns)) {
      // An external namespace's own values of managed keys are its managed set.
      const own = this.namespaces.get(ns)?.[kind] ?? {};
      for (const [k, v] of Object.entries(own)) if (legal(k)) out[k] = v;
      return out;
    }
    for (const { key, value } of this.specManaged(ns, kind)) if (legal(key)) out[key] = value;
    return out;
  }

  /** The managed metadata from a namespace and its ancestors, up to the first halted or external one. */
  inheritedManaged(ns: string, kind: 'labels' | 'annotations'): Readonly<Record<string, string>> {
    return this.memo(kind === 'labels' ? 'inherited-labels' : 'inherited-annotations', ns, () => this.computeInheritedManaged(ns, kind));
  }

  private computeInheritedManaged(ns: string, kind: 'labels' | 'annotations'): Record<string, string> {
    const out: Record<string, string> = {};
    for (const cur of this.labelChain(ns)) Object.assign(out, this.ownManaged(cur, kind)); // ancestors win
    return out;
  }

  /**
   * The namespaces whose tree and managed labels `ns` carries: itself, then upwards, ending after
   * the first halted or external namespace (docs/behaviour.md §3.4).
   */
  labelChain(ns: string): string[] {
    const chain: string[] = [];
    const up = [...this.forest.ancestry(ns)].reverse();
    for (const cur of up) {
      chain.push(cur);
      if (this.isHalted(cur) || this.isExternal(cur)) break;
    }
    return chain;
  }

  /** The tree labels a namespace should carry. */
  treeLabels(ns: string): Readonly<Record<string, string>> {
    return this.memo('tree-labels', ns, () => this.computeTreeLabels(ns));
  }

  private computeTreeLabels(ns: string): Record<string, string> {
    return this.forest.treeLabels(ns, {
      isHalted: (n) => this.isHalted(n),
      // An external namespace (even `ns` itself) carries its own tree labels: what its children shift.
      externalTreeLabels: (n) => (this.isExternal(n) ? this.externalTree(n) : undefined),
    });
  }

  /** For subnamespaces the anchor's spec is the source of managed metadata, else the HC's. */
  private specManaged(ns: string, kind: 'labels' | 'annotations'): readonly MetaKVP[] {
    const subnsOf = this.subnamespaceOf(ns);
    const anchor = subnsOf ? this.anchor(subnsOf, ns) : undefined;
    if (anchor) return anchor[kind];
    return this.hierarchies.get(ns)?.[kind] ?? [];
  }

  private illegalManaged(ns: string, kind: 'labels' | 'annotations'): string[] {
    if (this.isExternal(ns)) return [];
    const legal = (k: string) => (kind === 'labels' ? this.policy.isManagedLabel(k) : this.policy.isManagedAnnotation(k));
    return this.specManaged(ns, kind)
      .map((kv) => kv.key)
      .filter((k) => !legal(k));
  }

  private externalTree(ns: string): Record<string, number> {
    const out: Record<string, number> = {};
    const labels = this.namespaces.get(ns)?.labels ?? {};
    for (const [k, v] of Object.entries(labels)) {
      const anc = treeLabelNamespace(k);
      const d = Number(v);
      if (anc !== undefined && Number.isInteger(d) && d >= 0) out[anc] = d;
    }
    out[ns] = 0;
    return out;
  }

  // ---- structure ----------------------------------------------------------------------------------

  /** Brings the forest in line with the facts about one namespace. */
  private syncStructure(ns: string, affected: Affected): void {
    const facts = this.namespaces.get(ns);
    if (!facts || !this.isManaged(ns)) {
      if (this.forest.exists(ns)) {
        const removal = this.forest.remove(ns);
        if (removal.oldParent !== undefined) affected.namespaces.add(removal.oldParent);
        for (const orphan of removal.orphans) this.addSubtree(orphan, affected);
        for (const m of removal.formerCycle ?? []) affected.namespaces.add(m);
      }
      return;
    }
    if (this.forest.ensure(ns)) {
      // A namespace that (re)appears heals children that were waiting for it.
      for (const child of this.forest.children(ns)) this.addSubtree(child, affected);
    }
    const change = this.forest.setParent(ns, this.effectiveParent(ns));
    if (change.changed) {
      if (change.oldParent !== undefined) affected.namespaces.add(change.oldParent);
      if (change.newParent !== undefined) affected.namespaces.add(change.newParent);
      for (const n of this.forest.subtreeAffectedBy(change)) affected.namespaces.add(n);
      for (const m of [...(change.formerCycle ?? []), ...(change.cycle ?? [])]) affected.namespaces.add(m);
    }
  }

  private addSubtree(ns: string, affected: Affected): void {
    affected.namespaces.add(ns);
    if (this.forest.has(ns)) for (const d of this.forest.descendants(ns)) affected.namespaces.add(d);
  }
}

function emptyAffected(): Affected {
  return { namespaces: new Set(), anchors: new Set() };
}

function sameInherited(a: HierarchyFacts, b: HierarchyFacts): boolean {
  return (
    a.allowCascadingDeletion === b.allowCascadingDeletion &&
    sameKvps(a.labels, b.labels) &&
    sameKvps(a.annotations, b.annotations) &&
    a.deleting === b.deleting
  );
}

function sameKvps(a: readonly MetaKVP[], b: readonly MetaKVP[]): boolean {
  return a.length === b.length && a.every((kv, i) => kv.key === b[i]!.key && kv.value === b[i]!.value);
}

function setAdd(m: Map<string, Set<string>>, k: string, v: string): void {
  let s = m.get(k);
  if (!s) m.set(k, (s = new Set()));
  s.add(v);
}

function setDelete(m: Map<string, Set<string>>, k: string, v: string): void {
  const s = m.get(k);
  s?.delete(v);
  if (s?.size === 0) m.delete(k);
}
