// The checker's own model of HNC, written from docs/behaviour.md and nothing of core/: given
// what users wrote (namespaces, anchors, HierarchyConfigurations, sources, HNCConfiguration),
// which parent each namespace has, which tree labels it must carry and which copy of which
// source it must hold. Simple and slow on purpose: every answer is recomputed from scratch.
import type { KubeObject } from './kinds.js';

export const TREE_SUFFIX = '.tree.hnc.x-k8s.io/depth';
export const INHERITED_FROM = 'hnc.x-k8s.io/inherited-from';
const SUBNAMESPACE_OF = 'hnc.x-k8s.io/subnamespace-of';
const SELECT = 'propagate.hnc.x-k8s.io/select';
const TREE_SELECT = 'propagate.hnc.x-k8s.io/treeSelect';
const NONE = 'propagate.hnc.x-k8s.io/none';
const ALL = 'propagate.hnc.x-k8s.io/all';

export type Mode = 'Propagate' | 'AllowPropagate' | 'Remove' | 'Ignore';

export interface ClusterView {
  /** The namespaces in scope, live ones only. */
  namespaces: KubeObject[];
  /** spec.parent of each namespace's HierarchyConfiguration, where it names one. */
  hcParents: Map<string, string>;
  /** Per resource: every object of that kind in the namespaces in scope. */
  objects: Map<string, KubeObject[]>;
  modes: Map<string, Mode>;
}

/** Each namespace's parent as HNC must see it: a subnamespace's anchor namespace, else its HierarchyConfiguration's. */
export function parents(view: ClusterView): Map<string, string | undefined> {
  const out = new Map<string, string | undefined>();
  for (const ns of view.namespaces) {
    const name = ns.metadata.name;
    out.set(name, ns.metadata.annotations?.[SUBNAMESPACE_OF] ?? view.hcParents.get(name));
  }
  return out;
}

/** The namespace and its ancestors, nearest first; throws on a cycle or a missing parent (users make neither). */
export function ancestry(ns: string, parentOf: Map<string, string | undefined>): string[] {
  const chain = [ns];
  for (let p = parentOf.get(ns); p !== undefined; p = parentOf.get(p)) {
    if (!parentOf.has(p)) throw new Error(`${chain.at(-1)} names parent ${p}, which does not exist`);
    if (chain.includes(p)) throw new Error(`cycle through ${p}: ${chain.join(' -> ')}`);
    chain.push(p);
  }
  return chain;
}

/** The tree labels a namespace must carry: `<ancestor>.tree.hnc.x-k8s.io/depth` = distance, itself included. */
export function treeLabels(chain: string[]): Record<string, string> {
  return Object.fromEntries(chain.map((a, depth) => [`${a}${TREE_SUFFIX}`, String(depth)]));
}

/** A namespace's labels as HNC evaluates selectors on them: its own, with the tree labels it must carry. */
function labelsFor(ns: KubeObject, chain: string[]): Record<string, string> {
  const own = Object.entries(ns.metadata.labels ?? {}).filter(([k]) => !k.endsWith(TREE_SUFFIX));
  return { ...Object.fromEntries(own), ...treeLabels(chain) };
}

/** Whether a label selector string (the forms `k`, `!k`, `k=v`, `k==v`, `k!=v`, comma-joined) matches. */
export function selectorMatches(selector: string, labels: Record<string, string>): boolean {
  return selector
    .split(',')
    .map((r) => r.trim())
    .every((r) => {
      const ne = /^([^!=]+)!=(.*)$/.exec(r);
      if (ne) return labels[ne[1]!.trim()] !== ne[2]!.trim();
      const eq = /^([^!=]+)==?(.*)$/.exec(r);
      if (eq) return labels[eq[1]!.trim()] === eq[2]!.trim();
      if (r.startsWith('!')) return !(r.slice(1) in labels);
      if (/^[\w./-]+$/.test(r)) return r in labels;
      throw new Error(`the checker does not understand the selector requirement "${r}"`);
    });
}

const parseBool = (v: string): boolean | undefined =>
  ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v) ? true : ['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v) ? false : undefined;

/** Whether `source` propagates into a namespace with these labels (docs/behaviour.md §5.4). */
export function propagatesInto(source: KubeObject, mode: Mode, labels: Record<string, string>): boolean {
  if (mode === 'Remove' || mode === 'Ignore') return false;
  const a = source.metadata.annotations ?? {};
  let yes = mode === 'Propagate';
  if (a[SELECT]) yes = selectorMatches(a[SELECT], labels);
  if (a[TREE_SELECT]) {
    const inTree = (n: string) => `${n}${TREE_SUFFIX}` in labels;
    yes = a[TREE_SELECT].split(',').every((e) => (e.startsWith('!') ? !inTree(e.slice(1)) : inTree(e)));
  }
  if (a[NONE] && parseBool(a[NONE]) !== false) yes = false;
  if (a[ALL] && parseBool(a[ALL]) === true) yes = true;
  return yes;
}

export const isCopy = (o: KubeObject) => o.metadata.labels?.[INHERITED_FROM] !== undefined;

/** What a namespace must hold of one kind: name → the namespace of the source it must be a copy of. */
export function expectedCopies(ns: KubeObject, chain: string[], sources: KubeObject[], mode: Mode): Map<string, string> {
  const out = new Map<string, string>();
  if (mode === 'Ignore') return out;
  const labels = labelsFor(ns, chain);
  const own = new Set(sources.filter((s) => s.metadata.namespace === ns.metadata.name).map((s) => s.metadata.name));
  // Highest ancestor first: the first source of a name that propagates here wins.
  for (const ancestor of chain.slice(1).reverse()) {
    for (const s of sources.filter((x) => x.metadata.namespace === ancestor)) {
      const name = s.metadata.name;
      if (own.has(name) || out.has(name)) continue;
      if (propagatesInto(s, mode, labels)) out.set(name, ancestor);
    }
  }
  return out;
}

/** Never copied: keys under hnc.x-k8s.io, the copy's managed-by, and the deployment tools' keys (docs/behaviour.md §5.6). */
const NEVER_COPIED = new Set([
  'app.kubernetes.io/managed-by',
  'app.kubernetes.io/instance',
  'kubectl.kubernetes.io/last-applied-configuration',
]);

function userKeys(map: Record<string, string> | undefined): Record<string, string> | undefined {
  const kept = Object.entries(map ?? {}).filter(([k]) => !k.split('/')[0]!.endsWith('hnc.x-k8s.io') && !NEVER_COPIED.has(k));
  return kept.length ? Object.fromEntries(kept) : undefined;
}

/** What a copy must share with its source: everything but status and metadata other than the user's labels and annotations. */
export function content(o: KubeObject): unknown {
  const { metadata, status: _status, apiVersion: _v, kind: _k, ...rest } = o;
  return { ...rest, labels: userKeys(metadata.labels), annotations: userKeys(metadata.annotations) };
}
