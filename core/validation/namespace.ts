// The namespace validator (`namespaces.hnc.x-k8s.io`, docs/behaviour.md §7.7). Every denial is a
// Forbidden `namespaces "<name>" is forbidden: ...`, except a reserved name (Conflict).
//
// In order, per operation (the first failing check answers):
//   CREATE  included-namespace label → name reserved by an external hierarchy → tree labels
//   UPDATE  included-namespace label (only if it changed) → external manager on a child → tree labels
//   DELETE  subnamespace whose anchor exists → subnamespace children without cascading deletion
// then, for CREATE and UPDATE (beyond HNC, which let anyone who may patch a namespace graft it
// into any tree): setting or changing subnamespace-of needs the permission re-parenting needs
// (SubjectAccessReviews, as for a HierarchyConfiguration's parent), and removing or changing the
// grafted-by annotation needs permission to delete the namespace.
// HNC's service account is exempt from all of them.
import { Annotation, Label, MANAGED_BY_VALUE, TREE_LABEL_SUFFIX } from '../api/constants.js';
import type { Hierarchy } from '../hierarchy/hierarchy.js';
import {
  allow,
  badRequest,
  conflict,
  forbidden,
  goQuote,
  internalError,
  NO_CONTENT,
  Resource,
  type AdmissionInput,
  type Decision,
} from './decision.js';
import {
  accessReview,
  completeServerChecks,
  serverChecks,
  type CheckAnswer,
  type HierarchyVerdict,
  type ServerCheck,
} from './hierarchy-configuration.js';
import { isGraft, type NamespaceInput } from './namespace-mutator.js';
import { externalManager, externalTreeNames } from './queries.js';

const INCLUDED_LABEL_DOC =
  'https://github.com/kubernetes-sigs/hierarchical-namespaces/blob/master/docs/user-guide/concepts.md#included-namespace-label';

export function validateNamespace(h: Hierarchy, input: AdmissionInput<NamespaceInput>): HierarchyVerdict {
  if (input.isHncServiceAccount || input.operation === 'CONNECT') return allow();
  // DELETE requests carry the namespace as the old object.
  const ns = input.operation === 'DELETE' ? input.oldObject : input.object;
  if (!ns || (input.operation === 'UPDATE' && !input.oldObject)) return badRequest(NO_CONTENT);
  const name = ns.metadata?.name ?? input.name ?? '';
  const labels = ns.metadata?.labels ?? {};
  const annotations = ns.metadata?.annotations ?? {};
  const oldLabels = input.operation === 'UPDATE' ? (input.oldObject?.metadata?.labels ?? {}) : undefined;
  const deny = (msg: string) => forbidden(Resource.namespaces, name, msg);

  switch (input.operation) {
    case 'CREATE':
      return (
        includedLabel(h, name, labels, undefined, deny) ??
        reservedName(h, name) ??
        treeLabels(name, labels, {}, deny) ??
        grafting(h, input, name, deny) ??
        allow()
      );
    case 'UPDATE':
      return (
        includedLabel(h, name, labels, oldLabels, deny) ??
        externalWithParent(h, name, annotations, deny) ??
        treeLabels(name, labels, oldLabels ?? {}, deny) ??
        grafting(h, input, name, deny) ??
        allow()
      );
    case 'DELETE':
      return deleteSubnamespace(h, name, annotations, deny) ?? deleteWithSubnamespaces(h, name, deny) ?? allow();
  }
}

type Deny = (msg: string) => Decision;
type Labels = Readonly<Record<string, string>>;

/**
 * The included-namespace label must be "true" on managed namespaces and absent on unmanaged ones.
 * On UPDATE only a change of the label is checked. (On CREATE the mutator has already added a
 * missing label, so a managed namespace only fails here if the mutator did not run.)
 */
function includedLabel(h: Hierarchy, name: string, labels: Labels, oldLabels: Labels | undefined, deny: Deny): Decision | undefined {
  const has = Object.hasOwn(labels, Label.includedNamespace);
  const value = labels[Label.includedNamespace];
  if (oldLabels !== undefined && has === Object.hasOwn(oldLabels, Label.includedNamespace) && value === oldLabels[Label.includedNamespace])
    return undefined;
  const managed = h.isManaged(name);
  if (!managed && has) {
    return deny(
      `you cannot enforce webhook rules on this unmanaged namespace using the "${Label.includedNamespace}" label. See ${INCLUDED_LABEL_DOC} for detail`,
    );
  }
  if (managed && value !== 'true') {
    return deny(
      `you cannot change the value of the "${Label.includedNamespace}" label. It has to be set as true on all managed namespaces. See ${INCLUDED_LABEL_DOC} for detail`,
    );
  }
  return undefined;
}

/**
 * The one check of a namespace creation without HNC's keys that needs the forest: a name reserved
 * by an external hierarchy. The namespace validator is not called for such creations (it is called
 * only for what needs the forest, webhooks/configurations.ts), so the mutator, which every
 * creation calls and which fails open, makes it (HNC's own creations are exempt, as here).
 */
export function validateNamespaceName(h: Hierarchy, input: AdmissionInput<NamespaceInput>): Decision | undefined {
  if (input.isHncServiceAccount || input.operation !== 'CREATE') return undefined;
  return reservedName(h, input.object?.metadata?.name ?? input.name ?? '');
}

