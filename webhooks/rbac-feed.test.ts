import { describe, expect, it } from 'vitest';
import type { KubeClient } from '../kube/client.js';
import { createLogger } from '../kube/log.js';
import { RbacFeed } from './rbac-feed.js';
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
