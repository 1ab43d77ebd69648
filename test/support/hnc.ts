// Small verbs over the HNC API for integration tests, so that cases read like their descriptions.
import { API_VERSION, Kind, Singleton } from '../../core/api/constants.js';
import type { HierarchyConfiguration, SubnamespaceAnchor } from '../../core/api/types.js';
import { isNotFound, type KubeClient } from '../../kube/client.js';
import { anchorPath, hierarchyConfigurationPath } from '../../core/api/paths.js';

export async function getHierarchy(client: KubeClient, ns: string): Promise<HierarchyConfiguration | undefined> {
  return client
    .get<HierarchyConfiguration>(hierarchyConfigurationPath(ns, Singleton.hierarchy))
    .catch((e: unknown) => (isNotFound(e) ? undefined : Promise.reject(e)));
}

/** Edits a namespace's HierarchyConfiguration (creating it if absent), as a user would. */
export async function editHierarchy(
  client: KubeClient,
  ns: string,
  edit: (spec: NonNullable<HierarchyConfiguration['spec']>) => void,
): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const hc = (await getHierarchy(client, ns)) ?? {
      apiVersion: API_VERSION,
      kind: Kind.HierarchyConfiguration,
      metadata: { name: Singleton.hierarchy, namespace: ns },
    };
    hc.spec = hc.spec ?? {};
    edit(hc.spec);
    try {
      if (hc.metadata.resourceVersion) await client.replace(hierarchyConfigurationPath(ns, Singleton.hierarchy), hc);
      else await client.create(hierarchyConfigurationPath(ns), hc);
      return;
    } catch (err) {
      // The controller writes the same object (status): retry on a conflict, as kubectl would. A
      // namespace created a moment ago that HNC has not seen yet is refused with a 503 that says
      // to try again in a few moments: so do, as a user would.
      const code = (err as { code?: number }).code;
      if (code === 503 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      else if (code !== 409) throw err;
    }
  }
}

export const setParent = (client: KubeClient, ns: string, parent: string | undefined): Promise<void> =>
  editHierarchy(client, ns, (spec) => {
    if (parent) spec.parent = parent;
    else delete spec.parent;
  });

export async function createAnchor(
  client: KubeClient,
  parent: string,
  child: string,
  spec: SubnamespaceAnchor['spec'] = {},
): Promise<void> {
  await client.create(anchorPath(parent), {
    apiVersion: API_VERSION,
    kind: Kind.SubnamespaceAnchor,
    metadata: { name: child, namespace: parent },
    spec,
  });
}

export async function getAnchor(client: KubeClient, parent: string, child: string): Promise<SubnamespaceAnchor | undefined> {
  return client.get<SubnamespaceAnchor>(anchorPath(parent, child)).catch((e: unknown) => (isNotFound(e) ? undefined : Promise.reject(e)));
}

export async function namespaceLabels(client: KubeClient, ns: string): Promise<Record<string, string> | undefined> {
  const obj = await client
    .get<{ metadata: { labels?: Record<string, string> } }>(`/api/v1/namespaces/${ns}`)
    .catch((e: unknown) => (isNotFound(e) ? undefined : Promise.reject(e)));
  return obj?.metadata.labels;
}

/** Only the tree labels of a namespace, as `{ancestor: depth}`. */
export async function treeDepths(client: KubeClient, ns: string): Promise<Record<string, number> | undefined> {
  const labels = await namespaceLabels(client, ns);
  if (!labels) return undefined;
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(labels)) {
    const m = /^(.+)\.tree\.hnc\.x-k8s\.io\/depth$/.exec(k);
    if (m) out[m[1]!] = Number(v);
  }
  return out;
}

/** The reasons of a namespace's conditions, as "Type/Reason: message". */
export async function conditions(client: KubeClient, ns: string): Promise<string[]> {
  const hc = await getHierarchy(client, ns);
  return (hc?.status?.conditions ?? []).map((c) => `${c.type}/${c.reason}: ${c.message}`);
}

export async function namespaceExists(client: KubeClient, ns: string): Promise<boolean> {
  return client.get(`/api/v1/namespaces/${ns}`).then(
    () => true,
    (e: unknown) => (isNotFound(e) ? false : Promise.reject(e)),
  );
}

/**
 * A dry-run anchor in kube-system, which HNC excludes: once the API server calls HNC's webhooks,
 * creating it is refused by the anchors' webhook (and, being a dry run, never stored).
 */
export const WEBHOOK_PROBE_ANCHOR = JSON.stringify({
  apiVersion: API_VERSION,
  kind: Kind.SubnamespaceAnchor,
  metadata: { name: 'probe', namespace: 'kube-system' },
});
