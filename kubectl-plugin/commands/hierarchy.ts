// Reading and writing a namespace's HierarchyConfiguration the way HNC's plugin does: the
// namespace must exist, a missing HC is an empty one, and writing creates it if it was missing.
import { API_VERSION, Singleton, type HierarchyConfiguration } from '../../core/api/index.js';
import type { HncApi } from '../api.js';

export interface LoadedHierarchy {
  hc: HierarchyConfiguration;
  /** False when the namespace had no HierarchyConfiguration (it will be created on write). */
  exists: boolean;
}

export async function readHierarchy(api: HncApi, namespace: string): Promise<LoadedHierarchy> {
  await api.getNamespace(namespace);
  const hc = await api.getHierarchy(namespace);
  if (hc) return { hc, exists: true };
  return {
    hc: { apiVersion: API_VERSION, kind: 'HierarchyConfiguration', metadata: { name: Singleton.hierarchy, namespace }, spec: {} },
    exists: false,
  };
}

export async function writeHierarchy(api: HncApi, loaded: LoadedHierarchy): Promise<void> {
  if (loaded.exists) await api.replaceHierarchy(loaded.hc);
  else await api.createHierarchy(loaded.hc);
}
