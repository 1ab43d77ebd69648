// The anchor reconciler's glue, from memory: the subnamespace it creates, the anchor's finalizer
// and status, the cascading delete, and when it holds back. Plans are core/hierarchy's (tested there).
import { describe, expect, it, vi } from 'vitest';
import { AnchorState, Annotation, Finalizer, Label, treeLabel } from '../../core/api/constants.js';
import type { SubnamespaceAnchor } from '../../core/api/types.js';
import { silentLog, World } from '../testing.js';
import { anchorPath } from '../../core/api/paths.js';
import { AnchorReconciler } from './reconciler.js';

function setup() {
  const world = new World();
  const reconciler = new AnchorReconciler(world.hierarchy, world.anchors, world.namespaces, world.writes, silentLog);
  return { world, reconciler };
}

/** The anchor as it is written back (the body of the last recorded replace). */
const lastAnchorWrite = (world: World) => world.writes.writes.findLast((w) => w.verb === 'update')?.body as SubnamespaceAnchor;

describe('AnchorReconciler', () => {
  it('creates the subnamespace already labelled, then reports Ok with the finalizer in one anchor write', async () => {
    const { world, reconciler } = setup();
    world.namespace('a', { labels: { [treeLabel('a')]: '0' } });
    world.anchor('a', 'c');
    await reconciler.reconcile('a/c');
    expect(world.writes.lines()).toEqual(['create /api/v1/namespaces', `update ${anchorPath('a', 'c')}`]);
    expect(world.writes.writes[0]!.body).toEqual({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name: 'c',
        labels: { [Label.includedNamespace]: 'true', [treeLabel('c')]: '0', [treeLabel('a')]: '1' },
        annotations: { [Annotation.subnamespaceOf]: 'a' },
      },
    });
    expect(lastAnchorWrite(world)).toMatchObject({
      metadata: { finalizers: [Finalizer.anchor], resourceVersion: world.anchors.get('a/c')!.metadata.resourceVersion },
      status: { status: AnchorState.Ok },
    });
  });

  it('plans nothing until the cache has seen its writes, and nothing once it has (read-your-writes, minimal writes)', async () => {
    const { world, reconciler } = setup();
    world.namespace('a');
    world.anchor('a', 'c');
    await reconciler.reconcile('a/c');
    world.writes.clear();
    // Neither the namespace nor the anchor's new version is in the cache yet: a second create
    // would fail with AlreadyExists, a second replace with 409.
    await reconciler.reconcile('a/c');
    expect(world.writes.writes).toEqual([]);
    // The watch events arrive: the namespace, then the anchor as written.
    world.namespace('c', { annotations: { [Annotation.subnamespaceOf]: 'a' } });
    world.anchor('a', 'c', { metadata: { finalizers: [Finalizer.anchor] }, status: { status: AnchorState.Ok } });
    await reconciler.reconcile('a/c');
    expect(world.writes.writes).toEqual([]);
  });

  it('deletes the subnamespace it just created when the anchor went before its finalizer was written', async () => {
    const { world, reconciler } = setup();
    world.namespace('a');
    world.anchor('a', 'c');
    // The user deletes the anchor right after creating it: no finalizer holds it, so the write of
    // the finalizer finds it gone (found by the soak: the subnamespace stayed, its anchor missing).
    world.writes.failNext('update', anchorPath('a', 'c'), 404, 'NotFound');
    await reconciler.reconcile('a/c');
    expect(world.writes.lines()).toEqual([
      'create /api/v1/namespaces',
      `update ${anchorPath('a', 'c')} (failed)`,
      'delete /api/v1/namespaces/c',
    ]);
    // Only the namespace it made: a namespace of that name made by someone else meanwhile stays.
    expect(world.writes.writes[2]!.preconditions).toEqual({ uid: 'uid-c' });
  });

  it('deletes the subnamespace it created when the anchor vanishes after its finalizer was written (a deletion racing the write)', async () => {
    // The API server can drop an object whose finalizer was added concurrently with its deletion
    // (kubernetes#77988): the anchor's DELETED event comes without its deletion ever being seen.
    const { world, reconciler } = setup();
    world.namespace('a');
    world.anchor('a', 'c');
    await reconciler.reconcile('a/c');
    world.namespace('c', { annotations: { [Annotation.subnamespaceOf]: 'a' } });
    world.anchorGone('a', 'c');
    world.writes.clear();
    await reconciler.reconcile('a/c');
    expect(world.writes.lines()).toEqual(['delete /api/v1/namespaces/c']);
    expect(world.writes.writes[0]!.preconditions).toEqual({ uid: 'uid-c' });
    // Once only.
    await reconciler.reconcile('a/c');
    expect(world.writes.lines()).toEqual(['delete /api/v1/namespaces/c']);
  });

  it('leaves to the finalizer, the uninstall, a changed owner and time what a vanished anchor would take', async () => {
    const made = async (then: (world: World, reconciler: AnchorReconciler) => unknown, atMs = 0) => {
      const { world, reconciler } = setup();
      world.namespace('a');
      world.anchor('a', 'c');
      await reconciler.reconcile('a/c');
      world.namespace('c', { annotations: { [Annotation.subnamespaceOf]: 'a' } });
      await then(world, reconciler);
      world.anchorGone('a', 'c');
      world.writes.clear();
      const now = Date.now();
      vi.spyOn(Date, 'now').mockReturnValue(now + atMs);
      await reconciler.reconcile('a/c').finally(() => vi.restoreAllMocks());
      return world.writes.lines();
    };
    // Its deletion was seen: the finalizer path decided (here: it keeps a namespace with a child).
    const deletionSeen = async (w: World, r: AnchorReconciler) => {
      w.namespace('d');
      w.hc('d', { spec: { parent: 'c' } });
      w.anchor('a', 'c', { metadata: { finalizers: [Finalizer.anchor], deletionTimestamp: '2026-01-01T00:00:00Z' } });
      await r.reconcile('a/c');
    };
    expect((await made(deletionSeen)).filter((w) => w.startsWith('delete'))).toEqual([]);
    // Uninstalling: anchors go, subnamespaces stay.
    expect(await made((w) => w.hierarchy.setCrdsDeleting({ hierarchy: false, anchor: true }))).toEqual([]);
    // Made a full namespace, or grafted elsewhere, by a user meanwhile.
    expect(await made((w) => w.namespace('c'))).toEqual([]);
    expect(
      await made((w) => w.namespace('c', { annotations: { [Annotation.subnamespaceOf]: 'a', [Annotation.graftedBy]: 'bob' } })),
    ).toEqual([]);
    // More than a minute after its creation: not tied to this anchor's vanishing any more.
    expect(await made(() => {}, 61_000)).toEqual([]);
    expect(await made(() => {}, 59_000)).toEqual(['delete /api/v1/namespaces/c']);
  });

  it('keeps a subnamespace it did not create in this pass when its anchor is gone', async () => {
    const { world, reconciler } = setup();
    world.namespace('a');
    world.namespace('c', { annotations: { [Annotation.subnamespaceOf]: 'a' } });
    world.anchor('a', 'c');
    world.writes.failNext('update', anchorPath('a', 'c'), 404, 'NotFound');
    await reconciler.reconcile('a/c');
    expect(world.writes.lines()).toEqual([`update ${anchorPath('a', 'c')} (failed)`]);
  });

  it('deletes a subnamespace created after its anchor went (a deposed leader’s request delivered late), as any replica that saw it go', async () => {
    const late = async (meta: { creationTimestamp: string; annotations: Record<string, string> }, seen = true) => {
      const { world, reconciler } = setup();
      world.namespace('a');
      world.anchor('a', 'c');
      if (seen) reconciler.observe('a/c');
      world.anchorGone('a', 'c');
      reconciler.observe('a/c');
      await reconciler.reconcile('a/c');
      expect(world.writes.writes).toEqual([]);
      // The namespace arrives: its anchor key is looked at although the anchor is gone.
      world.namespace('c', meta);
      await reconciler.reconcile('a/c');
      return world.writes.writes.map((w) => `${w.verb} ${w.path} ${JSON.stringify(w.preconditions)}`);
    };
    const after = (ms: number) => new Date(Date.now() + ms).toISOString();
    const ours = { [Annotation.subnamespaceOf]: 'a' };
    expect(await late({ creationTimestamp: after(3_000), annotations: ours })).toEqual(['delete /api/v1/namespaces/c {"uid":"uid-c"}']);
    // Not clearly after (clocks, whole seconds), grafted by a user, or an anchor this replica never saw: kept.
    expect(await late({ creationTimestamp: after(1_000), annotations: ours })).toEqual([]);
    expect(await late({ creationTimestamp: after(3_000), annotations: { ...ours, [Annotation.graftedBy]: 'bob' } })).toEqual([]);
    expect(await late({ creationTimestamp: after(3_000), annotations: ours }, false)).toEqual([]);
    const affected = new World().hierarchy.setNamespace('c', { labels: {}, annotations: ours, deleting: false });
    expect([...affected.anchors]).toEqual(['a/c']);
  });

  it("reports Conflict for someone else's namespace of that name, and never touches it", async () => {
    const { world, reconciler } = setup();
    world.namespace('a');
    world.namespace('c');
    world.anchor('a', 'c');
    await reconciler.reconcile('a/c');
    expect(world.writes.lines()).toEqual([`update ${anchorPath('a', 'c')}`]);
    expect(lastAnchorWrite(world).status).toEqual({ status: AnchorState.Conflict });
  });

  it('takes AlreadyExists on create as a race: reports Missing for now, and the next pass decides', async () => {
    const { world, reconciler } = setup();
    world.namespace('a');
    world.anchor('a', 'c');
    world.writes.failNext('create', '/api/v1/namespaces', 409, 'AlreadyExists');
    await reconciler.reconcile('a/c');
    expect(world.writes.lines()).toEqual(['create /api/v1/namespaces (failed)', `update ${anchorPath('a', 'c')}`]);
    expect(lastAnchorWrite(world).status).toEqual({ status: AnchorState.Missing });
  });

  it('throws any other failed create, writing nothing more', async () => {
    const { world, reconciler } = setup();
    world.namespace('a');
    world.anchor('a', 'c');
    world.writes.failNext('create', '/api/v1/namespaces', 403);
    await expect(reconciler.reconcile('a/c')).rejects.toThrow(/403/);
    expect(world.writes.lines()).toEqual(['create /api/v1/namespaces (failed)']);
  });

  it('deletes the subnamespace of a deleted anchor, then lets the anchor go once it is gone', async () => {
    const { world, reconciler } = setup();
    const deleted = {
      metadata: { finalizers: [Finalizer.anchor], deletionTimestamp: '2026-01-01T00:00:00Z' },
      status: { status: AnchorState.Ok },
    };
    world.namespace('a');
    world.namespace('c', { annotations: { [Annotation.subnamespaceOf]: 'a' } });
    world.hc('c', { spec: { parent: 'a' } });
    world.anchor('a', 'c', deleted);
    await reconciler.reconcile('a/c');
    expect(world.writes.lines()).toEqual(['delete /api/v1/namespaces/c']);
    // The namespace is terminating: the anchor keeps its finalizer, and nothing is deleted twice.
    world.namespace('c', { annotations: { [Annotation.subnamespaceOf]: 'a' }, deletionTimestamp: '2026-01-01T00:00:01Z' });
    await reconciler.reconcile('a/c');
    expect(world.writes.lines()).toEqual(['delete /api/v1/namespaces/c']);
    // Gone: the finalizer goes; an anchor already gone (404) is no failure.
    world.namespaceGone('c');
    world.writes.failNext('update', anchorPath('a', 'c'), 404);
    await reconciler.reconcile('a/c');
    expect(world.writes.lines()).toEqual(['delete /api/v1/namespaces/c', `update ${anchorPath('a', 'c')} (failed)`]);
    expect(lastAnchorWrite(world).metadata.finalizers).toBeUndefined();
  });

  it('creates nothing for an anchor whose own namespace is gone, and acts once a namespace of its own appears (found by the soak)', async () => {
    // A namespace deleted with its subnamespace: the subnamespace is gone, the parent too, and the
    // parent's anchor is still in the cache (its deletion event not there yet). Recreating the
    // subnamespace would leave an orphan whose parent does not exist.
    const { world, reconciler } = setup();
    world.anchor('gone', 'c', { metadata: { finalizers: [Finalizer.anchor] }, status: { status: AnchorState.Ok } });
    await reconciler.reconcile('gone/c');
    expect(world.writes.writes).toEqual([]);
    // An anchor seen before its namespace: the namespace's arrival brings the anchor back.
    const affected = world.hierarchy.setNamespace('gone', { labels: {}, annotations: {}, deleting: false });
    expect([...affected.anchors]).toContain('gone/c');
  });

  it('keeps the subnamespace of a deleted anchor when it has children and no cascading deletion', async () => {
    const { world, reconciler } = setup();
    world.namespace('a');
    world.namespace('c', { annotations: { [Annotation.subnamespaceOf]: 'a' } });
    world.hc('c', { spec: { parent: 'a' } });
    world.namespace('d');
    world.hc('d', { spec: { parent: 'c' } });
    world.anchor('a', 'c', {
      metadata: { finalizers: [Finalizer.anchor], deletionTimestamp: '2026-01-01T00:00:00Z' },
      status: { status: AnchorState.Ok },
    });
    await reconciler.reconcile('a/c');
    expect(world.writes.lines()).toEqual([`update ${anchorPath('a', 'c')}`]);
    expect(lastAnchorWrite(world).metadata.finalizers).toBeUndefined();
  });
});
