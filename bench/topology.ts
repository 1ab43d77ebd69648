// The benchmark's trees and what HNC must make of them. Everything here is pure: the shapes
// (wide, full, skewer, org), the sources placed in them, the state HNC should converge to (tree
// labels, HierarchyConfiguration children, copies), and the minimum number of API writes that
// takes from any given state.

export type TopologyName = 'wide' | 'full' | 'skewer' | 'org';
export const TOPOLOGIES: readonly TopologyName[] = ['wide', 'full', 'skewer', 'org'];

export type SourceKind = 'roles' | 'rolebindings' | 'networkpolicies';
export const SOURCE_KINDS: readonly SourceKind[] = ['roles', 'rolebindings', 'networkpolicies'];

export interface Source {
  kind: SourceKind;
  namespace: string;
  name: string;
}

export interface Topology {
  name: TopologyName;
  /** Every namespace, parents before children. */
  namespaces: string[];
  /** Parent of each namespace; the roots have none. */
  parent: Map<string, string | undefined>;
  root: string;
  /** The root of the subtree moved back and forth by the move scenario. */
  moveRoot: string;
  /** Its two parents: where it starts (a) and where it moves to (b). */
  moveParents: [string, string];
  /** Namespaces of the move subtree (moveRoot included). */
  moveSize: number;
  /** Where the inner (non-root) sources live. */
  innerSourceNamespaces: string[];
}

