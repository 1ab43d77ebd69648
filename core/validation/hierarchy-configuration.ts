// The HierarchyConfiguration validator (`hierarchyconfigurations.hnc.x-k8s.io`, docs/behaviour.md §7.3).
//
// Decisions come from the hierarchy model (the old object is ignored, as in HNC). The checks run
// in HNC's order and the first failing one answers:
//    1. the HC's namespace is unmanaged                               403
//    2. spec.parent is unmanaged                                      403
//    3. spec.labels / spec.annotations are not legal managed metadata  422
//    4. the namespace is not in the forest yet                        503
//    5. a (strict) ancestor is halted                                 403
//    6. an external namespace names a parent                          403
//    7. the parent does not change → allowed (no authorization needed)
//    8. the namespace is a subnamespace                               409
//    9. the new parent does not exist                                 403
//   10. the new parent is the namespace itself or a descendant        409
//   11. propagated objects would overwrite objects below (caller's hook) 409
//   12. the user must be allowed to update HCs where the change matters   401
//
// Step 12 needs the API server, so it is two-phase: `validateHierarchyConfiguration` returns
// either a final Decision, or a Pending verdict listing the ServerChecks to run (a
// SubjectAccessReview per namespace to authorize, or an existence lookup of a missing parent), with
// `complete(answers)` turning their answers into the final Decision. Nothing here performs I/O; the
// shell runs the checks (in parallel if it likes: answers are judged in the checks' order, so the
// outcome is the one HNC's sequential checks give).
import { GROUP, Plural, Singleton } from '../api/constants.js';
import type { HierarchyConfiguration } from '../api/types.js';
import type { Hierarchy } from '../hierarchy/hierarchy.js';
import {
  allow,
  badRequest,
  conflict,
  forbidden,
  goQuote,
  gvkText,
  internalError,
  invalid,
  KindOf,
  NO_CONTENT,
  Resource,
  serviceUnavailable,
  unauthorized,
  type AdmissionInput,
  type Decision,
  type GroupVersionKind,
  type UserInfo,
} from './decision.js';
import { managedMetadataErrors } from './names.js';
import { externalManager } from './queries.js';

/** A source object below the moved namespace that a source in the new ancestry would overwrite. */
export interface OverwriteConflict {
  /** The namespace (the moved one or a descendant) holding the object that would be overwritten. */
  readonly namespace: string;
  readonly name: string;
  readonly gvk: GroupVersionKind;
}

export interface HierarchyConfigurationOptions {
  /**
   * Step 11 (object overwrite, docs/behaviour.md §7.3): for every Propagate/AllowPropagate type, the
   * sources in `ns` and its descendants that a same-named source in `newParent` or its ancestors
   * would overwrite once it propagates. Without it the step is skipped; the webhook server does not
   * supply it yet (docs/behaviour.md §5.7). Only called when a new parent is set.
   */
  readonly overwriteConflicts?: (ns: string, newParent: string) => readonly OverwriteConflict[];
}

/** authorization.k8s.io/v1 SubjectAccessReview spec: what the shell POSTs for an `authorize` check. */
export interface SubjectAccessReviewSpec {
  readonly user: string;
  readonly groups?: string[];
  readonly uid?: string;
  readonly extra?: Record<string, string[]>;
  readonly resourceAttributes: {
    readonly namespace?: string;
    readonly name?: string;
    readonly verb: string;
    readonly group: string;
    readonly version: string;
    readonly resource: string;
  };
}

/**
 * A check HNC makes against the API server before allowing a parent change:
 * - `authorize`: may the requester update HierarchyConfigurations in `namespace`? Answer with
 *   `{ allowed }` from the SubjectAccessReview's status (or `{ error }` if it could not be made).
 * - `absent`: the current parent is missing from the forest; does it exist on the server? Answer
 *   `{ exists }` (or `{ error }`). If it exists HNC just has not synced it yet (503); if it is truly
 *   gone the change is allowed, so admins can re-parent orphans.
 * `reason` says why this namespace was picked; it is part of the messages.
 */
export type ServerCheck =
  | { readonly kind: 'authorize'; readonly namespace: string; readonly reason: string; readonly review: SubjectAccessReviewSpec }
  | { readonly kind: 'absent'; readonly namespace: string; readonly reason: string };

export type CheckAnswer = { readonly allowed: boolean } | { readonly exists: boolean } | { readonly error: string };

/** Step 12 still to do: run `checks`, then `complete` with their answers in the same order. */
export interface Pending {
  readonly allowed: 'pending';
  readonly checks: readonly ServerCheck[];
  readonly complete: (answers: readonly CheckAnswer[]) => Decision;
}

export type HierarchyVerdict = Decision | Pending;

export const isPending = (v: HierarchyVerdict): v is Pending => v.allowed === 'pending';

