// The hierarchy reconciler's glue, from memory: which writes a plan turns into, that a settled
// namespace is never rewritten, that it never plans from a cache behind its own writes, and the
// Events a condition change records. The plans themselves are core/hierarchy's (tested there).
import { describe, expect, it } from 'vitest';
import { Label, NamespaceReason, Singleton, treeLabel } from '../../core/api/constants.js';
import type { HierarchyConfiguration } from '../../core/api/types.js';
import type { RecordedWrite } from '../../kube/testing.js';
import { silentLog, World } from '../testing.js';
import { hierarchyConfigurationPath } from '../../core/api/paths.js';
import { HierarchyReconciler } from './reconciler.js';

function setup(world = new World()) {
  const reconciler = new HierarchyReconciler(world.hierarchy, world.namespaces, world.hierarchies, world.writes, silentLog, world.events);
  return { world, reconciler };
}

/** Feeds a recorded write back as the watch event that would follow it. */
function echo(world: World, w: RecordedWrite): void {
  const ns = /^\/api\/v1\/namespaces\/([^/]+)$/.exec(w.path);
  if (w.verb === 'patch' && ns) {
    const cached = world.namespaces.get(ns[1]!)!;
    const patch = (w.body as { metadata: { labels?: Record<string, string | null>; annotations?: Record<string, string | null> } })
      .metadata;
    const merge = (base: Record<string, string> = {}, p: Record<string, string | null> = {}) => {
      const out = { ...base };
      for (const [k, v] of Object.entries(p))
        if (v === null) delete out[k];
        else out[k] = v;
      return out;
    };
    world.namespace(ns[1]!, {
      ...cached.metadata,
      labels: merge(cached.metadata.labels, patch.labels),
      annotations: merge(cached.metadata.annotations, patch.annotations),
    });
  } else if (w.verb === 'create' || w.verb === 'update') {
    const hc = w.body as HierarchyConfiguration;
    world.hc(hc.metadata.namespace!, hc);
  } else throw new Error(`no watch event for ${w.verb} ${w.path}`);
}

/** Reconciles the namespaces and feeds the writes back until nothing is written; returns the writes of each round. */
async function settle(world: World, reconciler: HierarchyReconciler, namespaces: string[]): Promise<string[][]> {
  const rounds: string[][] = [];
  for (let i = 0; i < 5; i++) {
    world.writes.clear();
    for (const ns of namespaces) await reconciler.reconcile(ns);
    rounds.push(world.writes.lines());
    if (!world.writes.writes.length) return rounds;
    for (const w of world.writes.writes) echo(world, w);
  }
  throw new Error(`still writing after 5 rounds: ${JSON.stringify(rounds)}`);
}

