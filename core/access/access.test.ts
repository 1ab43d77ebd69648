import { describe, expect, it } from 'vitest';
import { Label, SelectorAnnotation } from '../api/constants.js';
import type { Hierarchy } from '../hierarchy/hierarchy.js';
import { hierarchy, updateHierarchy } from '../hierarchy/testing.js';
import type { PropagatableObject } from '../propagation/copy.js';
import {
  bindingGrants,
  describeAccessChange,
  diffAccess,
  expectedGrants,
  expectedObjects,
  grantsFor,
  grantsOf,
  implicitGroups,
  parseSubject,
  ROLE_TYPE,
  ROLEBINDING_TYPE,
  roleText,
  subjectKey,
  subjectText,
  SubjectSyntaxError,
  type Grant,
  type RoleBindingObject,
} from './access.js';

// ---- a small DSL: RoleBindings and Roles in namespaces ------------------------------------------

type SubjectSpec = string; // 'user:alice', 'group:team-b', 'serviceaccount:ns:name'

interface RbOpts {
  /** A ClusterRole name, or `Role/NAME`. Default: admin. */
  role?: string;
  to?: SubjectSpec[];
  /** Makes it a copy from this namespace. */
  from?: string;
  annotations?: Record<string, string>;
  finalizers?: string[];
}

function rb(namespace: string, name: string, opts: RbOpts = {}): RoleBindingObject {
  const { role = 'admin', to = ['group:devs'], from, annotations, finalizers } = opts;
  const roleRef = role.startsWith('Role/')
    ? { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role.slice(5) }
    : { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role };
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: {
      name,
      namespace,
      ...(from ? { labels: { [Label.inheritedFrom]: from } } : {}),
      ...(annotations ? { annotations } : {}),
      ...(finalizers ? { finalizers } : {}),
    },
    roleRef,
    subjects: to.map((t) => {
      const s = parseSubject(t);
      return s.kind === 'ServiceAccount'
        ? { kind: s.kind, name: s.name, namespace: s.namespace }
        : { apiGroup: 'rbac.authorization.k8s.io', kind: s.kind, name: s.name };
    }),
  };
}

function role(namespace: string, name: string, from?: string): PropagatableObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name, namespace, ...(from ? { labels: { [Label.inheritedFrom]: from } } : {}) },
    rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
  } as PropagatableObject;
}

/** What the cluster holds once the controller has settled on `h`: the sources plus their copies. */
function settled<T extends PropagatableObject>(h: Hierarchy, objects: T[], type = ROLEBINDING_TYPE): T[] {
  return [...expectedObjects(h, type, objects, h.namespaceNames()).values()].flat();
}

/** Grants as one-line strings, for whole-answer assertions: `ns: subject role via binding (origin)`. */
const lines = (grants: readonly Grant[]): string[] =>
  grants.map(
    (g) =>
      `${g.namespace}: ${subjectKey(g.subject)} ${roleText(g.role)} via ${g.binding} (${g.origin === 'own' ? 'own' : `from ${g.from}`})` +
      (g.roleMissing ? ' [role missing]' : ''),
  );

// ---- tests ------------------------------------------------------------------------------------------

describe('subjects', () => {
  it('parses the three kinds; user and group names may hold colons', () => {
    expect(parseSubject('user:alice')).toEqual({ kind: 'User', name: 'alice' });
    expect(parseSubject('User:system:admin')).toEqual({ kind: 'User', name: 'system:admin' });
    expect(parseSubject('group:system:serviceaccounts:team-a')).toEqual({ kind: 'Group', name: 'system:serviceaccounts:team-a' });
    expect(parseSubject('serviceaccount:team-a:deployer')).toEqual({ kind: 'ServiceAccount', namespace: 'team-a', name: 'deployer' });
  });

  it('refuses malformed subjects with the expected form', () => {
    expect(() => parseSubject('alice')).toThrow(SubjectSyntaxError);
    expect(() => parseSubject('alice')).toThrow(
      '"alice" is not a subject: expected user:NAME, group:NAME or serviceaccount:NAMESPACE:NAME',
    );
    expect(() => parseSubject('role:x')).toThrow('"role:x" is not a subject');
    expect(() => parseSubject('user:')).toThrow('"user:" names no user');
    expect(() => parseSubject('serviceaccount:deployer')).toThrow('expected serviceaccount:NAMESPACE:NAME');
    expect(() => parseSubject('serviceaccount:a:b:c')).toThrow('is not a service account');
  });

  it('round-trips through subjectKey and reads well in messages', () => {
    for (const text of ['user:alice', 'group:team-b', 'serviceaccount:team-a:deployer']) expect(subjectKey(parseSubject(text))).toBe(text);
    expect(subjectText(parseSubject('group:team-b'))).toBe('group team-b');
    expect(subjectText(parseSubject('serviceaccount:team-a:deployer'))).toBe('serviceaccount team-a:deployer');
  });

  it('knows the groups Kubernetes puts users and service accounts in', () => {
    expect(implicitGroups(parseSubject('user:alice'))).toEqual(['system:authenticated']);
    expect(implicitGroups(parseSubject('serviceaccount:a:sa'))).toEqual([
      'system:serviceaccounts',
      'system:serviceaccounts:a',
      'system:authenticated',
    ]);
    expect(implicitGroups(parseSubject('group:x'))).toEqual([]);
  });
});