export const CheckReason = {
  proposedParent: 'proposed parent',
  currentRoot: 'current root ancestor',
  currentMissingParent: 'current missing parent',
  mostRecentCommonAncestor: (cur: string, next: string): string =>
    `most recent common ancestor of current parent ${goQuote(cur)} and proposed parent ${goQuote(next)}`,
} as const;

const hcForbidden = (msg: string) => forbidden(Resource.hierarchyConfigurations, Singleton.hierarchy, msg);
const hcConflict = (msg: string) => conflict(Resource.hierarchyConfigurations, Singleton.hierarchy, msg);

export function validateHierarchyConfiguration(
  h: Hierarchy,
  input: AdmissionInput<HierarchyConfiguration>,
  opts: HierarchyConfigurationOptions = {},
): HierarchyVerdict {
  // HNC's own account writes status on HCs that would not pass these checks (docs/behaviour.md §3.3).
  if (input.isHncServiceAccount) return allow();
  // The webhook is registered for CREATE and UPDATE; anything else has nothing to check.
  if (input.operation !== 'CREATE' && input.operation !== 'UPDATE') return allow();
  const hc = input.object;
  if (!hc) return badRequest(NO_CONTENT);
  const ns = hc.metadata?.namespace ?? input.namespace ?? '';
  const newParent = hc.spec?.parent ? hc.spec.parent : undefined;
  const q = goQuote;

  // 1-2. Both ends must be managed.
  const whyNs = h.policy.whyUnmanaged(ns);
  if (whyNs !== undefined)
    return hcForbidden(`namespace ${q(ns)} is not managed by HNC (${whyNs}) and cannot be set as a child of another namespace`);
  const whyParent = newParent === undefined ? undefined : h.policy.whyUnmanaged(newParent);
  if (whyParent !== undefined)
    return hcForbidden(
      `namespace ${q(newParent!)} is not managed by HNC (${whyParent}) and cannot be set as the parent of another namespace`,
    );

  // 3. Managed labels and annotations.
  const fieldErrs = managedMetadataErrors(h.policy, hc.spec?.labels, hc.spec?.annotations);
  if (fieldErrs.length > 0) return invalid(KindOf.hierarchyConfiguration, hc.metadata?.name ?? Singleton.hierarchy, fieldErrs);

  // 4-5. The namespace itself: synced, and not below a halted ancestor (a halted namespace may be
  // edited itself, to fix what halts it).
  if (!h.forest.exists(ns)) return serviceUnavailable(`HNC has not reconciled namespace ${q(ns)} yet - please try again in a few moments.`);
  if (!h.isHalted(ns)) {
    const root = h.haltedAncestor(ns);
    if (root !== undefined) {
      return hcForbidden(
        `ancestor ${q(root)} of namespace ${q(ns)} has a critical condition, which must be resolved before any changes can be made to the hierarchy configuration`,
      );
    }
  }

  // 6. External namespaces have no parent in HNC.
  if (h.isExternal(ns) && newParent !== undefined) {
    return hcForbidden(`namespace ${q(ns)} is managed by ${q(externalManager(h, ns))}, not HNC, so it cannot have a parent in HNC`);
  }

  // 7. Same parent as the forest holds: labels or allowCascadingDeletion edits need only RBAC.
  const curParent = h.forest.parent(ns);
  if (curParent === newParent) return allow();

  // 8-10. Is the new parent structurally legal?
  if (h.subnamespaceOf(ns) !== undefined) {
    return hcConflict(
      `illegal parent: Cannot set the parent of ${q(ns)} to ${q(newParent ?? '')} because it's a subnamespace of ${q(curParent ?? '')}`,
    );
  }
  if (newParent !== undefined && !h.forest.exists(newParent)) return hcForbidden(`requested parent ${q(newParent)} does not exist`);
  if (newParent === ns) return hcConflict(`illegal parent: ${q(newParent)} cannot be set as its own parent`);
  const cycle = h.forest.wouldCreateCycle(ns, newParent);
  if (cycle !== undefined) {
    return hcConflict(
      `illegal parent: cycle when making ${q(newParent!)} the parent of ${q(ns)}: current ancestry is ${cycle.join(' -> ')}`,
    );
  }

  // 11. Objects the new ancestry would overwrite.
  if (newParent !== undefined && opts.overwriteConflicts) {
    const conflicts = opts.overwriteConflicts(ns, newParent);
    if (conflicts.length > 0) return hcConflict(overwriteMessage(conflicts));
  }

  // 12. Authorization where the change matters.
  const checks = serverChecks(h, input.userInfo, curParent, newParent);
  if (checks.length === 0) return allow();
  return { allowed: 'pending', checks, complete: (answers) => completeServerChecks(input.userInfo.username, checks, answers) };
}

