// The API server calls the handlers' decisions wait on (SubjectAccessReviews, existence checks,
// discovery), over connections of their own (lookupClient): never queued behind the controller's
// writes or the worker's watches.
import { isNotFound, segment, type CallOptions, type KubeClient } from '../kube/client.js';
import { Discovery } from '../kube/discovery.js';
import { userCan } from './authz.js';
import type { AdmissionLookups } from './handlers.js';
import { rbacCheck, type AuthorizationPath, type RbacIndex } from './rbac-index.js';

/** Answers `authorize` checks from the RBAC copy when it allows them (--webhook-local-authorization). */
export interface LocalAuthorization {
  index: RbacIndex;
  /** Counts each check by how it was answered (the metric hnc_webhook_authorizations_total). */
  counted: (path: AuthorizationPath) => void;
}

/** Connections for those calls: two SubjectAccessReviews per parent change, ~150/s at 500 reviews/s. */
const LOOKUP_SOCKETS = 8;

/**
 * The webhooks that look up (namespaces, HierarchyConfigurations, anchors, HNCConfigurations) have
 * a timeoutSeconds of 5 (webhooks/configurations.ts): a call gets 2 s, so that a review with two in
 * a row still answers, with the error, before the API server gives up on it. Idle connections are
 * closed after 30 s, before the API server's 90 s, and a call whose kept-alive connection the
 * server closed under it is sent once more (all of them are safe to repeat).
 */
export const LOOKUP_CALLS = { timeoutMs: 2_000, idleSocketMs: 30_000, retryClosedConnection: true } satisfies CallOptions;

/** A client for the lookups, on connections of its own. */
export const lookupClient = (api: KubeClient): KubeClient => api.withOwnConnections(LOOKUP_SOCKETS, LOOKUP_CALLS);

export function apiLookups(api: KubeClient, local?: LocalAuthorization): AdmissionLookups {
  const discovery = new Discovery(api);
  return {
    userCan: (user, check) => {
      // Only an allow is taken from the copy; anything else is the API server's to answer.
      if (local) {
        if (local.index.allows(user, rbacCheck(check))) {
          local.counted('rbac');
          return Promise.resolve(true);
        }
        local.counted('subjectaccessreview');
      }
      return userCan(api, user, check);
    },
    namespaceExists: (name) =>
      api.get(`/api/v1/namespaces/${segment(name)}`).then(
        () => true,
        (e: unknown) => (isNotFound(e) ? false : Promise.reject(e)),
      ),
    // The reconciler's resolver: both agree on what a configuration names.
    resolver: (groups) => discovery.resolver(groups),
  };
}
