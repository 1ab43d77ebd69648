// The in-memory namespace forest: who is whose parent. Pure and synchronous. The hierarchy model
// (core/hierarchy/hierarchy.ts) owns the one instance and changes it from watch events; reconcilers
// and webhooks only read it, and Node runs one handler at a time, so no lock is needed
// (docs/architecture.md).
//
// Model (docs/behaviour.md §3.2):
// * Every namespace the forest knows is a node. A node *exists* once the hierarchy model has seen
//   the managed Namespace in the cache (`ensure`), and stops existing when it is gone or no longer
//   managed (`remove`).
// * A namespace named as a parent but not existing is *missing*. It stays a node only while some
//   child still points at it, so the child can report ParentMissing and heal when it reappears.
//   Only existing namespaces have a parent, so a missing namespace is always at the top of a chain.
// * Each namespace has at most one parent, held as a plain graphlib edge parent -> child.
//   graphlib's compound `setParent` is not used: it throws on cycles, and HNC must be able to hold
//   a cycle that entered while the webhooks were bypassed, and report it.
// * Walks up are O(depth) and walks down O(subtree); no operation that changes the forest scans it.

import { Graph } from '@dagrejs/graphlib';
import { treeLabel } from '../api/constants.js';

/** What the forest knows about one namespace; the hierarchy model keeps the rest of its facts. */
export interface NamespaceNode {
  readonly name: string;
  /** False for a namespace only known as somebody's parent (deleted, or not reconciled yet). */
  readonly exists: boolean;
}

interface MutableNode extends NamespaceNode {
  exists: boolean;
}

/** What `setParent` changed; enough for the caller to decide what to re-reconcile (docs/behaviour.md §3.2). */
export interface ParentChange {
  readonly ns: string;
  readonly oldParent: string | undefined;
  readonly newParent: string | undefined;
  readonly changed: boolean;
  /** The cycle `ns` is in after the call (as `cycleOf`), if any. */
  readonly cycle: readonly string[] | undefined;
  /** True when the change closed a cycle that did not exist before. */
  readonly createdCycle: boolean;
  /** The cycle `ns` was in before a change; its members must be re-reconciled to clear InCycle. */
  readonly formerCycle: readonly string[] | undefined;
}

/** What `remove` changed. */
export interface Removal {
  readonly ns: string;
  /** False if the namespace did not exist, in which case nothing changed. */
  readonly existed: boolean;
  readonly oldParent: string | undefined;
  /** Children that now have a missing parent (sorted). */
  readonly orphans: readonly string[];
  readonly formerCycle: readonly string[] | undefined;
}

/** Hooks for halting reasons the forest cannot see by itself (tree labels, docs/behaviour.md §3.4). */
export interface TreeLabelOptions {
  /** Namespaces halted for reasons other than a cycle or a missing parent (e.g. DeletingCRD). */
  isHalted?: (ns: string) => boolean;
  /**
   * Tree labels of an external namespace (ancestor name -> depth), or undefined if `ns` is not
   * external. An external namespace ends the walk; its labels are copied shifted by its depth.
   */
  externalTreeLabels?: (ns: string) => Readonly<Record<string, number>> | undefined;
}

/** The result of walking up from a namespace: each name once, so cycles end the walk. */
interface Chain {
  /** `ns` first, then its parent, grandparent, ... */
  readonly names: readonly string[];
  /** Index in `names` of the first cycle member met, if the walk ran into a cycle. */
  readonly loopAt: number | undefined;
}

// graphlib keys its nodes in plain objects: a bare "constructor" (a legal namespace name) would
// hit Object.prototype, and numeric names would be reordered. A prefix makes every key inert.
const KEY_PREFIX = 'ns:';
const key = (ns: string): string => KEY_PREFIX + ns;
const unkey = (k: string): string => k.slice(KEY_PREFIX.length);

export class Forest {
  private readonly graph = new Graph<undefined, MutableNode, undefined>({ directed: true });
  /** Each namespace's parent, as the graph's one edge into it holds it: walks up read it without a graph query. */
  private readonly parents = new Map<string, string>();
  private existing = 0;
  private tracer: Set<string> | undefined;
  private edges = 0;

