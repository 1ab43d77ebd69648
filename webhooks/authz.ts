// SubjectAccessReviews on behalf of the requester: the webhook asks the API server whether the
// user who made the request may do what the hierarchy change implies (docs/behaviour.md §7.3 check 12).
import type { KubeClient } from '../kube/client.js';
import type { UserInfo } from '../core/api/types.js';
import type { ResourceCheck } from './authz-cache.js';

export type { ResourceCheck } from './authz-cache.js';

export async function userCan(client: KubeClient, user: UserInfo, check: ResourceCheck): Promise<boolean> {
  const review = await client.create<{ status?: { allowed?: boolean } }>('/apis/authorization.k8s.io/v1/subjectaccessreviews', {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    spec: {
      user: user.username,
      uid: user.uid,
      groups: user.groups,
      extra: user.extra,
      resourceAttributes: {
        verb: check.verb,
        group: check.group,
        version: check.version ?? '*',
        resource: check.resource,
        subresource: check.subresource,
        namespace: check.namespace,
        name: check.name,
      },
    },
  });
  return review.status?.allowed === true;
}
