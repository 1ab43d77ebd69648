// The objects a namespace inherits: propagated copies, recognised by the
// `hnc.x-k8s.io/inherited-from` label, whose value names the namespace holding the source.
//
// Kept apart from `describe` on purpose: for now it looks at the two RBAC types HNC always
// propagates; it is the place to extend to every type HNCConfiguration's status lists, and to
// explain why a named object is or is not propagated to a namespace.
import { ENFORCED_TYPES, Label } from '../../core/api/index.js';
import type { HncApi, ResourceType } from '../api.js';
import { isForbidden, isNotFound } from '../errors.js';
import type { InheritedObject, InheritedObjects } from '../model.js';

export const INHERITED_TYPES: readonly ResourceType[] = ENFORCED_TYPES.map((t) => ({ group: t.group, version: 'v1', resource: t.resource, kind: t.kind }));

export async function loadInheritedObjects(api: HncApi, namespace: string, types: readonly ResourceType[] = INHERITED_TYPES): Promise<InheritedObjects> {
  const results = await Promise.all(
    types.map(async (type): Promise<{ objects: InheritedObject[]; note?: string }> => {
      try {
        const items = await api.listObjects(namespace, type, Label.inheritedFrom);
        return {
          objects: items.map((o) => ({ kind: type.kind, name: o.metadata.name ?? '', from: o.metadata.labels?.[Label.inheritedFrom] ?? '' })),
        };
      } catch (err) {
        if (isForbidden(err)) return { objects: [], note: `no permission to list ${type.resource} in ${namespace}` };
        if (isNotFound(err)) return { objects: [], note: `${type.resource} are not served by this cluster` };
        throw err;
      }
    }),
  );
  return {
    objects: results.flatMap((r) => r.objects),
    notes: results.flatMap((r) => (r.note ? [r.note] : [])),
    checked: types.map((t) => t.resource),
  };
}