  /** Goes up whenever a parent-child edge changes: what was derived from subtrees is stale. */
  get generation(): number {
    return this.edges;
  }

  /**
   * Test instrumentation: how many node lookups (parent or children reads) traversals made.
   * Lets tests prove that operations stay within the part of the forest they concern.
   */
  readonly stats = { visits: 0 };

  /** Runs `fn` and reports which namespaces the forest's traversals stepped on meanwhile. */
  trace<T>(fn: () => T): { result: T; visited: ReadonlySet<string>; visits: number } {
    const outer = this.tracer;
    const visited = new Set<string>();
    const before = this.stats.visits;
    this.tracer = visited;
    try {
      const result = fn();
      return { result, visited, visits: this.stats.visits - before };
    } finally {
      this.tracer = outer;
    }
  }

  // ---- membership -------------------------------------------------------------------------

  /** Number of existing namespaces. */
  get size(): number {
    return this.existing;
  }

  /** True if the forest knows `ns` at all: existing, or missing but still named as a parent. */
  has(ns: string): boolean {
    return this.graph.hasNode(key(ns));
  }

  /** True if `ns` has been seen to exist (and not removed since). */
  exists(ns: string): boolean {
    return this.node(ns)?.exists === true;
  }

  /** True if `ns` is named as a parent but does not exist. */
  isMissing(ns: string): boolean {
    return this.node(ns)?.exists === false;
  }

  /** The node of `ns`, existing or missing. */
  node(ns: string): NamespaceNode | undefined {
    const k = key(ns);
    return this.graph.hasNode(k) ? this.graph.node(k) : undefined;
  }

  /** Existing namespaces, sorted. O(N): for listings, not for hot paths. */
  names(): string[] {
    return this.allNodes()
      .filter((n) => n.exists)
      .map((n) => n.name)
      .sort();
  }

  /** Missing namespaces (named as parents but not existing), sorted. */
  missing(): string[] {
    return this.allNodes()
      .filter((n) => !n.exists)
      .map((n) => n.name)
      .sort();
  }

  /** Existing namespaces without a parent, sorted. Orphans (missing parent) are not roots. */
  roots(): string[] {
    return this.names().filter((ns) => this.parentOf(ns) === undefined);
  }

  /** Marks `ns` as existing. Returns true if it did not exist before (first sighting or return). */
  ensure(ns: string): boolean {
    const n = this.mutableNode(ns);
    if (n === undefined) {
      this.graph.setNode(key(ns), { name: ns, exists: true });
    } else if (!n.exists) {
      n.exists = true; // a missing parent came back: its children heal without being touched
    } else {
      return false;
    }
    this.existing++;
    return true;
  }

  /**
   * Marks `ns` as gone and detaches it from its parent. Its children keep pointing at it, so they
   * can report ParentMissing until it returns or they get another parent (docs/behaviour.md §3.2).
   */
  remove(ns: string): Removal {
    const n = this.mutableNode(ns);
    if (n === undefined || !n.exists) {
      return { ns, existed: false, oldParent: undefined, orphans: [], formerCycle: undefined };
    }
    const formerCycle = this.cycleOf(ns);
    const oldParent = this.parentOf(ns);
    if (oldParent !== undefined) this.graph.removeEdge(key(oldParent), key(ns));
    if (oldParent !== undefined) this.edges++;
    this.parents.delete(ns);
    n.exists = false;
    this.existing--;
    const orphans = this.children(ns);
    if (oldParent !== undefined) this.dropIfUnused(oldParent);
    this.dropIfUnused(ns);
    return { ns, existed: true, oldParent, orphans, formerCycle };
  }

  // ---- structure --------------------------------------------------------------------------

