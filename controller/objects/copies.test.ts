// The copy reconciler's glue, from memory: what it writes for a plan, how it counts, what it
// reports, and when it holds back. Its decisions themselves are core/propagation's (tested there).
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { EventReason, Label, PropagationMode } from '../../core/api/constants.js';
import { hierarchy, updateHierarchy } from '../../core/hierarchy/testing.js';
import { desiredCopy, isCopy } from '../../core/propagation/copy.js';
import { SourceSet } from '../../core/propagation/decide.js';
import { RecordingEvents, RecordingWrites, storeOf } from '../../kube/testing.js';
import { CopyReconciler, type Obj, type ResolvedType } from './copies.js';

const RB: ResolvedType = {
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  resource: 'rolebindings',
  kind: 'RoleBinding',
  mode: PropagationMode.Propagate,
};
const path = (ns: string, name?: string) => `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings${name ? `/${name}` : ''}`;

let rv = 100;
/** A RoleBinding as the watch cache holds it (server-set uid and resourceVersion). */
function rolebinding(ns: string, name: string, opts: { role?: string; from?: string } = {}): Obj {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: {
      name,
      namespace: ns,
      uid: `uid-${ns}-${name}`,
      resourceVersion: String(rv++),
      ...(opts.from && { labels: { [Label.inheritedFrom]: opts.from } }),
    },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: opts.role ?? 'admin' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'devs' }],
  } as Obj;
}

/** The copy of `source` in `ns`, as the cache holds it once created. */
function copyOf(source: Obj, ns: string): Obj {
  const c = structuredClone(desiredCopy(source, source.metadata.namespace, ns)) as Obj;
  return { ...c, metadata: { ...c.metadata, uid: `uid-${ns}-${c.metadata.name}`, resourceVersion: String(rv++) } };
}

/** Answers creates and updates as the API server does: what it stored, with a new resourceVersion. */
class StoringWrites extends RecordingWrites {
  /** The resourceVersion of the last answer. */
  lastVersion = '';
  /** When set, answers wait for it (a write in flight). */
  gate?: Promise<void>;
  override async create<T>(path: string, body: unknown): Promise<T> {
    const o = await super.create<Obj>(path, body);
    await this.gate;
    return this.stored<T>(o);
  }
  override async replace<T>(path: string, body: unknown): Promise<T> {
    const o = await super.replace<Obj>(path, body);
    await this.gate;
    return this.stored<T>(o);
  }
  private stored<T>(o: Obj): T {
    this.lastVersion = String(rv++);
    return {
      ...o,
      metadata: { ...o.metadata, uid: `uid-${o.metadata.namespace}-${o.metadata.name}`, resourceVersion: this.lastVersion },
    } as T;
  }
}

function setup(text: string, objects: Obj[], requeue?: (ns: string) => void) {
  const h = hierarchy(text);
  const objectStore = storeOf(objects);
  const sources = new SourceSet(
    objects.filter((o) => !isCopy(o)).map((o) => ({ namespace: o.metadata.namespace, name: o.metadata.name, object: o })),
  );
  const writes = new StoringWrites();
  const events = new RecordingEvents();
  const conflicts = new Map<string, string[]>();
  let countChanges = 0;
  const reconciler = new CopyReconciler({
    type: RB,
    objects: objectStore,
    context: () => ({ hierarchy: h, type: RB, sources }),
    writes,
    events,
    log: pino({ level: 'silent' }),
    setConflicts: (ns, c) => conflicts.set(ns, c),
    onCounts: () => countChanges++,
    requeue,
  });
  return { h, store: objectStore, writes, events, conflicts, reconciler, countChanges: () => countChanges };
}

