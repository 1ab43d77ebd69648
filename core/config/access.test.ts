import { describe, expect, it } from 'vitest';
import { accessFix, missingAccessCondition } from './access.js';

describe('missing access of the manager', () => {
  it('names the one-step grant for Secrets and ConfigMaps, and an aggregated ClusterRole for any other kind', () => {
    expect(accessFix({ group: '', resource: 'secrets', verbs: ['list'] })).toBe(
      'kubectl apply -k deploy/optional/propagate-secrets-configmaps',
    );
    expect(accessFix({ group: 'example.com', resource: 'widgets', verbs: ['list'] })).toBe(
      'kubectl create clusterrole hnc-manager-widgets.example.com --verb=get,list,watch,create,update,patch,delete --resource=widgets.example.com' +
        ' && kubectl label clusterrole hnc-manager-widgets.example.com hnc.x-k8s.io/aggregate-to-manager=true',
    );
  });

  it('is one OutOfSync condition naming every kind, or none', () => {
    expect(missingAccessCondition([])).toBeUndefined();
    const c = missingAccessCondition([
      { group: '', resource: 'secrets', verbs: ['get', 'list'] },
      { group: '', resource: 'configmaps', verbs: ['create'] },
    ]);
    expect(c).toEqual({
      type: 'OutOfSync',
      reason: 'MissingPermission',
      message:
        `HNC's manager may not get, list secrets cluster-wide, so they are not propagated; to fix: kubectl apply -k deploy/optional/propagate-secrets-configmaps; ` +
        `HNC's manager may not create configmaps cluster-wide, so they are not propagated; to fix: kubectl apply -k deploy/optional/propagate-secrets-configmaps`,
    });
  });
});
