import { describe, expect, it } from 'vitest';
import type { HierarchicalResourceQuota } from '../../core/api/types.js';
import { parseResourceList } from '../../core/hrq/hrq.js';
import type { HncApi, Namespace } from '../api.js';
import { ServerError } from '../errors.js';
import type { TreeNode } from '../model.js';
import { renderDescribe } from '../render/describe-text.js';
import { renderTreeText } from '../render/tree-text.js';
import { PER_NAMESPACE_CONCURRENCY } from '../concurrency.js';
import { ancestorsOf, hrqView, loadDescribeQuotas, loadQuotas, quotaSuffixes, usageText, type QuotaData } from './quotas.js';

const hrq = (namespace: string, name: string, hard: Record<string, string>, used?: Record<string, string>): HierarchicalResourceQuota => ({
  apiVersion: 'hnc.x-k8s.io/v1alpha2',
  kind: 'HierarchicalResourceQuota',
  metadata: { namespace, name },
  spec: { hard },
  ...(used ? { status: { hard, used } } : {}),
});
const node = (name: string, ...children: TreeNode[]): TreeNode => ({ name, subnamespace: false, conditions: [], children });
const usage = (used: Record<string, string>) => parseResourceList(used).quantities;

describe('hierarchical quotas in the plugin', () => {
  it('shows an HRQ as used/hard from its status, limits.* after the rest; 0 before HNC wrote any status', () => {
    expect(
      hrqView(hrq('a', 'q', { services: '10', 'limits.cpu': '2', 'requests.cpu': '1500m' }, { services: '3', 'requests.cpu': '600m' })),
    ).toEqual({
      namespace: 'a',
      name: 'q',
      usage: 'requests.cpu: 600m/1500m, services: 3/10, limits.cpu: 0/2',
    });
    expect(hrqView(hrq('a', 'q', { services: '2' })).usage).toBe('services: 0/2');
  });

  it("reads a namespace's ancestors from its tree labels, nearest first", () => {
    const ns: Namespace = {
      metadata: {
        name: 'dev',
        labels: { 'dev.tree.hnc.x-k8s.io/depth': '0', 'org.tree.hnc.x-k8s.io/depth': '2', 'team.tree.hnc.x-k8s.io/depth': '1', other: 'x' },
      },
    } as Namespace;
    expect(ancestorsOf(ns)).toEqual(['team', 'org']);
  });

  it('prints usage of the limited resources only, 0 for none used', () => {
    expect(usageText(usage({ services: '2', pods: '7' }), new Set(['services', 'secrets']))).toBe('secrets: 0, services: 2');
  });

  it('describe: the HRQs here, above, the own usage and the notes', () => {
    const text = renderDescribe(
      {
        namespace: 'dev',
        inherited: { objects: [], checked: [], notes: [] },
        events: [],
        quotas: {
          here: [{ namespace: 'dev', name: 'app', usage: 'services: 1/2' }],
          above: [{ namespace: 'team', name: 'team', usage: 'services: 3/10' }],
          used: 'services: 1',
          notes: ['no permission to list the HierarchicalResourceQuotas in org'],
        },
      },
      new Date(),
    );
    expect(text).toContain(
      '\nHierarchical resource quotas (used in the subtree / limit):\n  In dev:\n  - app: services: 1/2\n  Above dev:\n  - team/team: services: 3/10\n' +
        '  Used in dev itself: services: 1\n  (no permission to list the HierarchicalResourceQuotas in org)\n',
    );
    expect(renderDescribe({ namespace: 'dev', inherited: { objects: [], checked: [], notes: [] }, events: [] }, new Date())).not.toContain(
      'Hierarchical resource quotas',
    );
  });

  it('reads namespace by namespace a few requests at a time when the user may not list cluster-wide', async () => {
    const forbidden = new ServerError(403, 'forbidden');
    const namespaces = Array.from({ length: 300 }, (_, i) => `ns-${i}`);
    let inFlight = 0;
    let most = 0;
    const slowly = async <T>(value: T): Promise<T> => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise<void>((resolve) => setImmediate(resolve));
      inFlight--;
      return value;
    };
    const api = {
      listAll: () => Promise.reject(forbidden),
      listObjects: (ns: string) => slowly([hrq(ns, 'q', { pods: '1' })]),
      getObject: (ns: string) => slowly({ metadata: { namespace: ns }, spec: { hard: { pods: '1' } }, status: { used: { pods: '0' } } }),
    } as unknown as HncApi;
    const data = await loadQuotas(api, namespaces);
    expect(data.hrqs.size).toBe(300);
    expect(data.usage.size).toBe(300);
    expect(most).toBeLessThanOrEqual(PER_NAMESPACE_CONCURRENCY);
    expect(most).toBeGreaterThan(1);
  });

  it('describe says nothing when no HRQ applies, even if those above cannot be read (the namespace has no singleton)', async () => {
    const forbidden = new ServerError(403, 'forbidden');
    const calls: string[] = [];
    const api = {
      listObjects: (ns: string) => (ns === 'dev' ? Promise.resolve([]) : Promise.reject(forbidden)),
      getObject: (ns: string) => (calls.push(ns), Promise.resolve(undefined)),
    } as unknown as HncApi;
    const ns = { metadata: { name: 'dev', labels: { 'team.tree.hnc.x-k8s.io/depth': '1' } } } as Namespace;
    expect(await loadDescribeQuotas(api, ns)).toBeUndefined();
    // Only the namespace's own ResourceQuota is read, never its ancestors'.
    expect(calls).toEqual(['dev']);
    const limited = {
      ...api,
      getObject: () => Promise.resolve({ metadata: { namespace: 'dev' }, spec: { hard: { services: '3' } } }),
    } as unknown as HncApi;
    expect(await loadDescribeQuotas(limited, ns)).toEqual({
      here: [],
      above: [],
      limits: 'services: 3',
      used: 'services: 0',
      notes: ['no permission to list the HierarchicalResourceQuotas in team'],
    });
  });

  it('tree --quota: HRQs where they are, subtree sums below them for what is limited above, notes', () => {
    const trees = [node('team', node('dev', node('dev-x')), node('prod'), node('secret'))];
    const data: QuotaData = {
      served: true,
      hrqs: new Map([
        ['team', [hrq('team', 'team', { services: '10' }, { services: '4' })]],
        ['prod', [hrq('prod', 'p', { 'requests.cpu': '1' }, { 'requests.cpu': '250m' })]],
      ]),
      usage: new Map([
        ['team', usage({ services: '1' })],
        ['dev', usage({ services: '1', pods: '3' })],
        ['dev-x', usage({ services: '2' })],
        ['prod', usage({ 'requests.cpu': '250m' })],
      ]),
      limits: new Map(),
      notes: new Map([['secret', ['no permission to list the HierarchicalResourceQuotas in secret']]]),
    };
    const suffixes = quotaSuffixes(trees, data, new Map([['team', new Set(['pods'])]]));
    expect(renderTreeText(trees, suffixes)).toBe(
      [
        'team [team: services 4/10]',
        '├── dev (pods 3, services 3)',
        '│   └── dev-x (pods 0, services 2)',
        '├── prod [p: requests.cpu 250m/1]',
        '└── secret (pods 0, services 0) (no permission to list the HierarchicalResourceQuotas in secret)',
        '',
      ].join('\n'),
    );
  });
});
