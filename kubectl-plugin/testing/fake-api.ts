// An in-memory HncApi for unit tests: a few maps, request recording, and switches that make a
// call answer 403 (RBAC denial) or any error, so tests read like small stories.
import type { HNCConfiguration, HierarchyConfiguration, SubnamespaceAnchor } from '../../core/api/index.js';
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
  WriteOptions,
} from '../api.js';
import { ServerError } from '../errors.js';

const clone = <T>(x: T): T => structuredClone(x);
/** Dry-run writes are recorded with this suffix, e.g. "replace hc team-a (dry run)". */
const dry = (opts: WriteOptions): string => (opts.dryRun ? ' (dry run)' : '');

export class FakeApi implements HncApi {
  readonly server = 'https://fake.invalid:6443';
  readonly namespaces = new Map<string, Namespace>();
  readonly hierarchies = new Map<string, HierarchyConfiguration>();
  readonly anchors = new Map<string, SubnamespaceAnchor>(); // key: ns/name
  readonly events = new Map<string, KubeEvent[]>();
  readonly objects = new Map<string, AnyObject[]>(); // key: ns/resource
  readonly discovery = new Map<string, ApiResource[]>(); // key: group/version ("/v1" for core)
  config: HNCConfiguration | undefined;
  /** Every call, as "verb what", e.g. "get hc team-a", "create anchor team-a/dev". */
  readonly calls: string[] = [];
  /** Calls (as in `calls`) that answer 403. */
  readonly forbidden = new Set<string>();
  /** Calls that fail with this error. */
  readonly failures = new Map<string, Error>();

  /** Records a call; `permission` is the call RBAC decides on (a list's, whatever its selector). */
  private check(call: string, permission = call): void {
    this.calls.push(call);
    const failure = this.failures.get(call);
    if (failure) throw failure;
    if (this.forbidden.has(permission)) throw new ServerError(403, `forbidden: ${call}`, 'Forbidden');
  }

  /** Adds a namespace, its HC (from parent/children/conditions) and the subnamespace annotation. */
  addNamespace(
    name: string,
    opts: {
      parent?: string;
      children?: string[];
      subnamespaceOf?: string;
      conditions?: { type: string; reason: string; message: string }[];
      acd?: boolean;
    } = {},
  ): this {
    this.namespaces.set(name, {
      metadata: { name, ...(opts.subnamespaceOf ? { annotations: { 'hnc.x-k8s.io/subnamespace-of': opts.subnamespaceOf } } : {}) },
    });
    if (opts.parent || opts.children || opts.conditions || opts.acd) {
      this.hierarchies.set(name, {
        metadata: { name: 'hierarchy', namespace: name, resourceVersion: '1' },
        spec: { ...(opts.parent ? { parent: opts.parent } : {}), ...(opts.acd ? { allowCascadingDeletion: true } : {}) },
        status: {
          ...(opts.children ? { children: opts.children } : {}),
          ...(opts.conditions
            ? { conditions: opts.conditions.map((c) => ({ ...c, status: 'True' as const, lastTransitionTime: '2025-01-01T00:00:00Z' })) }
            : {}),
        },
      });
    }
    return this;
  }

