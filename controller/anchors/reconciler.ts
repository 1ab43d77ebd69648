// Reconciles one SubnamespaceAnchor: creates its subnamespace, reports its state, and on
// deletion removes the subnamespace before letting the anchor go (docs/behaviour.md §4).
import { anchorPath } from '../../core/api/paths.js';
import type { SubnamespaceAnchor } from '../../core/api/types.js';
import type { Hierarchy } from '../../core/hierarchy/hierarchy.js';
import { desiredAnchor, planAnchor } from '../../core/hierarchy/plan.js';
import { isAlreadyExists, isNotFound } from '../../kube/client.js';
import type { ReadonlyStore } from '../../kube/watch/store.js';
import type { Writes } from '../../kube/writes.js';
import type { Logger } from '../../kube/log.js';
import { WriteExpectations } from '../../kube/expectations.js';

export class AnchorReconciler {
  constructor(
    private readonly hierarchy: Hierarchy,
    private readonly anchors: ReadonlyStore<SubnamespaceAnchor>,
    private readonly writer: Writes,
    private readonly log: Logger,
    private readonly expectations = new WriteExpectations(),
  ) {}

  /** `rid` names this reconcile on its log lines (kube/log-context.ts). */
  async reconcile(key: string, rid?: string): Promise<void> {
    const current = this.anchors.get(key);
    if (!current) return;
    // Our last write has not reached the cache yet: its watch event brings this key back.
    if (this.expectations.stale(key, current.metadata.resourceVersion)) return;
    if (this.expectations.stale(`ns/${current.metadata.name}`, this.hierarchy.namespace(current.metadata.name!) ? 'exists' : undefined))
      return;
    const parent = current.metadata.namespace!;
    const child = current.metadata.name!;
    // The anchor's own namespace is gone: the anchor went with it, though its deletion has not
    // reached the cache yet. Nothing to do; above all no subnamespace to create under a parent
    // that no longer exists (found by the soak, docs/reliability.md). Should the namespace appear
    // after its anchor, its arrival brings the anchor back (Hierarchy.setNamespace).
    if (!this.hierarchy.namespace(parent)) return;
    const plan = planAnchor(this.hierarchy, parent, child);
    let created: { uid?: string } | undefined;
    if (plan.create) {
      try {
        const ns = await this.writer.create<{ metadata?: { uid?: string } }>('/api/v1/namespaces', {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: child, ...plan.create },
        });
        this.expectations.wrote(`ns/${child}`, undefined);
        this.log.info({ rid, namespace: parent, anchor: child }, 'created subnamespace');
        created = { uid: ns?.metadata?.uid };
      } catch (err) {
        // Someone else's namespace of that name appeared meanwhile: the next pass says Conflict.
        if (!isAlreadyExists(err)) throw err;
      }
    }
    if (plan.deleteNamespace) {
      try {
        await this.writer.delete(`/api/v1/namespaces/${child}`);
        this.log.info({ rid, namespace: parent, anchor: child }, 'deleting subnamespace of a deleted anchor');
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    const desired = desiredAnchor(current, plan, created !== undefined);
    if (!desired) return;
    try {
      await this.writer.replace(anchorPath(parent, child), desired);
      this.expectations.wrote(key, current.metadata.resourceVersion);
    } catch (err) {
      // An anchor whose last finalizer we removed may already be gone.
      if (!isNotFound(err)) throw err;
      // Deleted before its finalizer was written, just after we created its subnamespace: the
      // namespace goes too, as it would have through the finalizer (found by the soak).
      if (created) await this.deleteCreated(child, created.uid, parent, rid);
      return;
    }
    this.log.info({ rid, namespace: parent, anchor: child, state: desired.status?.status, finalizer: plan.finalizer }, 'updated anchor');
  }

  /** Deletes the subnamespace this pass created (only that one: its uid), whose anchor is gone. */
  private async deleteCreated(child: string, uid: string | undefined, parent: string, rid?: string): Promise<void> {
    try {
      await this.writer.delete(`/api/v1/namespaces/${child}`, { preconditions: { uid } });
      this.log.info({ rid, namespace: parent, anchor: child }, 'deleting the subnamespace of an anchor deleted as it was created');
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
