// Server-side apply of YAML manifests (the CRDs, the manager's RBAC): objects this project owns.
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import type { KubeClient } from './client.js';
import { Discovery, collectionPath } from './discovery.js';

export const FIELD_MANAGER = 'hnc-ts';

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [k: string]: unknown };
  [k: string]: unknown;
}

export function readManifests(...files: string[]): Manifest[] {
  return files.flatMap((f) =>
    parseAllDocuments(readFileSync(f, 'utf8'))
      .map((d) => d.toJSON() as Manifest | null)
      .filter((m): m is Manifest => !!m && typeof m === 'object' && !!m.kind),
  );
}

/** Applies each manifest in order (namespaces first if listed first), as field manager hnc-ts. */
export async function applyManifests(client: KubeClient, manifests: Manifest[], discovery = new Discovery(client)): Promise<void> {
  for (const m of manifests) {
    const r = await discovery.forKind(m.apiVersion, m.kind);
    const path = `${collectionPath(r, m.metadata.namespace)}/${m.metadata.name}`;
    await client.request('PATCH', path, {
      body: m,
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: FIELD_MANAGER, force: true },
    });
  }
}
