// Reconciles one namespace: its labels and annotations (tree labels, managed metadata, the
// included-namespace label) and its HierarchyConfiguration (parent, children, conditions,
// finalizer). Desired state comes from the hierarchy model; only differences are written.
import { Singleton } from '../../core/api/constants.js';
import { hierarchyConfigurationPath } from '../../core/api/paths.js';
import type { Condition, HierarchyConfiguration, NamespaceObject } from '../../core/api/types.js';
import { WriteExpectations } from '../../kube/expectations.js';
import type { Hierarchy } from '../../core/hierarchy/hierarchy.js';
import { conditionEvents, desiredNamespaceMetadata, metadataPatch, planHierarchy } from '../../core/hierarchy/plan.js';
import type { ReadonlyStore } from '../../kube/watch/store.js';
import type { Events, Writes } from '../../kube/writes.js';
import type { Logger } from '../../kube/log.js';

export class HierarchyReconciler {
  constructor(
    private readonly hierarchy: Hierarchy,
    private readonly namespaces: ReadonlyStore<NamespaceObject>,
    private readonly hierarchies: ReadonlyStore<HierarchyConfiguration>,
    private readonly writer: Writes,
    private readonly log: Logger,
    private readonly events?: Events,
    private readonly expectations = new WriteExpectations(),
  ) {}

  /** `rid` names this reconcile on its log lines (kube/log-context.ts). */
  async reconcile(ns: string, rid?: string): Promise<void> {
    const obj = this.namespaces.get(ns);
    if (!obj) return; // gone: the model already dropped it and enqueued its relatives
    const current = this.hierarchies.get(`${ns}/${Singleton.hierarchy}`);
    // Our last write has not reached the cache yet: its watch event brings this key back.
    if (
      this.expectations.stale(`hc/${ns}`, current?.metadata.resourceVersion) ||
      this.expectations.stale(`ns/${ns}`, obj.metadata.resourceVersion)
    )
      return;
    const plan = planHierarchy(this.hierarchy, ns, current, new Date().toISOString().replace(/\.\d+Z$/, 'Z'));
    if (plan.action === 'create') {
      await this.writer.create(hierarchyConfigurationPath(ns), plan.object);
      this.expectations.wrote(`hc/${ns}`, undefined);
      this.log.info({ rid, namespace: ns, parent: plan.object.spec?.parent }, 'created HierarchyConfiguration');
    } else if (plan.action === 'update') {
      await this.writer.replace(hierarchyConfigurationPath(ns, Singleton.hierarchy), plan.object);
      this.expectations.wrote(`hc/${ns}`, current?.metadata.resourceVersion);
      this.log.info(
        { rid, namespace: ns, parent: plan.object.spec?.parent, conditions: plan.object.status?.conditions?.map((c) => c.reason) },
        'updated HierarchyConfiguration',
      );
    }
    if (plan.action !== 'none') this.recordConditionEvents(obj, current?.status?.conditions ?? [], plan.object.status?.conditions ?? []);
    // A namespace on its way out keeps its labels: rewriting them would only race the deletion.
    if (obj.metadata.deletionTimestamp) return;
    // Uninstall (the HierarchyConfiguration CRD is being deleted): the parents vanish with their
    // objects, and recomputing tree labels from that would strip every namespace's ancestry, which
    // users' NetworkPolicies and other selectors rely on. Halted as HNC is: namespaces are left as
    // they are (docs/operations.md, "Uninstalling").
    if (this.hierarchy.hierarchyCrdDeleting) return;
    const meta = { labels: { ...(obj.metadata.labels ?? {}) }, annotations: { ...(obj.metadata.annotations ?? {}) } };
    const patch = metadataPatch(meta, desiredNamespaceMetadata(this.hierarchy, ns, meta));
    if (patch) {
      // The resourceVersion makes a stale cache fail with 409 rather than undo someone's change.
      await this.writer.mergePatch(`/api/v1/namespaces/${ns}`, { metadata: { ...patch, resourceVersion: obj.metadata.resourceVersion } });
      this.expectations.wrote(`ns/${ns}`, obj.metadata.resourceVersion);
      this.log.info({ rid, namespace: ns, labels: patch.labels, annotations: patch.annotations }, 'updated namespace metadata');
    }
  }

  /** A Warning event on the Namespace when a condition appears, a Normal one when it clears. */
  private recordConditionEvents(ns: NamespaceObject, before: readonly Condition[], after: readonly Condition[]): void {
    if (!this.events) return;
    const target = { apiVersion: 'v1', kind: 'Namespace', name: ns.metadata.name, namespace: ns.metadata.name, uid: ns.metadata.uid };
    for (const e of conditionEvents(before, after))
      void (e.type === 'Warning' ? this.events.warn(target, e.reason, e.message) : this.events.normal(target, e.reason, e.message));
  }
}
