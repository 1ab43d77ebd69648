// Maps a group/version/kind (or group/resource) to its REST path, from the API server's discovery.
import type { ApiResource } from '../core/api/types.js';
import type { Resolve, TypeInfo } from '../core/config/plan.js';
import { isNotFound, segment, type KubeClient } from './client.js';

interface ResourceList {
  groupVersion: string;
  resources: ApiResource[];
}

export class Discovery {
  private readonly cache = new Map<string, Promise<TypeInfo[]>>();

  constructor(private readonly client: KubeClient) {}

  /** The resources of one group version (cached; call forget() after CRDs change). */
  resources(group: string, version: string): Promise<TypeInfo[]> {
    const gv = group ? `${group}/${version}` : version;
    let p = this.cache.get(gv);
    if (!p) {
      const path = group ? `/apis/${segment(group)}/${segment(version)}` : `/api/${segment(version)}`;
      p = this.client
        .get<ResourceList>(path)
        .then((l) =>
          l.resources
            .filter((r) => !r.name.includes('/'))
            .map((r) => ({ group, version, resource: r.name, kind: r.kind, namespaced: r.namespaced })),
        );
      p.catch(() => this.cache.delete(gv));
      this.cache.set(gv, p);
    }
    return p;
  }

  forget(): void {
    this.cache.clear();
  }

  /**
   * A resolver of group/resource pairs over the groups named, from discovery fetched now (what was
   * cached is forgotten: a CRD may have come or gone). The one resolver of the project: the
   * HNCConfiguration reconciler and its webhook must agree on what a configuration names.
   */
  async resolver(groups: Iterable<string>): Promise<Resolve> {
    this.forget();
    const byGroup = new Map<string, GroupDiscovery>();
    for (const group of new Set(groups)) {
      try {
        const version =
          group === ''
            ? 'v1'
            : (await this.client.get<{ preferredVersion?: { version: string } }>(`/apis/${segment(group)}`)).preferredVersion?.version;
        if (!version) throw new Error(`no preferred version for group "${group}"`);
        byGroup.set(group, await this.resources(group, version));
      } catch (err) {
        byGroup.set(group, isNotFound(err) ? [] : { error: `discovery of group "${group}" failed: ${(err as Error).message}` });
      }
    }
    return resolveFrom(byGroup);
  }

  async forKind(apiVersion: string, kind: string): Promise<TypeInfo> {
    const [group, version] = apiVersion.includes('/') ? (apiVersion.split('/') as [string, string]) : ['', apiVersion];
    const r = (await this.resources(group, version)).find((x) => x.kind === kind);
    if (!r) throw new Error(`the API server does not serve kind ${kind} in ${apiVersion}`);
    return r;
  }
}

/** The collection path of a resource, in a namespace when it is namespaced. */
export function collectionPath(r: Pick<TypeInfo, 'group' | 'version' | 'resource' | 'namespaced'>, namespace?: string): string {
  const base = r.group ? `/apis/${segment(r.group)}/${segment(r.version)}` : `/api/${segment(r.version)}`;
  return r.namespaced && namespace ? `${base}/namespaces/${segment(namespace)}/${segment(r.resource)}` : `${base}/${segment(r.resource)}`;
}

/** What discovery of one group found: its resources, or why it could not tell. */
export type GroupDiscovery = readonly TypeInfo[] | { error: string };

/**
 * Resolves a group/resource from discovery results. A group the API server does not serve (404,
 * found empty) resolves to kubectl's "no matches"; a group whose discovery failed otherwise (an
 * aggregated API that is down, a 403) resolves to that failure, so callers report it rather than
 * take it for absence.
 */
export function resolveFrom(byGroup: ReadonlyMap<string, GroupDiscovery>): Resolve {
  return (group, resource) => {
    const found = byGroup.get(group);
    if (found && 'error' in found) return { error: found.error };
    return found?.find((r) => r.resource === resource) ?? { error: `no matches for ${group}/, Resource=${resource}` };
  };
}