describe('grants of RoleBindings as they are', () => {
  it('sorts by namespace, subject, role and binding unless told not to', () => {
    const bindings = [rb('b', 'x', { to: ['user:zed'] }), rb('a', 'y', { to: ['user:amy'] }), rb('b', 'w', { to: ['group:g'] })];
    expect(lines(grantsOf(bindings))).toEqual([
      'a: user:amy admin via y (own)',
      'b: group:g admin via w (own)',
      'b: user:zed admin via x (own)',
    ]);
    expect(lines(grantsOf(bindings, { sorted: false }))).toEqual([
      'b: user:zed admin via x (own)',
      'a: user:amy admin via y (own)',
      'b: group:g admin via w (own)',
    ]);
  });

  it('reads own bindings and copies, one grant per distinct subject', () => {
    expect(lines(bindingGrants(rb('a', 'admins', { to: ['group:team-a', 'user:alice', 'group:team-a'] })))).toEqual([
      'a: group:team-a admin via admins (own)',
      'a: user:alice admin via admins (own)',
    ]);
    expect(lines(bindingGrants(rb('b', 'admins', { from: 'a', role: 'Role/deployer' })))).toEqual([
      'b: group:devs Role/deployer via admins (from a)',
    ]);
  });

  it('gives a service account subject without a namespace the binding’s namespace, and skips what grants nothing', () => {
    const b = rb('a', 'x');
    b.subjects = [{ kind: 'ServiceAccount', name: 'sa' }, { kind: 'Robot', name: 'r2' }, { kind: 'User' }];
    expect(lines(bindingGrants(b))).toEqual(['a: serviceaccount:a:sa admin via x (own)']);
    expect(bindingGrants({ ...rb('a', 'y'), roleRef: { kind: 'Unknown', name: 'z' } })).toEqual([]);
    expect(bindingGrants({ ...rb('a', 'y'), subjects: null })).toEqual([]);
  });

  it('sorts, filters by namespace, skips bindings being deleted, and marks missing roles when the roles are given', () => {
    const bindings = [
      rb('b', 'deploy', { role: 'Role/deployer', to: ['user:bob'], from: 'a' }),
      rb('a', 'deploy', { role: 'Role/deployer', to: ['user:bob'] }),
      rb('a', 'ops', { role: 'operator', to: ['group:ops'] }),
      { ...rb('c', 'old'), metadata: { ...rb('c', 'old').metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } },
    ];
    expect(lines(grantsOf(bindings))).toEqual([
      'a: group:ops operator via ops (own)',
      'a: user:bob Role/deployer via deploy (own)',
      'b: user:bob Role/deployer via deploy (from a)',
    ]);
    expect(lines(grantsOf(bindings, { namespaces: ['b'] }))).toEqual(['b: user:bob Role/deployer via deploy (from a)']);
    // The Role exists in a only; ClusterRoles not given: not checked.
    expect(lines(grantsOf(bindings, { roles: { roles: [role('a', 'deployer')] } }))).toEqual([
      'a: group:ops operator via ops (own)',
      'a: user:bob Role/deployer via deploy (own)',
      'b: user:bob Role/deployer via deploy (from a) [role missing]',
    ]);
    expect(lines(grantsOf(bindings, { roles: { clusterRoles: ['admin'] } }))).toContain(
      'a: group:ops operator via ops (own) [role missing]',
    );
  });

  it('finds the grants reaching a subject, through its implicit groups too', () => {
    const grants = grantsOf([
      rb('a', 'mine', { to: ['serviceaccount:a:ci'] }),
      rb('a', 'all-sas', { role: 'view', to: ['group:system:serviceaccounts:a'] }),
      rb('a', 'everyone', { role: 'view', to: ['group:system:authenticated'] }),
      rb('a', 'other', { to: ['serviceaccount:b:ci', 'user:ci'] }),
    ]);
    expect(lines(grantsFor(grants, parseSubject('serviceaccount:a:ci')))).toEqual([
      'a: group:system:authenticated view via everyone (own)',
      'a: group:system:serviceaccounts:a view via all-sas (own)',
      'a: serviceaccount:a:ci admin via mine (own)',
    ]);
    expect(lines(grantsFor(grants, parseSubject('user:ci'), []))).toEqual(['a: user:ci admin via other (own)']);
  });
});

