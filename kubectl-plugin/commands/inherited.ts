// The objects a namespace inherits: propagated copies, recognised by the
// `hnc.x-k8s.io/inherited-from` label, whose value names the namespace holding the source.
//
// Every type HNC propagates is looked at: HNCConfiguration's status lists them with their modes
// (types in Propagate or AllowPropagate mode count). When the configuration cannot be read, the
// RBAC types, which HNC always propagates, are looked at and a note says so.
import { Label } from '../../core/api/index.js';
import type { HncApi, ResourceType } from '../api.js';
import { isForbidden, isNotFound } from '../errors.js';
import type { InheritedObject, InheritedObjects } from '../model.js';
import { propagates, typeName } from '../render/names.js';
import { loadHandledTypes } from './types.js';

export async function loadInheritedObjects(api: HncApi, namespace: string): Promise<InheritedObjects> {
  const handled = await loadHandledTypes(api);
  const types = handled.types.filter((t) => propagates(t.mode));
  const found = await listInherited(api, namespace, types);
  return { ...found, notes: [...(handled.note ? [handled.note] : []), ...found.notes] };
}

/** The copies of these types in the namespace; a type that cannot be listed becomes a note. */
export async function listInherited(api: HncApi, namespace: string, types: readonly ResourceType[]): Promise<InheritedObjects> {
  const results = await Promise.all(
    types.map(async (type): Promise<{ objects: InheritedObject[]; note?: string }> => {
      try {
        const items = await api.listObjects(namespace, type, Label.inheritedFrom);
        return {
          objects: items.map((o) => ({
            kind: o.kind || type.kind || type.resource,
            name: o.metadata.name ?? '',
            from: o.metadata.labels?.[Label.inheritedFrom] ?? '',
          })),
        };
      } catch (err) {
        if (isForbidden(err)) return { objects: [], note: `no permission to list ${typeName(type)} in ${namespace}` };
        if (isNotFound(err)) return { objects: [], note: `${typeName(type)} are not served by this cluster` };
        throw err;
      }
    }),
  );
  return {
    objects: results.flatMap((r) => r.objects),
    notes: results.flatMap((r) => (r.note ? [r.note] : [])),
    checked: types.map(typeName),
  };
}
