// The API server calls the handlers' decisions wait on (SubjectAccessReviews, existence checks,
// discovery), over a client of the webhooks' own: the admission worker's, or, on the main thread,
// connections apart from the controller's writes.
import { isNotFound, segment, type KubeClient } from '../kube/client.js';
import { Discovery } from '../kube/discovery.js';
import { userCan } from './authz.js';
import { AllowCache } from './authz-cache.js';
import type { AdmissionLookups } from './handlers.js';

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