  /**
   * Sets (or clears, with undefined or "") the parent of `ns`, which is thereby marked existing:
   * only existing namespaces can name a parent. An unknown parent is recorded as missing. Never
   * refuses a cycle; it is reported in the result. Cost: O(depth of old and new parent).
   */
  setParent(ns: string, parent: string | undefined): ParentChange {
    const newParent = parent === '' ? undefined : parent;
    this.ensure(ns);
    const oldParent = this.parentOf(ns);
    if (oldParent === newParent) {
      const cycle = this.cycleOf(ns);
      return { ns, oldParent, newParent, changed: false, cycle, createdCycle: false, formerCycle: undefined };
    }

    const formerCycle = this.cycleOf(ns);
    this.edges++;
    if (oldParent !== undefined) {
      this.graph.removeEdge(key(oldParent), key(ns));
      this.parents.delete(ns);
      this.dropIfUnused(oldParent);
    }
    if (newParent !== undefined) {
      if (!this.has(newParent)) this.graph.setNode(key(newParent), { name: newParent, exists: false });
      this.graph.setEdge(key(newParent), key(ns));
      this.parents.set(ns, newParent);
    }
    const cycle = newParent === undefined ? undefined : this.cycleOf(ns);
    // Changing a cycle member's parent always breaks that cycle, so any cycle now is a new one.
    return { ns, oldParent, newParent, changed: true, cycle, createdCycle: cycle !== undefined, formerCycle };
  }

  /** The parent of `ns` (possibly a missing namespace), or undefined for a root. */
  parent(ns: string): string | undefined {
    return this.parentOf(ns);
  }

  /** True if `ns` names a parent that does not exist (HNC's ParentMissing). */
  parentMissing(ns: string): boolean {
    const p = this.parentOf(ns);
    return p !== undefined && !this.exists(p);
  }

  /** Direct children of `ns`, sorted. */
  children(ns: string): string[] {
    return this.childrenOf(ns).sort();
  }

  /**
   * Proper ancestors of `ns`, root first and parent last (HNC's ancestry order, minus `ns`).
   * The top may be a missing namespace. In a cycle the walk stops before repeating a name, so
   * every name appears once and `ns` never appears.
   */
  ancestors(ns: string): string[] {
    return this.chain(ns).names.slice(1).reverse();
  }

  /** `ancestors(ns)` followed by `ns`. */
  ancestry(ns: string): string[] {
    return [...this.ancestors(ns), ns];
  }

  /** Number of proper ancestors (0 for a root). O(depth). */
  depth(ns: string): number {
    return this.ancestors(ns).length;
  }

  /** Top of `ns`'s chain (itself for a root; possibly a missing namespace), undefined if it loops. */
  root(ns: string): string | undefined {
    const { names, loopAt } = this.chain(ns);
    return loopAt === undefined ? names[names.length - 1] : undefined;
  }

  /** True if `ancestor` is a proper ancestor of `ns`. Never true for `ns` itself (see `inCycle`). */
  isAncestor(ancestor: string, ns: string): boolean {
    return ancestor !== ns && this.chain(ns).names.includes(ancestor);
  }

  /**
   * All namespaces below `ns`, sorted (as HNC's DescendantNames). Cycle-safe: each name once,
   * and never `ns` itself even when it is in a cycle. O(subtree).
   */
  descendants(ns: string): string[] {
    const seen = new Set<string>([ns]);
    const queue = [ns];
    for (let i = 0; i < queue.length; i++) {
      for (const c of this.childrenOf(queue[i]!)) {
        if (seen.has(c)) continue;
        seen.add(c);
        queue.push(c);
      }
    }
    seen.delete(ns);
    return [...seen].sort();
  }

  /** `ns` followed by its sorted descendants. */
  subtree(ns: string): string[] {
    return [ns, ...this.descendants(ns)];
  }

  /**
   * The namespaces whose tree labels, halted state or propagated objects may have changed through
   * `change`: the subtree of the moved namespace (including the members of a former or new cycle,
   * which all hang below it). Empty if nothing changed.
   */
  subtreeAffectedBy(change: ParentChange): string[] {
    return change.changed ? this.subtree(change.ns) : [];
  }

  // ---- cycles -----------------------------------------------------------------------------

  /**
   * The cycle `ns` is a member of, or undefined. Ordered as HNC reports it: starting at the
   * lexicographically smallest member, each name followed by its child in the cycle (so every
   * member gets the same list). A namespace hanging below a cycle is not a member.
   */
  cycleOf(ns: string): string[] | undefined {
    const { names, loopAt } = this.chain(ns);
    if (loopAt !== 0) return undefined;
    // names runs child -> parent; HNC lists parent -> child, rotated to the smallest name.
    const down = [...names].reverse();
    let start = 0;
    for (let i = 1; i < down.length; i++) if (down[i]! < down[start]!) start = i;
    return [...down.slice(start), ...down.slice(0, start)];
  }

