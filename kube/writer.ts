// The one door every controller write goes through: it applies the client-side QPS limit and
// counts writes, so "writes = minimum" is measured in one place.
//
// The limit is per resource type, as HNC's: its client makes one REST client, with its own rate
// limiter, per kind, so `--apiserver-qps-throttle 50` lets it write 50 namespaces, 50 Roles and
// 50 RoleBindings a second at once (docs/behaviour.md, flags). One budget shared by every type
// would make the same flag value slower than HNC's.
import type { KubeClient, RequestOptions } from './client.js';
import { TokenBucket } from './watch/ratelimit.js';
import type { DeleteOptions, WriteOptions, WriteVerb, Writes } from './writes.js';

export type { WriteVerb } from './writes.js';

export interface WriterOptions {
  /** Writes per second, for each resource type separately (default 50). */
  qps?: number;
  /** Each type's bucket size (default 1.5 × qps). */
  burst?: number;
  /** Called after every write attempt, e.g. for metrics. */
  onWrite?: (verb: WriteVerb, path: string, ok: boolean) => void;
}

const RECENT = 32;

/**
 * The Accept header that makes the API server answer a write with the stored object's metadata
 * only: it honours `as=PartialObjectMetadata` on the answers of POST, PUT and PATCH as on reads
 * (test/integration/writer.test.ts; without `g=meta.k8s.io` it refuses with 406). Plain JSON is
 * the fallback, for a server that cannot (an aggregated API): the answer is then the whole object,
 * which has the same metadata.
 */
export const METADATA_ONLY = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json';

export class Writer implements Writes {
  /** One token bucket per resource type ("group/resource"), made on its first write. */
  private readonly limiters = new Map<string, TokenBucket>();
  private readonly qps: number;
  private readonly burst: number;
  /** Write attempts by verb, successful or not. */
  readonly counts: Record<WriteVerb, number> = { create: 0, update: 0, patch: 0, delete: 0 };
  private readonly byResource = new Map<string, number>();
  /** The last RECENT write attempts ("verb path"), oldest first: says what a count that moved was. */
  private readonly recentWrites: string[] = [];

  /** The write attempts after the first `since` of them, as far back as the last RECENT ("verb path"). */
  writesSince(since: number): string[] {
    const n = this.total - since;
    if (n <= 0) return [];
    const kept = this.recentWrites.slice(-Math.min(n, RECENT));
    return n > RECENT ? [`(${n - RECENT} earlier not kept)`, ...kept] : kept;
  }

  /** Write attempts to one resource (e.g. "roles", "namespaces", "hierarchyconfigurations"). */
  writesTo(resource: string): number {
    return this.byResource.get(resource) ?? 0;
  }

  constructor(
    readonly client: KubeClient,
    private readonly opts: WriterOptions = {},
  ) {
    this.qps = opts.qps ?? 50;
    this.burst = opts.burst ?? Math.ceil(this.qps * 1.5);
    // Refused here, not at the first write.
    if (!(this.qps > 0) || !(this.burst >= 1))
      throw new Error(`the write limit needs qps > 0 and burst >= 1, got ${this.qps}/${this.burst}`);
  }

  get total(): number {
    return this.counts.create + this.counts.update + this.counts.patch + this.counts.delete;
  }

  create<T>(path: string, body: unknown, opts: WriteOptions = {}): Promise<T> {
    return this.write<T>('create', 'POST', path, { body, query: opts.query, accept: acceptFor(opts) });
  }

  /** PUT of a whole object; its metadata.resourceVersion makes it fail with 409 on a stale read. */
  replace<T>(path: string, body: unknown, opts: WriteOptions = {}): Promise<T> {
    return this.write<T>('update', 'PUT', path, { body, query: opts.query, accept: acceptFor(opts) });
  }

  mergePatch<T>(path: string, patch: unknown): Promise<T> {
    return this.write<T>('patch', 'PATCH', path, { body: patch, contentType: 'application/merge-patch+json' });
  }

  /** With preconditions, the object is deleted only if it still has that uid and resourceVersion. */
  delete<T>(path: string, opts: DeleteOptions = {}): Promise<T> {
    const body = opts.preconditions ? { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: opts.preconditions } : undefined;
    return this.write<T>('delete', 'DELETE', path, { query: opts.query, body });
  }

  private limiterFor(key: string): TokenBucket {
    let bucket = this.limiters.get(key);
    if (!bucket) this.limiters.set(key, (bucket = new TokenBucket({ qps: this.qps, burst: this.burst })));
    return bucket;
  }

  private async write<T>(verb: WriteVerb, method: string, path: string, opts: RequestOptions): Promise<T> {
    const { group, resource } = typeOf(path);
    // No wait (and no promise to await) while the type's budget has tokens: the common case.
    const wait = this.limiterFor(`${group}/${resource}`).reserve();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    this.counts[verb]++;
    this.byResource.set(resource, (this.byResource.get(resource) ?? 0) + 1);
    this.recentWrites.push(`${verb} ${path}`);
    if (this.recentWrites.length > RECENT) this.recentWrites.shift();
    try {
      const res = await this.client.request<T>(method, path, opts);
      this.opts.onWrite?.(verb, path, true);
      return res;
    } catch (err) {
      this.opts.onWrite?.(verb, path, false);
      throw err;
    }
  }
}

function acceptFor(opts: WriteOptions): string | undefined {
  return opts.answer === 'metadata' ? METADATA_ONLY : undefined;
}

/** The group and resource a REST path names, from one pass over its segments (every write asks). */
function typeOf(path: string): { group: string; resource: string } {
  const parts = path.split('/').filter(Boolean);
  const core = parts[0] !== 'apis';
  const group = core ? '' : (parts[1] ?? '');
  const at = core && parts[0] === 'api' ? 2 : 3;
  const resource = parts[at] === 'namespaces' && parts.length > at + 2 ? parts[at + 2]! : (parts[at] ?? '');
  return { group, resource };
}

/** The resource a REST path names: /api/v1/namespaces/x/roles/y -> roles; /api/v1/namespaces/x -> namespaces. */
export function resourceOf(path: string): string {
  return typeOf(path).resource;
}

/**
 * The type a write is rate-limited as: group and resource, subresources with their object
 * (a HierarchyConfiguration's status shares its type's budget, as in HNC).
 * /api/v1/namespaces/x/events -> "/events"; /apis/rbac.authorization.k8s.io/v1/namespaces/x/roles/y -> "rbac.authorization.k8s.io/roles".
 */
export function rateLimitKey(path: string): string {
  const { group, resource } = typeOf(path);
  return `${group}/${resource}`;
}
