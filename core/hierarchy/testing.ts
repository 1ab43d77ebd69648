// A small test DSL for the hierarchy model, built on the forest notation (core/forest/dsl.ts):
//
//   hierarchy('a -> b -> c')                 every name gets a Namespace and an HC naming its parent
//   hierarchy('gone? -> b')                  "gone" is missing: named as b's parent, no Namespace
//   hierarchy('a -> b', { subns: ['b'] })    b is a subnamespace: annotated, with an anchor in a
//   hierarchy('a', { policy: { managedLabels: ['team'] } })
//
// then tweak facts with updateNamespace / updateHierarchy / updateAnchor, and read results with
// labelsOf / annotationsOf / tree. Test-only: nothing outside tests imports this file.
import { Annotation, treeLabel } from '../api/constants.js';
import type { MetaKVP } from '../api/types.js';
import { forest } from '../forest/dsl.js';
import { Hierarchy, type Affected, type AnchorFacts, type HierarchyFacts, type NamespaceFacts } from './hierarchy.js';
import { desiredNamespaceMetadata, type Metadata } from './plan.js';
import { HierarchyPolicy, type PolicyOptions } from './policy.js';

export interface HierarchyOptions {
  /** The policy, or the options to build one (default: HNC's defaults, no managed metadata). */
  policy?: HierarchyPolicy | PolicyOptions;
  /** Names that are subnamespaces of their parent in the text: annotated, and anchored there. */
  subns?: readonly string[];
}

export const nsFacts = (facts: Partial<NamespaceFacts> = {}): NamespaceFacts => ({
  labels: {},
  annotations: {},
  deleting: false,
  ...facts,
});

export const hcFacts = (facts: Partial<HierarchyFacts> = {}): HierarchyFacts => ({
  parent: undefined,
  allowCascadingDeletion: false,
  labels: [],
  annotations: [],
  deleting: false,
  ...facts,
});

export const anchorFacts = (facts: Partial<AnchorFacts> = {}): AnchorFacts => ({ labels: [], annotations: [], deleting: false, ...facts });

/** `{ team: 'a' }` as the MetaKVP list HC and anchor specs hold. */
export const kvs = (record: Record<string, string>): MetaKVP[] => Object.entries(record).map(([key, value]) => ({ key, value }));

/** `{ a: 1, b: 0 }` as tree labels: `a.tree.hnc.x-k8s.io/depth: "1"`, ... */
export const tree = (depths: Record<string, number>): Record<string, string> =>
  Object.fromEntries(Object.entries(depths).map(([ns, d]) => [treeLabel(ns), String(d)]));

/** Builds a Hierarchy from the forest notation (see the top of this file). */
export function hierarchy(text: string, opts: HierarchyOptions = {}): Hierarchy {
  const f = forest(text); // parses and checks the notation
  const policy = opts.policy instanceof HierarchyPolicy ? opts.policy : new HierarchyPolicy(opts.policy);
  const h = new Hierarchy(policy);
  const subns = new Set(opts.subns);
  for (const s of subns) {
    const parent = f.parent(s);
    if (!f.exists(s) || parent === undefined || !f.exists(parent)) {
      throw new Error(`hierarchy DSL: subnamespace "${s}" must exist and have an existing parent`);
    }
  }
  for (const ns of f.names()) {
    const parent = f.parent(ns);
    h.setNamespace(ns, nsFacts(subns.has(ns) ? { annotations: { [Annotation.subnamespaceOf]: parent! } } : {}));
    h.setHierarchy(ns, hcFacts({ parent }));
  }
  for (const s of subns) h.setAnchor(f.parent(s)!, s, anchorFacts());
  return h;
}

/** Changes some facts of an existing namespace; returns what the setter says is affected. */
export function updateNamespace(h: Hierarchy, ns: string, patch: Partial<NamespaceFacts>): Affected {
  const current = h.namespace(ns);
  if (!current) throw new Error(`hierarchy DSL: no namespace "${ns}"`);
  return h.setNamespace(ns, { ...current, ...patch });
}

/** Changes some facts of a namespace's HC (creating a blank one if there is none). */
export function updateHierarchy(h: Hierarchy, ns: string, patch: Partial<HierarchyFacts>): Affected {
  return h.setHierarchy(ns, { ...(h.hierarchy(ns) ?? hcFacts()), ...patch });
}

/** Changes some facts of an anchor (creating a blank one if there is none). */
export function updateAnchor(h: Hierarchy, parent: string, child: string, patch: Partial<AnchorFacts> = {}): Affected {
  return h.setAnchor(parent, child, { ...(h.anchor(parent, child) ?? anchorFacts()), ...patch });
}

/** The namespace's metadata as it is now (per the facts). */
export function metadataOf(h: Hierarchy, ns: string): Metadata {
  const facts = h.namespace(ns);
  if (!facts) throw new Error(`hierarchy DSL: no namespace "${ns}"`);
  return { labels: { ...facts.labels }, annotations: { ...facts.annotations } };
}

/** The labels the hierarchy reconciler would give the namespace. */
export const labelsOf = (h: Hierarchy, ns: string): Record<string, string> => desiredNamespaceMetadata(h, ns, metadataOf(h, ns)).labels;

/** The annotations the hierarchy reconciler would give the namespace. */
export const annotationsOf = (h: Hierarchy, ns: string): Record<string, string> =>
  desiredNamespaceMetadata(h, ns, metadataOf(h, ns)).annotations;

/** An Affected set as sorted arrays, for one-line assertions. */
export const sorted = (a: Affected): { namespaces: string[]; anchors: string[] } => ({
  namespaces: [...a.namespaces].sort(),
  anchors: [...a.anchors].sort(),
});
