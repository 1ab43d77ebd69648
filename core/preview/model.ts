// The hierarchy model as it is and as it would be after one change (`kubectl hns set/create/delete
// --dry-run`, docs/kubectl-hns.md). Both are the controller's own Hierarchy model, fed the same
// facts its watches feed it; the change is applied with the same setters a watch event would call,
// so what follows from it (tree labels, halts, which sources reach which namespace) is decided by
// the controller's code, not a second implementation.
import { AnchorState, Annotation } from '../api/constants.js';
import type { HierarchyConfiguration, MetaKVP, NamespaceObject, SubnamespaceAnchor } from '../api/types.js';
import { anchorFacts, hierarchyFacts, namespaceFacts } from '../hierarchy/facts.js';
import { Hierarchy, type HierarchyFacts } from '../hierarchy/hierarchy.js';
import { newSubnamespaceMetadata } from '../hierarchy/plan.js';
import type { HierarchyPolicy } from '../hierarchy/policy.js';

/** One hierarchy change a preview answers for. */
export type HierarchyChange =
  /**
   * `kubectl hns set NS --parent P` (parent set) or `--root` (parent undefined); with
   * `--allow/forbidCascadingDeletion`, the flag's new value.
   */
  | {
      readonly op: 'set-parent';
      readonly namespace: string;
      readonly parent: string | undefined;
      readonly allowCascadingDeletion?: boolean;
    }
  /** `kubectl hns create CHILD -n PARENT`: a new anchor, then the subnamespace. */
  | {
      readonly op: 'create-subnamespace';
      readonly parent: string;
      readonly child: string;
      readonly labels?: readonly MetaKVP[];
      readonly annotations?: readonly MetaKVP[];
    }
  /** `kubectl hns delete CHILD -n PARENT`: the anchor goes, and the subnamespace with it. */
  | { readonly op: 'delete-subnamespace'; readonly parent: string; readonly child: string };

/** The objects the hierarchy model is built from. */
export interface HierarchySnapshot {
  readonly policy: HierarchyPolicy;
  readonly namespaces: readonly NamespaceObject[];
  readonly hierarchies: readonly HierarchyConfiguration[];
  readonly anchors: readonly SubnamespaceAnchor[];
}

/** The model the controller would hold with these objects in its caches. */
export function hierarchyModel(snapshot: HierarchySnapshot): Hierarchy {
  const h = new Hierarchy(snapshot.policy);
  for (const ns of snapshot.namespaces) h.setNamespace(ns.metadata.name, namespaceFacts(ns));
  for (const hc of snapshot.hierarchies) if (hc.metadata.namespace) h.setHierarchy(hc.metadata.namespace, hierarchyFacts(hc));
  for (const a of snapshot.anchors)
    if (a.metadata.namespace && a.metadata.name) h.setAnchor(a.metadata.namespace, a.metadata.name, anchorFacts(a));
  return h;
}

/** What a change does to the set of namespaces. */
export interface NamespaceChanges {
  readonly created: string[];
  /** Sorted. */
  readonly deleted: string[];
}

const NO_HIERARCHY: HierarchyFacts = { parent: undefined, allowCascadingDeletion: false, labels: [], annotations: [], deleting: false };

/**
 * Applies the change to `h` (a model built for the purpose) as the watches would report its
 * consequences once the controller has acted: a new subnamespace exists with the metadata the
 * anchor reconciler creates it with; a deleted subnamespace is gone, with every subnamespace below
 * it (their anchors live in namespaces being deleted). Full namespaces below a deleted one stay,
 * their parent missing, as they would.
 */
export function applyChange(h: Hierarchy, change: HierarchyChange): NamespaceChanges {
  switch (change.op) {
    case 'set-parent': {
      const current = h.hierarchy(change.namespace) ?? NO_HIERARCHY;
      h.setHierarchy(change.namespace, {
        ...current,
        parent: change.parent,
        allowCascadingDeletion: change.allowCascadingDeletion ?? current.allowCascadingDeletion,
      });
      return { created: [], deleted: [] };
    }
    case 'create-subnamespace': {
      if (h.namespace(change.child)) return { created: [], deleted: [] }; // the webhook refuses it; nothing follows
      h.setAnchor(change.parent, change.child, {
        labels: change.labels ?? [],
        annotations: change.annotations ?? [],
        deleting: false,
        finalizer: true,
      });
      const meta = newSubnamespaceMetadata(h, change.parent, change.child);
      h.setNamespace(change.child, { labels: meta.labels, annotations: meta.annotations, deleting: false });
      return { created: [change.child], deleted: [] };
    }
    case 'delete-subnamespace': {
      // Only an Ok anchor deletes its subnamespace (docs/behaviour.md §4); others just go.
      const deletes = deletesSubnamespace(h, change.parent, change.child);
      h.setAnchor(change.parent, change.child, undefined);
      if (!deletes) return { created: [], deleted: [] };
      const deleted = cascade(h, change.child);
      for (const ns of deleted) {
        for (const child of h.anchorsIn(ns)) h.setAnchor(ns, child, undefined);
        h.setHierarchy(ns, undefined);
        h.setNamespace(ns, undefined);
      }
      return { created: [], deleted: [...deleted].sort() };
    }
  }
}

const deletesSubnamespace = (h: Hierarchy, parent: string, child: string): boolean =>
  h.anchor(parent, child)?.state === AnchorState.Ok && h.namespace(child)?.annotations[Annotation.subnamespaceOf] === parent;

/** A subnamespace and, below it, every subnamespace whose anchor lives in a namespace of the cascade. */
function cascade(h: Hierarchy, root: string): string[] {
  const out = [root];
  for (let i = 0; i < out.length; i++) {
    const ns = out[i]!;
    for (const child of h.anchorsIn(ns)) if (deletesSubnamespace(h, ns, child) && !out.includes(child)) out.push(child);
  }
  return out;
}