/** A name that an external namespace's tree labels use belongs to the external hierarchy (docs/behaviour.md §3.6). */
function reservedName(h: Hierarchy, name: string): Decision | undefined {
  // Only the external namespaces (kept by the model as they change): this runs on every namespace
  // creation, and a pass over every namespace cost 150 µs per creation at 1,000 namespaces.
  for (const ext of h.externalNamespaces()) {
    if (!h.isManaged(ext) || !h.forest.exists(ext)) continue;
    if (externalTreeNames(h, ext).has(name)) {
      return conflict(Resource.namespaces, name, `is reserved by the external hierarchy manager ${goQuote(externalManager(h, ext))}`);
    }
  }
  return undefined;
}

/** A namespace with a parent in HNC may not be handed to another manager (docs/behaviour.md §3.6). */
function externalWithParent(h: Hierarchy, name: string, annotations: Labels, deny: Deny): Decision | undefined {
  const mgr = annotations[Annotation.managedBy] ?? '';
  const parent = h.forest.parent(name);
  if (mgr === '' || mgr === MANAGED_BY_VALUE || parent === undefined) return undefined;
  return deny(
    `is a child of ${goQuote(parent)}. Namespaces with parents defined by HNC cannot also be managed externally. To manage this namespace with ${goQuote(mgr)}, first make it a root in HNC`,
  );
}

/**
 * Tree labels are HNC's alone: none may be added, changed or removed. Keys are matched as HNC
 * does (containing `.tree.hnc.x-k8s.io/depth`), and reported in sorted order: added or changed
 * first, then removed.
 */
function treeLabels(name: string, labels: Labels, oldLabels: Labels, deny: Deny): Decision | undefined {
  const isTree = (k: string) => k.includes(TREE_LABEL_SUFFIX);
  for (const key of Object.keys(labels).filter(isTree).sort()) {
    if (labels[key] !== oldLabels[key]) {
      return deny(`cannot set or modify tree label ${goQuote(key)} in namespace ${goQuote(name)}; these can only be managed by HNC`);
    }
  }
  for (const key of Object.keys(oldLabels).filter(isTree).sort()) {
    if (!Object.hasOwn(labels, key))
      return deny(`cannot remove tree label ${goQuote(key)} in namespace ${goQuote(name)}; these can only be managed by HNC`);
  }
  return undefined;
}

/**
 * Making a namespace a subnamespace by its annotation moves it under the new parent, so it needs
 * what moving it by its HierarchyConfiguration needs (the same SubjectAccessReviews and messages).
 * The mutator has recorded who did it (grafted-by): that record is what keeps the anchor from
 * deleting a namespace it did not create, so only someone who may delete the namespace may
 * remove or change it.
 */
function grafting(h: Hierarchy, input: AdmissionInput<NamespaceInput>, name: string, deny: Deny): HierarchyVerdict | undefined {
  const graftedBy = input.object?.metadata?.annotations?.[Annotation.graftedBy];
  const before = input.operation === 'UPDATE' ? input.oldObject?.metadata?.annotations?.[Annotation.graftedBy] : undefined;
  const checks: ServerCheck[] = [];
  let complete: (answers: readonly CheckAnswer[]) => Decision;
  if (isGraft(input)) {
    if (graftedBy === undefined) {
      return deny(
        `cannot set ${goQuote(Annotation.subnamespaceOf)}: HNC's mutating webhook did not record the graft (annotation ${goQuote(Annotation.graftedBy)}); please try again`,
      );
    }
    const newParent = input.object!.metadata!.annotations![Annotation.subnamespaceOf]!;
    checks.push(...serverChecks(h, input.userInfo, h.forest.parent(name), newParent));
    complete = (answers) => completeServerChecks(input.userInfo.username, checks, answers);
  } else if (before !== undefined && graftedBy !== before) {
    checks.push({
      kind: 'authorize',
      namespace: name,
      reason: 'namespace itself',
      review: {
        ...accessReview(input.userInfo, name),
        resourceAttributes: { name, verb: 'delete', group: '', version: 'v1', resource: 'namespaces' },
      },
    });
    complete = ([answer]) => {
      if (answer !== undefined && 'allowed' in answer && answer.allowed) return allow();
      if (answer !== undefined && 'error' in answer)
        return internalError(`while checking authz for ${goQuote(name)}, the namespace itself: ${answer.error}`);
      return deny(
        `only a user who may delete namespace ${goQuote(name)} may remove or change its ${goQuote(Annotation.graftedBy)} annotation, which keeps its anchor from deleting it`,
      );
    };
  } else return undefined;
  if (checks.length === 0) return undefined;
  return { allowed: 'pending', checks, complete };
}

/**
 * A subnamespace goes with its anchor: it may only be deleted directly once the anchor is gone
 * (e.g. after the anchor was deleted without cascading). The annotation is read from the request.
 */
function deleteSubnamespace(h: Hierarchy, name: string, annotations: Labels, deny: Deny): Decision | undefined {
  const parent = annotations[Annotation.subnamespaceOf] ?? '';
  if (parent === '' || h.anchor(parent, name) === undefined) return undefined;
  return deny(`is a subnamespace. Please delete the anchor from the parent namespace ${parent} to delete the subnamespace`);
}

/** Deleting a namespace deletes its anchors, hence its subnamespaces: only with cascading deletion. */
function deleteWithSubnamespaces(h: Hierarchy, name: string, deny: Deny): Decision | undefined {
  if (!h.forest.has(name) || h.allowsCascadingDeletion(name)) return undefined;
  if (!h.forest.children(name).some((c) => h.subnamespaceOf(c) !== undefined)) return undefined;
  return deny(
    "contains subnamespaces. Please remove all subnamespaces before deleting this namespace, or set 'allowCascadingDeletion' to delete them automatically",
  );
}