  async getNamespace(name: string): Promise<Namespace> {
    this.check(`get ns ${name}`);
    const ns = this.namespaces.get(name);
    if (!ns) throw new ServerError(404, `namespaces "${name}" not found`, 'NotFound');
    return clone(ns);
  }
  async listNamespaces(labelSelector?: string): Promise<Namespace[]> {
    this.check(labelSelector ? `list ns ${labelSelector}` : 'list ns');
    // A selector here is only ever "<key>" (exists), as the tree labels are asked for.
    return [...this.namespaces.values()].filter((ns) => !labelSelector || ns.metadata.labels?.[labelSelector] !== undefined).map(clone);
  }
  async countNamespaces(): Promise<number | undefined> {
    this.check('count ns');
    return this.namespaces.size;
  }
  async getHierarchy(namespace: string): Promise<HierarchyConfiguration | undefined> {
    this.check(`get hc ${namespace}`);
    const hc = this.hierarchies.get(namespace);
    return hc && clone(hc);
  }
  async listHierarchies(): Promise<HierarchyConfiguration[]> {
    this.check('list hc');
    return [...this.hierarchies.values()].map(clone);
  }
  async createHierarchy(hc: HierarchyConfiguration, opts: WriteOptions = {}): Promise<HierarchyConfiguration> {
    const ns = hc.metadata.namespace ?? '';
    this.check(`create hc ${ns}${dry(opts)}`);
    if (this.hierarchies.has(ns)) throw new ServerError(409, 'already exists', 'AlreadyExists');
    if (!opts.dryRun) this.hierarchies.set(ns, clone({ ...hc, metadata: { ...hc.metadata, resourceVersion: '1' } }));
    return clone(hc);
  }
  async replaceHierarchy(hc: HierarchyConfiguration, opts: WriteOptions = {}): Promise<HierarchyConfiguration> {
    const ns = hc.metadata.namespace ?? '';
    this.check(`replace hc ${ns}${dry(opts)}`);
    if (!this.hierarchies.has(ns)) throw new ServerError(404, 'not found', 'NotFound');
    if (!opts.dryRun) this.hierarchies.set(ns, clone(hc));
    return clone(hc);
  }
  async listAnchors(namespace: string): Promise<SubnamespaceAnchor[]> {
    this.check(`list anchors ${namespace}`);
    return [...this.anchors.values()].filter((a) => a.metadata.namespace === namespace).map(clone);
  }
  async createAnchor(anchor: SubnamespaceAnchor, opts: WriteOptions = {}): Promise<SubnamespaceAnchor> {
    const key = `${anchor.metadata.namespace}/${anchor.metadata.name}`;
    this.check(`create anchor ${key}${dry(opts)}`);
    if (!opts.dryRun) this.anchors.set(key, clone(anchor));
    return clone(anchor);
  }
  async deleteAnchor(namespace: string, name: string, opts: WriteOptions = {}): Promise<void> {
    const key = `${namespace}/${name}`;
    this.check(`delete anchor ${key}${dry(opts)}`);
    if (!(opts.dryRun ? this.anchors.has(key) : this.anchors.delete(key)))
      throw new ServerError(404, `subnamespaceanchors.hnc.x-k8s.io "${name}" not found`, 'NotFound');
  }
  async getHncConfiguration(): Promise<HNCConfiguration | undefined> {
    this.check('get config');
    return this.config && clone(this.config);
  }
  async createHncConfiguration(config: HNCConfiguration): Promise<HNCConfiguration> {
    this.check('create config');
    this.config = clone(config);
    return clone(config);
  }
  async replaceHncConfiguration(config: HNCConfiguration): Promise<HNCConfiguration> {
    this.check('replace config');
    this.config = clone(config);
    return clone(config);
  }
  async listEvents(namespace: string): Promise<KubeEvent[]> {
    this.check(`list events ${namespace}`);
    return (this.events.get(namespace) ?? []).map(clone);
  }
  async listObjects(namespace: string, type: ResourceType, labelSelector?: string): Promise<AnyObject[]> {
    this.check(`list ${type.resource} ${namespace}`);
    const all = this.objects.get(`${namespace}/${type.resource}`) ?? [];
    return all.filter((o) => !labelSelector || o.metadata.labels?.[labelSelector] !== undefined).map(clone);
  }
  async getObject(namespace: string, type: ResourceType, name: string): Promise<AnyObject | undefined> {
    this.check(`get ${type.resource} ${namespace}/${name}`);
    const found = (this.objects.get(`${namespace}/${type.resource}`) ?? []).find((o) => o.metadata.name === name);
    return found && clone(found);
  }
  async listApiResources(group: string, version: string): Promise<ApiResource[]> {
    this.check(`discover ${group}/${version}`);
    const resources = this.discovery.get(`${group}/${version}`);
    if (!resources) throw new ServerError(404, 'the server could not find the requested resource', 'NotFound');
    return resources.map(clone);
  }
  async listApiGroups(): Promise<ApiGroupVersion[]> {
    this.check('discover groups');
    return [...this.discovery.keys()]
      .filter((k) => !k.startsWith('/'))
      .map((k) => ({ group: k.split('/')[0] ?? '', version: k.split('/')[1] ?? '' }));
  }

