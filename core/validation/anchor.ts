// The SubnamespaceAnchor validator (`subnamespaceanchors.hnc.x-k8s.io`, docs/behaviour.md §7.4, §4).
// An anchor named <child> in namespace <parent> asks for the subnamespace <parent>/<child>.
//
// In order (the first failing check answers), HNC's service account being exempt:
//   1. not DELETE: the name must be a namespace name (DNS-1123 label)            422 metadata.name
//   2. all operations (DELETE reads the old object): legal managed metadata      422 spec.labels/annotations
//   3. CREATE: the parent is unmanaged                                           403
//              the child name is unmanaged                                       403
//              a namespace of that name exists (and is not this parent's subns
//              whose anchor went missing)                                        409
//      DELETE: the anchor is Ok and its subnamespace has children, and cascading
//              deletion is not allowed there or above                            403
//      UPDATE: nothing more.
import { AnchorState } from '../api/constants.js';
import type { SubnamespaceAnchor } from '../api/types.js';
import type { Hierarchy } from '../hierarchy/hierarchy.js';
import {
  allow,
  badRequest,
  conflict,
  fieldInvalid,
  forbidden,
  goQuote,
  invalid,
  KindOf,
  NO_CONTENT,
  Resource,
  type AdmissionInput,
  type Decision,
} from './decision.js';
import { isDns1123Label, managedMetadataErrors } from './names.js';

export function validateAnchor(h: Hierarchy, input: AdmissionInput<SubnamespaceAnchor>): Decision {
  if (input.isHncServiceAccount || input.operation === 'CONNECT') return allow();
  const anchor = input.operation === 'DELETE' ? input.oldObject : input.object;
  if (!anchor) return badRequest(NO_CONTENT);
  const parent = anchor.metadata?.namespace ?? input.namespace ?? '';
  const child = anchor.metadata?.name ?? input.name ?? '';

  if (input.operation !== 'DELETE') {
    const nameErrs = isDns1123Label(child);
    if (nameErrs.length > 0) {
      return invalid(KindOf.subnamespaceAnchor, child, [
        fieldInvalid('metadata.name', child, `not a valid namespace name: ${nameErrs.join('; ')}`),
      ]);
    }
  }

  const fieldErrs = managedMetadataErrors(h.policy, anchor.spec?.labels, anchor.spec?.annotations);
  if (fieldErrs.length > 0) return invalid(KindOf.subnamespaceAnchor, child, fieldErrs);

  switch (input.operation) {
    case 'CREATE': {
      // HNC names the parent, not the anchor, in this one denial's prefix.
      const whyParent = h.policy.whyUnmanaged(parent);
      if (whyParent !== undefined) {
        return forbidden(
          Resource.subnamespaceAnchors,
          parent,
          `cannot create a subnamespace in the unmanaged namespace ${goQuote(parent)} (${whyParent})`,
        );
      }
      const whyChild = h.policy.whyUnmanaged(child);
      if (whyChild !== undefined) {
        return forbidden(
          Resource.subnamespaceAnchors,
          child,
          `cannot create a subnamespace using the unmanaged namespace name ${goQuote(child)} (${whyChild})`,
        );
      }
      // Re-creating the missing anchor of an existing subnamespace is how that is fixed (docs/behaviour.md §4.2).
      const missingAnchorOfOwnSubns = h.forest.parent(child) === parent && h.subnamespaceOf(child) !== undefined;
      if (h.forest.exists(child) && !missingAnchorOfOwnSubns) {
        return conflict(Resource.subnamespaceAnchors, child, 'cannot create a subnamespace using an existing namespace');
      }
      return allow();
    }
    case 'DELETE': {
      // Only an Ok anchor deletes its namespace; other states finalize without deleting anything.
      const deletesNamespace = anchor.status?.status === AnchorState.Ok;
      if (deletesNamespace && h.forest.has(child) && h.forest.children(child).length > 0 && !h.allowsCascadingDeletion(child)) {
        return forbidden(
          Resource.subnamespaceAnchors,
          child,
          `subnamespace ${child} is not a leaf and doesn't allow cascading deletion. Please set allowCascadingDeletion flag or make it a leaf first`,
        );
      }
      return allow();
    }
    case 'UPDATE':
      return allow();
  }
}
