// Hierarchical quota usage for `kubectl hns describe NS` and `kubectl hns tree NS --quota` (beyond
// HNC, whose plugin shows HRQs only with `kubectl hns hrq`). A namespace's own usage is its
// `hrq.hnc.x-k8s.io` ResourceQuota's status.used (what Kubernetes counted there); a subtree's is the
// sum over its namespaces, as HNC computes an HRQ's status.used (docs/hrq.md). What the user may not
// read becomes a note; a cluster without the HRQ kind shows nothing.
import { GROUP, HRQ_RESOURCE_QUOTA_NAME, Plural, treeLabelNamespace, VERSION } from '../../core/api/constants.js';
import type { HierarchicalResourceQuota } from '../../core/api/types.js';
import { parseResourceList, resourceListText, summaries, type Quantities } from '../../core/hrq/hrq.js';
import { addQuantities, formatQuantity, ZERO, type Quantity } from '../../core/quantity/quantity.js';
import type { AnyObject, HncApi, Namespace, ResourceType } from '../api.js';
import { PER_NAMESPACE_CONCURRENCY, mapLimit } from '../concurrency.js';
import { isForbidden, isNotFound } from '../errors.js';
import type { DescribeQuotas, HrqView, TreeNode } from '../model.js';

export const HRQ_TYPE: ResourceType = {
  group: GROUP,
  version: VERSION,
  resource: Plural.HierarchicalResourceQuota,
  kind: 'HierarchicalResourceQuota',
};
const RQ_TYPE: ResourceType = { group: '', version: 'v1', resource: 'resourcequotas', kind: 'ResourceQuota' };

/** What could not be read, in the user's words. */
type QuotaNote = string;

export function hrqView(h: HierarchicalResourceQuota): HrqView {
  // Before HNC first writes the status, the limits come from spec (usage shown as 0).
  const hard = parseResourceList(h.status?.hard ?? h.spec?.hard).quantities;
  const { requestsSummary, limitsSummary } = summaries(hard, parseResourceList(h.status?.used).quantities);
  return {
    namespace: h.metadata.namespace ?? '',
    name: h.metadata.name ?? '',
    usage: [requestsSummary, limitsSummary].filter(Boolean).join(', '),
  };
}

/** A namespace's ancestors from its tree labels, nearest first (what HNC last wrote on it). */
export function ancestorsOf(ns: Namespace): string[] {
  const name = ns.metadata.name ?? '';
  return Object.entries(ns.metadata.labels ?? {})
    .map(([k, v]) => ({ ns: treeLabelNamespace(k), depth: Number(v) }))
    .filter((a): a is { ns: string; depth: number } => a.ns !== undefined && a.ns !== name && Number.isInteger(a.depth) && a.depth > 0)
    .sort((a, b) => a.depth - b.depth)
    .map((a) => a.ns);
}

type Read<T> = { ok: true; value: T } | { ok: false; note: QuotaNote } | { ok: false; absent: true };

async function read<T>(p: Promise<T>, what: string): Promise<Read<T>> {
  try {
    return { ok: true, value: await p };
  } catch (err) {
    if (isForbidden(err)) return { ok: false, note: `no permission to ${what}` };
    // The kind is not installed (no HRQ CRD): nothing to show.
    if (isNotFound(err)) return { ok: false, absent: true };
    throw err;
  }
}

/** HRQs and own usage per namespace, for a set of namespaces; per-namespace notes for what was not readable. */
export interface QuotaData {
  hrqs: Map<string, HierarchicalResourceQuota[]>;
  usage: Map<string, Quantities>;
  /** The singleton's spec.hard: the strictest limits HNC applies to the namespace (readable where HRQs above are not). */
  limits: Map<string, Quantities>;
  notes: Map<string, QuotaNote[]>;
  /** False when the cluster does not serve HRQs. */
  served: boolean;
}

/**
 * Loads the HRQs and singleton usage of `namespaces`: one cluster-wide list of each when the user
 * may (and the set is not tiny), else one request per namespace.
 */
