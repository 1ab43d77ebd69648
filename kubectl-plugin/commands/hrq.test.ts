import { describe, expect, it } from 'vitest';
import type { HierarchicalResourceQuota } from '../../core/api/types.js';
import { hrqTable } from './hrq.js';

const now = new Date('2026-01-01T00:10:00Z');
const hrq = (
  namespace: string,
  name: string,
  status: HierarchicalResourceQuota['status'],
  labels?: Record<string, string>,
): HierarchicalResourceQuota => ({
  apiVersion: 'hnc.x-k8s.io/v1alpha2',
  kind: 'HierarchicalResourceQuota',
  metadata: { namespace, name, creationTimestamp: '2026-01-01T00:05:00Z', labels },
  status,
});

describe('kubectl hns hrq table', () => {
  const rows = [
    hrq(
      'team-a',
      'team',
      { hard: { services: '10', 'limits.cpu': '2', 'requests.cpu': '1500m' }, used: { services: '3', 'requests.cpu': '0.5' } },
      { tier: 'gold' },
    ),
    hrq('team-b', 'empty', undefined),
  ];

  it('shows NAME, AGE, REQUEST, LIMIT, with used/hard per resource (missing usage is 0)', () => {
    expect(hrqTable(rows, { allNamespaces: false, showLabels: false }, now)).toEqual([
      'NAME    AGE   REQUEST                                    LIMIT',
      'team    5m    requests.cpu: 500m/1500m, services: 3/10   limits.cpu: 0/2',
      'empty   5m',
    ]);
  });

  it('puts NAMESPACE first with -A and LABELS last with --show-labels', () => {
    expect(hrqTable(rows, { allNamespaces: true, showLabels: true }, now)).toEqual([
      'NAMESPACE   NAME    AGE   REQUEST                                    LIMIT             LABELS',
      'team-a      team    5m    requests.cpu: 500m/1500m, services: 3/10   limits.cpu: 0/2   tier=gold',
      'team-b      empty   5m                                                                 <none>',
    ]);
  });

  it('has nothing to show for no HRQs', () => {
    expect(hrqTable([], { allNamespaces: false, showLabels: false }, now)).toBeUndefined();
  });
});