export interface BuildOptions {
  size: number;
  moveSize: number;
  /** A skewer deeper than this is cut to this depth (tree labels grow as depth², see docs). */
  maxChain: number;
  seed?: number;
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** A small deterministic PRNG (mulberry32), so that "org" is the same tree on every run. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Adds a namespace under a parent (undefined: a root), named in creation order; returns its name. */
type Add = (parent: string | undefined, label?: string) => string;
/** What a shape gives the topology beyond its namespaces: the move subtree's other parent, and the inner sources' namespaces. */
type Shape = { moveTarget: string; inner: string[] };

/** A root and body−1 children. */
function wide(add: Add, root: string, body: number): Shape {
  const kids: string[] = [];
  for (let i = 1; i < body; i++) kids.push(add(root));
  return { moveTarget: kids[Math.floor(kids.length / 2)] ?? root, inner: [] };
}

/** A root, K children, K² grandchildren: the largest K that fits the body. */
function full(add: Add, root: string, body: number): Shape {
  const k = Math.max(1, Math.floor((-1 + Math.sqrt(4 * body - 3)) / 2));
  const kids: string[] = [];
  for (let i = 0; i < k; i++) kids.push(add(root));
  for (const kid of kids) for (let j = 0; j < k; j++) add(kid);
  return { moveTarget: kids[kids.length - 1]!, inner: kids.slice(0, 3) };
}

/** A chain, cut at maxChain deep. */
function skewer(add: Add, root: string, body: number, maxChain: number): Shape {
  const chain = [root];
  for (let i = 1; i < Math.min(body, maxChain); i++) chain.push(add(chain[i - 1]));
  const inner = [chain[1], chain[Math.floor(chain.length / 4)], chain[Math.floor(chain.length / 2)]];
  return { moveTarget: chain[Math.floor(chain.length / 2)]!, inner: inner.filter((x): x is string => !!x && x !== root) };
}

/**
 * An org chart: root -> divisions -> departments -> teams -> environments, fan-outs drawn
 * unevenly (budgets split by squared random weights), depth at most 4 below the root.
 */
function org(add: Add, root: string, body: number, seed: number, order: string[], parent: Map<string, string | undefined>): Shape {
  const rnd = prng(seed);
  const grow = (p: string, budget: number, depth: number): void => {
    if (budget <= 0) return;
    if (depth >= 4) {
      for (let i = 0; i < budget; i++) add(p);
      return;
    }
    const k = Math.min(budget, depth === 0 ? 6 : 2 + Math.floor(rnd() * 9));
    const kids: string[] = [];
    for (let i = 0; i < k; i++) kids.push(add(p));
    const rest = budget - k;
    const weights = kids.map(() => rnd() ** 2 + 0.02);
    const sum = weights.reduce((a, b) => a + b, 0);
    const shares = weights.map((w) => Math.floor((rest * w) / sum));
    let left = rest - shares.reduce((a, b) => a + b, 0);
    for (let i = 0; left > 0; i = (i + 1) % k, left--) shares[i]!++;
    kids.forEach((kid, i) => grow(kid, shares[i]!, depth + 1));
  };
  grow(root, body - 1, 0);
  const kids = order.filter((n) => parent.get(n) === root);
  // The inner sources: in the three largest divisions.
  const size = subtreeSizes(order, parent);
  return { moveTarget: kids[kids.length - 1] ?? root, inner: [...kids].sort((a, b) => size.get(b)! - size.get(a)!).slice(0, 3) };
}

/** The move subtree: one namespace with children of ten each, hanging under the root at first; its root and size. */
function moveSubtree(add: Add, root: string, moveSize: number): { moveRoot: string; made: number } {
  const moveRoot = add(root, 'mv');
  let made = 1;
  const level1: string[] = [];
  while (made < moveSize && level1.length < Math.max(1, Math.ceil((moveSize - 1) / 11))) {
    level1.push(add(moveRoot, 'mv'));
    made++;
  }
  for (let i = 0; made < moveSize; i = (i + 1) % level1.length) {
    add(level1[i]!, 'mv');
    made++;
  }
  return { moveRoot, made };
}

export function buildTopology(name: TopologyName, opts: BuildOptions): Topology {
  const prefix = { wide: 'w', full: 'f', skewer: 's', org: 'o' }[name];
  const parent = new Map<string, string | undefined>();
  const order: string[] = [];
  const width = String(opts.size).length;
  let counter = 0;
  const add: Add = (p, label = 'n') => {
    const ns = `${prefix}-${label}-${pad(counter++, width)}`;
    parent.set(ns, p);
    order.push(ns);
    return ns;
  };
  const moveSize = Math.max(1, Math.min(opts.moveSize, Math.floor(opts.size / 2)));
  const body = Math.max(2, opts.size - moveSize);
  const root = add(undefined, 'root');
  const shape =
    name === 'wide'
      ? wide(add, root, body)
      : name === 'full'
        ? full(add, root, body)
        : name === 'skewer'
          ? skewer(add, root, body, opts.maxChain)
          : org(add, root, body, opts.seed ?? 42, order, parent);
  const { moveRoot, made } = moveSubtree(add, root, moveSize);
  const inner = shape.inner.length ? shape.inner : [moveRoot];
  return {
    name,
    namespaces: order,
    parent,
    root,
    moveRoot,
    moveParents: [root, shape.moveTarget],
    moveSize: made,
    innerSourceNamespaces: inner,
  };
}

function subtreeSizes(order: string[], parent: Map<string, string | undefined>): Map<string, number> {
  const size = new Map(order.map((n) => [n, 1]));
  for (let i = order.length - 1; i >= 0; i--) {
    const p = parent.get(order[i]!);
    if (p !== undefined) size.set(p, size.get(p)! + size.get(order[i]!)!);
  }
  return size;
}

/** `o` source objects at the root (kinds in turn) and `inner` in each inner source namespace. */
export function placeSources(t: Topology, rootObjects: number, innerObjects: number): Source[] {
  const out: Source[] = [];
  for (let i = 0; i < rootObjects; i++) out.push({ kind: SOURCE_KINDS[i % 3]!, namespace: t.root, name: `bench-root-${i}` });
  t.innerSourceNamespaces.forEach((ns, j) => {
    for (let i = 0; i < innerObjects; i++) out.push({ kind: SOURCE_KINDS[(i + j) % 3]!, namespace: ns, name: `bench-inner-${j}-${i}` });
  });
  return out;
}

// ---- the state HNC should converge to --------------------------------------------------------------

export interface Expected {
  /** For each namespace, its tree labels and the included-namespace label, as a canonical string. */
  labels: Map<string, string>;
  /** For each namespace, its HierarchyConfiguration's status.children and condition count, canonical. */
  hierarchy: Map<string, string>;
  /** Every copy, `kind/namespace/name`, with the namespace it comes from. */
  copies: Map<string, string>;
}

export const INCLUDED_LABEL = 'hnc.x-k8s.io/included-namespace';
export const TREE_SUFFIX = '.tree.hnc.x-k8s.io/depth';

/** Canonical form of a namespace's HNC labels (tree labels and the included-namespace label). */
export function labelSignature(labels: Record<string, string> | undefined): string {
  const tree: string[] = [];
  for (const [k, v] of Object.entries(labels ?? {})) if (k.endsWith(TREE_SUFFIX)) tree.push(`${k.slice(0, -TREE_SUFFIX.length)}=${v}`);
  tree.sort();
  return `${tree.join(',')}|${labels?.[INCLUDED_LABEL] ?? ''}`;
}

/** Canonical form of what HNC writes in a HierarchyConfiguration: children and conditions. */
export function hierarchySignature(hc: { status?: { children?: string[]; conditions?: unknown[] } } | undefined): string {
  return `${[...(hc?.status?.children ?? [])].sort().join(',')}|${hc?.status?.conditions?.length ?? 0}`;
}

export function childrenOf(parent: Map<string, string | undefined>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [ns, p] of parent) {
    if (!out.has(ns)) out.set(ns, []);
    if (p !== undefined) {
      if (!out.has(p)) out.set(p, []);
      out.get(p)!.push(ns);
    }
  }
  return out;
}

