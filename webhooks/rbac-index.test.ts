import { describe, expect, it } from 'vitest';
import { RbacIndex, type RbacChange } from './rbac-index.js';

const HC = { verb: 'update', group: 'hnc.x-k8s.io', resource: 'hierarchyconfigurations', namespace: 'team-a' };
const alice = { username: 'alice', groups: ['system:authenticated'] };
const editor = [{ verbs: ['update'], apiGroups: ['hnc.x-k8s.io'], resources: ['hierarchyconfigurations'] }];
const synced = (): RbacChange[] =>
  (['Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding'] as const).map((k) => ({ k, synced: true }));

describe('RbacIndex', () => {
  it('answers nothing until every kind is synced, then allows what a binding grants', () => {
    const index = new RbacIndex();
    index.apply([
      { k: 'ClusterRole', ns: '', name: 'editor', rules: editor },
      { k: 'RoleBinding', ns: 'team-a', name: 'b', binding: { roleKind: 'ClusterRole', roleName: 'editor', subjects: ['user:alice'] } },
    ]);
    expect(index.allows(alice, HC)).toBeUndefined();
    index.apply(synced().slice(0, 3));
    expect(index.allows(alice, HC)).toBeUndefined();
    index.apply(synced().slice(3));
    expect(index.allows(alice, HC)).toBe(true);
    expect(index.allows(alice, { ...HC, namespace: 'team-b' })).toBeUndefined();
  });

  it('forgets a deleted binding or role, and a kind that is no longer synced', () => {
    const index = new RbacIndex();
    const bind: RbacChange = {
      k: 'RoleBinding',
      ns: 'team-a',
      name: 'b',
      binding: { roleKind: 'Role', roleName: 'r', subjects: ['user:alice'] },
    };
    index.apply([...synced(), { k: 'Role', ns: 'team-a', name: 'r', rules: editor }, bind]);
    expect(index.allows(alice, HC)).toBe(true);
    index.apply([{ k: 'RoleBinding', ns: 'team-a', name: 'b' }]);
    expect(index.allows(alice, HC)).toBeUndefined();
    index.apply([bind, { k: 'Role', ns: 'team-a', name: 'r', rules: [] }]);
    expect(index.allows(alice, HC)).toBeUndefined();
    index.apply([{ k: 'Role', ns: 'team-a', name: 'r', rules: editor }]);
    expect(index.allows(alice, HC)).toBe(true);
    index.apply([{ k: 'RoleBinding', synced: false }]);
    expect(index.sizes().RoleBinding).toBe(0);
    expect(index.allows(alice, HC)).toBeUndefined();
  });

  it('answers nothing while a kind is not fresh (its watch failing), keeping its objects, and again once it is', () => {
    const index = new RbacIndex();
    const bind: RbacChange = {
      k: 'ClusterRoleBinding',
      ns: '',
      name: 'b',
      binding: { roleKind: 'ClusterRole', roleName: 'editor', subjects: ['user:alice'] },
    };
    index.apply([...synced(), { k: 'ClusterRole', ns: '', name: 'editor', rules: editor }, bind]);
    expect(index.allows(alice, HC)).toBe(true);
    index.apply([{ k: 'ClusterRoleBinding', fresh: false }]);
    expect(index.synced).toBe(false);
    expect(index.allows(alice, HC)).toBeUndefined();
    expect(index.sizes().ClusterRoleBinding).toBe(1);
    // Another kind failing too: both must recover.
    index.apply([
      { k: 'Role', fresh: false },
      { k: 'ClusterRoleBinding', fresh: true },
    ]);
    expect(index.allows(alice, HC)).toBeUndefined();
    index.apply([{ k: 'Role', fresh: true }]);
    expect(index.allows(alice, HC)).toBe(true);
    // A kind listed afresh (a new propagator) is fresh; one unsynced stays unanswered until listed.
    index.apply([
      { k: 'Role', fresh: false },
      { k: 'Role', synced: true },
    ]);
    expect(index.allows(alice, HC)).toBe(true);
    index.apply([
      { k: 'RoleBinding', fresh: false },
      { k: 'RoleBinding', synced: false },
    ]);
    expect(index.allows(alice, HC)).toBeUndefined();
    index.apply([{ k: 'RoleBinding', synced: true }]);
    expect(index.allows(alice, HC)).toBe(true);
  });

  it('shares one binding between the copies of a RoleBinding', () => {
    const index = new RbacIndex();
    const changes: RbacChange[] = [];
    for (let i = 0; i < 3; i++)
      changes.push({
        k: 'RoleBinding',
        ns: `ns-${i}`,
        name: 'b',
        binding: { roleKind: 'ClusterRole', roleName: 'admin', subjects: ['group:g'] },
      });
    index.apply(changes);
    const [a, b] = [[...index.bindings('ns-0')][0], [...index.bindings('ns-2')][0]];
    expect(a).toBeDefined();
    expect(a).toBe(b);
    expect(index.sizes()).toEqual({ Role: 0, RoleBinding: 3, ClusterRole: 0, ClusterRoleBinding: 0 });
  });
});

describe('RbacIndex sharing', () => {
  it('shares only equal lists: a verb with a NUL in it is not two verbs', () => {
    const index = new RbacIndex();
    const hcDelete = { verbs: ['update', 'delete'], apiGroups: ['', 'hnc.x-k8s.io'], resources: ['hierarchyconfigurations', 'namespaces'] };
    index.apply([
      ...synced(),
      { k: 'ClusterRole', ns: '', name: 'both', rules: [hcDelete] },
      { k: 'ClusterRole', ns: '', name: 'odd2', rules: [{ ...hcDelete, verbs: ['update\0delete'] }] },
      { k: 'ClusterRoleBinding', ns: '', name: 'b', binding: { roleKind: 'ClusterRole', roleName: 'odd2', subjects: ['user:alice'] } },
    ]);
    // 'update\0delete' is one verb (as the API server reads it): neither update nor delete.
    expect(index.allows(alice, { verb: 'delete', group: '', resource: 'namespaces', name: 'x' })).toBeUndefined();
    expect(index.clusterRoleRules('odd2')?.[0]?.verbs).toEqual(['update\0delete']);
  });
});
