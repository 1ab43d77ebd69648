import { describe, expect, it } from 'vitest';
import { resolveFrom, type GroupDiscovery } from './discovery.js';

const role = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'roles', kind: 'Role', namespaced: true };

describe('resolveFrom (the one discovery resolver)', () => {
  const byGroup = new Map<string, GroupDiscovery>([
    ['rbac.authorization.k8s.io', [role]],
    // Not served (404): found empty.
    ['gone.example.com', []],
    ['metrics.example.com', { error: 'discovery of group "metrics.example.com" failed: 503 service unavailable' }],
  ]);
  const resolve = resolveFrom(byGroup);

  it('finds a served resource with its version and kind', () => {
    expect(resolve('rbac.authorization.k8s.io', 'roles')).toEqual(role);
  });

  it('says "no matches" as kubectl does for a resource or group the API server does not serve', () => {
    expect(resolve('rbac.authorization.k8s.io', 'widgets')).toEqual({
      error: 'no matches for rbac.authorization.k8s.io/, Resource=widgets',
    });
    expect(resolve('gone.example.com', 'things')).toEqual({ error: 'no matches for gone.example.com/, Resource=things' });
    expect(resolve('never.asked', 'things')).toEqual({ error: 'no matches for never.asked/, Resource=things' });
  });

  it('reports a failed discovery as that failure, never as absence', () => {
    expect(resolve('metrics.example.com', 'podmetrics')).toEqual({
      error: 'discovery of group "metrics.example.com" failed: 503 service unavailable',
    });
  });
});
