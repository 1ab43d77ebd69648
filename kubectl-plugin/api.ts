// What the plugin needs from the cluster, as an interface: commands are written against it, the
// real implementation (kube-api.ts) talks to the API server, and tests use an in-memory fake.
// Every method throws ServerError for a non-2xx answer and ConnectionError when the server
// cannot be reached; "not found" is only turned into a value where the method says so.
import type {
  ApiResource,
  HNCConfiguration,
  HierarchyConfiguration,
  NamespaceObject,
  ObjectMeta,
  SubnamespaceAnchor,
} from '../core/api/index.js';

/** A Namespace (the project's one type for it, core/api/types.ts). */
export type Namespace = NamespaceObject;

/** The fields of a core/v1 Event that `describe` shows. */
export interface KubeEvent {
  metadata: ObjectMeta;
  involvedObject?: { kind?: string; namespace?: string; name?: string };
  reason?: string;
  message?: string;
  source?: { component?: string };
  lastTimestamp?: string | null;
  eventTime?: string | null;
  firstTimestamp?: string | null;
}

/** A namespaced resource type, as the API server addresses it. */
export interface ResourceType {
  group: string;
  version: string;
  resource: string;
  /** Known for the RBAC types and after discovery; HNCConfiguration's status does not say. */
  kind?: string;
}

/** Any object: the metadata commands read, and the rest as the server sent it. */
export interface AnyObject {
  apiVersion?: string;
  /** Always set on objects the HncApi returns (filled from the list's kind for list items). */
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

/** One resource of an API group version, from discovery (the project's one type for it). */
export type { ApiResource };

/** One column of the server's Table (meta.k8s.io/v1), as `kubectl get` prints them. */
export interface TableColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  /** 0: always shown; above 0: with `-o wide` only. */
  priority?: number;
}

export interface TableRow {
  cells: unknown[];
  /** The row's object's metadata (the server sends PartialObjectMetadata by default). */
  object?: { metadata?: ObjectMeta };
}

/** A list (or one watch event's object) as the server's own table: the columns kubectl prints. */
export interface Table {
  columnDefinitions?: TableColumn[] | null;
  rows?: TableRow[] | null;
  metadata?: { resourceVersion?: string };
}

export interface WriteOptions {
  /** `dryRun=All`: the server runs authorization, admission and validation, and stores nothing. */
  dryRun?: boolean;
}

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
}

/** Full objects (their kind filled in) and the list's resourceVersion, to watch from. */
export interface ObjectList {
  items: AnyObject[];
  resourceVersion?: string;
}

export interface WatchEvent {
  type: string;
  /** A Table (table watches), an object, or a Status (type ERROR). */
  object: unknown;
}

export interface WatchOptions extends ListOptions {
  resourceVersion?: string;
  /** Events carry the server's Table rows instead of objects. */
  table: boolean;
}

/** One API group with the version the server prefers ("" for the core group). */
export interface ApiGroupVersion {
  group: string;
  version: string;
}

export interface HncApi {
  /** The API server's URL, for messages. */
  readonly server: string;

  getNamespace(name: string): Promise<Namespace>;
  /** Namespaces, all or those matching a label selector. */
  listNamespaces(labelSelector?: string): Promise<Namespace[]>;
  /** How many namespaces there are (one small request), if the server says. */
  countNamespaces(): Promise<number | undefined>;

  /** The namespace's HierarchyConfiguration, or undefined if it has none (404). */
  getHierarchy(namespace: string): Promise<HierarchyConfiguration | undefined>;
  /** Every HierarchyConfiguration in the cluster (one request; needs cluster-wide list). */
  listHierarchies(): Promise<HierarchyConfiguration[]>;
  createHierarchy(hc: HierarchyConfiguration, opts?: WriteOptions): Promise<HierarchyConfiguration>;
  replaceHierarchy(hc: HierarchyConfiguration, opts?: WriteOptions): Promise<HierarchyConfiguration>;

  listAnchors(namespace: string): Promise<SubnamespaceAnchor[]>;
  createAnchor(anchor: SubnamespaceAnchor, opts?: WriteOptions): Promise<SubnamespaceAnchor>;
  deleteAnchor(namespace: string, name: string, opts?: WriteOptions): Promise<void>;

  /** The HNCConfiguration `config`, or undefined if it does not exist (404). */
  getHncConfiguration(): Promise<HNCConfiguration | undefined>;
  createHncConfiguration(config: HNCConfiguration): Promise<HNCConfiguration>;
  replaceHncConfiguration(config: HNCConfiguration): Promise<HNCConfiguration>;

  listEvents(namespace: string): Promise<KubeEvent[]>;
  /** Objects of one type in a namespace, filtered by a label selector. */
  listObjects(namespace: string, type: ResourceType, labelSelector?: string): Promise<AnyObject[]>;
  /** One object, or undefined if there is none of that name (404). */
  getObject(namespace: string, type: ResourceType, name: string): Promise<AnyObject | undefined>;
  /** Discovery of one group version (core: group ""), subresources left out. */
  listApiResources(group: string, version: string): Promise<ApiResource[]>;
  /** Discovery: every API group but the core one, with its preferred version. */
  listApiGroups(): Promise<ApiGroupVersion[]>;

  /** A list as the server's Table, in one namespace or (namespace undefined) in all of them. */
  listTable(type: ResourceType, namespace: string | undefined, opts?: ListOptions): Promise<Table>;
  /** A list of full objects, in one namespace or (namespace undefined) in all of them. */
  listAll(type: ResourceType, namespace: string | undefined, opts?: ListOptions): Promise<ObjectList>;
  /**
   * How many objects of a type there are across the cluster (one small request: a page of one
   * object and the server's count of the rest), at exactly `resourceVersion` when given (a list's,
   * so that both describe one moment); undefined if the server does not say.
   */
  countAll(type: ResourceType, resourceVersion?: string): Promise<number | undefined>;
  /**
   * listAll read as it arrives, keeping only the objects in the namespaces `keep` accepts (decided
   * from an object's namespace before it is parsed), without their metadata.managedFields. `keep`
   * may come after the first objects have: they wait, unparsed.
   */
  listSome(
    type: ResourceType,
    namespace: string | undefined,
    keep: Promise<(namespace: string | undefined) => boolean>,
  ): Promise<ObjectList>;
  /**
   * Watches from opts.resourceVersion, calling onEvent for each event as it arrives; resolves when
   * the server ends the watch (it does after a while: watch again from the last resourceVersion).
   */
  watch(type: ResourceType, namespace: string | undefined, opts: WatchOptions, onEvent: (event: WatchEvent) => void): Promise<void>;
  /**
   * A SubjectAccessReview: may this user (and groups) do `verb` on `resource` cluster-wide?
   * Undefined when the answer cannot be had (e.g. the caller may not create reviews).
   */
  accessReview?(user: string, groups: readonly string[], verb: string, group: string, resource: string): Promise<boolean | undefined>;
}

/** What a successful connection gives the commands. */
export interface Session {
  api: HncApi;
  /** `-n/--namespace` if given, else the kubeconfig context's namespace, else "default". */
  namespace: string;
  /** `--cache-dir`: where discovery may be kept between runs. */
  cacheDir?: string;
}