describe('grants once the controller has acted (its own propagation decisions)', () => {
  it('copies a binding into every descendant, naming the source namespace', () => {
    const h = hierarchy('a -> b -> c, other');
    expect(lines(expectedGrants(h, [rb('a', 'admins', { to: ['group:team-a'] })], ['a', 'b', 'c', 'other']))).toEqual([
      'a: group:team-a admin via admins (own)',
      'b: group:team-a admin via admins (from a)',
      'c: group:team-a admin via admins (from a)',
    ]);
  });

  it('lists a subject reaching a namespace through two inherited bindings', () => {
    const h = hierarchy('a -> b -> c');
    const bindings = [rb('a', 'a-admins', { to: ['group:ops'] }), rb('b', 'b-viewers', { role: 'view', to: ['group:ops'] })];
    expect(lines(grantsFor(expectedGrants(h, bindings, ['c']), parseSubject('group:ops')))).toEqual([
      'c: group:ops admin via a-admins (from a)',
      'c: group:ops view via b-viewers (from b)',
    ]);
  });

  it('follows the highest ancestor for a name, and never replaces a user’s own binding', () => {
    const h = hierarchy('a -> b -> c');
    const bindings = [rb('a', 'admins', { to: ['group:from-a'] }), rb('b', 'admins', { to: ['group:from-b'] })];
    expect(lines(expectedGrants(h, bindings, ['b', 'c']))).toEqual([
      'b: group:from-b admin via admins (own)', // a conflict: the controller leaves it
      'c: group:from-a admin via admins (from a)',
    ]);
  });

  it('applies the selector annotations and the built-in exclusions', () => {
    const h = hierarchy('a -> b, a -> c');
    const bindings = [
      rb('a', 'tree', { to: ['user:t'], annotations: { [SelectorAnnotation.treeSelect]: '!c' } }),
      rb('a', 'none', { to: ['user:n'], annotations: { [SelectorAnnotation.none]: 'true' } }),
      rb('a', 'held', { to: ['user:f'], finalizers: ['example.com/hold'] }),
    ];
    expect(lines(expectedGrants(h, bindings, ['b', 'c']))).toEqual(['b: user:t admin via tree (from a)']);
  });

  it('removes copies whose source is gone, updates changed ones, and leaves a halted namespace as it is', () => {
    const h = hierarchy('a -> b, a -> c');
    const now = [
      rb('a', 'admins', { role: 'edit', to: ['group:team'] }),
      rb('b', 'admins', { role: 'admin', to: ['group:team'], from: 'a' }), // stale: the source now says edit
      rb('b', 'gone', { to: ['user:old'], from: 'a' }), // its source was deleted
      rb('c', 'gone', { to: ['user:old'], from: 'a' }),
    ];
    updateHierarchy(h, 'c', { parent: 'missing' }); // ParentMissing halts c: its copies stay put
    expect(lines(expectedGrants(h, now, ['b', 'c']))).toEqual([
      'b: group:team edit via admins (from a)',
      'c: user:old admin via gone (from a)',
    ]);
  });

  it('checks Role references against the Roles each namespace will hold', () => {
    const h = hierarchy('a -> b, c');
    const bindings = settled(h, [rb('a', 'deploy', { role: 'Role/deployer', to: ['user:bob'] })]);
    const roles = settled(h, [role('a', 'deployer')], ROLE_TYPE);
    updateHierarchy(h, 'c', { parent: 'a' });
    expect(lines(expectedGrants(h, bindings, ['a', 'b', 'c'], { roles: { roles, clusterRoles: [] } }))).toEqual([
      'a: user:bob Role/deployer via deploy (own)',
      'b: user:bob Role/deployer via deploy (from a)',
      'c: user:bob Role/deployer via deploy (from a)',
    ]);
    // Without the Role's source, the bindings point at nothing.
    expect(lines(expectedGrants(h, bindings, ['b'], { roles: { roles: [] } }))).toEqual([
      'b: user:bob Role/deployer via deploy (from a) [role missing]',
    ]);
  });
});