  private objectsIn(type: ResourceType, namespace: string | undefined, opts: ListOptions): AnyObject[] {
    const name = opts.fieldSelector?.startsWith('metadata.name=') ? opts.fieldSelector.slice('metadata.name='.length) : undefined;
    const keys =
      namespace === undefined ? [...this.objects.keys()].filter((k) => k.endsWith(`/${type.resource}`)) : [`${namespace}/${type.resource}`];
    return keys
      .flatMap((k) => (this.objects.get(k) ?? []).map((o) => ({ ...o, metadata: { namespace: k.split('/')[0], ...o.metadata } })))
      .filter((o) => name === undefined || o.metadata.name === name)
      .filter((o) => matchesSelector(o, opts.labelSelector));
  }

  /** Counts as a server does: `count <resource>` among the calls. */
  async countAll(type: ResourceType): Promise<number | undefined> {
    this.check(`count ${type.resource}`, `list ${type.resource} *`);
    return this.objectsIn(type, undefined, {}).length;
  }

  /** A table with the columns Name and Data (the number of keys of `data`), Data at priority 1. */
  async listTable(type: ResourceType, namespace: string | undefined, opts: ListOptions = {}): Promise<Table> {
    this.check(`table ${type.resource} ${namespace ?? '*'}`);
    return {
      columnDefinitions: [
        { name: 'Name', type: 'string', format: 'name' },
        { name: 'Data', type: 'integer', priority: 1 },
      ],
      rows: this.objectsIn(type, namespace, opts).map((o) => ({
        cells: [o.metadata.name, Object.keys((o.data as object | undefined) ?? {}).length],
        object: { metadata: clone(o.metadata) },
      })),
      metadata: { resourceVersion: '7' },
    };
  }
  async listAll(type: ResourceType, namespace: string | undefined, opts: ListOptions = {}): Promise<ObjectList> {
    const list = `list ${type.resource} ${namespace ?? '*'}`;
    this.check(opts.labelSelector ? `${list} ${opts.labelSelector}` : list, list);
    return {
      items: this.objectsIn(type, namespace, opts).map((o) => clone({ apiVersion: 'v1', kind: type.kind, ...o })),
      resourceVersion: '7',
    };
  }
  async listSome(
    type: ResourceType,
    namespace: string | undefined,
    keep: Promise<(namespace: string | undefined) => boolean>,
  ): Promise<ObjectList> {
    const list = await this.listAll(type, namespace);
    const accept = await keep;
    const items = list.items.filter((o) => accept(o.metadata?.namespace));
    for (const o of items) delete (o.metadata as { managedFields?: unknown } | undefined)?.managedFields;
    return { ...list, items };
  }
  watch(type: ResourceType, namespace: string | undefined): Promise<void> {
    this.check(`watch ${type.resource} ${namespace ?? '*'}`);
    return Promise.resolve();
  }
}

/** A label selector of one requirement, "key" (exists) or "!key" (does not), as the plugin asks for them. */
function matchesSelector(o: AnyObject, selector: string | undefined): boolean {
  if (!selector) return true;
  const labels = o.metadata.labels ?? {};
  return selector.startsWith('!') ? labels[selector.slice(1)] === undefined : labels[selector] !== undefined;
}
