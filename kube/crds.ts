// Installs the HNC CRDs from crds/ by server-side apply and waits until the API server serves them.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import type { KubeClient } from './client.js';

export const CRD_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'crds');
const FIELD_MANAGER = 'hnc-ts';

interface Crd {
  metadata: { name: string };
  kind: string;
  status?: { conditions?: Array<{ type: string; status: string }> };
}

export function loadCrds(dir = CRD_DIR): Crd[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
    .sort()
    .flatMap((f) => parseAllDocuments(readFileSync(join(dir, f), 'utf8')).map((d) => d.toJSON() as Crd))
    .filter((d) => d?.kind === 'CustomResourceDefinition');
}

export async function installCrds(client: KubeClient, opts: { dir?: string; timeoutMs?: number } = {}): Promise<string[]> {
  const crds = loadCrds(opts.dir);
  for (const crd of crds) {
    await client.request('PATCH', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`, {
      body: crd,
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: FIELD_MANAGER, force: true },
    });
  }
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  for (const crd of crds) {
    for (;;) {
      const live = await client.get<Crd>(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`);
      if (live.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new Error(`CRD ${crd.metadata.name} was not Established within ${opts.timeoutMs ?? 60_000} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return crds.map((c) => c.metadata.name);
}
