// The caches the whole manager shares (one reflector per resource) and the hierarchy model they
// feed. Reconcilers enqueue what the model says is affected; webhooks read the model. Watch
// handlers only update the model, synchronously, so readers never see it half-updated.
import { GROUP, Plural } from '../core/api/constants.js';
import { anchorFacts, hierarchyFacts, namespaceFacts } from '../core/hierarchy/facts.js';
import { hncCollectionPath } from '../core/api/paths.js';
import type { HierarchyConfiguration, NamespaceObject, SubnamespaceAnchor } from '../core/api/types.js';
import { Hierarchy, type Affected } from '../core/hierarchy/hierarchy.js';
import type { HierarchyPolicy } from '../core/hierarchy/policy.js';
import type { KubeClient } from './client.js';
import type { Logger } from './watch/logger.js';
import { Reflector, stripManagedFields } from './watch/reflector.js';
import type { KubeObject } from './watch/store.js';

export interface CrdObject extends KubeObject {
  metadata: KubeObject['metadata'] & { name: string; deletionTimestamp?: string };
}

const CRD_NAMES = { hierarchy: `${Plural.HierarchyConfiguration}.${GROUP}`, anchor: `${Plural.SubnamespaceAnchor}.${GROUP}` };

/** Keep only what the model needs of a CRD: its schema is large and never read here. */
const crdMetadataOnly = (crd: CrdObject): CrdObject => ({
  apiVersion: crd.apiVersion,
  kind: crd.kind,
  metadata: {
    name: crd.metadata.name,
    resourceVersion: crd.metadata.resourceVersion,
    uid: crd.metadata.uid,
    deletionTimestamp: crd.metadata.deletionTimestamp,
  },
});

/** What the model and the reflector read of an object's metadata (its key, version and deletion). */
const keyMeta = (m: KubeObject['metadata'] & { deletionTimestamp?: string }) => ({
  name: m.name,
  ...(m.namespace !== undefined ? { namespace: m.namespace } : {}),
  resourceVersion: m.resourceVersion,
  ...(m.deletionTimestamp !== undefined ? { deletionTimestamp: m.deletionTimestamp } : {}),
});

/**
 * Keep only what core/hierarchy/facts.ts reads of each object: for a cache whose readers read the
 * model alone (the admission thread's). A HierarchyConfiguration's status (its children and
 * conditions) is most of it, and a namespace's labels are kept but not its spec or status.
 */
export const factsOnly = {
  namespace: (ns: NamespaceObject): NamespaceObject => ({
    metadata: { ...keyMeta(ns.metadata), name: ns.metadata.name, labels: ns.metadata.labels, annotations: ns.metadata.annotations },
  }),
  hierarchy: (hc: HierarchyConfiguration): HierarchyConfiguration => ({ metadata: keyMeta(hc.metadata), spec: hc.spec }),
  anchor: (a: SubnamespaceAnchor): SubnamespaceAnchor => ({
    metadata: { ...keyMeta(a.metadata), finalizers: a.metadata.finalizers },
    spec: a.spec,
    ...(a.status?.status !== undefined ? { status: { status: a.status.status } } : {}),
  }),
};

export interface HierarchyCacheOptions {
  /** Cache only what the model reads of each object (factsOnly): for readers of the model alone. */
  factsOnly?: boolean;
}

export class HierarchyCache {
  readonly hierarchy: Hierarchy;
  readonly namespaces: Reflector<NamespaceObject>;
  readonly hierarchies: Reflector<HierarchyConfiguration>;
  readonly anchors: Reflector<SubnamespaceAnchor>;
  readonly crds: Reflector<CrdObject>;
  private readonly listeners = new Set<(affected: Affected) => void>();
  private isSynced = false;
  private markSynced!: () => void;
  /** Resolves once every cache has listed its resource. */
  readonly whenSynced = new Promise<void>((resolve) => (this.markSynced = resolve));

  constructor(client: KubeClient, policy: HierarchyPolicy, log: Logger & { child(b: object): Logger }, opts: HierarchyCacheOptions = {}) {
    this.hierarchy = new Hierarchy(policy);
    const reflector = <T extends KubeObject>(name: string, path: string, transform: (o: T) => T = stripManagedFields) =>
      new Reflector<T>({ client, path, name, transform, logger: log.child({ reflector: name }) });
    const slim = opts.factsOnly === true;
    this.namespaces = reflector<NamespaceObject>('namespaces', '/api/v1/namespaces', slim ? factsOnly.namespace : undefined);
    this.hierarchies = reflector<HierarchyConfiguration>(
      'hierarchyconfigurations',
      hncCollectionPath(Plural.HierarchyConfiguration),
      slim ? factsOnly.hierarchy : undefined,
    );
    this.anchors = reflector<SubnamespaceAnchor>(
      'subnamespaceanchors',
      hncCollectionPath(Plural.SubnamespaceAnchor),
      slim ? factsOnly.anchor : undefined,
    );
    this.crds = reflector<CrdObject>(
      'customresourcedefinitions',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      crdMetadataOnly,
    );
    this.wire();
  }

  /** Called with what each change affects (namespaces and anchor keys). */
  onAffected(listener: (affected: Affected) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async start(): Promise<void> {
    const all = [this.namespaces, this.hierarchies, this.anchors, this.crds];
    for (const r of all) r.start();
    await Promise.all(all.map((r) => r.synced));
    this.isSynced = true;
    this.markSynced();
  }

  /** Changes the model from outside the watches (e.g. propagation conflicts) and tells listeners. */
  update(change: (h: Hierarchy) => Affected): void {
    this.emit(change(this.hierarchy));
  }

  /** True once every cache has listed its resource: before that the forest is incomplete. */
  get synced(): boolean {
    return this.isSynced;
  }

  async stop(): Promise<void> {
    await Promise.all([this.namespaces, this.hierarchies, this.anchors, this.crds].map((r) => r.stop()));
  }

  private emit(affected: Affected): void {
    for (const l of this.listeners) l(affected);
  }

  private wire(): void {
    const h = this.hierarchy;
    this.namespaces.addHandler((type, obj) =>
      this.emit(h.setNamespace(obj.metadata.name, type === 'DELETED' ? undefined : namespaceFacts(obj))),
    );
    this.hierarchies.addHandler((type, obj) =>
      this.emit(h.setHierarchy(obj.metadata.namespace!, type === 'DELETED' ? undefined : hierarchyFacts(obj))),
    );
    this.anchors.addHandler((type, obj) =>
      this.emit(h.setAnchor(obj.metadata.namespace!, obj.metadata.name!, type === 'DELETED' ? undefined : anchorFacts(obj))),
    );
    this.crds.addHandler(() => {
      const deleting = (name: string) => {
        const crd = this.crds.store.get(name);
        return !crd || !!crd.metadata.deletionTimestamp;
      };
      this.emit(h.setCrdsDeleting({ hierarchy: deleting(CRD_NAMES.hierarchy), anchor: deleting(CRD_NAMES.anchor) }));
    });
  }
}

// What the model takes from each object lives in core/ (the kubectl plugin's previews build the same model).
export { anchorFacts, hierarchyFacts, namespaceFacts } from '../core/hierarchy/facts.js';
