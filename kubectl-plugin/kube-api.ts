// HncApi over the project's KubeClient (kube/client.ts). Loaded lazily with connection.ts, which
// may pull in @kubernetes/client-node, so `--help` and argument errors never pay for either.
import { ApiError, type KubeClient, type RequestOptions } from '../kube/client.js';
import { Plural, Singleton, anchorPath, hierarchyConfigurationPath, hncCollectionPath, hncConfigurationPath } from '../core/api/index.js';
import type {
  HNCConfiguration,
  HierarchyConfiguration,
  HierarchyConfigurationList,
  SubnamespaceAnchor,
  SubnamespaceAnchorList,
} from '../core/api/index.js';
import type { IncomingMessage } from 'node:http';
import type {
  AnyObject,
  ApiGroupVersion,
  ApiResource,
  HncApi,
  KubeEvent,
  ListOptions,
  Namespace,
  ObjectList,
  ResourceType,
  Table,
  WatchEvent,
  WatchOptions,
  WriteOptions,
} from './api.js';
import { ConnectionError, ServerError, isNotFound } from './errors.js';
import { ListReader, type ListHeader, type ListItem } from './list-json.js';

const seg = encodeURIComponent;

interface List<T> {
  kind?: string;
  items?: T[];
}

export class KubeHncApi implements HncApi {
  constructor(
    private readonly client: KubeClient,
    /** Per-request timeout in ms; 0 means none. */
    private readonly timeoutMs: number,
  ) {}

  get server(): string {
    return this.client.server;
  }

  private async call<T>(method: string, path: string, opts: Omit<RequestOptions, 'timeoutMs'> = {}): Promise<T> {
    try {
      return await this.client.request<T>(method, path, { ...opts, timeoutMs: this.timeoutMs });
    } catch (err) {
      if (err instanceof ApiError) {
        const message =
          err.status?.message || `the server answered ${err.code} ${err.status?.reason ?? ''} to ${method} ${path}`.replace(/\s+/g, ' ');
        throw new ServerError(err.code, message, err.status?.reason);
      }
      throw new ConnectionError(this.client.server, describeNetworkError(err, this.timeoutMs));
    }
  }

  private async orUndefined<T>(p: Promise<T>): Promise<T | undefined> {
    try {
      return await p;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  getNamespace(name: string): Promise<Namespace> {
    return this.call('GET', `/api/v1/namespaces/${seg(name)}`);
  }
  async listNamespaces(labelSelector?: string): Promise<Namespace[]> {
    return (await this.call<List<Namespace>>('GET', '/api/v1/namespaces', { query: { labelSelector } })).items ?? [];
  }

  async countNamespaces(): Promise<number | undefined> {
    const page = await this.call<List<Namespace> & { metadata?: { remainingItemCount?: number; continue?: string } }>(
      'GET',
      '/api/v1/namespaces',
      { query: { limit: 1 } },
    );
    const more = page.metadata?.remainingItemCount;
    if (page.metadata?.continue && more === undefined) return undefined;
    return (page.items?.length ?? 0) + (more ?? 0);
  }

  getHierarchy(namespace: string): Promise<HierarchyConfiguration | undefined> {
    return this.orUndefined(this.call('GET', hierarchyConfigurationPath(namespace, Singleton.hierarchy)));
  }
  async listHierarchies(): Promise<HierarchyConfiguration[]> {
    return (await this.call<HierarchyConfigurationList>('GET', hncCollectionPath(Plural.HierarchyConfiguration))).items ?? [];
  }
  createHierarchy(hc: HierarchyConfiguration, opts: WriteOptions = {}): Promise<HierarchyConfiguration> {
    return this.call('POST', hierarchyConfigurationPath(hc.metadata.namespace ?? ''), { body: hc, query: dryRunQuery(opts) });
  }
  replaceHierarchy(hc: HierarchyConfiguration, opts: WriteOptions = {}): Promise<HierarchyConfiguration> {
    return this.call('PUT', hierarchyConfigurationPath(hc.metadata.namespace ?? '', Singleton.hierarchy), {
      body: hc,
      query: dryRunQuery(opts),
    });
  }

  async listAnchors(namespace: string): Promise<SubnamespaceAnchor[]> {
    return (await this.call<SubnamespaceAnchorList>('GET', anchorPath(namespace))).items ?? [];
  }
  createAnchor(anchor: SubnamespaceAnchor, opts: WriteOptions = {}): Promise<SubnamespaceAnchor> {
    return this.call('POST', anchorPath(anchor.metadata.namespace ?? ''), { body: anchor, query: dryRunQuery(opts) });
  }
  async deleteAnchor(namespace: string, name: string, opts: WriteOptions = {}): Promise<void> {
    await this.call('DELETE', anchorPath(namespace, name), { query: dryRunQuery(opts) });
  }

  async accessReview(user: string, groups: readonly string[], verb: string, group: string, resource: string): Promise<boolean | undefined> {
    try {
      const review = await this.call<{ status?: { allowed?: boolean } }>('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: { user, groups, resourceAttributes: { verb, group, resource } },
        },
      });
      return review.status?.allowed === true;
    } catch {
      return undefined;
    }
  }

