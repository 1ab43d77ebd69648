// What the hierarchy model takes from each object: the controller's watch handlers, the reconcilers'
// unit tests and the kubectl plugin's previews feed their models the same way.
import { Finalizer } from '../api/constants.js';
import type { HierarchyConfiguration, NamespaceObject, SubnamespaceAnchor } from '../api/types.js';
import type { AnchorFacts, HierarchyFacts, NamespaceFacts } from './hierarchy.js';

export const namespaceFacts = (obj: NamespaceObject): NamespaceFacts => ({
  labels: obj.metadata.labels ?? {},
  annotations: obj.metadata.annotations ?? {},
  deleting: !!obj.metadata.deletionTimestamp,
});

export function hierarchyFacts(obj: HierarchyConfiguration): HierarchyFacts {
  const spec = obj.spec ?? {};
  return {
    parent: spec.parent || undefined,
    allowCascadingDeletion: spec.allowCascadingDeletion === true,
    labels: spec.labels ?? [],
    annotations: spec.annotations ?? [],
    deleting: !!obj.metadata.deletionTimestamp,
  };
}

export function anchorFacts(obj: SubnamespaceAnchor): AnchorFacts {
  const spec = obj.spec ?? {};
  return {
    labels: spec.labels ?? [],
    annotations: spec.annotations ?? [],
    deleting: !!obj.metadata.deletionTimestamp,
    state: obj.status?.status,
    finalizer: (obj.metadata.finalizers ?? []).includes(Finalizer.anchor),
  };
}
