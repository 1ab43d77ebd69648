// What `kubectl hns get RESOURCE` means by RESOURCE, found as kubectl finds it: the plural, the
// singular, the kind or a short name, optionally followed by `.group` or `.version.group`; the
// core group wins a tie. Discovery is kept in --cache-dir (kubectl's $HOME/.kube/cache by default)
// for ten minutes, and asked again when a name is not found there.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { ApiResource, HncApi, ResourceType } from '../api.js';
import { CliError } from '../errors.js';

export interface FoundResource extends ResourceType {
  kind: string;
  namespaced: boolean;
  singular: string;
  shortNames: string[];
}

const CACHE_TTL_MS = 10 * 60_000;

export const defaultCacheDir = (): string => join(homedir(), '.kube', 'cache');

function toFound(group: string, version: string, r: ApiResource): FoundResource {
  return {
    group,
    version,
    resource: r.name,
    kind: r.kind,
    namespaced: r.namespaced,
    singular: r.singularName || r.kind.toLowerCase(),
    shortNames: r.shortNames ?? [],
  };
}

/** Every resource the server serves (subresources left out); a group that fails is skipped. */
export async function discoverAll(api: HncApi): Promise<FoundResource[]> {
  const [core, groups] = await Promise.all([api.listApiResources('', 'v1'), api.listApiGroups()]);
  const perGroup = await Promise.all(
    groups.map(async (g) => {
      try {
        return (await api.listApiResources(g.group, g.version)).map((r) => toFound(g.group, g.version, r));
      } catch {
        // An aggregated API that is down must not break every other lookup; kubectl skips it too.
        return [];
      }
    }),
  );
  return [...core.map((r) => toFound('', 'v1', r)), ...perGroup.flat()];
}

/** The resources matching what the user typed, best first. */
export function matchResource(resources: readonly FoundResource[], typed: string): FoundResource | undefined {
  const t = typed.toLowerCase();
  const matches = (r: FoundResource, name: string): boolean =>
    name === r.resource || name === r.singular || name === r.kind.toLowerCase() || r.shortNames.includes(name);
  for (const r of resources) if (matches(r, t)) return r;
  // `name.group` or `name.version.group`.
  for (const r of resources) {
    if (!r.group) continue;
    if (t.endsWith(`.${r.group}`)) {
      const head = t.slice(0, -(r.group.length + 1));
      if (matches(r, head)) return r;
      if (head.endsWith(`.${r.version}`) && matches(r, head.slice(0, -(r.version.length + 1)))) return r;
    }
  }
  if (t.endsWith('.v1')) {
    const head = t.slice(0, -3);
    return resources.find((r) => r.group === '' && matches(r, head));
  }
  return undefined;
}

interface CacheFile {
  server: string;
  fetchedAt: number;
  resources: FoundResource[];
}

function cachePath(cacheDir: string, server: string): string {
  return join(cacheDir, 'hns-discovery', `${server.replace(/^https?:\/\//, '').replace(/[^A-Za-z0-9.-]/g, '_')}.json`);
}

function readCache(cacheDir: string, server: string, now: number): FoundResource[] | undefined {
  try {
    const c = JSON.parse(readFileSync(cachePath(cacheDir, server), 'utf8')) as CacheFile;
    if (c.server !== server || now - c.fetchedAt > CACHE_TTL_MS || !Array.isArray(c.resources)) return undefined;
    return c.resources;
  } catch {
    return undefined;
  }
}

function writeCache(cacheDir: string, server: string, resources: FoundResource[], now: number): void {
  const file = cachePath(cacheDir, server);
  try {
    mkdirSync(join(cacheDir, 'hns-discovery'), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ server, fetchedAt: now, resources } satisfies CacheFile));
    renameSync(tmp, file);
  } catch {
    // A cache that cannot be written only costs the next run a discovery.
  }
}

export async function resolveResource(api: HncApi, typed: string, cacheDir = defaultCacheDir(), now = Date.now()): Promise<FoundResource> {
  const cached = readCache(cacheDir, api.server, now);
  const fromCache = cached && matchResource(cached, typed);
  if (fromCache) return fromCache;
  const fresh = await discoverAll(api);
  writeCache(cacheDir, api.server, fresh, now);
  const found = matchResource(fresh, typed);
  if (!found) throw new CliError(`Error: the server doesn't have a resource type "${typed}"`);
  return found;
}
