// Checks by listing, independent of the watches that time the phases: every namespace's labels,
// every HierarchyConfiguration and every copy as expected; and which objects a phase changed
// (resourceVersions before and after), which a warm restart must leave alone.
import type { KubeClient } from '../kube/client.js';
import { hncCollectionPath, hncConfigurationPath } from '../core/api/paths.js';
import { collection, INHERITED_FROM } from './tracker.js';
import { hierarchySignature, labelSignature, SOURCE_KINDS, type Expected } from './topology.js';

export async function listAll<T>(client: KubeClient, path: string, query: Record<string, string> = {}): Promise<T[]> {
  const items: T[] = [];
  let cont: string | undefined;
  do {
    const page = await client.get<{ items: T[]; metadata: { continue?: string } }>(path, { ...query, limit: 2000, continue: cont });
    items.push(...page.items);
    cont = page.metadata.continue || undefined;
  } while (cont);
  return items;
}

export interface Verification {
  ok: boolean;
  namespacesWrong: number;
  hierarchiesWrong: number;
  copiesMissing: number;
  copiesUnexpected: number;
}

export async function verifyByListing(admin: KubeClient, expected: Expected): Promise<Verification> {
  const nss = await listAll<{ metadata: { name: string; labels?: Record<string, string> } }>(admin, '/api/v1/namespaces');
  const labels = new Map(nss.map((n) => [n.metadata.name, labelSignature(n.metadata.labels)]));
  let namespacesWrong = 0;
  for (const [ns, sig] of expected.labels) if (labels.get(ns) !== sig) namespacesWrong++;
  const hcs = await listAll<{ metadata: { namespace: string }; status?: { children?: string[]; conditions?: unknown[] } }>(
    admin,
    hncCollectionPath('hierarchyconfigurations'),
  );
  const hcSig = new Map(hcs.map((h) => [h.metadata.namespace, hierarchySignature(h)]));
  let hierarchiesWrong = 0;
  for (const [ns, sig] of expected.hierarchy) if ((hcSig.get(ns) ?? hierarchySignature(undefined)) !== sig) hierarchiesWrong++;
  const seen = new Map<string, string>();
  for (const kind of SOURCE_KINDS) {
    for (const o of await listAll<{ metadata: { namespace: string; name: string; labels: Record<string, string> } }>(
      admin,
      collection(kind),
      { labelSelector: INHERITED_FROM },
    )) {
      seen.set(`${kind}/${o.metadata.namespace}/${o.metadata.name}`, o.metadata.labels[INHERITED_FROM]!);
    }
  }
  let copiesMissing = 0;
  for (const [k, from] of expected.copies) if (seen.get(k) !== from) copiesMissing++;
  let copiesUnexpected = 0;
  for (const k of seen.keys()) if (!expected.copies.has(k) && expected.labels.has(k.split('/')[1]!)) copiesUnexpected++;
  const ok = namespacesWrong + hierarchiesWrong + copiesMissing + copiesUnexpected === 0;
  return { ok, namespacesWrong, hierarchiesWrong, copiesMissing, copiesUnexpected };
}

/** uid -> resourceVersion of everything HNC could write. */
export async function versions(admin: KubeClient): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const paths = [
    '/api/v1/namespaces',
    hncCollectionPath('hierarchyconfigurations'),
    hncConfigurationPath(),
    ...SOURCE_KINDS.map((k) => collection(k)),
    '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
    '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
    '/api/v1/namespaces/hnc-system/secrets',
  ];
  for (const p of paths)
    for (const o of await listAll<{ metadata: { uid: string; resourceVersion: string } }>(admin, p))
      out.set(o.metadata.uid, o.metadata.resourceVersion);
  return out;
}

export function versionDiff(a: Map<string, string>, b: Map<string, string>): { changed: number; created: number; deleted: number } {
  let changed = 0;
  let created = 0;
  let deleted = 0;
  for (const [uid, rv] of b) {
    const old = a.get(uid);
    if (old === undefined) created++;
    else if (old !== rv) changed++;
  }
  for (const uid of a.keys()) if (!b.has(uid)) deleted++;
  return { changed, created, deleted };
}
