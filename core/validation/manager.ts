// Who HNC is, as admission sees a request. HNC's own requests skip every validator: it writes the
// copies, tree labels and subnamespaces that users may not.
import type { UserInfo } from '../api/types.js';

export interface ManagerIdentity {
  /** HNC's namespace: every service account there is HNC, as in HNC (its pods, in a cluster). */
  namespace: string;
  /**
   * The user HNC acts as, learnt at start (a SelfSubjectReview): outside a cluster, the user of
   * its kubeconfig, which is in no service-account group.
   */
  username?: string;
}

/** The group every service account of a namespace is in. */
export const serviceAccountsGroup = (namespace: string) => `system:serviceaccounts:${namespace}`;

export function isManager(user: Pick<UserInfo, 'username' | 'groups'>, id: ManagerIdentity): boolean {
  if (id.username !== undefined && user.username === id.username) return true;
  return (user.groups ?? []).includes(serviceAccountsGroup(id.namespace));
}

/** Whether the identity is a service account of HNC's namespace (so nobody else shares it). */
export function isOwnServiceAccount(id: ManagerIdentity): boolean {
  return id.username === undefined || id.username.startsWith(`system:serviceaccount:${id.namespace}:`);
}