  getHncConfiguration(): Promise<HNCConfiguration | undefined> {
    return this.orUndefined(this.call('GET', hncConfigurationPath(Singleton.config)));
  }
  createHncConfiguration(config: HNCConfiguration): Promise<HNCConfiguration> {
    return this.call('POST', hncConfigurationPath(), { body: config });
  }
  replaceHncConfiguration(config: HNCConfiguration): Promise<HNCConfiguration> {
    return this.call('PUT', hncConfigurationPath(Singleton.config), { body: config });
  }

  async listEvents(namespace: string): Promise<KubeEvent[]> {
    return (await this.call<List<KubeEvent>>('GET', `/api/v1/namespaces/${seg(namespace)}/events`)).items ?? [];
  }

  private typePath(namespace: string, type: ResourceType, name?: string): string {
    const base = groupVersionPath(type.group, type.version);
    return `${base}/namespaces/${seg(namespace)}/${seg(type.resource)}${name === undefined ? '' : `/${seg(name)}`}`;
  }
  async listObjects(namespace: string, type: ResourceType, labelSelector?: string): Promise<AnyObject[]> {
    const list = await this.call<List<AnyObject>>('GET', this.typePath(namespace, type), { query: { labelSelector } });
    // List items come without their kind; the list's kind ("RoleList") gives it.
    const kind = list.kind?.endsWith('List') ? list.kind.slice(0, -'List'.length) : type.kind;
    return (list.items ?? []).map((o) => (o.kind || !kind ? o : { ...o, kind }));
  }
  getObject(namespace: string, type: ResourceType, name: string): Promise<AnyObject | undefined> {
    return this.orUndefined(this.call('GET', this.typePath(namespace, type, name)));
  }
  async listApiResources(group: string, version: string): Promise<ApiResource[]> {
    const list = await this.call<{ resources?: ApiResource[] }>('GET', groupVersionPath(group, version));
    return (list.resources ?? []).filter((r) => !r.name.includes('/'));
  }

  async listApiGroups(): Promise<ApiGroupVersion[]> {
    const list = await this.call<{
      groups?: Array<{ name: string; preferredVersion?: { version: string }; versions?: Array<{ version: string }> }>;
    }>('GET', '/apis');
    return (list.groups ?? []).map((g) => ({ group: g.name, version: g.preferredVersion?.version ?? g.versions?.[0]?.version ?? 'v1' }));
  }

  private listPath(type: ResourceType, namespace: string | undefined): string {
    const base = groupVersionPath(type.group, type.version);
    return namespace === undefined ? `${base}/${seg(type.resource)}` : `${base}/namespaces/${seg(namespace)}/${seg(type.resource)}`;
  }

  listTable(type: ResourceType, namespace: string | undefined, opts: ListOptions = {}): Promise<Table> {
    return this.call<Table>('GET', this.listPath(type, namespace), { query: { ...opts }, accept: TABLE });
  }

  async listAll(type: ResourceType, namespace: string | undefined, opts: ListOptions = {}): Promise<ObjectList> {
    const list = await this.call<List<AnyObject> & { apiVersion?: string; metadata?: { resourceVersion?: string } }>(
      'GET',
      this.listPath(type, namespace),
      { query: { ...opts } },
    );
    const kind = list.kind?.endsWith('List') ? list.kind.slice(0, -'List'.length) : type.kind;
    const apiVersion = list.apiVersion;
    return {
      items: (list.items ?? []).map((o) => ({ apiVersion, kind, ...o })),
      resourceVersion: list.metadata?.resourceVersion,
    };
  }

  async countAll(type: ResourceType, resourceVersion?: string): Promise<number | undefined> {
    const page = await this.call<List<AnyObject> & { metadata?: { remainingItemCount?: number; continue?: string } }>(
      'GET',
      this.listPath(type, undefined),
      { query: { limit: 1, ...(resourceVersion !== undefined && { resourceVersion, resourceVersionMatch: 'Exact' }) } },
    );
    const more = page.metadata?.remainingItemCount;
    if (page.metadata?.continue && more === undefined) return undefined;
    return (page.items?.length ?? 0) + (more ?? 0);
  }

