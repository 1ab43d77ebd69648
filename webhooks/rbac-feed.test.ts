import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { KubeClient } from '../kube/client.js';
import { createLogger } from '../kube/log.js';
import type { ReflectorOptions } from '../kube/watch/reflector.js';
import { RbacFeed, type Compact } from './rbac-feed.js';
import { RbacIndex, type RbacChange } from './rbac-index.js';
import { Conditions } from '../kube/testing.js';

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

  it('sends a failure after the first list even when the watch had reported failing before it', async () => {
    const { sent, health } = withFakeWatches();
    // Today's Reflector starts unhealthy without saying so; this keeps the feed right if it ever says so.
    health('ClusterRoleBinding', false);
    health('ClusterRoleBinding', true);
    await turn();
    sent.length = 0;
    health('ClusterRoleBinding', false);
    expect(sent).toEqual([[{ k: 'ClusterRoleBinding', fresh: false }]]);
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

describe('RbacFeed over real watches', () => {
  const CR = '/apis/rbac.authorization.k8s.io/v1/clusterroles';
  const CRB = '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings';
  type Obj = { metadata: { name: string; resourceVersion?: string } } & Record<string, unknown>;
  type Res = PassThrough & { statusCode: number; complete: boolean; headers: object };

  /**
   * Two collections served to real Reflectors: lists, watches the test writes to, and a 410 on
   * demand. It notifies its waiters after each batch applied and each watch opened.
   */
  class FakeApi extends Conditions {
    private rv = 10;
    private readonly objects = new Map<string, Map<string, Obj>>();
    readonly watches = new Map<string, Res>();
    /** Collections whose next watch is answered 410 Gone (history expired: the reflector relists). */
    readonly gone = new Set<string>();

    /** Creates or replaces an object; with `event`, the open watch is told. */
    set(path: string, obj: Obj, event?: 'ADDED' | 'MODIFIED'): void {
      const stored = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.rv) } };
      if (!this.objects.has(path)) this.objects.set(path, new Map());
      this.objects.get(path)!.set(obj.metadata.name, stored);
      if (event) this.send(path, event, stored);
    }

    /** Deletes an object; with `event`, the open watch is told. */
    delete(path: string, name: string, event: boolean): void {
      const old = this.objects.get(path)?.get(name);
      this.objects.get(path)?.delete(name);
      this.rv++;
      if (event && old) this.send(path, 'DELETED', { ...old, metadata: { ...old.metadata, resourceVersion: String(this.rv) } });
    }

    /** Ends the open watch as its server-side timeout does (a bookmark, then the end); the next watch gets a 410: a relist. */
    expire(path: string): void {
      this.send(path, 'BOOKMARK', { metadata: { resourceVersion: String(this.rv) } });
      this.gone.add(path);
      const w = this.watches.get(path);
      this.watches.delete(path);
      w?.end();
    }

    private send(path: string, type: string, object: unknown): void {
      this.watches.get(path)?.write(Buffer.from(JSON.stringify({ type, object }) + '\n'));
    }

    readonly client = {
      stream: (path: string, query: Record<string, unknown>, signal?: AbortSignal) => {
        const res = Object.assign(new PassThrough(), { statusCode: 200, complete: false, headers: {} }) as Res;
        signal?.addEventListener('abort', () => res.destroy(new Error('aborted')));
        if (!query.watch) {
          const items = [...(this.objects.get(path)?.values() ?? [])];
          res.end(JSON.stringify({ kind: 'List', metadata: { resourceVersion: String(this.rv) }, items }));
        } else if (this.gone.delete(path)) {
          res.statusCode = 410;
          res.end(JSON.stringify({ kind: 'Status', code: 410, reason: 'Expired' }));
        } else {
          this.watches.set(path, res);
          setImmediate(() => this.notify());
        }
        return Promise.resolve({ res });
      },
    } as unknown as KubeClient;
  }

  const check = { verb: 'update', group: 'hnc.x-k8s.io', resource: 'hierarchyconfigurations', namespace: 'a' };
  const editor: Obj = { metadata: { name: 'editor' }, rules: hierarchyEditor };
  const binding = (user: string): Obj => ({
    metadata: { name: 'b' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'editor' },
    subjects: [{ kind: 'User', name: user }],
  });

  it('follows deletions, an object re-created under the same name, and a 410 relist that missed both', async () => {
    const api = new FakeApi();
    const index = new RbacIndex();
    const sent: RbacChange[] = [];
    const f = new RbacFeed({
      client: api.client,
      logger: createLogger({ level: 'silent' }),
      send: (c) => {
        sent.push(...c);
        index.apply(c);
        api.notify();
      },
    });
    const allowed = (username: string) => index.allows({ username }, check) === true;
    api.set(CR, editor);
    api.set(CRB, binding('alice'));
    f.roles.synced(true);
    f.roleBindings.synced(true);
    f.start();
    try {
      await api.until(() => allowed('alice') && api.watches.size === 2, 'the first lists, and both watches open');
      // Deleted and re-created for someone else, as the watch tells it.
      api.delete(CRB, 'b', true);
      api.set(CRB, binding('bob'), 'ADDED');
      await api.until(() => allowed('bob'), "bob's binding");
      expect(allowed('alice')).toBe(false);
      // The same again, unseen (the watch's history expired): the relist finds the new object under the old name.
      api.delete(CRB, 'b', false);
      api.set(CRB, binding('carol'));
      api.expire(CRB);
      await api.until(() => allowed('carol'), 'the relist of ClusterRoleBindings');
      expect(allowed('bob')).toBe(false);
      // A role deleted unseen: the relist of ClusterRoles takes it out.
      api.delete(CR, 'editor', false);
      api.expire(CR);
      await api.until(() => index.clusterRoleRules('editor') === undefined, 'the relist of ClusterRoles');
      expect(index.synced).toBe(true);
      expect(allowed('carol')).toBe(false);
      // Created again later: the binding that refers to it grants again.
      api.set(CR, editor, 'ADDED');
      await api.until(() => allowed('carol'), 'the ClusterRole re-created');
      // A watch ended by the server and a first 410 are expected restarts: the copy was never unsynced.
      expect(sent.filter((c) => 'fresh' in c || ('synced' in c && !c.synced))).toEqual([]);
    } finally {
      await f.stop();
    }
  });
});