/** Step 11's message: one `  * Namespace "<ns>": <name> (<gvk>)` line per conflict. */
export function overwriteMessage(conflicts: readonly OverwriteConflict[]): string {
  const lines = conflicts.map((c) => `Namespace ${goQuote(c.namespace)}: ${c.name} (${gvkText(c.gvk)})`);
  return `Cannot update hierarchy because it would overwrite the following object(s):\n  * ${lines.join('\n  * ')}\nTo fix this, please rename or remove the conflicting objects first.`;
}

/**
 * Which namespaces the requester must administer to move `ns` from `curParent` to `newParent`
 * (docs/behaviour.md §7.3 check 12): the lowest namespace whose subtree both changes and keeps covering
 * the move. In a cycle the "root" found is arbitrary, as in HNC.
 */
export function serverChecks(h: Hierarchy, user: UserInfo, curParent: string | undefined, newParent: string | undefined): ServerCheck[] {
  const authorize = (namespace: string, reason: string): ServerCheck => ({
    kind: 'authorize',
    namespace,
    reason,
    review: accessReview(user, namespace),
  });
  if (curParent === newParent) return [];
  // Currently a root, or under a parent HNC no longer manages: only the new parent matters.
  if (curParent === undefined || !h.isManaged(curParent))
    return newParent === undefined ? [] : [authorize(newParent, CheckReason.proposedParent)];
  // The parent is missing: only its direct parent can be (a missing grandparent halts the
  // parent, which step 5 refuses). Gone → an orphan being fixed; unsynced → try again later.
  if (!h.forest.exists(curParent)) return [{ kind: 'absent', namespace: curParent, reason: CheckReason.currentMissingParent }];
  const curChain = h.forest.ancestry(curParent);
  const curRoot = curChain[0]!;
  if (newParent === undefined) return [authorize(curRoot, CheckReason.currentRoot)];
  const newChain = h.forest.ancestry(newParent);
  if (newChain[0] !== curRoot) return [authorize(curRoot, CheckReason.currentRoot), authorize(newParent, CheckReason.proposedParent)];
  let mrca = curRoot;
  for (let i = 1; i < curChain.length && i < newChain.length && curChain[i] === newChain[i]; i++) mrca = curChain[i]!;
  return [authorize(mrca, CheckReason.mostRecentCommonAncestor(curParent, newParent))];
}

/** The SubjectAccessReview HNC makes: may `user` update HierarchyConfigurations in `namespace`? */
export function accessReview(user: UserInfo, namespace: string): SubjectAccessReviewSpec {
  return {
    user: user.username,
    ...(user.groups !== undefined ? { groups: [...user.groups] } : {}),
    ...(user.uid !== undefined ? { uid: user.uid } : {}),
    ...(user.extra !== undefined ? { extra: Object.fromEntries(Object.entries(user.extra).map(([k, v]) => [k, [...v]])) } : {}),
    resourceAttributes: { namespace, verb: 'update', group: GROUP, version: '*', resource: Plural.HierarchyConfiguration },
  };
}

/**
 * Phase two of step 12: the final decision from the answers to `checks` (same order). The first
 * check that fails, in order, answers:
 * - an error → 500 `while checking authz for "<ns>", the <reason>: <error>` (or, for an existence
 *   lookup, HNC's `while checking existance for ...`, its spelling kept);
 * - a missing parent that exists → 503 (not reconciled yet);
 * - a refused review → 401 `User <user> is not authorized to modify the subtree of <ns>, which is the <reason>`.
 */
export function completeServerChecks(username: string, checks: readonly ServerCheck[], answers: readonly CheckAnswer[]): Decision {
  for (let i = 0; i < checks.length; i++) {
    const check = checks[i]!;
    const answer = answers[i];
    const what = check.kind === 'absent' ? 'existance' : 'authz';
    if (answer === undefined)
      return internalError(`while checking ${what} for ${goQuote(check.namespace)}, the ${check.reason}: no answer`);
    if ('error' in answer)
      return internalError(`while checking ${what} for ${goQuote(check.namespace)}, the ${check.reason}: ${answer.error}`);
    if (check.kind === 'absent') {
      if (!('exists' in answer))
        return internalError(`while checking ${what} for ${goQuote(check.namespace)}, the ${check.reason}: expected an existence answer`);
      if (answer.exists)
        return serviceUnavailable(`HNC has not reconciled namespace ${goQuote(check.namespace)} yet - please try again in a few moments.`);
    } else {
      if (!('allowed' in answer))
        return internalError(
          `while checking ${what} for ${goQuote(check.namespace)}, the ${check.reason}: expected an authorization answer`,
        );
      if (!answer.allowed)
        return unauthorized(`User ${username} is not authorized to modify the subtree of ${check.namespace}, which is the ${check.reason}`);
    }
  }
  return allow();
}