export function expectedState(parent: Map<string, string | undefined>, sources: readonly Source[]): Expected {
  const labels = new Map<string, string>();
  const depthsOf = (ns: string): Record<string, string> => {
    const out: Record<string, string> = {};
    let d = 0;
    for (let cur: string | undefined = ns; cur !== undefined; cur = parent.get(cur)) out[`${cur}${TREE_SUFFIX}`] = String(d++);
    out[INCLUDED_LABEL] = 'true';
    return out;
  };
  for (const ns of parent.keys()) labels.set(ns, labelSignature(depthsOf(ns)));
  const hierarchy = new Map<string, string>();
  for (const [ns, kids] of childrenOf(parent)) hierarchy.set(ns, hierarchySignature({ status: { children: kids } }));
  // Copies: each source goes to every strict descendant, unless a higher ancestor holds a source of
  // the same kind and name (the highest wins); our names are unique, so this rarely matters.
  const byNs = new Map<string, Source[]>();
  for (const s of sources) byNs.set(s.namespace, [...(byNs.get(s.namespace) ?? []), s]);
  const copies = new Map<string, string>();
  for (const ns of parent.keys()) {
    const ancestors: string[] = [];
    for (let cur = parent.get(ns); cur !== undefined; cur = parent.get(cur)) ancestors.unshift(cur);
    const own = new Set((byNs.get(ns) ?? []).map((s) => `${s.kind}/${s.name}`));
    for (const anc of ancestors) {
      for (const s of byNs.get(anc) ?? []) {
        const key = `${s.kind}/${ns}/${s.name}`;
        if (own.has(`${s.kind}/${s.name}`) || copies.has(key)) continue;
        copies.set(key, anc);
      }
    }
  }
  return { labels, hierarchy, copies };
}

/** The cold state: namespaces without HNC labels, HierarchyConfigurations without status, no copies. */
export function coldState(parent: Map<string, string | undefined>): Expected {
  const labels = new Map<string, string>();
  const hierarchy = new Map<string, string>();
  for (const ns of parent.keys()) {
    labels.set(ns, labelSignature({}));
    hierarchy.set(ns, hierarchySignature(undefined));
  }
  return { labels, hierarchy, copies: new Map() };
}

