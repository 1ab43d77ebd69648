// The manager: caches (one reflector per resource), the hierarchy model they feed, and the
// reconcilers that work from both. Handlers only update the model and enqueue keys; workers start
// once every cache has synced, so the first reconciles see the whole forest (no false
// ParentMissing at start-up, and a restart with everything in place writes nothing).
import { GROUP, Plural, VERSION } from '../core/api/constants.js';
import type { HierarchyConfiguration, SubnamespaceAnchor } from '../core/api/types.js';
import { Hierarchy, type Affected } from '../core/hierarchy/hierarchy.js';
import { HierarchyPolicy } from '../core/hierarchy/policy.js';
import type { KubeClient } from '../kube/client.js';
import { createLogger, type Logger } from '../kube/log.js';
import { Reflector, stripManagedFields } from '../kube/watch/reflector.js';
import type { KubeObject } from '../kube/watch/store.js';
import { WorkQueue } from '../kube/watch/workqueue.js';
import { Writer } from '../kube/writer.js';
import { AnchorReconciler } from './anchors/reconciler.js';
import { HierarchyReconciler } from './hierarchy/reconciler.js';
import type { CrdObject, NamespaceObject } from './objects.js';

export interface ManagerOptions {
  client: KubeClient;
  policy?: HierarchyPolicy;
  logger?: Logger;
  /** Concurrent reconciles per queue (HNC's --max-reconciles; default 10). */
  workers?: number;
  /** Client-side write QPS limit (default 50; burst 1.5x). */
  qps?: number;
}

const HNC_API = `/apis/${GROUP}/${VERSION}`;
const CRD_NAMES = { hierarchy: `${Plural.HierarchyConfiguration}.${GROUP}`, anchor: `${Plural.SubnamespaceAnchor}.${GROUP}` };

/** Keep only what the model needs of a CRD: its schema is large and never read here. */
const crdMetadataOnly = (crd: CrdObject): CrdObject => ({
  apiVersion: crd.apiVersion,
  kind: crd.kind,
  metadata: { name: crd.metadata.name, resourceVersion: crd.metadata.resourceVersion, uid: crd.metadata.uid, deletionTimestamp: crd.metadata.deletionTimestamp },
});

export class Manager {
  readonly hierarchy: Hierarchy;
  readonly writer: Writer;
  readonly log: Logger;
  private readonly reflectors: {
    namespaces: Reflector<NamespaceObject>;
    hierarchies: Reflector<HierarchyConfiguration>;
    anchors: Reflector<SubnamespaceAnchor>;
    crds: Reflector<CrdObject>;
  };
  private readonly queues = {
    namespaces: new WorkQueue({ name: 'namespaces', itemBackoff: { initialMs: 50, maxMs: 30_000 } }),
    anchors: new WorkQueue({ name: 'anchors', itemBackoff: { initialMs: 50, maxMs: 30_000 } }),
  };
  private started = false;

  constructor(private readonly opts: ManagerOptions) {
    this.log = opts.logger ?? createLogger({ name: 'hnc-manager' });
    this.hierarchy = new Hierarchy(opts.policy ?? new HierarchyPolicy());
    this.writer = new Writer(opts.client, { qps: opts.qps });
    const reflector = <T extends KubeObject>(name: string, path: string, transform: (o: T) => T = stripManagedFields) =>
      new Reflector<T>({ client: opts.client, path, name, transform, logger: this.log.child({ reflector: name }) });
    this.reflectors = {
      namespaces: reflector<NamespaceObject>('namespaces', '/api/v1/namespaces'),
      hierarchies: reflector<HierarchyConfiguration>('hierarchyconfigurations', `${HNC_API}/${Plural.HierarchyConfiguration}`),
      anchors: reflector<SubnamespaceAnchor>('subnamespaceanchors', `${HNC_API}/${Plural.SubnamespaceAnchor}`),
      crds: reflector<CrdObject>('customresourcedefinitions', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crdMetadataOnly),
    };
    this.wireModel();
  }