  async listSome(
    type: ResourceType,
    namespace: string | undefined,
    keep: Promise<(namespace: string | undefined) => boolean>,
  ): Promise<ObjectList> {
    let accept: ((namespace: string | undefined) => boolean) | undefined;
    const waiting: ListItem[] = [];
    const items: AnyObject[] = [];
    let failure: unknown;
    const take = (item: ListItem) => {
      if (accept!(item.namespace)) items.push(item.parse() as AnyObject);
    };
    const reader = new ListReader((item) => (accept ? take(item) : waiting.push(item)));
    // The objects that came before `keep` are parsed as soon as it does, while the rest arrive.
    const ready = keep.then((f) => {
      accept = f;
      try {
        for (const item of waiting) take(item);
      } catch (err) {
        failure ??= err;
      }
      waiting.length = 0;
    });
    ready.catch(() => undefined);
    const path = this.listPath(type, namespace);
    await this.call('GET', path, {
      onChunk: (chunk) => {
        if (failure !== undefined) return;
        try {
          reader.push(chunk);
        } catch (err) {
          failure = err;
        }
      },
    });
    let header: ListHeader = {};
    try {
      header = reader.end();
    } catch (err) {
      failure ??= err;
    }
    await ready;
    if (failure !== undefined)
      throw new ConnectionError(
        this.client.server,
        `the list of ${path} could not be read: ${failure instanceof Error ? failure.message : String(failure)}`,
      );
    const kind = header.kind?.endsWith('List') ? header.kind.slice(0, -'List'.length) : type.kind;
    const apiVersion = header.apiVersion;
    return { items: items.map((o) => ({ apiVersion, kind, ...o })), resourceVersion: header.metadata?.resourceVersion };
  }

  async watch(type: ResourceType, namespace: string | undefined, opts: WatchOptions, onEvent: (event: WatchEvent) => void): Promise<void> {
    const path = this.listPath(type, namespace);
    const query = {
      watch: 'true',
      allowWatchBookmarks: 'true',
      resourceVersion: opts.resourceVersion,
      labelSelector: opts.labelSelector,
      fieldSelector: opts.fieldSelector,
    };
    let res: IncomingMessage;
    try {
      ({ res } = await this.client.streamRetrying(path, query, opts.table ? TABLE : 'application/json'));
    } catch (err) {
      throw new ConnectionError(this.client.server, describeNetworkError(err, this.timeoutMs));
    }
    const code = res.statusCode ?? 0;
    if (code < 200 || code >= 300) {
      let body = '';
      for await (const chunk of res) body += String(chunk);
      let status: { message?: string; reason?: string } | undefined;
      try {
        status = JSON.parse(body) as { message?: string; reason?: string };
      } catch {
        status = undefined;
      }
      throw new ServerError(code, status?.message || `the server answered ${code} to watch ${path}`, status?.reason);
    }
    // One JSON event per line; each is handed on as soon as its line is complete. An error thrown
    // by onEvent ends the watch and is the caller's, not a network failure.
    let pending = '';
    let handlerError: unknown;
    try {
      for await (const chunk of res) {
        pending += String(chunk);
        let nl = pending.indexOf('\n');
        while (nl >= 0 && handlerError === undefined) {
          const line = pending.slice(0, nl).trim();
          pending = pending.slice(nl + 1);
          try {
            if (line !== '') onEvent(JSON.parse(line) as WatchEvent);
          } catch (err) {
            handlerError = err;
          }
          nl = pending.indexOf('\n');
        }
        if (handlerError !== undefined) break;
      }
    } catch (err) {
      throw new ConnectionError(this.client.server, describeNetworkError(err, this.timeoutMs));
    } finally {
      res.destroy();
    }
    if (handlerError !== undefined) throw handlerError;
  }
}

const dryRunQuery = (opts: WriteOptions): Record<string, string> | undefined => (opts.dryRun ? { dryRun: 'All' } : undefined);

/** The server's own table of a list, as kubectl asks for it (JSON as the fallback). */
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

function groupVersionPath(group: string, version: string): string {
  return group ? `/apis/${seg(group)}/${seg(version)}` : `/api/${seg(version)}`;
}

// KubeClient prefixes its network errors with "METHOD /path: "; keep the cause's own words.
function describeNetworkError(err: unknown, timeoutMs: number): string {
  if (!(err instanceof Error)) return String(err);
  if (/no answer within/.test(err.message)) return `no answer within ${timeoutMs / 1000}s (see --request-timeout)`;
  const cause = err.cause;
  if (cause instanceof Error) return cause.message;
  return err.message;
}
