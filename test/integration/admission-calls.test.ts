// How many admission reviews ordinary writes cost HNC (issue #31; the figure is in
// docs/benchmarks.md, "Admission calls per 1,000 RoleBinding writes"): 500 creations and 500
// updates of RoleBindings (sources, not copies) in a managed namespace with a child, then their
// 500 deletions, counted at the API server (apiserver_admission_webhook_admission_duration_seconds,
// every call it made to each webhook) and by HNC (hnc_webhook_duration_seconds). HNC propagates
// each one meanwhile: its own 1,500 copy writes must cost no review at all.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hnc } from '../../cmd/hnc.js';
import { TestCluster, eventually } from '../support/cluster.js';
import { setParent, treeDepths } from '../support/hnc.js';
import { rbac } from '../support/hnc-down.js';
import { removeWebhookConfigurations, startHncWithWebhooks, waitForWebhooks } from '../support/manager.js';

const WRITES = 500;
const IN_FLIGHT = 16;
let cluster: TestCluster;
let hnc: Hnc | undefined;
let parent: string;
let child: string;

beforeAll(async () => {
  cluster = await TestCluster.connect();
  hnc = await startHncWithWebhooks('admission-calls');
  await waitForWebhooks(cluster.kubeconfigPath);
  parent = await cluster.namespace('calls-parent');
  child = await cluster.namespace('calls-child');
  await setParent(cluster.admin, child, parent);
  await eventually(async () => ((await treeDepths(cluster.admin, child))?.[parent] === 1 ? true : undefined), 'child under parent');
  forRoleBindings = await webhooksForRoleBindings();
  expect([...forRoleBindings]).toContain('objects.hnc.x-k8s.io');
});

afterAll(async () => {
  await hnc?.stop();
  await removeWebhookConfigurations();
  await cluster?.cleanup();
});

/**
 * HNC's webhooks whose rules can match a RoleBinding: the only ones these writes may call. Others
 * (anchors, namespaces) are left out of the counts: earlier test files' namespaces, still being
 * deleted, have their anchors deleted meanwhile, which calls the anchor webhook.
 */
let forRoleBindings: Set<string>;
async function webhooksForRoleBindings(): Promise<Set<string>> {
  type Rule = { apiGroups?: string[]; resources?: string[] };
  const names = new Set<string>();
  for (const kind of ['validatingwebhookconfigurations', 'mutatingwebhookconfigurations']) {
    const list = await cluster.admin.get<{ items: Array<{ webhooks?: Array<{ name: string; rules?: Rule[] }> }> }>(
      `/apis/admissionregistration.k8s.io/v1/${kind}`,
    );
    for (const w of list.items.flatMap((c) => c.webhooks ?? []))
      if (
        w.name.endsWith('.hnc.x-k8s.io') &&
        w.rules?.some(
          (r) =>
            r.apiGroups?.some((g) => g === '*' || g === 'rbac.authorization.k8s.io') &&
            r.resources?.some((res) => res === '*' || res === 'rolebindings'),
        )
      )
        names.add(w.name);
  }
  return names;
}

/** Calls per `webhook operation`, as the API server counts them (every call it made, answered or not). */
async function apiServerCalls(): Promise<Map<string, number>> {
  const res = await cluster.admin.raw('GET', '/metrics', { timeoutMs: 30_000 });
  const out = new Map<string, number>();
  for (const line of res.body.split('\n')) {
    if (!line.startsWith('apiserver_admission_webhook_admission_duration_seconds_count{')) continue;
    const name = /[{,]name="([^"]*)"/.exec(line)?.[1] ?? '';
    const op = /[{,]operation="([^"]*)"/.exec(line)?.[1] ?? '';
    if (!forRoleBindings.has(name)) continue;
    const key = `${name} ${op}`;
    out.set(key, (out.get(key) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return out;
}

/** Reviews answered per webhook, as HNC counts them (the admission thread's batches included). */
async function hncReviews(): Promise<Map<string, number>> {
  const metrics = await hnc!.metrics.registry.getMetricsAsJSON();
  const h = metrics.find((m) => m.name === 'hnc_webhook_duration_seconds') as
    { values: Array<{ metricName?: string; labels: Record<string, string | number>; value: number }> } | undefined;
  const out = new Map<string, number>();
  for (const v of h?.values ?? [])
    if (v.metricName === 'hnc_webhook_duration_seconds_count' && forRoleBindings.has(String(v.labels.webhook)))
      out.set(String(v.labels.webhook), v.value);
  return out;
}

function delta(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of after) if (v - (before.get(k) ?? 0) > 0) out[k] = v - (before.get(k) ?? 0);
  return out;
}

