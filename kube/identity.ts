// Who this process is to the API server: the user its credentials authenticate as, whatever they
// are (a pod's service account, a kubeconfig's certificate, token or exec plugin).
import type { UserInfo } from '../core/api/types.js';
import type { KubeClient } from './client.js';

export class IdentityError extends Error {
  override name = 'IdentityError';
}

/** A SelfSubjectReview (authentication.k8s.io/v1, in every supported Kubernetes; any authenticated user may create one). */
export async function whoAmI(client: KubeClient): Promise<UserInfo> {
  let review: { status?: { userInfo?: UserInfo } };
  try {
    review = await client.create('/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'SelfSubjectReview',
    });
  } catch (err) {
    throw new IdentityError(`cannot learn which user HNC acts as (SelfSubjectReview): ${(err as Error).message}`);
  }
  const user = review.status?.userInfo;
  if (!user?.username) throw new IdentityError('cannot learn which user HNC acts as: the SelfSubjectReview named no user');
  return user;
}
