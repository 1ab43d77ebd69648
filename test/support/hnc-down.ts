// Issue #31's operation table: what a user can still do with every HNC replica down, shared by the
// integration test (HNC's process frozen: every call to its webhooks waits for the API server's
// timeout) and the e2e test (the Deployment scaled to zero, or its pods killed: calls fail at once).
// Each row says what must happen: it succeeds, or the API server refuses it itself (its admission
// policies, HNC's message), or it is refused because it needs HNC (a webhook that fails closed).
import { expect } from 'vitest';
import { isNotFound, type KubeClient } from '../../kube/client.js';
import { Policy } from '../../webhooks/policies.js';
import { TestCluster, eventually, kubectl } from './cluster.js';
import { setParent, treeDepths } from './hnc.js';

const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const HNC = '/apis/hnc.x-k8s.io/v1alpha2';
/** An excluded namespace in every installation (HNC's default exclusions). */
export const EXCLUDED = 'kube-public';
/** Marks what the table leaves in the excluded namespace, so that cleanup finds it. */
const LEFT_BY = 'hnc-down-test';

export const rbac = (ns: string, kind: 'roles' | 'rolebindings', name = '') => `${RBAC}/namespaces/${ns}/${kind}${name ? `/${name}` : ''}`;
export const nsPath = (ns: string) => `/api/v1/namespaces/${ns}`;

/** The namespaces and objects the rows act on, made by prepareDownScenario while HNC is up. */
export interface DownScenario {
  client: KubeClient;
  kubeconfigPath: string;
  parent: string;
  /** A child of `parent`, holding HNC's copy of `parent`'s Role `reader`. */
  child: string;
  /** A managed root. */
  teamB: string;
  /** A subnamespace anchor in `parent`, and so the name of its subnamespace. */
  anchor: string;
  /** Whether HNC runs with --enable-hrq (its HRQ webhooks are registered). */
  hrq: boolean;
}

/** A run of the table: its scenario and the name of the namespace its creation row makes. */
export interface DownRun extends DownScenario {
  newNamespace: string;
}

export type Expected =
  /** Goes through; `failOpen`: the API server calls a webhook that fails open (1 s timeout) on the way. */
  | { kind: 'succeeds'; failOpen: boolean }
  /** Refused by the API server itself (an admission policy), with this text (TEAMB and PARENT replaced). */
  | { kind: 'refused by the API server'; message: string }
  /** Refused because the webhook that fails closed, named, cannot be called: HNC is unavailable. */
  | { kind: 'refused, HNC unavailable'; webhook: string };

export interface DownRow {
  name: string;
  expected: Expected;
  /** Only where HNC runs with --enable-hrq. */
  hrq?: boolean;
  op: (r: DownRun) => Promise<unknown>;
}

const merge = (r: DownRun, path: string, body: unknown) =>
  r.client.request('PATCH', path, { body, contentType: 'application/merge-patch+json' });
/** The API server's prefix of a policy's refusal. */
export const policyPrefix = (name: string) => `ValidatingAdmissionPolicy '${name}' with binding '${name}' denied request: `;
const copies = policyPrefix(Policy.copies);
const labels = policyPrefix(Policy.namespaceLabels);
const succeeds = (failOpen = false): Expected => ({ kind: 'succeeds', failOpen });
const refused = (message: string): Expected => ({ kind: 'refused by the API server', message });
const unavailable = (webhook: string): Expected => ({ kind: 'refused, HNC unavailable', webhook });