async function inParallel(n: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < n) await fn(next++);
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
}

const copiesIn = async (ns: string) =>
  (await cluster.admin.get<{ items: unknown[] }>(rbac(ns, 'rolebindings'), { labelSelector: `hnc.x-k8s.io/inherited-from=${parent}` }))
    .items.length;

describe('admission calls per 1,000 ordinary RoleBinding writes', () => {
  const report: string[] = [];
  afterAll(() => console.log(`\nadmission calls per ${2 * WRITES} RoleBinding writes\n${report.join('\n')}`));

  it('calls only the objects webhook, once per creation or update of a source, and never for HNC’s own copies', async () => {
    const before = await apiServerCalls();
    const hncBefore = await hncReviews();
    await inParallel(WRITES, (i) =>
      cluster.admin.create(rbac(parent, 'rolebindings'), {
        metadata: { name: `rb-${i}` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: `user-${i}` }],
      }),
    );
    await inParallel(WRITES, (i) =>
      cluster.admin.request('PATCH', rbac(parent, 'rolebindings', `rb-${i}`), {
        body: { subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: `user-${i}-b` }] },
        contentType: 'application/merge-patch+json',
      }),
    );
    // HNC has written every copy, and their updates.
    await eventually(
      async () => {
        const list = await cluster.admin.get<{ items: Array<{ subjects?: Array<{ name: string }> }> }>(rbac(child, 'rolebindings'), {
          labelSelector: `hnc.x-k8s.io/inherited-from=${parent}`,
        });
        return list.items.length === WRITES && list.items.every((rb) => rb.subjects?.[0]?.name.endsWith('-b')) ? true : undefined;
      },
      `${WRITES} updated copies`,
      120_000,
    );
    const byApiServer = delta(before, await apiServerCalls());
    const byHnc = delta(hncBefore, await hncReviews());
    report.push(
      `${WRITES} creations + ${WRITES} updates (and HNC's ${2 * WRITES} copy writes): API server ${JSON.stringify(byApiServer)}; HNC ${JSON.stringify(byHnc)}`,
    );
    expect(byApiServer).toEqual({ 'objects.hnc.x-k8s.io CREATE': WRITES, 'objects.hnc.x-k8s.io UPDATE': WRITES });
    expect(byHnc).toEqual({ 'objects.hnc.x-k8s.io': 2 * WRITES });
  });

  it('calls no webhook for their deletions, nor for HNC’s deletions of the copies', async () => {
    const before = await apiServerCalls();
    const hncBefore = await hncReviews();
    await inParallel(WRITES, (i) => cluster.admin.delete(rbac(parent, 'rolebindings', `rb-${i}`)));
    await eventually(async () => ((await copiesIn(child)) === 0 ? true : undefined), 'the copies deleted', 120_000);
    const byApiServer = delta(before, await apiServerCalls());
    const byHnc = delta(hncBefore, await hncReviews());
    report.push(
      `${WRITES} deletions (and HNC's ${WRITES} copy deletions): API server ${JSON.stringify(byApiServer)}; HNC ${JSON.stringify(byHnc)}`,
    );
    expect(byApiServer).toEqual({});
    expect(byHnc).toEqual({});
  });
});
