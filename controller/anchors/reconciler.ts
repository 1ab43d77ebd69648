// Reconciles one SubnamespaceAnchor: creates its subnamespace, reports its state, and on
// deletion removes the subnamespace before letting the anchor go (docs/behaviour.md §4).
import { Annotation } from '../../core/api/constants.js';
import { anchorPath } from '../../core/api/paths.js';
import type { NamespaceObject, SubnamespaceAnchor } from '../../core/api/types.js';
import type { Hierarchy } from '../../core/hierarchy/hierarchy.js';
import { desiredAnchor, planAnchor } from '../../core/hierarchy/plan.js';
import { isAlreadyExists, isConflict, isNotFound } from '../../kube/client.js';
import type { ReadonlyStore } from '../../kube/watch/store.js';
import type { Writes } from '../../kube/writes.js';
import type { Logger } from '../../kube/log.js';
import { WriteExpectations } from '../../kube/expectations.js';

/** How long a subnamespace this process created stays tied to its anchor's vanishing (below). */
const CREATED_MEMORY_MS = 60_000;
/** Clocks and creationTimestamp's whole seconds: a namespace counts as created after its anchor went only this clearly. */
const LATE_MARGIN_MS = 2_000;

export class AnchorReconciler {
  /**
   * The subnamespaces this process created, by anchor key, for a minute. An anchor can vanish
   * without ever showing its deletion to our finalizer: deleted before the finalizer was written,
   * or by a deletion that raced the write (the API server may drop an object whose finalizer was
   * added concurrently, kubernetes#77988; the soak and the anchor race test both hit it). Its
   * subnamespace then goes as the finalizer would have taken it.
   */
  private readonly created = new Map<string, { uid: string; at: number }>();
  /** Anchors seen in the cache, and when those that went were seen gone (a minute's memory; observe()). */
  private readonly present = new Set<string>();
  private readonly gone = new Map<string, number>();

  constructor(
    private readonly hierarchy: Hierarchy,
    private readonly anchors: ReadonlyStore<SubnamespaceAnchor>,
    private readonly namespaces: ReadonlyStore<NamespaceObject>,
    private readonly writer: Writes,
    private readonly log: Logger,
    private readonly expectations = new WriteExpectations(),
  ) {}

  /**
   * Notes an anchor key's change, on every replica, leader or not: when an anchor goes, so that a
   * leader can tell its subnamespace created after that (vanished()), even one it did not lead for.
   */
  observe(key: string): void {
    if (this.anchors.get(key)) return void this.present.add(key);
    if (!this.present.delete(key)) return;
    const now = Date.now();
    for (const [k, at] of this.gone) if (now - at > CREATED_MEMORY_MS) this.gone.delete(k);
    this.gone.set(key, now);
  }

  /** `rid` names this reconcile on its log lines (kube/log-context.ts). */
  async reconcile(key: string, rid?: string): Promise<void> {
    const current = this.anchors.get(key);
    if (!current) return this.vanished(key, rid);
    // Its deletion is in view: the finalizer path below takes the subnamespace.
    if (current.metadata.deletionTimestamp) this.created.delete(key);
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
    let made = false;
    if (plan.create) {
      try {
        const ns = await this.writer.create<{ metadata?: { uid?: string } }>('/api/v1/namespaces', {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: child, ...plan.create },
        });
        this.expectations.wrote(`ns/${child}`, undefined);
        this.log.info({ rid, namespace: parent, anchor: child }, 'created subnamespace');
        made = true;
        this.remember(key, ns?.metadata?.uid);
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
    const desired = desiredAnchor(current, plan, made);
    if (!desired) return;
    try {
      await this.writer.replace(anchorPath(parent, child), desired);
      this.expectations.wrote(key, current.metadata.resourceVersion);
    } catch (err) {
      // An anchor whose last finalizer we removed may already be gone; one deleted before its
      // finalizer was written takes the subnamespace we just created with it.
      if (!isNotFound(err)) throw err;
      return this.vanished(key, rid);
    }
    this.log.info({ rid, namespace: parent, anchor: child, state: desired.status?.status, finalizer: plan.finalizer }, 'updated anchor');
  }

  private remember(key: string, uid: string | undefined): void {
    const now = Date.now();
    for (const [k, c] of this.created) if (now - c.at > CREATED_MEMORY_MS) this.created.delete(k);
    if (uid) this.created.set(key, { uid, at: now });
  }

  /**
   * The anchor is gone. If we created its subnamespace within the last minute and nobody has
   * since made it another's (subnamespace-of changed, grafted), it goes too; only that namespace
   * (its uid), never one of the same name made by someone else.
   */
  private async vanished(key: string, rid?: string): Promise<void> {
    // Uninstalling: anchors go without their subnamespaces (docs/behaviour.md §3.7).
    if (this.hierarchy.anchorCrdDeleting) return;
    const [parent, child] = key.split('/') as [string, string];
    const ns = this.hierarchy.namespace(child);
    if (ns && (ns.annotations[Annotation.subnamespaceOf] !== parent || ns.annotations[Annotation.graftedBy] !== undefined)) return;
    const created = this.created.get(key);
    this.created.delete(key);
    if (created && Date.now() - created.at <= CREATED_MEMORY_MS) return this.deleteCreated(child, created.uid, parent, rid);
    const late = this.createdAfterItsAnchorWent(key, child);
    if (late) await this.deleteCreated(child, late, parent, rid);
  }

  /**
   * The uid of the subnamespace `child` if HNC created it after its anchor went (seen gone within
   * the minute): a leader's request delivered late, after the network that held it came back (the
   * soak: its successor had seen the anchor deleted 17 s before). Not grafted by anyone (the
   * mutator marks a user's subnamespace-of), created a clear 2 s after: nobody's but that request's.
   */
  private createdAfterItsAnchorWent(key: string, child: string): string | undefined {
    const goneAt = this.gone.get(key);
    const ns = this.namespaces.get(child);
    const created = Date.parse(ns?.metadata.creationTimestamp ?? '');
    if (goneAt === undefined || Date.now() - goneAt > CREATED_MEMORY_MS) return;
    if (!ns?.metadata.uid || !(created > goneAt + LATE_MARGIN_MS) || ns.metadata.deletionTimestamp) return;
    return ns.metadata.uid;
  }

  /** Deletes the subnamespace we created (only that one: its uid), whose anchor is gone. */
  private async deleteCreated(child: string, uid: string, parent: string, rid?: string): Promise<void> {
    try {
      await this.writer.delete(`/api/v1/namespaces/${child}`, { preconditions: { uid } });
      this.log.info({ rid, namespace: parent, anchor: child }, 'deleting the subnamespace of an anchor deleted as it was created');
    } catch (err) {
      // Gone already, or a namespace of that name that is not the one we made (409): not ours.
      if (!isNotFound(err) && !isConflict(err)) throw err;
    }
  }
}