describe('CopyReconciler', () => {
  it('creates the missing copies, and writes nothing once the cache holds them', async () => {
    const src = rolebinding('a', 'r');
    const t = setup('a -> b', [src]);
    expect(await t.reconciler.reconcile('b')).toBe('done');
    expect(t.writes.lines()).toEqual([`create ${path('b')}`]);
    expect(t.writes.writes[0]!.body).toMatchObject({ metadata: { name: 'r', namespace: 'b', labels: { [Label.inheritedFrom]: 'a' } } });
    expect(t.reconciler.propagatedIn('b')).toBe(1);

    // The watch event of the create arrives: the copy is in place, and an unchanged copy is never rewritten.
    t.store.upsert(copyOf(src, 'b'));
    t.writes.clear();
    expect(await t.reconciler.reconcile('b')).toBe('done');
    expect(t.writes.writes).toEqual([]);
    expect(t.reconciler.numPropagated).toBe(1);
    expect(t.countChanges()).toBe(1); // the count did not move the second time
  });

  it('plans nothing from a cache that has not seen its last write yet (read-your-writes)', async () => {
    const src = rolebinding('a', 'r');
    const t = setup('a -> b', [src]);
    await t.reconciler.reconcile('b');
    t.writes.clear();
    // Without the expectation, the stale cache (no copy yet) would plan the create again: AlreadyExists.
    expect(await t.reconciler.reconcile('b')).toBe('skipped');
    expect(t.writes.writes).toEqual([]);
    // An update's expectation: the cache still shows the version the update replaced.
    t.store.upsert(copyOf(src, 'b'));
    expect(await t.reconciler.reconcile('b')).toBe('done');
    const stale = { ...copyOf(src, 'b'), subjects: [] } as Obj;
    t.store.upsert(stale);
    await t.reconciler.reconcile('b');
    expect(t.writes.lines()).toEqual([`update ${path('b', 'r')}`]);
    expect(await t.reconciler.reconcile('b')).toBe('skipped');
    t.store.upsert({ ...stale, metadata: { ...stale.metadata, resourceVersion: String(rv++) } }); // the update's event
    expect(await t.reconciler.reconcile('b')).toBe('done');
  });

  it('takes the watch event of its own write, as it made it, for an echo (no reconcile needed); anything else is not', async () => {
    const src = rolebinding('a', 'r');
    const t = setup('a -> b', [src]);
    await t.reconciler.reconcile('b');
    const landed = { ...copyOf(src, 'b'), metadata: { ...copyOf(src, 'b').metadata, resourceVersion: t.writes.lastVersion } } as Obj;
    t.store.upsert(landed);
    expect(t.reconciler.isEchoOfOwnWrite('ADDED', landed)).toBe(true);
    // The cache caught up: the next reconcile plans (nothing to write), it does not wait.
    t.writes.clear();
    expect(await t.reconciler.reconcile('b')).toBe('done');
    expect(t.writes.writes).toEqual([]);
    // The same event again, or someone else's change of the copy: not an echo.
    expect(t.reconciler.isEchoOfOwnWrite('ADDED', landed)).toBe(false);
    const edited = { ...landed, subjects: [], metadata: { ...landed.metadata, resourceVersion: String(rv++) } } as Obj;
    t.store.upsert(edited);
    expect(t.reconciler.isEchoOfOwnWrite('MODIFIED', edited)).toBe(false);
    // Our update, then an event with another version (a change after ours): not an echo either.
    await t.reconciler.reconcile('b');
    expect(t.writes.lines()).toEqual([`update ${path('b', 'r')}`]);
    const later = { ...landed, metadata: { ...landed.metadata, resourceVersion: String(rv++) } } as Obj;
    expect(t.reconciler.isEchoOfOwnWrite('MODIFIED', later)).toBe(false);
  });

  it('holds the event that comes before the answer to its write: queued again only if it was not that write', async () => {
    for (const ours of [true, false]) {
      const src = rolebinding('a', 'r');
      const requeued: string[] = [];
      const t = setup('a -> b', [src], (ns) => requeued.push(ns));
      let answer!: () => void;
      t.writes.gate = new Promise<void>((resolve) => (answer = resolve));
      const reconciled = t.reconciler.reconcile('b');
      await new Promise((resolve) => setImmediate(resolve)); // the create is sent, its answer held
      expect(t.writes.lines()).toEqual([`create ${path('b')}`]);
      // The next resourceVersion is the one the answer will carry; another is someone else's change.
      const event = {
        ...copyOf(src, 'b'),
        metadata: { ...copyOf(src, 'b').metadata, resourceVersion: String(ours ? rv : rv + 1000) },
      } as Obj;
      t.store.upsert(event);
      expect(t.reconciler.isEchoOfOwnWrite('ADDED', event)).toBe(true); // held, not queued now
      answer();
      expect(await reconciled).toBe('done');
      expect(t.writes.lastVersion === event.metadata.resourceVersion).toBe(ours);
      expect(requeued).toEqual(ours ? [] : ['b']);
      // No write is in flight any more: a later event of the copy is not held.
      expect(
        t.reconciler.isEchoOfOwnWrite('MODIFIED', { ...event, metadata: { ...event.metadata, resourceVersion: String(rv++) } } as Obj),
      ).toBe(false);
    }
  });

  it('queues again a namespace whose write failed after an event of that copy came', async () => {
    const src = rolebinding('a', 'r');
    const requeued: string[] = [];
    const t = setup('a -> b', [src], (ns) => requeued.push(ns));
    let fail!: (e: Error) => void;
    t.writes.gate = new Promise<void>((_, reject) => (fail = reject));
    const reconciled = t.reconciler.reconcile('b');
    await new Promise((resolve) => setImmediate(resolve));
    // A copy of that name someone else made meanwhile (our create then fails: AlreadyExists).
    const theirs = { ...copyOf(src, 'b'), metadata: { ...copyOf(src, 'b').metadata, resourceVersion: String(rv + 1000) } } as Obj;
    t.store.upsert(theirs);
    expect(t.reconciler.isEchoOfOwnWrite('ADDED', theirs)).toBe(true);
    fail(new Error('the write failed'));
    await expect(reconciled).rejects.toThrow('the write failed');
    expect(requeued).toEqual(['b']);
  });

  it('brings back a namespace that waited for the cache: the echo it waited for is not taken for one', async () => {
    const src = rolebinding('a', 'r');
    const t = setup('a -> b', [src]);
    await t.reconciler.reconcile('b');
    expect(await t.reconciler.reconcile('b')).toBe('skipped'); // e.g. another source changed meanwhile
    const landed = { ...copyOf(src, 'b'), metadata: { ...copyOf(src, 'b').metadata, resourceVersion: t.writes.lastVersion } } as Obj;
    t.store.upsert(landed);
    expect(t.reconciler.isEchoOfOwnWrite('ADDED', landed)).toBe(false);
    expect(await t.reconciler.reconcile('b')).toBe('done');
  });

  it("takes the DELETED event of a copy it deleted for an echo, and another object's of that name for a change", async () => {
    const src = rolebinding('a', 'r');
    for (const [uid, echo] of [
      [undefined, true],
      ['uid-other', false],
    ] as const) {
      const copy = copyOf(src, 'b');
      const t = setup('a -> b', [copy]); // the source is gone: the copy must go
      await t.reconciler.reconcile('b');
      expect(t.writes.lines()).toEqual([`delete ${path('b', 'r')}`]);
      t.store.delete('b/r');
      const gone = { ...copy, metadata: { ...copy.metadata, uid: uid ?? copy.metadata.uid } } as Obj;
      expect(t.reconciler.isEchoOfOwnWrite('DELETED', gone)).toBe(echo);
    }
  });

  it('recreates a copy whose immutable field differs: deletes it (as seen), then creates it', async () => {
    const src = rolebinding('a', 'r', { role: 'admin' });
    const old = copyOf(rolebinding('a', 'r', { role: 'view' }), 'b');
    const t = setup('a -> b', [src, old]);
    await t.reconciler.reconcile('b');
    expect(t.writes.lines()).toEqual([`delete ${path('b', 'r')}`, `create ${path('b')}`]);
    expect(t.writes.writes[0]!.preconditions).toEqual({ uid: old.metadata.uid });
    expect(t.writes.writes[1]!.body).toMatchObject({ roleRef: { name: 'admin' } });
    expect(t.writes.writes[1]!.body).not.toHaveProperty('metadata.resourceVersion');
    expect(t.reconciler.propagatedIn('b')).toBe(1);
  });

  it('does not create after a failed delete of a copy to recreate, and does not count it', async () => {
    const t = setup('a -> b', [rolebinding('a', 'r'), copyOf(rolebinding('a', 'r', { role: 'view' }), 'b')]);
    t.writes.failNext('delete', path('b', 'r'), 500);
    await expect(t.reconciler.reconcile('b')).rejects.toThrow(/500/);
    expect(t.writes.lines()).toEqual([`delete ${path('b', 'r')} (failed)`]);
    expect(t.reconciler.propagatedIn('b')).toBe(0);
  });

  it('reports a recreate whose create step failed as a write, not a removal, and does not count it', async () => {
    const t = setup('a -> b', [rolebinding('a', 'r'), copyOf(rolebinding('a', 'r', { role: 'view' }), 'b')]);
    t.writes.failNext('create', path('b'), 403);
    await expect(t.reconciler.reconcile('b')).rejects.toThrow(/403/);
    expect(t.writes.lines()).toEqual([`delete ${path('b', 'r')}`, `create ${path('b')} (failed)`]);
    expect(t.reconciler.propagatedIn('b')).toBe(0);
    expect(t.events.events.map((e) => e.message)).toEqual([
      expect.stringMatching(/^Could not write from source namespace "a": .*403/),
      expect.stringMatching(/^Could not write to destination namespace "b": .*403/),
    ]);
  });

  it('counts a failed delete of a stale copy as nothing: the copies in place stay counted', async () => {
    const kept = rolebinding('a', 'kept');
    const t = setup('a -> b', [kept, copyOf(kept, 'b'), rolebinding('b', 'gone', { from: 'a' })]);
    t.writes.failNext('delete', path('b', 'gone'), 500);
    await expect(t.reconciler.reconcile('b')).rejects.toThrow(/500/);
    expect(t.writes.lines()).toEqual([`delete ${path('b', 'gone')} (failed)`]);
    // The copy of "kept" is in place; the delete's failure must not take it off the count.
    expect(t.reconciler.propagatedIn('b')).toBe(1);
    expect(t.events.lines()).toEqual([`Warning b/gone ${EventReason.CannotUpdateObject}`]);
    expect(t.events.events[0]!.message).toMatch(/^Could not remove from source namespace "a": .*500/);
  });

  it('counts only the copies written, tries every write, reports a failure on the copy and its source, and throws', async () => {
    const t = setup('a -> b', [rolebinding('a', 'r1'), rolebinding('a', 'r2'), rolebinding('a', 'r3')]);
    t.writes.failNext('create', path('b'), 403);
    await expect(t.reconciler.reconcile('b')).rejects.toThrow(/403/);
    expect(t.writes.lines()).toEqual([`create ${path('b')} (failed)`, `create ${path('b')}`, `create ${path('b')}`]);
    expect(t.reconciler.propagatedIn('b')).toBe(2);
    expect(t.events.lines()).toEqual([
      `Warning b/r1 ${EventReason.CannotUpdateObject}`,
      `Warning a/r1 ${EventReason.CannotPropagateObject}`,
    ]);
    expect(t.events.events[1]!.message).toMatch(/^Could not write to destination namespace "b": /);
    expect(t.events.events[1]!.target).toMatchObject({ kind: 'RoleBinding', uid: 'uid-a-r1' });
  });

  it('reports no event for a race with the cache (409, 404), but still retries', async () => {
    const src = rolebinding('a', 'r');
    const t = setup('a -> b', [src, { ...copyOf(src, 'b'), subjects: [] } as Obj]);
    t.writes.failNext('update', path('b', 'r'), 409);
    await expect(t.reconciler.reconcile('b')).rejects.toThrow(/409/);
    expect(t.events.events).toEqual([]);
    expect(t.reconciler.propagatedIn('b')).toBe(0);
  });

  it("leaves a user's object of a source's name alone, and reports it as a conflict", async () => {
    const t = setup('a -> b', [rolebinding('a', 'r'), rolebinding('b', 'r', { role: 'view' })]);
    await t.reconciler.reconcile('b');
    expect(t.writes.writes).toEqual([]);
    expect(t.conflicts.get('b')).toEqual(['RoleBinding "r" (from "a")']);
    expect(t.events.lines()).toEqual([`Warning b/r ${EventReason.CannotPropagateObject}`]);
    expect(t.events.events[0]!.message).toMatch(/^Not overwriting RoleBinding "r": it was not created by HNC/);
  });

  it('takes a deleted namespace out of the count: its copies are gone with it', async () => {
    const src = rolebinding('a', 'r');
    const t = setup('a -> b', [src]);
    await t.reconciler.reconcile('b');
    t.store.upsert(copyOf(src, 'b'));
    expect(t.reconciler.numPropagated).toBe(1);
    // The namespace's watches report it gone, and its HierarchyConfiguration with it.
    t.h.setHierarchy('b', undefined);
    t.h.setNamespace('b', undefined);
    expect(await t.reconciler.reconcile('b')).toBe('skipped');
    expect(t.reconciler.numPropagated).toBe(0);
    expect(t.countChanges()).toBe(2);
  });

  it('writes nothing into a halted namespace', async () => {
    const t = setup('a -> b', [rolebinding('a', 'r'), rolebinding('b', 'gone', { from: 'a' })]);
    updateHierarchy(t.h, 'a', { parent: 'missing' }); // a's parent is missing: a and below are halted
    expect(await t.reconciler.reconcile('b')).toBe('skipped');
    expect(t.writes.writes).toEqual([]);
  });
});
