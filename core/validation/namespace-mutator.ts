// The namespace mutator (`namespacelabel.hnc.x-k8s.io`, docs/behaviour.md §7.2): gives every managed
// namespace the `hnc.x-k8s.io/included-namespace: "true"` label that the objects webhook selects
// on, as soon as it is created or updated. It never changes a value that is there (the namespace
// validator refuses wrong values) and never touches unmanaged namespaces. It exempts nobody.
import { Annotation, Label } from '../api/constants.js';
import type { NamespaceObject, ObjectMeta } from '../api/types.js';
import type { Hierarchy } from '../hierarchy/hierarchy.js';
import { allow, badRequest, jsonPointer, NO_CONTENT, type AdmissionInput, type Decision, type JsonPatchOp } from './decision.js';

/** A Namespace as an AdmissionRequest carries it: not yet trusted to have any field. */
export type NamespaceInput = Omit<Partial<NamespaceObject>, 'metadata'> & { metadata?: ObjectMeta };

export function mutateNamespace(h: Hierarchy, input: AdmissionInput<NamespaceInput>): Decision {
  if (input.operation !== 'CREATE' && input.operation !== 'UPDATE') return allow();
  const ns = input.object;
  if (!ns) return badRequest(NO_CONTENT);
  const name = ns.metadata?.name ?? input.name ?? '';
  if (!h.isManaged(name)) return allow();
  const patch: JsonPatchOp[] = [];
  const labels = ns.metadata?.labels;
  if (labels === undefined || labels === null || !Object.hasOwn(labels, Label.includedNamespace)) {
    patch.push(
      ns.metadata === undefined
        ? { op: 'add' as const, path: jsonPointer('metadata'), value: { labels: { [Label.includedNamespace]: 'true' } } }
        : labels === undefined || labels === null
          ? { op: 'add' as const, path: jsonPointer('metadata', 'labels'), value: { [Label.includedNamespace]: 'true' } }
          : { op: 'add' as const, path: jsonPointer('metadata', 'labels', Label.includedNamespace), value: 'true' },
    );
  }
  // A user (not HNC creating a subnamespace) who makes it a subnamespace grafts it: recorded, so
  // that its anchor never deletes it (see docs/hnc-differences.md).
  if (isGraft(input))
    patch.push({ op: 'add', path: jsonPointer('metadata', 'annotations', Annotation.graftedBy), value: input.userInfo.username });
  return patch.length ? allow({ patch }) : allow();
}

/** A request by someone other than HNC that sets or changes a namespace's subnamespace-of annotation. */
export function isGraft(input: AdmissionInput<NamespaceInput>): boolean {
  if (input.isHncServiceAccount || (input.operation !== 'CREATE' && input.operation !== 'UPDATE')) return false;
  const parent = input.object?.metadata?.annotations?.[Annotation.subnamespaceOf] ?? '';
  const before = input.operation === 'UPDATE' ? (input.oldObject?.metadata?.annotations?.[Annotation.subnamespaceOf] ?? '') : '';
  return parent !== '' && parent !== before;
}
