// Every object of a forest of namespaces, recorded (uid, resourceVersion, labels, annotations, body,
// status) and compared: what a swap of managers deleted, recreated or modified, and how. Used by
// the migration tests (test/integration/migration.test.ts: HNC's manager as a process;
// test/e2e/migration.test.ts: HNC's own manifest in pods, then install.yaml over it).
import { isDeepStrictEqual } from 'node:util';
import { hncConfigurationPath } from '../../core/api/paths.js';
import type { KubeClient } from '../../kube/client.js';

export interface Meta {
  name: string;
  namespace?: string;
  uid: string;
  resourceVersion: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: unknown[];
}
export interface Obj {
  metadata: Meta;
  status?: Record<string, unknown>;
  [k: string]: unknown;
}
export interface Recorded {
  kind: string;
  uid: string;
  resourceVersion: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  finalizers: string[];
  ownerReferences: unknown[];
  /** Everything but metadata and status (spec, data, rules, roleRef, subjects ...). */
  body: Record<string, unknown>;
  status: Record<string, unknown>;
}
/** `Kind/namespace/name` -> the object as recorded. */
export type Snapshot = Map<string, Recorded>;

const LISTS: Array<[kind: string, path: string]> = [
  ['Namespace', '/api/v1/namespaces'],
  ['HierarchyConfiguration', '/apis/hnc.x-k8s.io/v1alpha2/hierarchyconfigurations'],
  ['SubnamespaceAnchor', '/apis/hnc.x-k8s.io/v1alpha2/subnamespaceanchors'],
  ['HierarchicalResourceQuota', '/apis/hnc.x-k8s.io/v1alpha2/hierarchicalresourcequotas'],
  ['Role', '/apis/rbac.authorization.k8s.io/v1/roles'],
  ['RoleBinding', '/apis/rbac.authorization.k8s.io/v1/rolebindings'],
  ['NetworkPolicy', '/apis/networking.k8s.io/v1/networkpolicies'],
  ['ConfigMap', '/api/v1/configmaps'],
  ['LimitRange', '/api/v1/limitranges'],
  ['ResourceQuota', '/api/v1/resourcequotas'],
];

function record(kind: string, o: Obj): Recorded {
  const { metadata, status, apiVersion: _a, kind: _k, ...body } = o;
  return {
    kind,
    uid: metadata.uid,
    resourceVersion: metadata.resourceVersion,
    labels: metadata.labels ?? {},
    annotations: metadata.annotations ?? {},
    finalizers: metadata.finalizers ?? [],
    ownerReferences: metadata.ownerReferences ?? [],
    body,
    status: status ?? {},
  };
}

/** Every object of the forest (its namespaces and what is in them) and the HNCConfiguration. */
export async function snapshot(client: KubeClient, namespaces: ReadonlySet<string>): Promise<Snapshot> {
  const out: Snapshot = new Map();
  for (const [kind, path] of LISTS) {
    const list = await client.get<{ items: Obj[] }>(path);
    for (const o of list.items) {
      const ns = kind === 'Namespace' ? o.metadata.name : o.metadata.namespace!;
      if (namespaces.has(ns)) out.set(`${kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`, record(kind, o));
    }
  }
  out.set('HNCConfiguration//config', record('HNCConfiguration', await client.get<Obj>(hncConfigurationPath('config'))));
  return out;
}

/** What changed in one object, in words: "annotation removed: k", "spec changed", "status.conditions changed" ... */
function changes(a: Recorded, b: Recorded): string[] {
  const out: string[] = [];
  for (const [what, x, y] of [
    ['label', a.labels, b.labels],
    ['annotation', a.annotations, b.annotations],
  ] as const) {
    for (const k of new Set([...Object.keys(x), ...Object.keys(y)])) {
      if (!(k in y)) out.push(`${what} removed: ${k}`);
      else if (!(k in x)) out.push(`${what} added: ${k}`);
      else if (x[k] !== y[k]) out.push(`${what} changed: ${k}`);
    }
  }
  for (const [what, x, y] of [
    ['', a.body, b.body],
    ['status.', a.status, b.status],
  ] as const)
    for (const k of new Set([...Object.keys(x), ...Object.keys(y)])) if (!isDeepStrictEqual(x[k], y[k])) out.push(`${what}${k} changed`);
  if (!isDeepStrictEqual(a.finalizers, b.finalizers)) out.push('finalizers changed');
  if (!isDeepStrictEqual(a.ownerReferences, b.ownerReferences)) out.push('ownerReferences changed');
  if (!out.length) out.push('metadata only (managedFields)');
  return out.sort();
}

export interface Comparison {
  objects: number;
  deleted: string[];
  recreated: string[];
  /** "Kind: change; change" -> keys of the objects so modified. */
  modified: Map<string, string[]>;
  modifiedTotal: number;
}

export function compare(before: Snapshot, after: Snapshot, keep: (key: string) => boolean = () => true): Comparison {
  const c: Comparison = { objects: 0, deleted: [], recreated: [], modified: new Map(), modifiedTotal: 0 };
  for (const [key, a] of before) {
    if (!keep(key)) continue;
    c.objects++;
    const b = after.get(key);
    if (!b) c.deleted.push(key);
    else if (b.uid !== a.uid) c.recreated.push(key);
    else if (b.resourceVersion !== a.resourceVersion) {
      const copy = a.labels['hnc.x-k8s.io/inherited-from'] ? ' copy' : '';
      const signature = `${a.kind}${copy}: ${changes(a, b).join('; ')}`;
      c.modified.set(signature, [...(c.modified.get(signature) ?? []), key]);
      c.modifiedTotal++;
    }
  }
  return c;
}

/** The comparison in lines: totals, then each kind of change with its count. */
export function report(title: string, c: Comparison): string {
  const rows = [...c.modified].sort(([x], [y]) => (x < y ? -1 : 1)).map(([sig, keys]) => `    ${keys.length} × ${sig}`);
  const recreated = [...new Set(c.recreated.map((k) => k.split('/')[0]))].map(
    (kind) => `    recreated: ${c.recreated.filter((k) => k.startsWith(`${kind}/`)).length} × ${kind} copy`,
  );
  return [
    `${title}: ${c.objects} objects; deleted ${c.deleted.length}, recreated ${c.recreated.length}, modified ${c.modifiedTotal}`,
    ...recreated,
    ...rows,
  ].join('\n');
}

/** The change hnc-ts makes to copies of a `kubectl apply`-ed source (docs/hnc-differences.md, "GitOps-friendly copies"). */
export const NO_LAST_APPLIED = 'annotation removed: kubectl.kubernetes.io/last-applied-configuration';

/**
 * The HNCConfiguration's status is the running manager's own report: its counts of sources and
 * copies per kind always change, its conditions too when the old manager's last report held one
 * (seen once on a busy machine): both are status only, named as the first.
 */
export function normalizeConfigStatus(signature: string): string {
  return signature === 'HNCConfiguration: status.conditions changed; status.resources changed'
    ? 'HNCConfiguration: status.resources changed'
    : signature;
}
