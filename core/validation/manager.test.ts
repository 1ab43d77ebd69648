import { describe, expect, it } from 'vitest';
import { isManager, isOwnServiceAccount, serviceAccountsGroup } from './manager.js';

describe('isManager', () => {
  const inCluster = { namespace: 'hnc-system' };
  it('knows HNC in a cluster by its namespace’s service-account group, as HNC does', () => {
    expect(
      isManager(
        { username: 'system:serviceaccount:hnc-system:hnc-controller-manager', groups: [serviceAccountsGroup('hnc-system')] },
        inCluster,
      ),
    ).toBe(true);
    expect(isManager({ username: 'system:serviceaccount:other:x', groups: [serviceAccountsGroup('other')] }, inCluster)).toBe(false);
    expect(isManager({ username: 'admin', groups: ['system:masters'] }, inCluster)).toBe(false);
  });

  it('knows HNC outside a cluster by the user it acts as, and no one else', () => {
    const outside = { namespace: 'hnc-system', username: 'hnc-runner' };
    expect(isManager({ username: 'hnc-runner', groups: ['system:authenticated'] }, outside)).toBe(true);
    expect(isManager({ username: 'hnc-runner2', groups: ['system:authenticated'] }, outside)).toBe(false);
    expect(isManager({ username: 'alice' }, outside)).toBe(false);
    // A group named like the user is not the user.
    expect(isManager({ username: 'alice', groups: ['hnc-runner'] }, outside)).toBe(false);
  });

  it('says whether the identity is shared with people', () => {
    expect(isOwnServiceAccount({ namespace: 'hnc-system' })).toBe(true);
    expect(isOwnServiceAccount({ namespace: 'hnc-system', username: 'system:serviceaccount:hnc-system:hnc-controller-manager' })).toBe(
      true,
    );
    expect(isOwnServiceAccount({ namespace: 'hnc-system', username: 'admin' })).toBe(false);
    expect(isOwnServiceAccount({ namespace: 'hnc-system', username: 'system:serviceaccount:default:hnc' })).toBe(false);
  });
});