  /** Starts the caches, waits until they have synced, then starts the reconcilers. */
  async start(): Promise<void> {
    for (const r of Object.values(this.reflectors)) r.start();
    await Promise.all(Object.values(this.reflectors).map((r) => r.synced));
    const workers = this.opts.workers ?? 10;
    const hierarchy = new HierarchyReconciler(this.hierarchy, this.reflectors.namespaces.store, this.reflectors.hierarchies.store, this.writer, this.log.child({ reconciler: 'hierarchy' }));
    const anchors = new AnchorReconciler(this.hierarchy, this.reflectors.anchors.store, this.writer, this.log.child({ reconciler: 'anchor' }));
    this.queues.namespaces.run((key) => this.guard('hierarchy', key, () => hierarchy.reconcile(key)), workers);
    this.queues.anchors.run((key) => this.guard('anchor', key, () => anchors.reconcile(key)), workers);
    this.started = true;
    this.log.info({ namespaces: this.hierarchy.namespaceNames().length }, 'caches synced; reconcilers running');
  }

  get synced(): boolean {
    return this.started;
  }

  /** Stops taking work, lets in-flight reconciles finish, and stops the caches. */
  async stop(): Promise<void> {
    await Promise.all(Object.values(this.queues).map((q) => q.shutdown()));
    await Promise.all(Object.values(this.reflectors).map((r) => r.stop()));
  }

  /** Resolves once no reconcile is queued, running or scheduled (for tests and benchmarks). */
  async idle(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const busy = () => Object.values(this.queues).some((q) => {
      const s = q.stats();
      return s.depth + s.processing + s.delayed > 0;
    });
    // Two quiet looks in a row: a watch event of our own last write may still be in flight.
    for (let quiet = 0; quiet < 2; ) {
      if (Date.now() > deadline) throw new Error('the manager did not become idle in time');
      await new Promise((r) => setTimeout(r, 50));
      quiet = busy() ? 0 : quiet + 1;
    }
  }

  private async guard(reconciler: string, key: string, fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (err) {
      this.log.warn({ reconciler, key, err: (err as Error).message }, 'reconcile failed; will retry');
      throw err;
    }
  }

  private enqueue(affected: Affected): void {
    for (const ns of affected.namespaces) this.queues.namespaces.add(ns);
    for (const a of affected.anchors) this.queues.anchors.add(a);
  }

  private wireModel(): void {
    const h = this.hierarchy;
    this.reflectors.namespaces.addHandler((type, obj) => {
      const name = obj.metadata.name;
      this.enqueue(
        h.setNamespace(
          name,
          type === 'DELETED' ? undefined : { labels: obj.metadata.labels ?? {}, annotations: obj.metadata.annotations ?? {}, deleting: !!obj.metadata.deletionTimestamp },
        ),
      );
    });
    this.reflectors.hierarchies.addHandler((type, obj) => {
      const ns = obj.metadata.namespace!;
      const spec = obj.spec ?? {};
      this.enqueue(
        h.setHierarchy(
          ns,
          type === 'DELETED'
            ? undefined
            : { parent: spec.parent || undefined, allowCascadingDeletion: spec.allowCascadingDeletion === true, labels: spec.labels ?? [], annotations: spec.annotations ?? [], deleting: !!obj.metadata.deletionTimestamp },
        ),
      );
    });
    this.reflectors.anchors.addHandler((type, obj) => {
      const spec = obj.spec ?? {};
      this.enqueue(
        h.setAnchor(obj.metadata.namespace!, obj.metadata.name!, type === 'DELETED' ? undefined : { labels: spec.labels ?? [], annotations: spec.annotations ?? [], deleting: !!obj.metadata.deletionTimestamp }),
      );
    });
    this.reflectors.crds.addHandler(() => {
      const deleting = (name: string) => {
        const crd = this.reflectors.crds.store.get(name);
        return !crd || !!crd.metadata.deletionTimestamp;
      };
      this.enqueue(h.setCrdsDeleting({ hierarchy: deleting(CRD_NAMES.hierarchy), anchor: deleting(CRD_NAMES.anchor) }));
    });
  }
}
