// Small read-only queries over the hierarchy model that only the validators need. They would sit
// well on Hierarchy itself; they live here so this folder stays self-contained.
import { Annotation, treeLabelNamespace } from '../api/constants.js';
import type { Hierarchy } from '../hierarchy/hierarchy.js';

/** The manager named by an external namespace's `hnc.x-k8s.io/managed-by` annotation. */
export function externalManager(h: Hierarchy, ns: string): string {
  return h.namespace(ns)?.annotations[Annotation.managedBy] ?? '';
}

/**
 * The namespaces an external namespace's hierarchy claims: itself and every ancestor its tree
 * labels name (docs/behaviour.md §3.6). HNC reserves these names.
 */
export function externalTreeNames(h: Hierarchy, ns: string): Set<string> {
  const names = new Set([ns]);
  for (const key of Object.keys(h.namespace(ns)?.labels ?? {})) {
    const anc = treeLabelNamespace(key);
    if (anc !== undefined) names.add(anc);
  }
  return names;
}
