// The caches hierarchical quotas need, shared by the HRQ controller and the quota webhooks: the
// HierarchicalResourceQuotas, the ResourceQuota singletons (whose status.used is the namespace's
// usage as the API server counts it), and the pure QuotaModel they feed over the hierarchy's forest.
import { GROUP, HRQ_RESOURCE_QUOTA_NAME, Label, Plural, VERSION } from '../core/api/constants.js';
import type { HierarchicalResourceQuota, ResourceList } from '../core/api/types.js';
import { parseResourceList, QuotaModel, type Quantities } from '../core/hrq/hrq.js';
import type { KubeClient } from './client.js';
import type { HierarchyCache } from './hierarchy-cache.js';
import type { Logger } from './log.js';
import { Reflector, stripManagedFields } from './watch/reflector.js';
import type { KubeObject } from './watch/store.js';

export interface ResourceQuotaObject extends KubeObject {
  metadata: KubeObject['metadata'] & {
    name: string;
    namespace: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: { hard?: ResourceList };
  status?: { hard?: ResourceList; used?: ResourceList };
}

export const HRQ_API = `/apis/${GROUP}/${VERSION}`;
export const hrqPath = (ns: string, name?: string): string =>
  `${HRQ_API}/namespaces/${ns}/${Plural.HierarchicalResourceQuota}${name === undefined ? '' : `/${name}`}`;
export const singletonPath = (ns: string, withName = true): string =>
  `/api/v1/namespaces/${ns}/resourcequotas${withName ? `/${HRQ_RESOURCE_QUOTA_NAME}` : ''}`;

/** How long admitted usage is held when the singleton's status never shows it. */
const RESERVATION_MS = 30_000;

/** Whether resourceVersion a is later than b (etcd revisions; any difference if either is not a number). */
function newer(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || b === undefined) return a !== b;
  return /^\d+$/.test(a) && /^\d+$/.test(b) ? BigInt(a) > BigInt(b) : a !== b;
}

export type QuotaChange = { kind: 'hrq'; namespace: string; name: string } | { kind: 'usage'; namespace: string };

export class QuotaCache {
  readonly model: QuotaModel;
  readonly hrqs: Reflector<HierarchicalResourceQuota>;
  readonly singletons: Reflector<ResourceQuotaObject>;
  private readonly listeners = new Set<(change: QuotaChange) => void>();
  private started = false;
  /** True once both caches have listed: before that, usage sums are incomplete. */
  synced = false;
  private readonly reservations = new Map<string, { resourceVersion: string | undefined; timer: ReturnType<typeof setTimeout> }>();
  private markSynced!: () => void;
  /** Resolves once both caches have listed. */
  readonly whenSynced = new Promise<void>((resolve) => (this.markSynced = resolve));

  constructor(
    client: KubeClient,
    readonly hierarchy: HierarchyCache,
    private readonly log: Logger,
  ) {
    this.model = new QuotaModel(hierarchy.hierarchy.forest);
    this.hrqs = new Reflector<HierarchicalResourceQuota>({
      client,
      path: `${HRQ_API}/${Plural.HierarchicalResourceQuota}`,
      name: Plural.HierarchicalResourceQuota,
      transform: stripManagedFields,
      logger: log.child({ reflector: Plural.HierarchicalResourceQuota }),
    });
    // Only the singletons: a namespace's usage is what its singleton counts, and users' own
    // ResourceQuotas are none of HNC's business.
    this.singletons = new Reflector<ResourceQuotaObject>({
      client,
      path: '/api/v1/resourcequotas',
      fieldSelector: `metadata.name=${HRQ_RESOURCE_QUOTA_NAME}`,
      name: 'hrq-resourcequotas',
      transform: stripManagedFields,
      logger: log.child({ reflector: 'hrq-resourcequotas' }),
    });
    this.hrqs.addHandler((type, obj) => {
      const { namespace, name } = obj.metadata as { namespace: string; name: string };
      if (type === 'DELETED') this.model.setHrq(namespace, name, undefined);
      else {
        const parsed = parseResourceList(obj.spec?.hard);
        if (parsed.errors.length > 0)
          this.log.warn({ namespace, name, errors: parsed.errors }, 'HRQ limits that are not quantities are ignored');
        this.model.setHrq(namespace, name, parsed.quantities);
      }
      this.emit({ kind: 'hrq', namespace, name });
    });
    this.singletons.addHandler((type, obj) => {
      const namespace = obj.metadata.namespace;
      const held = this.reservations.get(namespace);
      if (held && (type === 'DELETED' || newer(obj.metadata.resourceVersion, held.resourceVersion))) this.releaseReservation(namespace);
      this.model.setUsage(namespace, type === 'DELETED' || !isSingleton(obj) ? undefined : parseResourceList(obj.status?.used).quantities);
      this.emit({ kind: 'usage', namespace });
    });
  }

  /**
   * Usage just admitted in `ns` by the webhook, over the singleton at `resourceVersion`: counted
   * until the watch shows a later version of the singleton (the API server's status write, or
   * whatever replaced it), or for RESERVATION_MS at most (the write failed after admission).
   */
  reserve(ns: string, used: Quantities, resourceVersion: string | undefined): void {
    this.model.reserve(ns, used);
    const previous = this.reservations.get(ns);
    if (previous) clearTimeout(previous.timer);
    const timer = setTimeout(() => this.releaseReservation(ns), RESERVATION_MS);
    timer.unref();
    this.reservations.set(ns, { resourceVersion: previous?.resourceVersion ?? resourceVersion, timer });
  }

  private releaseReservation(ns: string): void {
    const held = this.reservations.get(ns);
    if (!held) return;
    clearTimeout(held.timer);
    this.reservations.delete(ns);
    this.model.release(ns);
    this.emit({ kind: 'usage', namespace: ns });
  }

  /** Called after each change of an HRQ or of a namespace's usage. */
  onChange(listener: (change: QuotaChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Starts the caches (once, whoever asks first) and waits until they have listed. */
  async start(): Promise<void> {
    if (!this.started) {
      this.started = true;
      this.hrqs.start();
      this.singletons.start();
      void Promise.all([this.hrqs.synced, this.singletons.synced]).then(() => {
        this.synced = true;
        this.markSynced();
      });
    }
    await this.whenSynced;
  }

  async stop(): Promise<void> {
    for (const ns of [...this.reservations.keys()]) this.releaseReservation(ns);
    await Promise.all([this.hrqs.stop(), this.singletons.stop()]);
  }

  private emit(change: QuotaChange): void {
    for (const l of this.listeners) l(change);
  }
}

/** The singleton HNC made (a user's ResourceQuota of the same name, without the label, is not). */
export function isSingleton(obj: ResourceQuotaObject): boolean {
  return obj.metadata.name === HRQ_RESOURCE_QUOTA_NAME && obj.metadata.labels?.[Label.hrq] === 'true';
}