export async function loadQuotas(
  api: HncApi,
  namespaces: readonly string[],
  /** Whose own usage (singleton) is needed; the others' HRQs only (default: all). */
  usageOf: ReadonlySet<string> = new Set(namespaces),
): Promise<QuotaData> {
  const data: QuotaData = { hrqs: new Map(), usage: new Map(), limits: new Map(), notes: new Map(), served: true };
  const note = (ns: string, n: QuotaNote) => data.notes.set(ns, [...(data.notes.get(ns) ?? []), n]);
  const wanted = new Set(namespaces);
  const keep = (o: AnyObject) => {
    const rq = o as {
      metadata?: { namespace?: string };
      spec?: { hard?: Record<string, string> };
      status?: { used?: Record<string, string> };
    };
    const ns = rq.metadata?.namespace ?? '';
    data.usage.set(ns, parseResourceList(rq.status?.used).quantities);
    data.limits.set(ns, parseResourceList(rq.spec?.hard).quantities);
  };
  if (namespaces.length > 3) {
    const [hrqs, rqs] = await Promise.all([
      read(api.listAll(HRQ_TYPE, undefined), 'list HierarchicalResourceQuotas'),
      read(api.listAll(RQ_TYPE, undefined, { fieldSelector: `metadata.name=${HRQ_RESOURCE_QUOTA_NAME}` }), 'list ResourceQuotas'),
    ]);
    if (!hrqs.ok && 'absent' in hrqs) return { ...data, served: false };
    if (hrqs.ok && rqs.ok) {
      for (const o of hrqs.value.items) {
        const ns = o.metadata?.namespace ?? '';
        if (wanted.has(ns)) data.hrqs.set(ns, [...(data.hrqs.get(ns) ?? []), o as unknown as HierarchicalResourceQuota]);
      }
      for (const o of rqs.value.items) if (usageOf.has(o.metadata?.namespace ?? '')) keep(o);
      return data;
    }
  }
  // Namespace by namespace, a few dozen requests at a time (kubectl-plugin/concurrency.ts).
  await mapLimit(namespaces, PER_NAMESPACE_CONCURRENCY / 2, async (ns) => {
    const [hrqs, rq] = await Promise.all([
      read(api.listObjects(ns, HRQ_TYPE), `list the HierarchicalResourceQuotas in ${ns}`),
      usageOf.has(ns)
        ? read(api.getObject(ns, RQ_TYPE, HRQ_RESOURCE_QUOTA_NAME), `read the ResourceQuota ${HRQ_RESOURCE_QUOTA_NAME} in ${ns}`)
        : ({ ok: true, value: undefined } as const),
    ]);
    if (hrqs.ok) {
      if (hrqs.value.length) data.hrqs.set(ns, hrqs.value as unknown as HierarchicalResourceQuota[]);
    } else if ('absent' in hrqs) data.served = false;
    else note(ns, hrqs.note);
    if (rq.ok) {
      if (rq.value) keep(rq.value);
    } else if ('note' in rq) note(ns, rq.note);
  });
  return data;
}

const byName = (a: { namespace: string; name: string }, b: { namespace: string; name: string }) =>
  a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name);

export async function loadDescribeQuotas(api: HncApi, ns: Namespace): Promise<DescribeQuotas | undefined> {
  const name = ns.metadata.name ?? '';
  const ancestors = ancestorsOf(ns);
  const data = await loadQuotas(api, [name, ...ancestors], new Set([name]));
  if (!data.served) return undefined;
  const views = (n: string) => (data.hrqs.get(n) ?? []).map(hrqView).sort(byName);
  const here = views(name);
  // Nearest ancestor first: the order in which they enclose the namespace.
  const above = ancestors.flatMap(views);
  const notes = [name, ...ancestors].flatMap((n) => data.notes.get(n) ?? []);
  const hard = data.limits.get(name);
  // HNC keeps the singleton in every namespace some HRQ applies to: when it is readable and absent,
  // none applies, and HRQs above that could not be read are no news.
  const singletonAbsent = !hard && !(data.notes.get(name) ?? []).some((n) => n.includes(HRQ_RESOURCE_QUOTA_NAME));
  if (!here.length && !above.length && (singletonAbsent || (!notes.length && !hard?.size))) return undefined;
  const limited = new Set([
    ...[name, ...ancestors].flatMap((n) => (data.hrqs.get(n) ?? []).flatMap((h) => Object.keys(h.status?.hard ?? h.spec?.hard ?? {}))),
    ...(hard?.keys() ?? []),
  ]);
  const own = data.usage.get(name);
  const used = own && limited.size ? usageText(own, limited) : undefined;
  // When some HRQ above could not be read, the singleton still says which limits apply.
  const limits = hard?.size && notes.length ? usageText(hard, new Set(hard.keys())) : undefined;
  return { here, above, ...(limits !== undefined ? { limits } : {}), ...(used !== undefined ? { used } : {}), notes };
}