export const DOWN_ROWS: readonly DownRow[] = [
  {
    name: 'create a namespace (mutator called, fails open)',
    expected: succeeds(true),
    op: (r) => r.client.create('/api/v1/namespaces', { metadata: { name: r.newNamespace } }),
  },
  {
    name: 'label a managed namespace',
    expected: succeeds(),
    op: (r) => merge(r, nsPath(r.teamB), { metadata: { labels: { foo: 'bar' } } }),
  },
  {
    name: 'annotate a managed namespace',
    expected: succeeds(),
    op: (r) => merge(r, nsPath(r.teamB), { metadata: { annotations: { foo: 'bar' } } }),
  },
  {
    name: 'label an excluded namespace',
    expected: succeeds(),
    op: (r) => merge(r, nsPath(EXCLUDED), { metadata: { labels: { touched: 'yes' } } }),
  },
  {
    name: 'create a configmap in an excluded namespace',
    expected: succeeds(),
    op: (r) => r.client.create(`${nsPath(EXCLUDED)}/configmaps`, { metadata: { generateName: 'down-', labels: { [LEFT_BY]: 'true' } } }),
  },
  {
    name: 'create a RoleBinding (a source) in a managed namespace',
    expected: succeeds(true),
    op: (r) =>
      r.client.create(rbac(r.child, 'rolebindings'), {
        metadata: { name: 'mine' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'dave' }],
      }),
  },
  {
    name: 'update that RoleBinding',
    expected: succeeds(true),
    op: (r) => merge(r, rbac(r.child, 'rolebindings', 'mine'), { metadata: { labels: { edited: 'yes' } } }),
  },
  { name: 'delete that RoleBinding', expected: succeeds(), op: (r) => r.client.delete(rbac(r.child, 'rolebindings', 'mine')) },

  {
    name: 'create an object labelled inherited-from',
    expected: refused(`${copies}cannot create objects with the label "hnc.x-k8s.io/inherited-from"`),
    op: (r) =>
      r.client.create(rbac(r.child, 'roles'), {
        metadata: { name: 'forged', labels: { 'hnc.x-k8s.io/inherited-from': r.parent } },
        rules: [],
      }),
  },
  {
    name: 'edit a copy',
    expected: refused(`${copies}cannot modify object propagated from namespace "PARENT"`),
    op: (r) => merge(r, rbac(r.child, 'roles', 'reader'), { metadata: { labels: { mine: 'yes' } } }),
  },
  {
    name: "change a copy's rules",
    expected: refused(`cannot modify object propagated from namespace "PARENT"`),
    op: (r) => merge(r, rbac(r.child, 'roles', 'reader'), { rules: [] }),
  },
  {
    name: "change a copy's inherited-from label",
    expected: refused(`${copies}cannot modify the label "hnc.x-k8s.io/inherited-from"`),
    op: (r) => merge(r, rbac(r.child, 'roles', 'reader'), { metadata: { labels: { 'hnc.x-k8s.io/inherited-from': 'elsewhere' } } }),
  },
  {
    name: 'delete a copy',
    expected: refused(`${copies}cannot delete object propagated from namespace "PARENT"`),
    op: (r) => r.client.delete(rbac(r.child, 'roles', 'reader')),
  },
  {
    name: 'set a tree label',
    expected: refused(
      `${labels}cannot set or modify tree label "team-a.tree.hnc.x-k8s.io/depth" in namespace "TEAMB"; these can only be managed by HNC`,
    ),
    op: (r) => merge(r, nsPath(r.teamB), { metadata: { labels: { 'team-a.tree.hnc.x-k8s.io/depth': '1' } } }),
  },
  {
    name: 'remove a tree label',
    expected: refused(`cannot remove tree label "TEAMB.tree.hnc.x-k8s.io/depth"`),
    op: (r) => merge(r, nsPath(r.teamB), { metadata: { labels: { [`${r.teamB}.tree.hnc.x-k8s.io/depth`]: null } } }),
  },
  {
    name: 'change the included-namespace label',
    expected: refused(`${labels}you cannot change the value of the "hnc.x-k8s.io/included-namespace" label`),
    op: (r) => merge(r, nsPath(r.teamB), { metadata: { labels: { 'hnc.x-k8s.io/included-namespace': 'false' } } }),
  },
  {
    name: 'forge the included-namespace label on an excluded namespace',
    expected: refused('you cannot enforce webhook rules on this unmanaged namespace'),
    op: (r) => merge(r, nsPath(EXCLUDED), { metadata: { labels: { 'hnc.x-k8s.io/included-namespace': 'true' } } }),
  },

  {
    name: 'change a parent (HierarchyConfiguration)',
    expected: unavailable('hierarchyconfigurations.hnc.x-k8s.io'),
    op: (r) =>
      r.client.request('PATCH', `${HNC}/namespaces/${r.teamB}/hierarchyconfigurations/hierarchy`, {
        body: {
          apiVersion: 'hnc.x-k8s.io/v1alpha2',
          kind: 'HierarchyConfiguration',
          metadata: { name: 'hierarchy' },
          spec: { parent: r.parent },
        },
        contentType: 'application/apply-patch+yaml',
        query: { fieldManager: 'hnc-down-test', force: true },
      }),
  },
  {
    name: 'create an anchor',
    expected: unavailable('subnamespaceanchors.hnc.x-k8s.io'),
    op: (r) =>
      r.client.create(`${HNC}/namespaces/${r.parent}/subnamespaceanchors`, {
        apiVersion: 'hnc.x-k8s.io/v1alpha2',
        kind: 'SubnamespaceAnchor',
        metadata: { name: TestCluster.uniqueName('sub') },
      }),
  },
  {
    name: 'delete an anchor',
    expected: unavailable('subnamespaceanchors.hnc.x-k8s.io'),
    op: (r) => r.client.delete(`${HNC}/namespaces/${r.parent}/subnamespaceanchors/${r.anchor}`),
  },
  {
    name: 'set subnamespace-of',
    expected: unavailable('namespaces.hnc.x-k8s.io'),
    op: (r) => merge(r, nsPath(r.teamB), { metadata: { annotations: { 'hnc.x-k8s.io/subnamespace-of': r.parent } } }),
  },
  { name: 'delete a managed namespace', expected: unavailable('namespaces.hnc.x-k8s.io'), op: (r) => r.client.delete(nsPath(r.teamB)) },
  {
    name: 'change the HNCConfiguration',
    expected: unavailable('hncconfigurations.hnc.x-k8s.io'),
    op: (r) => merge(r, `${HNC}/hncconfigurations/config`, { metadata: { annotations: { 'hnc-down-test': 'yes' } } }),
  },
  {
    name: 'create a HierarchicalResourceQuota',
    hrq: true,
    // The mutating HRQ webhook (fails closed) comes first.
    expected: unavailable('hrqquantities.hnc.x-k8s.io'),
    op: (r) =>
      r.client.create(`${HNC}/namespaces/${r.parent}/hierarchicalresourcequotas`, {
        apiVersion: 'hnc.x-k8s.io/v1alpha2',
        kind: 'HierarchicalResourceQuota',
        metadata: { name: 'down' },
        spec: { hard: { configmaps: '10' } },
      }),
  },
  {
    name: 'create a ConfigMap under an HRQ (its quota raise needs HNC)',
    hrq: true,
    expected: unavailable('resourcesquotasstatus.hnc.x-k8s.io'),
    op: (r) => r.client.create(`${nsPath(r.child)}/configmaps`, { metadata: { generateName: 'down-' } }),
  },
  {
    name: 'create a ConfigMap under a quota of its own (not HNC’s)',
    hrq: true,
    expected: succeeds(),
    op: (r) => r.client.create(`${nsPath(r.teamB)}/configmaps`, { metadata: { generateName: 'down-' } }),
  },
];

