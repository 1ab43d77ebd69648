// Maps a group/version/kind (or group/resource) to its REST path, from the API server's discovery.
import { segment, type KubeClient } from './client.js';

export interface ApiResource {
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
}

interface ResourceList {
  groupVersion: string;
  resources: Array<{ name: string; kind: string; namespaced: boolean; verbs: string[] }>;
}

export class Discovery {
  private readonly cache = new Map<string, Promise<ApiResource[]>>();

  constructor(private readonly client: KubeClient) {}

  /** The resources of one group version (cached; call forget() after CRDs change). */
  resources(group: string, version: string): Promise<ApiResource[]> {
    const gv = group ? `${group}/${version}` : version;
    let p = this.cache.get(gv);
    if (!p) {
      const path = group ? `/apis/${segment(group)}/${segment(version)}` : `/api/${segment(version)}`;
      p = this.client
        .get<ResourceList>(path)
        .then((l) =>
          l.resources
            .filter((r) => !r.name.includes('/'))
            .map((r) => ({ group, version, resource: r.name, kind: r.kind, namespaced: r.namespaced, verbs: r.verbs })),
        );
      p.catch(() => this.cache.delete(gv));
      this.cache.set(gv, p);
    }
    return p;
  }

  forget(): void {
    this.cache.clear();
  }

  async forKind(apiVersion: string, kind: string): Promise<ApiResource> {
    const [group, version] = apiVersion.includes('/') ? (apiVersion.split('/') as [string, string]) : ['', apiVersion];
    const r = (await this.resources(group, version)).find((x) => x.kind === kind);
    if (!r) throw new Error(`the API server does not serve kind ${kind} in ${apiVersion}`);
    return r;
  }
}

/** The collection path of a resource, in a namespace when it is namespaced. */
export function collectionPath(r: Pick<ApiResource, 'group' | 'version' | 'resource' | 'namespaced'>, namespace?: string): string {
  const base = r.group ? `/apis/${segment(r.group)}/${segment(r.version)}` : `/api/${segment(r.version)}`;
  return r.namespaced && namespace ? `${base}/namespaces/${segment(namespace)}/${segment(r.resource)}` : `${base}/${segment(r.resource)}`;
}