  /** True if `ns` is a member of a cycle (including being its own parent). */
  inCycle(ns: string): boolean {
    return this.chain(ns).loopAt === 0;
  }

  /**
   * The cycle as HNC's InCycle message writes it, e.g. "a <- b <- c <- a" (smallest name first and
   * repeated last, each name the parent of the next), or undefined if `ns` is not in a cycle.
   */
  cycleText(ns: string): string | undefined {
    const cycle = this.cycleOf(ns);
    return cycle && [...cycle, cycle[0]!].join(' <- ');
  }

  /**
   * For validators: the ancestry that making `parent` the parent of `ns` would close into a cycle,
   * from `parent` up to `ns` (HNC's "current ancestry is p -> ... -> ns"; just `[ns]` for a
   * self-parent), or undefined if the change is acyclic.
   */
  wouldCreateCycle(ns: string, parent: string | undefined): string[] | undefined {
    if (parent === undefined || parent === '') return undefined;
    const up = this.chain(parent).names;
    const at = up.indexOf(ns);
    return at < 0 ? undefined : up.slice(0, at + 1);
  }

  // ---- tree labels ------------------------------------------------------------------------

  /**
   * The tree labels `ns` should carry (docs/behaviour.md §3.4): `<anc>.tree.hnc.x-k8s.io/depth` -> distance, from
   * "0" for itself upwards. The walk stops after the first halted namespace, so a cycle member or
   * an orphan carries only its own label, a namespace below one also carries that halted
   * ancestor's label, and a missing namespace never appears. Tree labels never express a cycle.
   */
  treeLabels(ns: string, opts: TreeLabelOptions = {}): Record<string, string> {
    const labels: Record<string, string> = {};
    const { names, loopAt } = this.chain(ns);
    for (let depth = 0; depth < names.length; depth++) {
      const cur = names[depth]!;
      labels[treeLabel(cur)] = String(depth);
      // The chain already holds cur's parent: the next name, or a cycle member (which exists).
      const parent = names[depth + 1];
      const parentMissing = parent !== undefined && !this.exists(parent);
      const halted = depth === loopAt || parentMissing || opts.isHalted?.(cur) === true;
      if (halted) break;
      const external = opts.externalTreeLabels?.(cur);
      if (external !== undefined) {
        for (const [anc, d] of Object.entries(external)) labels[treeLabel(anc)] = String(depth + d);
        break;
      }
    }
    return labels;
  }

  // ---- internals --------------------------------------------------------------------------

  private visit(ns: string): void {
    this.stats.visits++;
    this.tracer?.add(ns);
  }

  private mutableNode(ns: string): MutableNode | undefined {
    const k = key(ns);
    return this.graph.hasNode(k) ? this.graph.node(k) : undefined;
  }

  private allNodes(): MutableNode[] {
    return this.graph.nodes().map((k) => this.graph.node(k));
  }

  private parentOf(ns: string): string | undefined {
    this.visit(ns);
    return this.parents.get(ns);
  }

  private childrenOf(ns: string): string[] {
    this.visit(ns);
    return (this.graph.successors(key(ns)) ?? []).map(unkey);
  }

  /** Walks up from `ns`, each name once; O(depth). */
  private chain(ns: string): Chain {
    const names = [ns];
    const index = new Map([[ns, 0]]);
    for (let p = this.parentOf(ns); p !== undefined; p = this.parentOf(p)) {
      const seenAt = index.get(p);
      if (seenAt !== undefined) return { names, loopAt: seenAt };
      index.set(p, names.length);
      names.push(p);
    }
    return { names, loopAt: undefined };
  }

  /** Forgets a missing namespace once no child names it any more. */
  private dropIfUnused(ns: string): void {
    const n = this.mutableNode(ns);
    if (n !== undefined && !n.exists && (this.graph.successors(key(ns))?.length ?? 0) === 0) {
      this.graph.removeNode(key(ns));
      this.parents.delete(ns);
    }
  }
}