export interface MinimumWrites {
  /** Namespace label patches (one per namespace whose HNC labels differ). */
  namespaces: number;
  /** HierarchyConfiguration creates or updates (one per namespace whose children differ). */
  hierarchyconfigurations: number;
  /** Copy creates, deletes and updates, by kind. */
  copies: Record<SourceKind, number>;
  total: number;
}

/** The fewest writes that take a cluster from `from` to `to`: one per differing object. */
export function minimumWrites(from: Expected, to: Expected): MinimumWrites {
  let namespaces = 0;
  for (const [ns, sig] of to.labels) if (from.labels.get(ns) !== sig) namespaces++;
  let hierarchyconfigurations = 0;
  for (const [ns, sig] of to.hierarchy) if ((from.hierarchy.get(ns) ?? hierarchySignature(undefined)) !== sig) hierarchyconfigurations++;
  const copies: Record<SourceKind, number> = { roles: 0, rolebindings: 0, networkpolicies: 0 };
  const kindOf = (key: string) => key.slice(0, key.indexOf('/')) as SourceKind;
  for (const [key, src] of to.copies) {
    const before = from.copies.get(key);
    if (before === undefined) copies[kindOf(key)]++;
    // A copy from another source: one update (a RoleBinding with another roleRef would be two).
    else if (before !== src) copies[kindOf(key)]++;
  }
  for (const key of from.copies.keys()) if (!to.copies.has(key)) copies[kindOf(key)]++;
  const total = namespaces + hierarchyconfigurations + copies.roles + copies.rolebindings + copies.networkpolicies;
  return { namespaces, hierarchyconfigurations, copies, total };
}

export function descendants(parent: Map<string, string | undefined>, ns: string): string[] {
  const kids = childrenOf(parent);
  const out: string[] = [];
  const stack = [...(kids.get(ns) ?? [])];
  while (stack.length) {
    const n = stack.pop()!;
    out.push(n);
    stack.push(...(kids.get(n) ?? []));
  }
  return out;
}

export function depthOf(parent: Map<string, string | undefined>, ns: string): number {
  let d = 0;
  for (let cur = parent.get(ns); cur !== undefined; cur = parent.get(cur)) d++;
  return d;
}

export function describe(t: Topology): { namespaces: number; depth: number; maxFanOut: number; leaves: number; moveSize: number } {
  const kids = childrenOf(t.parent);
  let depth = 0;
  let maxFanOut = 0;
  let leaves = 0;
  for (const ns of t.namespaces) {
    depth = Math.max(depth, depthOf(t.parent, ns));
    const k = kids.get(ns)?.length ?? 0;
    maxFanOut = Math.max(maxFanOut, k);
    if (k === 0) leaves++;
  }
  return { namespaces: t.namespaces.length, depth, maxFanOut, leaves, moveSize: t.moveSize };
}

/**
 * A source's body; `updated`, the same source after an update trial's change, to one field its
 * copies carry (`contentMark` in bench/tracker.ts reads it back), of the same size of write.
 */
export function sourceBody(kind: SourceKind, name: string, updated = false): Record<string, unknown> {
  switch (kind) {
    case 'roles':
      return {
        metadata: { name, labels: { bench: 'source' } },
        rules: [{ apiGroups: [''], resources: ['pods', 'configmaps'], verbs: updated ? ['get', 'list'] : ['get', 'list', 'watch'] }],
      };
    case 'rolebindings':
      return {
        metadata: { name, labels: { bench: 'source' } },
        // The roleRef is immutable: an update that changed it would delete and recreate every copy.
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: `${name}-${updated ? 'editors' : 'readers'}` }],
      };
    case 'networkpolicies':
      return {
        metadata: { name, labels: { bench: 'source' } },
        spec: { podSelector: {}, policyTypes: updated ? ['Ingress', 'Egress'] : ['Ingress'], ingress: [{ from: [{ podSelector: {} }] }] },
      };
  }
}
