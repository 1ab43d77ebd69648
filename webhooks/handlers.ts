// What each admission webhook answers, from an AdmissionRequest: the glue between a decoded
// review, the hierarchy model and the pure validators (core/validation), plus the few API server
// calls a decision needs (AdmissionLookups). No server and no client here, so a unit test feeds it
// reviews and its own lookups (handlers.test.ts); webhooks/index.ts serves it over HTTPS.
import { isPropagating, type HierarchyConfiguration, type HNCConfiguration, type SubnamespaceAnchor } from '../core/api/types.js';
import type { Hierarchy } from '../core/hierarchy/hierarchy.js';
import type { PropagatableObject } from '../core/propagation/copy.js';
import { conflictingDescendants, type PropagationContext } from '../core/propagation/decide.js';
import { validateAnchor } from '../core/validation/anchor.js';
import type { AdmissionInput, Decision } from '../core/validation/decision.js';
import {
  isPending,
  validateHierarchyConfiguration,
  type CheckAnswer,
  type HierarchyVerdict,
} from '../core/validation/hierarchy-configuration.js';
import { isGroupName, validateHncConfiguration, type ResourceResolver } from '../core/validation/hnc-configuration.js';
import { mutateNamespace, type NamespaceInput } from '../core/validation/namespace-mutator.js';
import { validateNamespace, validateNamespaceName } from '../core/validation/namespace.js';
import { validateObject } from '../core/validation/objects.js';
import type { ResourceCheck } from './authz.js';
import { isManager, type ManagerIdentity } from '../core/validation/manager.js';
import type { UserInfo } from '../core/api/types.js';
import type { AdmissionRequest } from './review.js';

/** What the webhooks need to know about propagation (supplied by the controller in the same process). */
export interface PropagationView {
  /** The propagation context of a type by group and resource, if it is handled at all. */
  context(group: string, resource: string): PropagationContext | undefined;
  /** The kinds propagated now: an HNCConfiguration change is checked only for kinds new to it. */
  propagatingKinds(): Array<{ group: string; kind: string }>;
}

/** The API server calls some decisions wait on. */
export interface AdmissionLookups {
  /** A SubjectAccessReview on behalf of the requester. */
  userCan(user: UserInfo, check: ResourceCheck): Promise<boolean>;
  namespaceExists(name: string): Promise<boolean>;
  /** Fresh discovery of these groups, as a synchronous resolver of their resources. */
  resolver(groups: readonly string[]): Promise<ResourceResolver>;
}

export interface AdmissionHandlersOptions {
  /** The model every decision reads (the one the reconcilers use). */
  hierarchy: () => Hierarchy;
  /** Who HNC is: its own requests are exempt from every validator. */
  manager: ManagerIdentity;
  lookups: AdmissionLookups;
  propagation?: PropagationView;
}

export class AdmissionHandlers {
  constructor(private readonly opts: AdmissionHandlersOptions) {}

  private get h(): Hierarchy {
    return this.opts.hierarchy();
  }

  /** Also refuses a name reserved by an external hierarchy (validateNamespaceName): the only forest check a plain creation gets. */
  mutateNamespace(r: AdmissionRequest): Decision {
    const input = this.input<NamespaceInput>(r);
    return validateNamespaceName(this.h, input) ?? mutateNamespace(this.h, input);
  }

  namespace(r: AdmissionRequest): Promise<Decision> {
    return this.withChecks(r, validateNamespace(this.h, this.input<NamespaceInput>(r)));
  }

  anchor(r: AdmissionRequest): Decision {
    return validateAnchor(this.h, this.input<SubnamespaceAnchor>(r));
  }

  hierarchyConfiguration(r: AdmissionRequest): Promise<Decision> {
    return this.withChecks(r, validateHierarchyConfiguration(this.h, this.input<HierarchyConfiguration>(r)));
  }

  /** Runs the server checks a verdict still needs (SubjectAccessReviews, existence) and completes it. */
  private async withChecks(r: AdmissionRequest, verdict: HierarchyVerdict): Promise<Decision> {
    if (!isPending(verdict)) return verdict;
    const { lookups } = this.opts;
    const answers = await Promise.all(
      verdict.checks.map(async (check): Promise<CheckAnswer> => {
        try {
          if (check.kind === 'authorize') return { allowed: await lookups.userCan(r.userInfo, check.review.resourceAttributes) };
          return { exists: await lookups.namespaceExists(check.namespace) };
        } catch (err) {
          return { error: (err as Error).message };
        }
      }),
    );
    return verdict.complete(answers);
  }

  async hncConfiguration(r: AdmissionRequest): Promise<Decision> {
    const input = this.input<HNCConfiguration>(r);
    // Discovery answers for the groups the new spec names, fetched before the pure decision. A group
    // that is not a DNS subdomain is refused by the validator; it is never put into a URL.
    const groups = new Set((input.object?.spec?.resources ?? []).map((x) => x.group ?? '').filter((g) => g === '' || isGroupName(g)));
    const resolve = await this.opts.lookups.resolver([...groups]);
    const propagating = this.opts.propagation?.propagatingKinds() ?? [];
    return validateHncConfiguration(this.h, input, { resolve, propagating });
  }

  object(r: AdmissionRequest): Decision {
    const ctx = this.opts.propagation?.context(r.resource.group, r.resource.resource);
    const propagating = ctx !== undefined && isPropagating(ctx.type.mode);
    return validateObject(this.h, this.input<PropagatableObject>(r), {
      resource: { group: r.resource.group, resource: r.resource.resource },
      propagating,
      overwrittenIn: ctx ? (ns, name, obj) => conflictingDescendants(ctx, ns, name, obj) : undefined,
    });
  }

  /** The validators' view of a request. */
  input<T>(r: AdmissionRequest): AdmissionInput<T> {
    return {
      operation: r.operation,
      name: r.name,
      namespace: r.namespace,
      object: (r.object ?? undefined) as T | undefined,
      oldObject: (r.oldObject ?? undefined) as T | undefined,
      userInfo: r.userInfo,
      // HNC itself is exempt from every validator; no other identity is.
      isHncServiceAccount: isManager(r.userInfo, this.opts.manager),
    };
  }
}