/** `<resource>: <quantity>` for each limited resource, sorted ("0" for none used). */
export function usageText(used: Quantities, resources: ReadonlySet<string>): string {
  const shown = new Map<string, Quantity>();
  for (const r of resources) shown.set(r, used.get(r) ?? ZERO);
  return Object.entries(resourceListText(shown))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([r, q]) => `${r}: ${q}`)
    .join(', ');
}

/**
 * `tree --quota`: what to print after each namespace. A namespace with HRQs shows each,
 * `[name: resource used/hard, ...]` from its status; one without shows its subtree's usage of the
 * resources limited at or above it, summed from the singletons, `(resource used, ...)`.
 */
export function quotaSuffixes(
  trees: readonly TreeNode[],
  data: QuotaData,
  limitedAbove: ReadonlyMap<string, ReadonlySet<string>>,
): Map<string, string> {
  const out = new Map<string, string>();
  const subtreeUsage = (node: TreeNode): Map<string, Quantity> => {
    const sum = new Map<string, Quantity>(data.usage.get(node.name) ?? []);
    for (const c of node.children) for (const [r, q] of subtreeUsage(c)) sum.set(r, addQuantities(sum.get(r) ?? ZERO, q));
    return sum;
  };
  const walk = (node: TreeNode, limited: ReadonlySet<string>) => {
    const hrqs = data.hrqs.get(node.name) ?? [];
    const here = new Set([...limited, ...hrqs.flatMap((h) => Object.keys(h.status?.hard ?? h.spec?.hard ?? {}))]);
    const parts: string[] = [];
    if (hrqs.length)
      parts.push(
        ...hrqs
          .map(hrqView)
          .sort(byName)
          .map((v) => `[${v.name}: ${v.usage.replace(/: /g, ' ') || 'no limits'}]`),
      );
    else if (here.size) {
      const used = subtreeUsage(node);
      parts.push(
        `(${[...here]
          .sort()
          .map((r) => `${r} ${formatQuantity(used.get(r) ?? ZERO)}`)
          .join(', ')})`,
      );
    }
    const notes = data.notes.get(node.name);
    if (notes?.length) parts.push(`(${notes.join('; ')})`);
    if (parts.length) out.set(node.name, parts.join(' '));
    for (const c of node.children) walk(c, here);
  };
  for (const t of trees) walk(t, limitedAbove.get(t.name) ?? new Set());
  return out;
}

/** Loads what `tree --quota` needs for the printed trees (and the HRQs above their roots). */
export async function loadTreeQuotas(api: HncApi, trees: readonly TreeNode[]): Promise<Map<string, string> | undefined> {
  const names: string[] = [];
  const visit = (n: TreeNode) => {
    if (!n.problem) names.push(n.name);
    n.children.forEach(visit);
  };
  trees.forEach(visit);
  const rootAncestors = new Map<string, string[]>();
  for (const t of trees) {
    const ns = await api
      .getNamespace(t.name)
      .catch((err: unknown) => (isForbidden(err) || isNotFound(err) ? undefined : Promise.reject(err)));
    rootAncestors.set(t.name, ns ? ancestorsOf(ns) : []);
  }
  const data = await loadQuotas(api, [...new Set([...names, ...[...rootAncestors.values()].flat()])], new Set(names));
  if (!data.served) return undefined;
  const limitedAbove = new Map<string, Set<string>>();
  for (const [root, ancestors] of rootAncestors)
    // Above a root: its ancestors' HRQs, or (when those cannot be read) its singleton's limits.
    limitedAbove.set(
      root,
      new Set([
        ...ancestors.flatMap((a) => (data.hrqs.get(a) ?? []).flatMap((h) => Object.keys(h.status?.hard ?? h.spec?.hard ?? {}))),
        ...(ancestors.length ? (data.limits.get(root)?.keys() ?? []) : []),
      ]),
    );
  return quotaSuffixes(trees, data, limitedAbove);
}
