// The API server calls the handlers' decisions wait on (SubjectAccessReviews, existence checks,
// discovery), over a client of the webhooks' own: the admission worker's, or, on the main thread,
// connections apart from the controller's writes.
import { isNotFound, segment, type KubeClient } from '../kube/client.js';
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
