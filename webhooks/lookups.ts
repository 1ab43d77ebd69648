// The API server calls the handlers' decisions wait on (SubjectAccessReviews, existence checks,
// discovery), over connections of their own (lookupClient): never queued behind the controller's
// writes or the worker's watches.
import { isNotFound, segment, type CallOptions, type KubeClient } from '../kube/client.js';
import { Discovery } from '../kube/discovery.js';
import { userCan } from './authz.js';
import { AllowCache } from './authz-cache.js';
import type { AdmissionLookups } from './handlers.js';

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

export function apiLookups(api: KubeClient): AdmissionLookups {
  const discovery = new Discovery(api);
  // Only allows are reused, for seconds (webhooks/authz-cache.ts); anything else asks again.
  const allows = new AllowCache();
  return {
    userCan: (user, check) => allows.userCan(user, check, () => userCan(api, user, check)),
    namespaceExists: (name) =>
      api.get(`/api/v1/namespaces/${segment(name)}`).then(
        () => true,
        (e: unknown) => (isNotFound(e) ? false : Promise.reject(e)),
      ),
    // The reconciler's resolver: both agree on what a configuration names.
    resolver: (groups) => discovery.resolver(groups),
  };
}