describe('HierarchyReconciler', () => {
  it("writes a new child's tree labels and its parent's children, then never again", async () => {
    const { world, reconciler } = setup();
    world.namespace('a');
    world.namespace('b', { labels: { team: 'x' } });
    world.hc('b', { spec: { parent: 'a' } });
    const rounds = await settle(world, reconciler, ['a', 'b']);
    expect(rounds).toEqual([
      [`create ${hierarchyConfigurationPath('a')}`, 'patch /api/v1/namespaces/a', 'patch /api/v1/namespaces/b'],
      [], // settled: an unchanged namespace or HC is never rewritten
    ]);
    expect(world.hierarchies.get(`a/${Singleton.hierarchy}`)?.status?.children).toEqual(['b']);
    expect(world.namespaces.get('b')?.metadata.labels).toEqual({
      team: 'x',
      [Label.includedNamespace]: 'true',
      [treeLabel('a')]: '1',
      [treeLabel('b')]: '0',
    });
  });

  it("patches only the keys that differ, guarded by the cached namespace's resourceVersion", async () => {
    const { world, reconciler } = setup();
    world.namespace('a', { labels: { [Label.includedNamespace]: 'true', [treeLabel('a')]: '0', [treeLabel('old')]: '1', team: 'x' } });
    await reconciler.reconcile('a');
    expect(world.writes.writes).toEqual([
      {
        verb: 'patch',
        path: '/api/v1/namespaces/a',
        body: { metadata: { labels: { [treeLabel('old')]: null }, resourceVersion: world.namespaces.get('a')!.metadata.resourceVersion } },
        ok: true,
      },
    ]);
  });

  it('plans nothing from a cache that has not seen its last write yet (read-your-writes)', async () => {
    const { world, reconciler } = setup();
    world.namespace('a');
    await reconciler.reconcile('a');
    expect(world.writes.lines()).toEqual(['patch /api/v1/namespaces/a']);
    // The patch's watch event has not arrived: the same patch again would only fail with 409.
    await reconciler.reconcile('a');
    expect(world.writes.lines()).toEqual(['patch /api/v1/namespaces/a']);
    echo(world, world.writes.writes[0]!);
    await reconciler.reconcile('a');
    expect(world.writes.lines()).toEqual(['patch /api/v1/namespaces/a']);
  });

  it('records a Warning when a condition appears and a Normal event when it clears', async () => {
    const { world, reconciler } = setup();
    world.namespace('b');
    world.hc('b', { spec: { parent: 'gone' } });
    await settle(world, reconciler, ['b']);
    const hc = world.hierarchies.get(`b/${Singleton.hierarchy}`)!;
    expect(hc.status?.conditions?.map((c) => c.reason)).toEqual([NamespaceReason.ParentMissing]);
    expect(world.events.lines()).toEqual([`Warning b/b ${NamespaceReason.ParentMissing}`]);
    expect(world.events.events[0]!.target).toMatchObject({ kind: 'Namespace', name: 'b', uid: 'uid-b' });

    world.namespace('gone');
    await settle(world, reconciler, ['gone', 'b']);
    expect(world.hierarchies.get(`b/${Singleton.hierarchy}`)?.status?.conditions).toBeUndefined();
    expect(world.events.lines()).toEqual([
      `Warning b/b ${NamespaceReason.ParentMissing}`,
      `Normal b/b ${NamespaceReason.ParentMissing}Cleared`,
    ]);
  });

  it('keeps the labels of a namespace on its way out, and writes nothing for one that is gone', async () => {
    const { world, reconciler } = setup();
    world.namespace('a', { deletionTimestamp: '2026-01-01T00:00:00Z' });
    await reconciler.reconcile('a');
    expect(world.writes.writes).toEqual([]);
    world.namespaceGone('a');
    await reconciler.reconcile('a');
    expect(world.writes.writes).toEqual([]);
  });

  it('leaves namespace labels alone while the HierarchyConfiguration CRD is being deleted (uninstall)', async () => {
    const { world, reconciler } = setup();
    world.namespace('a', { labels: { [Label.includedNamespace]: 'true', [treeLabel('a')]: '0' } });
    world.namespace('b', { labels: { [Label.includedNamespace]: 'true', [treeLabel('a')]: '1', [treeLabel('b')]: '0' } });
    world.hierarchies.delete(`b/${Singleton.hierarchy}`); // the HCs go with their CRD
    world.hierarchy.setCrdsDeleting({ hierarchy: true, anchor: true });
    world.hierarchy.setHierarchy('b', undefined);
    await reconciler.reconcile('b');
    expect(world.writes.writes).toEqual([]);
  });

  it('throws a failed write for the queue to retry, and then writes again', async () => {
    const { world, reconciler } = setup();
    world.namespace('a');
    world.writes.failNext('patch', '/api/v1/namespaces/a', 409);
    await expect(reconciler.reconcile('a')).rejects.toThrow(/409/);
    // A failed write sets no expectation: the retry plans again at once.
    await reconciler.reconcile('a');
    expect(world.writes.lines()).toEqual(['patch /api/v1/namespaces/a (failed)', 'patch /api/v1/namespaces/a']);
  });
});