describe('differences', () => {
  /** team-a and team-c each grant a group admin; service-1 sits under team-a. */
  function teams(): { h: Hierarchy; now: RoleBindingObject[] } {
    const h = hierarchy('team-a -> service-1 -> svc-dev, team-c');
    const now = settled(h, [
      rb('team-a', 'team-b-admin', { to: ['group:team-b'] }),
      rb('team-c', 'team-c-admin', { to: ['group:team-c'] }),
      rb('team-a', 'auditors', { role: 'view', to: ['group:audit'] }),
      rb('team-c', 'auditors', { role: 'view', to: ['group:audit'] }),
    ]);
    return { h, now };
  }

  it('says exactly who loses and gains what when a subtree moves', () => {
    const { h, now } = teams();
    const scope = ['service-1', 'svc-dev'];
    const before = grantsOf(now, { namespaces: scope });
    updateHierarchy(h, 'service-1', { parent: 'team-c' });
    const after = expectedGrants(h, now, scope);
    expect(diffAccess(before, after).map(describeAccessChange)).toEqual([
      'group audit: keeps view in service-1, now inherited from team-c (was inherited from team-a)',
      'group team-b: loses admin in service-1 (was inherited from team-a)',
      'group team-c: gains admin in service-1 (inherited from team-c)',
      'group audit: keeps view in svc-dev, now inherited from team-c (was inherited from team-a)',
      'group team-b: loses admin in svc-dev (was inherited from team-a)',
      'group team-c: gains admin in svc-dev (inherited from team-c)',
    ]);
  });

  it('finds nothing when nothing changes, and after settling the expected grants are the actual ones', () => {
    const { h, now } = teams();
    const all = h.namespaceNames();
    expect(diffAccess(grantsOf(now), expectedGrants(h, now, all))).toEqual([]);
    updateHierarchy(h, 'service-1', { parent: 'team-c' });
    const moved = settled(h, now);
    expect(grantsOf(moved)).toEqual(expectedGrants(h, now, all));
    expect(diffAccess(grantsOf(moved), expectedGrants(h, moved, all))).toEqual([]);
  });

  it('counts a grant of a missing role as not held, and keeps every grant of a change', () => {
    const x = (g: Partial<Grant>): Grant => ({
      namespace: 'n',
      subject: { kind: 'User', name: 'u' },
      role: { kind: 'ClusterRole', name: 'admin' },
      binding: 'b1',
      origin: 'own',
      ...g,
    });
    const changes = diffAccess([x({ roleMissing: true })], [x({}), x({ binding: 'b2', origin: 'inherited', from: 'p' })]);
    expect(changes).toHaveLength(1);
    expect(changes[0]?.change).toBe('gains');
    expect(changes[0]?.after.map((g) => g.binding)).toEqual(['b1', 'b2']);
    expect(describeAccessChange(changes[0]!)).toBe('user u: gains admin in n (its own RoleBinding b1, inherited from p)');
    expect(diffAccess([x({})], [x({})])).toEqual([]);
  });

  it('orders changes by namespace, subject, role kind and name, and tells moves from same-origin holds', () => {
    const x = (g: Partial<Grant>): Grant => ({
      namespace: 'n',
      subject: { kind: 'User', name: 'u' },
      role: { kind: 'ClusterRole', name: 'admin' },
      binding: 'b',
      origin: 'own',
      ...g,
    });
    // Names where comparing joined keys and comparing part by part could disagree ("a" < "a-b" < "a.b").
    const after: Grant[] = [];
    for (const namespace of ['a.b', 'a', 'a-b'])
      for (const subject of [
        { kind: 'User', name: 'z' } as const,
        { kind: 'Group', name: 'a:b' } as const,
        { kind: 'Group', name: 'a' } as const,
      ])
        for (const role of [{ kind: 'Role', name: 'x' } as const, { kind: 'ClusterRole', name: 'view' } as const])
          after.push(x({ namespace, subject, role }));
    const changes = diffAccess([], after);
    const key = (c: { namespace: string; subject: Grant['subject']; role: Grant['role'] }) => [
      c.namespace,
      c.subject.kind === 'User' ? `user:${c.subject.name}` : `group:${c.subject.name}`,
      c.role.kind,
      c.role.name,
    ];
    const expected = [...changes].sort((p, q) => {
      const [kp, kq] = [key(p), key(q)];
      for (let i = 0; i < kp.length; i++) if (kp[i] !== kq[i]) return kp[i]! < kq[i]! ? -1 : 1;
      return 0;
    });
    expect(changes.map(key)).toEqual(expected.map(key));
    expect(changes.map((c) => c.namespace).slice(0, 1)).toEqual(['a']);
    // Two bindings before and after, the same: no change; one of them now inherited: a move.
    const two = [x({ binding: 'b2' }), x({ binding: 'b1' })];
    expect(diffAccess(two, [...two].reverse())).toEqual([]);
    const moved = diffAccess(two, [x({ binding: 'b1' }), x({ binding: 'b2', origin: 'inherited', from: 'p' })]);
    expect(moved.map((c) => c.change)).toEqual(['moves']);
    expect(moved[0]?.before.map((g) => g.binding)).toEqual(['b1', 'b2']);
  });
});