/** The rows of a scenario: the HRQ ones only where HNC runs with --enable-hrq. */
export const downRows = (s: Pick<DownScenario, 'hrq'>) => DOWN_ROWS.filter((r) => !r.hrq || s.hrq);

/**
 * While HNC is up: a parent with a child (the copy `reader` in it), a managed root `team-b`, and
 * an anchor (its subnamespace created); with `hrq`, an HRQ over the parent and a quota of team-b's
 * own; waits until the API server enforces the policies.
 */
export async function prepareDownScenario(cluster: TestCluster, hrq: boolean): Promise<DownScenario> {
  const client = cluster.admin;
  const parent = await cluster.namespace('down-parent');
  const child = await cluster.namespace('down-child');
  const teamB = await cluster.namespace('team-b');
  await setParent(client, child, parent);
  await eventually(async () => ((await treeDepths(client, child))?.[parent] === 1 ? true : undefined), 'child under parent', 60_000);
  await client.create(rbac(parent, 'roles'), {
    metadata: { name: 'reader' },
    rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
  });
  await eventually(() => client.get(rbac(child, 'roles', 'reader')), 'the copy', 60_000);
  await eventually(async () => ((await treeDepths(client, teamB))?.[teamB] === 0 ? true : undefined), 'team-b managed', 60_000);
  const anchor = TestCluster.uniqueName('down-sub');
  await client.create(`${HNC}/namespaces/${parent}/subnamespaceanchors`, {
    apiVersion: 'hnc.x-k8s.io/v1alpha2',
    kind: 'SubnamespaceAnchor',
    metadata: { name: anchor },
  });
  await eventually(async () => ((await treeDepths(client, anchor))?.[parent] === 1 ? true : undefined), 'the subnamespace', 60_000);
  if (hrq) await prepareQuotas(client, parent, child, teamB);
  // The policies are in effect (the API server has loaded them): a forged copy is refused.
  await eventually(async () => {
    const forged = { metadata: { name: 'forged', labels: { 'hnc.x-k8s.io/inherited-from': parent } }, rules: [] };
    const o = await attempt(() => client.create(rbac(child, 'roles'), forged, { dryRun: 'All' }));
    return o.message.includes(Policy.copies) ? true : undefined;
  }, 'the API server to enforce the copies policy');
  return { client, kubeconfigPath: cluster.kubeconfigPath, parent, child, teamB, anchor, hrq };
}

/** An HRQ over `parent` (its singleton in `child` counted), and a quota of team-b's own. */
async function prepareQuotas(client: KubeClient, parent: string, child: string, teamB: string): Promise<void> {
  await client.create(`${HNC}/namespaces/${parent}/hierarchicalresourcequotas`, {
    apiVersion: 'hnc.x-k8s.io/v1alpha2',
    kind: 'HierarchicalResourceQuota',
    metadata: { name: 'team' },
    spec: { hard: { configmaps: '100' } },
  });
  await client.create(`${nsPath(teamB)}/resourcequotas`, { metadata: { name: 'own' }, spec: { hard: { configmaps: '100' } } });
  // Counted by kube-controller-manager: until then the API server refuses creations there itself.
  const counted = (ns: string, name: string) =>
    eventually(
      async () =>
        (await client.get<{ status?: { used?: Record<string, string> } }>(`${nsPath(ns)}/resourcequotas/${name}`).catch(() => undefined))
          ?.status?.used?.configmaps !== undefined
          ? true
          : undefined,
      `the ResourceQuota ${ns}/${name} counted`,
      60_000,
    );
  await counted(child, 'hrq.hnc.x-k8s.io');
  await counted(teamB, 'own');
}

