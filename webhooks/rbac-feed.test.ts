import { describe, expect, it } from 'vitest';
import type { KubeClient } from '../kube/client.js';
import { createLogger } from '../kube/log.js';
import type { ReflectorOptions } from '../kube/watch/reflector.js';
import { RbacFeed, type Compact } from './rbac-feed.js';
import { RbacIndex, type RbacChange } from './rbac-index.js';

function feed() {
  const sent: RbacChange[][] = [];
  const f = new RbacFeed({ client: {} as KubeClient, logger: createLogger({ level: 'silent' }), send: (c) => sent.push(c) });
  return { f, sent };
}
const role = (rules: object[]) => ({ metadata: { name: 'r', namespace: 'a' }, rules });
const podReader = [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }];
const hierarchyEditor = [{ apiGroups: ['hnc.x-k8s.io'], resources: ['hierarchyconfigurations'], verbs: ['update'] }];

describe('RbacFeed', () => {
  it('never sends a Role whose rules could not allow a check the validators make, and sends one that stops allowing', () => {
    const { f, sent } = feed();
    const { roles } = f;
    for (let i = 0; i < 1000; i++) roles.changed(`ns-${i}`, 'pod-reader', roles.summarize(role(podReader)));
    f.flush();
    expect(sent).toEqual([]);
    roles.changed('a', 'r', roles.summarize(role(hierarchyEditor)));
    roles.changed('a', 'r', roles.summarize(role(podReader)));
    roles.changed('a', 'r', undefined);
    f.flush();
    expect(sent).toEqual([
      [
        {
          k: 'Role',
          ns: 'a',
          name: 'r',
          rules: [{ verbs: ['update'], apiGroups: ['hnc.x-k8s.io'], resources: ['hierarchyconfigurations'] }],
        },
        { k: 'Role', ns: 'a', name: 'r' },
      ],
    ]);
  });

  it('sends RoleBindings as their role and subject keys, in one batch per turn', async () => {
    const { f, sent } = feed();
    const { roleBindings } = f;
    const rb = {
      metadata: { name: 'b', namespace: 'a' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
      subjects: [{ kind: 'ServiceAccount', name: 'deployer' }],
    };
    roleBindings.changed('a', 'b', roleBindings.summarize(rb));
    roleBindings.synced(true);
    await new Promise((r) => setImmediate(r));
    expect(sent).toEqual([
      [
        {
          k: 'RoleBinding',
          ns: 'a',
          name: 'b',
          binding: { roleKind: 'ClusterRole', roleName: 'admin', subjects: ['user:system:serviceaccount:a:deployer'] },
        },
        { k: 'RoleBinding', synced: true },
      ],
    ]);
  });
});

describe('RbacFeed.close', () => {
  it('unsyncs every kind at once (the webhooks drain on with no more changes coming), and sends nothing after', async () => {
    const { f, sent } = feed();
    const index = new RbacIndex();
    const { roles, roleBindings } = f;
    roles.changed('a', 'r', roles.summarize(role(hierarchyEditor)));
    roleBindings.changed('a', 'b', { roleKind: 'Role', roleName: 'r', subjects: ['user:alice'] });
    for (const k of ['Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding'] as const) sent.push([{ k, synced: true }]);
    f.flush();
    for (const batch of sent) index.apply(batch);
    const alice = { username: 'alice' };
    const check = { verb: 'update', group: 'hnc.x-k8s.io', resource: 'hierarchyconfigurations', namespace: 'a' };
    expect(index.allows(alice, check)).toBe(true);
    sent.length = 0;
    f.close();
    // Synchronously: the admission thread is told before it is told to stop.
    expect(sent).toEqual([
      [
        { k: 'Role', synced: false },
        { k: 'RoleBinding', synced: false },
        { k: 'ClusterRole', synced: false },
        { k: 'ClusterRoleBinding', synced: false },
      ],
    ]);
    for (const batch of sent) index.apply(batch);
    expect(index.allows(alice, check)).toBeUndefined();
    roles.changed('a', 'r2', roles.summarize(role(hierarchyEditor)));
    roles.synced(true);
    await new Promise((r) => setImmediate(r));
    f.flush();
    expect(sent).toHaveLength(1);
  });
});

describe('RbacFeed freshness', () => {
  const alice = { username: 'alice' };
  const check = { verb: 'update', group: 'hnc.x-k8s.io', resource: 'hierarchyconfigurations', namespace: 'a' };
  const turn = () => new Promise((r) => setImmediate(r));

  /** A feed whose two watches are fakes: the test calls their onHealth and handlers as a reflector would. */
  function withFakeWatches() {
    const watches = new Map<string, { opts: ReflectorOptions<Compact>; handler?: (t: 'ADDED' | 'DELETED', o: Compact) => unknown }>();
    const index = new RbacIndex();
    const sent: RbacChange[][] = [];
    const f = new RbacFeed({
      client: {} as KubeClient,
      logger: createLogger({ level: 'silent' }),
      send: (c) => {
        sent.push(c);
        index.apply(c);
      },
      reflector: (opts) => {
        const w: { opts: ReflectorOptions<Compact>; handler?: (t: 'ADDED' | 'DELETED', o: Compact) => unknown } = { opts };
        watches.set(opts.name!, w);
        return {
          addHandler: (h) => {
            w.handler = h as typeof w.handler;
            return () => undefined;
          },
          start() {
            return this as never;
          },
          stop: async () => undefined,
        };
      },
    });
    f.start();
    const health = (kind: string, healthy: boolean) => watches.get(kind)!.opts.onHealth!(healthy);
    return { f, index, sent, health, watches };
  }

  it('syncs a cluster-wide kind on its first list, unsyncs it at once while its watch fails, and resyncs when it delivers again', async () => {
    const { f, index, sent, health, watches } = withFakeWatches();
    const { roles, roleBindings } = f;
    roles.synced(true);
    roleBindings.changed('a', 'b', { roleKind: 'ClusterRole', roleName: 'editor', subjects: ['user:alice'] });
    roleBindings.synced(true);
    const cr = watches.get('ClusterRole')!;
    cr.handler!('ADDED', cr.opts.transform!({ metadata: { name: 'editor' }, rules: hierarchyEditor } as Compact));
    health('ClusterRole', true);
    await turn();
    expect(index.allows(alice, check)).toBeUndefined();
    health('ClusterRoleBinding', true);
    await turn();
    expect(index.allows(alice, check)).toBe(true);
    // The ClusterRoleBinding watch fails: sent within the same call, not on the next turn.
    sent.length = 0;
    health('ClusterRoleBinding', false);
    expect(sent).toEqual([[{ k: 'ClusterRoleBinding', fresh: false }]]);
    expect(index.allows(alice, check)).toBeUndefined();
    // Failing again changes nothing more; delivering again makes it fresh, after what it delivered.
    health('ClusterRoleBinding', false);
    cr.handler!('DELETED', { metadata: { name: 'editor' } });
    health('ClusterRole', false);
    health('ClusterRole', true);
    health('ClusterRoleBinding', true);
    await turn();
    expect(sent.slice(1)).toEqual([
      [
        { k: 'ClusterRole', ns: '', name: 'editor' },
        { k: 'ClusterRole', fresh: false },
      ],
      [
        { k: 'ClusterRole', fresh: true },
        { k: 'ClusterRoleBinding', fresh: true },
      ],
    ]);
    expect(index.synced).toBe(true);
    expect(index.allows(alice, check)).toBeUndefined();
  });

  it('unsyncs Roles or RoleBindings while the propagator reports its watch failing, until it delivers again', async () => {
    const { f, index, sent, health } = withFakeWatches();
    const { roles, roleBindings } = f;
    roles.changed('a', 'r', roles.summarize(role(hierarchyEditor)));
    roleBindings.changed('a', 'b', { roleKind: 'Role', roleName: 'r', subjects: ['user:alice'] });
    // The propagator's first list: its reflector reports healthy before the observer is synced.
    roles.fresh(true);
    roles.synced(true);
    roleBindings.fresh(true);
    roleBindings.synced(true);
    health('ClusterRole', true);
    health('ClusterRoleBinding', true);
    await turn();
    expect(sent.flat().filter((c) => 'fresh' in c)).toEqual([]);
    expect(index.allows(alice, check)).toBe(true);
    roleBindings.fresh(false);
    expect(index.allows(alice, check)).toBeUndefined();
    roleBindings.changed('a', 'b', undefined);
    roleBindings.fresh(true);
    await turn();
    expect(index.synced).toBe(true);
    expect(index.allows(alice, check)).toBeUndefined();
    // A stopped propagator's failing watch is nothing to the feed: the next one lists afresh.
    roles.fresh(false);
    roles.synced(false);
    roles.synced(true);
    await turn();
    expect(index.synced).toBe(true);
    f.close();
    roles.fresh(false);
    expect(sent.at(-1)).toEqual([
      { k: 'Role', synced: false },
      { k: 'RoleBinding', synced: false },
      { k: 'ClusterRole', synced: false },
      { k: 'ClusterRoleBinding', synced: false },
    ]);
  });
});
