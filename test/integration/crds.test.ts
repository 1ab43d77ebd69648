// The four HNC CRDs are installed on the real apiserver, and their schemas reject what HNC's do.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestCluster, refusal } from '../support/cluster.js';

const HNC = '/apis/hnc.x-k8s.io/v1alpha2';
let cluster: TestCluster;
let ns: string;

beforeAll(async () => {
  cluster = await TestCluster.connect();
  ns = await cluster.namespace('crds');
});
afterAll(() => cluster.cleanup());

describe('HNC CRDs on the real apiserver', () => {
  it('serves the four kinds of hnc.x-k8s.io/v1alpha2 with HNC names, scopes and short names', async () => {
    const list = await cluster.admin.get<{ resources: Array<{ name: string; kind: string; namespaced: boolean; shortNames?: string[] }> }>(
      HNC,
    );
    const byName = Object.fromEntries(list.resources.filter((r) => !r.name.includes('/')).map((r) => [r.name, r]));
    expect(byName.hierarchyconfigurations).toMatchObject({ kind: 'HierarchyConfiguration', namespaced: true });
    expect(byName.subnamespaceanchors).toMatchObject({ kind: 'SubnamespaceAnchor', namespaced: true, shortNames: ['subns'] });
    expect(byName.hncconfigurations).toMatchObject({ kind: 'HNCConfiguration', namespaced: false });
    expect(byName.hierarchicalresourcequotas).toMatchObject({ kind: 'HierarchicalResourceQuota', namespaced: true, shortNames: ['hrq'] });
  });

  it('rejects a HierarchyConfiguration not named "hierarchy" and accepts one that is', async () => {
    const err = await refusal(
      cluster.admin.create(`${HNC}/namespaces/${ns}/hierarchyconfigurations`, {
        apiVersion: 'hnc.x-k8s.io/v1alpha2',
        kind: 'HierarchyConfiguration',
        metadata: { name: 'other' },
      }),
    );
    expect(err.code).toBe(422);
    expect(err.message).toMatch(/metadata\.name.*Unsupported value: "other".*"hierarchy"/);
    const ok = await cluster.admin.create<{ metadata: { name: string } }>(`${HNC}/namespaces/${ns}/hierarchyconfigurations`, {
      apiVersion: 'hnc.x-k8s.io/v1alpha2',
      kind: 'HierarchyConfiguration',
      metadata: { name: 'hierarchy' },
      spec: { parent: 'somewhere', allowCascadingDeletion: false },
    });
    expect(ok.metadata.name).toBe('hierarchy');
  });

  it('rejects an HNCConfiguration with an unknown mode, or with another name than "config"', async () => {
    const config = (name: string, mode: string) => ({
      apiVersion: 'hnc.x-k8s.io/v1alpha2',
      kind: 'HNCConfiguration',
      metadata: { name },
      spec: { resources: [{ resource: 'secrets', mode }] },
    });
    // Dry-run server-side applies: the shared cluster's one `config` (which a manager may have
    // created already) belongs to the controller tests.
    const apply = (name: string, mode: string) =>
      cluster.admin.request('PATCH', `${HNC}/hncconfigurations/${name}`, {
        body: config(name, mode),
        contentType: 'application/apply-patch+yaml',
        query: { fieldManager: 'crds-test', dryRun: 'All', force: true },
      });
    const bad = await refusal(apply('config', 'Sometimes'));
    expect(bad.code).toBe(422);
    expect(bad.message).toMatch(/spec\.resources\[0\]\.mode.*Unsupported value: "Sometimes"/);
    const misnamed = await refusal(apply('mine', 'Propagate'));
    expect(misnamed.code).toBe(422);
    await expect(apply('config', 'Propagate')).resolves.toBeTruthy();
  });

  it('keeps the anchor status and HRQ quantities as HNC shapes them', async () => {
    await cluster.admin.create(`${HNC}/namespaces/${ns}/subnamespaceanchors`, {
      apiVersion: 'hnc.x-k8s.io/v1alpha2',
      kind: 'SubnamespaceAnchor',
      metadata: { name: 'child' },
      spec: { labels: [{ key: 'team', value: 'a' }] },
    });
    const badKvp = await refusal(
      cluster.admin.create(`${HNC}/namespaces/${ns}/subnamespaceanchors`, {
        apiVersion: 'hnc.x-k8s.io/v1alpha2',
        kind: 'SubnamespaceAnchor',
        metadata: { name: 'child2' },
        spec: { labels: [{ key: 'team' }] },
      }),
    );
    expect(badKvp.message).toMatch(/spec\.labels\[0\]\.value.*Required value/);
    const hrq = await cluster.admin.create<{ spec: { hard: Record<string, string> } }>(
      `${HNC}/namespaces/${ns}/hierarchicalresourcequotas`,
      {
        apiVersion: 'hnc.x-k8s.io/v1alpha2',
        kind: 'HierarchicalResourceQuota',
        metadata: { name: 'quota' },
        spec: { hard: { pods: '10', 'requests.cpu': '500m' } },
      },
    );
    expect(hrq.spec.hard).toEqual({ pods: '10', 'requests.cpu': '500m' });
    const badQty = await refusal(
      cluster.admin.create(`${HNC}/namespaces/${ns}/hierarchicalresourcequotas`, {
        apiVersion: 'hnc.x-k8s.io/v1alpha2',
        kind: 'HierarchicalResourceQuota',
        metadata: { name: 'bad' },
        spec: { hard: { pods: 'lots' } },
      }),
    );
    expect(badQty.code).toBe(422);
  });
});