/**
 * After the table, with HNC up (it deletes the subnamespace, then lets the anchor go): the anchor,
 * the namespaces the runs created, and what the rows left in the excluded namespace. The
 * scenario's own namespaces are the TestCluster's to delete.
 */
export async function cleanUpDownScenario(s: DownScenario, created: readonly string[]): Promise<void> {
  const gone = (e: unknown) => (isNotFound(e) ? undefined : Promise.reject(e));
  const anchors = `${HNC}/namespaces/${s.parent}/subnamespaceanchors`;
  // The scenario's anchor, and any a row made (it should not have).
  const names = (await s.client.get<{ items: Array<{ metadata: { name: string } }> }>(anchors)).items.map((a) => a.metadata.name);
  for (const name of names) await s.client.delete(`${anchors}/${name}`).catch(gone);
  // HNC deletes each subnamespace, then lets its anchor go (a finalizer): it must be up.
  await eventually(
    async () => ((await s.client.get<{ items: unknown[] }>(anchors)).items.length === 0 ? true : undefined),
    'the anchors gone',
    60_000,
  );
  for (const ns of [...names, ...created]) await s.client.delete(nsPath(ns)).catch(gone);
  await s.client.request('DELETE', `${nsPath(EXCLUDED)}/configmaps`, { query: { labelSelector: LEFT_BY } });
}

export interface Outcome {
  ok: boolean;
  ms: number;
  message: string;
}

export async function attempt(op: () => Promise<unknown>): Promise<Outcome> {
  const t0 = performance.now();
  try {
    await op();
    return { ok: true, ms: performance.now() - t0, message: '' };
  } catch (err) {
    return { ok: false, ms: performance.now() - t0, message: (err as Error).message };
  }
}

/** One line of the printed table: operation, outcome, time, message. */
export const formatOutcome = (row: string, o: Outcome) =>
  `${row.padEnd(58)} ${(o.ok ? 'allowed' : 'refused').padEnd(8)} ${o.ms.toFixed(0).padStart(5)} ms  ${o.message.slice(0, 400)}`;

/** How long each kind of row may take: depends on how HNC is down. */
export interface DownLimits {
  /** An ordinary write that calls no webhook. */
  succeeds: number;
  /** One that calls a webhook failing open on the way. */
  succeedsFailOpen: number;
  /** A policy's refusal. */
  refusedByApiServer: number;
  /** A refusal because HNC is unavailable (undefined: not checked). */
  unavailable?: number;
}

/** Runs one row, records its outcome (for the printed table), then checks it. */
export async function runDownRow(row: DownRow, run: DownRun, limits: DownLimits, record: (line: string) => void): Promise<Outcome> {
  const o = await attempt(() => row.op(run));
  record(formatOutcome(row.name, o));
  const e = row.expected;
  if (e.kind === 'succeeds') {
    expect(o.message).toBe('');
    expect(o.ms).toBeLessThan(e.failOpen ? limits.succeedsFailOpen : limits.succeeds);
  } else if (e.kind === 'refused by the API server') {
    expect(o.ok).toBe(false);
    expect(o.message).toContain(e.message.replace('TEAMB', run.teamB).replace('PARENT', run.parent));
    expect(o.message).toMatch(/403 Forbidden/);
    expect(o.ms).toBeLessThan(limits.refusedByApiServer);
  } else {
    expect(o.ok).toBe(false);
    // The API server's own words for a webhook it cannot call (which hnc-ts cannot change): they
    // name HNC's webhook, which docs/webhooks.md explains as "HNC is unavailable".
    expect(o.message).toContain(`failed calling webhook "${e.webhook}"`);
    if (limits.unavailable !== undefined) expect(o.ms).toBeLessThan(limits.unavailable);
  }
  return o;
}

/** The API server's refusal of a copy's deletion, as kubectl shows it. */
export async function expectKubectlShowsPolicyRefusal(run: DownRun): Promise<void> {
  const r = await kubectl(run.kubeconfigPath, ['delete', 'role', 'reader', '-n', run.child]);
  expect(r.code).toBe(1);
  expect(r.stderr.trim()).toBe(
    `Error from server (Forbidden): roles.rbac.authorization.k8s.io "reader" is forbidden: ${copies}cannot delete object propagated from namespace "${run.parent}"`,
  );
}
