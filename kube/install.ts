// Installs what the manager needs on a cluster it runs against without a deployment (the local
// control plane, tests): the CRDs, and the manager's least-privilege RBAC from deploy/.
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isNotFound, type KubeClient } from './client.js';
import { applyManifests, readManifests, type Manifest } from './apply.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const CRD_DIR = join(ROOT, 'crds');
export const MANAGER_RBAC = join(ROOT, 'deploy', 'rbac', 'manager.yaml');
export const AGGREGATED_ROLES = join(ROOT, 'deploy', 'rbac', 'aggregated-roles.yaml');
/** Optional: lets the manager propagate Secrets and ConfigMaps (HNC's quickstart kinds). */
export const SECRETS_CONFIGMAPS_GRANT = join(ROOT, 'deploy', 'optional', 'propagate-secrets-configmaps', 'clusterrole.yaml');
/** Optional, not least-privilege: lets the manager propagate any kind, as HNC's cluster-admin manager could. */
export const ANY_KIND_GRANT = join(ROOT, 'deploy', 'optional', 'propagate-any-kind', 'clusterrole.yaml');

/** The manager's identity: a service account, as in a cluster, so webhooks can exempt it. */
export const MANAGER_SERVICE_ACCOUNT = { namespace: 'hnc-system', name: 'hnc-controller-manager' } as const;
export const MANAGER_USER = `system:serviceaccount:${MANAGER_SERVICE_ACCOUNT.namespace}:${MANAGER_SERVICE_ACCOUNT.name}`;
export const MANAGER_GROUPS = ['system:serviceaccounts', `system:serviceaccounts:${MANAGER_SERVICE_ACCOUNT.namespace}`];

export function loadCrds(dir = CRD_DIR): Manifest[] {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
    .sort()
    .map((f) => join(dir, f));
  return readManifests(...files).filter((m) => m.kind === 'CustomResourceDefinition');
}

/** Applies the CRDs and waits until the API server serves them. */
export async function installCrds(client: KubeClient, opts: { dir?: string; timeoutMs?: number } = {}): Promise<string[]> {
  const crds = loadCrds(opts.dir);
  await applyManifests(client, crds);
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  for (const crd of crds) {
    for (;;) {
      const live = await client.get<{ status?: { conditions?: Array<{ type: string; status: string }> } }>(
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`,
      );
      if (live.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new Error(`CRD ${crd.metadata.name} was not Established within ${opts.timeoutMs ?? 60_000} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return crds.map((c) => c.metadata.name);
}

/** The manager's identity and ClusterRole, and HNC's kinds in the admin/edit/view roles. */
export async function installRbac(client: KubeClient, timeoutMs = 60_000): Promise<void> {
  await applyManifests(client, readManifests(MANAGER_RBAC, AGGREGATED_ROLES));
  // The manager's role is an aggregate: wait until the aggregation controller has filled it in.
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const role = await client.get<{ rules?: Array<{ resources?: string[] }> }>(
      '/apis/rbac.authorization.k8s.io/v1/clusterroles/hnc-manager-role',
    );
    const resources = new Set((role.rules ?? []).flatMap((r) => r.resources ?? []));
    if (resources.has('namespaces') && resources.has('rolebindings')) return;
    if (Date.now() > deadline)
      throw new Error('ClusterRole hnc-manager-role was not aggregated in time (is the clusterrole-aggregation controller running?)');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Grants the manager Secrets and ConfigMaps (`kubectl apply -k deploy/optional/propagate-secrets-configmaps`). */
export async function installSecretsConfigMapsGrant(client: KubeClient): Promise<void> {
  await applyManifests(client, readManifests(SECRETS_CONFIGMAPS_GRANT));
}

/** Grants the manager every kind (`kubectl apply -k deploy/optional/propagate-any-kind`; docs/deploy.md). */
export async function installAnyKindGrant(client: KubeClient): Promise<void> {
  await applyManifests(client, readManifests(ANY_KIND_GRANT));
}

/** Takes the every-kind grant back (`kubectl delete -k deploy/optional/propagate-any-kind`); nothing if absent. */
export async function removeAnyKindGrant(client: KubeClient): Promise<void> {
  for (const m of readManifests(ANY_KIND_GRANT))
    await client.delete(`/apis/rbac.authorization.k8s.io/v1/clusterroles/${m.metadata.name}`).catch((e: unknown) => {
      if (!isNotFound(e)) throw e;
    });
}
