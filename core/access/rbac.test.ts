import { describe, expect, it } from 'vitest';
import {
  compactBinding,
  compactRules,
  couldAllowAny,
  rbacAllows,
  ruleAllows,
  type RbacBinding,
  type RbacCheck,
  type RbacRule,
  type RbacSource,
  type RbacUser,
} from './rbac.js';

const HC: RbacCheck = { verb: 'update', group: 'hnc.x-k8s.io', resource: 'hierarchyconfigurations', namespace: 'team-a' };
const rule = (verbs: string[], apiGroups: string[], resources: string[], resourceNames?: string[]): RbacRule => ({
  verbs,
  apiGroups,
  resources,
  ...(resourceNames ? { resourceNames } : {}),
});

describe('ruleAllows', () => {
  const cases: Array<[string, RbacRule, RbacCheck, boolean]> = [
    ['exact verb, group and resource', rule(['update'], ['hnc.x-k8s.io'], ['hierarchyconfigurations']), HC, true],
    ['another verb', rule(['get', 'patch'], ['hnc.x-k8s.io'], ['hierarchyconfigurations']), HC, false],
    ['verb *', rule(['*'], ['hnc.x-k8s.io'], ['hierarchyconfigurations']), HC, true],
    ['another group', rule(['update'], [''], ['hierarchyconfigurations']), HC, false],
    ['group *', rule(['update'], ['*'], ['hierarchyconfigurations']), HC, true],
    ['another resource', rule(['update'], ['hnc.x-k8s.io'], ['subnamespaceanchors']), HC, false],
    ['resource *', rule(['update'], ['hnc.x-k8s.io'], ['*']), HC, true],
    [
      'the core group is ""',
      rule(['delete'], [''], ['namespaces']),
      { verb: 'delete', group: '', resource: 'namespaces', name: 'a' },
      true,
    ],
    ['the core group is not "v1"', rule(['delete'], ['v1'], ['namespaces']), { verb: 'delete', group: '', resource: 'namespaces' }, false],
    // Subresources: `pods` does not cover `pods/exec`; `*` and `*/exec` do.
    [
      'a resource does not cover its subresource',
      rule(['create'], [''], ['pods']),
      { verb: 'create', group: '', resource: 'pods/exec' },
      false,
    ],
    ['resource/subresource', rule(['create'], [''], ['pods/exec']), { verb: 'create', group: '', resource: 'pods/exec' }, true],
    [
      'subresource given apart',
      rule(['create'], [''], ['pods/exec']),
      { verb: 'create', group: '', resource: 'pods', subresource: 'exec' },
      true,
    ],
    ['*/subresource', rule(['get'], [''], ['*/status']), { verb: 'get', group: '', resource: 'pods/status' }, true],
    [
      '*/subresource is not another subresource',
      rule(['get'], [''], ['*/status']),
      { verb: 'get', group: '', resource: 'pods/log' },
      false,
    ],
    ['*/subresource is not the resource', rule(['get'], [''], ['*/status']), { verb: 'get', group: '', resource: 'pods' }, false],
    ['* covers subresources', rule(['get'], [''], ['*']), { verb: 'get', group: '', resource: 'pods/log' }, true],
    ['pods/exec is not pods', rule(['get'], [''], ['pods/exec']), { verb: 'get', group: '', resource: 'pods' }, false],
    // resourceNames: only requests naming one of them.
    [
      'resourceNames, named',
      rule(['delete'], [''], ['namespaces'], ['a', 'b']),
      { verb: 'delete', group: '', resource: 'namespaces', name: 'b' },
      true,
    ],
    [
      'resourceNames, another name',
      rule(['delete'], [''], ['namespaces'], ['a']),
      { verb: 'delete', group: '', resource: 'namespaces', name: 'c' },
      false,
    ],
    ['resourceNames, no name asked', rule(['update'], ['hnc.x-k8s.io'], ['hierarchyconfigurations'], ['hierarchy']), HC, false],
    [
      'empty resourceNames: any name',
      rule(['delete'], [''], ['namespaces'], []),
      { verb: 'delete', group: '', resource: 'namespaces', name: 'x' },
      true,
    ],
  ];
  it.each(cases)('%s', (_what, r, check, allowed) => {
    expect(ruleAllows(r, check)).toBe(allowed);
  });
});

/** A source from plain lists: bindings with the namespace they live in ('' cluster-wide). */
function source(
  all: Array<[namespace: string, RbacBinding | undefined]>,
  clusterRoles: Record<string, RbacRule[]>,
  roles: Record<string, RbacRule[]> = {},
): RbacSource {
  const bindings = all.filter((b): b is [string, RbacBinding] => b[1] !== undefined);
  return {
    clusterBindings: () => bindings.filter(([ns]) => ns === '').map(([, b]) => b),
    bindings: (ns) => bindings.filter(([n]) => n === ns).map(([, b]) => b),
    clusterRoleRules: (name) => clusterRoles[name],
    roleRules: (ns, name) => roles[`${ns}/${name}`],
  };
}

const binding = (ns: string, obj: Parameters<typeof compactBinding>[0]): [string, RbacBinding | undefined] => [ns, compactBinding(obj, ns)];
const sub = (kind: string, name: string, namespace?: string) => ({ kind, name, ...(namespace ? { namespace } : {}) });
const ref = (kind: string, name: string) => ({ apiGroup: 'rbac.authorization.k8s.io', kind, name });

describe('rbacAllows', () => {
  const admin = [rule(['*'], ['hnc.x-k8s.io'], ['hierarchyconfigurations', 'subnamespaceanchors'])];
  const view = [rule(['get', 'list', 'watch'], ['hnc.x-k8s.io'], ['hierarchyconfigurations'])];
  const nsDeleter = [rule(['delete'], [''], ['namespaces'])];
  const src = source(
    [
      binding('team-a', { roleRef: ref('ClusterRole', 'admin'), subjects: [sub('User', 'alice')] }),
      binding('team-a', { roleRef: ref('ClusterRole', 'view'), subjects: [sub('User', 'victor')] }),
      binding('team-a', { roleRef: ref('ClusterRole', 'admin'), subjects: [sub('Group', 'team-a-admins')] }),
      binding('team-a', { roleRef: ref('Role', 'hierarchy-editor'), subjects: [sub('ServiceAccount', 'deployer')] }),
      binding('team-b', { roleRef: ref('ClusterRole', 'admin'), subjects: [sub('ServiceAccount', 'ci', 'tools')] }),
      binding('', { roleRef: ref('ClusterRole', 'namespace-deleter'), subjects: [sub('User', 'ops')] }),
      binding('', { roleRef: ref('ClusterRole', 'admin'), subjects: [sub('ServiceAccount', 'no-namespace')] }),
      binding('', { roleRef: ref('ClusterRole', 'admin'), subjects: [sub('Group', 'platform')] }),
    ],
    { admin, view, 'namespace-deleter': nsDeleter },
    { 'team-a/hierarchy-editor': [rule(['update'], ['hnc.x-k8s.io'], ['hierarchyconfigurations'])] },
  );
  const user = (username: string, groups: string[] = ['system:authenticated']): RbacUser => ({ username, groups });
  const inB = { ...HC, namespace: 'team-b' };
  const deleteNs = { verb: 'delete', group: '', resource: 'namespaces', name: 'team-a' };
  const cases: Array<[string, RbacUser, RbacCheck, boolean]> = [
    ['a RoleBinding to ClusterRole admin, in its namespace', user('alice'), HC, true],
    ['... not in another namespace (a RoleBinding to a ClusterRole is limited to its namespace)', user('alice'), inB, false],
    ['... nor for a cluster-scoped request', user('alice'), { ...deleteNs }, false],
    ['only view', user('victor'), HC, false],
    ['through a group', user('bob', ['system:authenticated', 'team-a-admins']), HC, true],
    ['a group named like the user is not the user', user('team-a-admins'), HC, false],
    ['a User subject is not a group of that name', user('x', ['alice']), HC, false],
    ['a service account of the binding namespace (namespace left out)', user('system:serviceaccount:team-a:deployer'), HC, true],
    ['... the same name in another namespace', user('system:serviceaccount:team-b:deployer'), HC, false],
    ['a service account with its namespace', user('system:serviceaccount:tools:ci'), inB, true],
    ['a ClusterRoleBinding, cluster-scoped request', user('ops'), deleteNs, true],
    ['a ClusterRoleBinding applies in every namespace', user('carol', ['platform']), inB, true],
    [
      'a ClusterRoleBinding to a service account without a namespace matches nobody',
      user('system:serviceaccount::no-namespace'),
      HC,
      false,
    ],
    ['no binding at all', user('mallory'), HC, false],
    ['a binding to a role that does not exist', user('alice'), { ...HC, verb: 'delete', resource: 'pods', group: '' }, false],
  ];
  it.each(cases)('%s', (_what, u, check, allowed) => {
    expect(rbacAllows(src, u, check)).toBe(allowed);
  });

  it('reads a binding to a missing role as granting nothing', () => {
    const s = source([binding('team-a', { roleRef: ref('Role', 'gone'), subjects: [sub('User', 'alice')] })], {});
    expect(rbacAllows(s, user('alice'), HC)).toBe(false);
  });
});

describe('compactBinding', () => {
  it('keeps the role and the subject keys, sorted and without duplicates; a service account as its user', () => {
    expect(
      compactBinding(
        {
          roleRef: ref('ClusterRole', 'admin'),
          subjects: [sub('User', 'b'), sub('Group', 'g'), sub('User', 'b'), sub('ServiceAccount', 'sa'), sub('Other', 'x'), null],
        },
        'ns',
      ),
    ).toEqual({ roleKind: 'ClusterRole', roleName: 'admin', subjects: ['group:g', 'user:b', 'user:system:serviceaccount:ns:sa'] });
  });
  it('grants nothing without subjects, without a role, or a ClusterRoleBinding to a Role', () => {
    expect(compactBinding({ roleRef: ref('ClusterRole', 'admin'), subjects: [] }, 'ns')).toBeUndefined();
    expect(compactBinding({ subjects: [sub('User', 'a')] }, 'ns')).toBeUndefined();
    expect(compactBinding({ roleRef: ref('Role', 'r'), subjects: [sub('User', 'a')] }, '')).toBeUndefined();
    expect(compactBinding({ roleRef: ref('ClusterRole', 'r'), subjects: [sub('ServiceAccount', 'a')] }, '')).toBeUndefined();
  });
});

describe('compactRules', () => {
  const keep = couldAllowAny([
    { verb: 'update', group: 'hnc.x-k8s.io', resource: 'hierarchyconfigurations' },
    { verb: 'delete', group: '', resource: 'namespaces' },
  ]);
  it('keeps only the rules that could allow one of the checks, names aside', () => {
    const role = {
      rules: [
        { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
        { apiGroups: ['hnc.x-k8s.io'], resources: ['hierarchyconfigurations'], verbs: ['get', 'list'] },
        { apiGroups: ['hnc.x-k8s.io'], resources: ['hierarchyconfigurations'], verbs: ['update'], resourceNames: ['hierarchy'] },
        { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
        { apiGroups: [''], resources: ['namespaces'], verbs: ['delete'] },
        { nonResourceURLs: ['/healthz'], verbs: ['get'] },
        null,
      ],
    };
    expect(compactRules(role, keep)).toEqual([
      rule(['update'], ['hnc.x-k8s.io'], ['hierarchyconfigurations'], ['hierarchy']),
      rule(['*'], ['*'], ['*']),
      rule(['delete'], [''], ['namespaces']),
    ]);
    expect(compactRules(role)).toHaveLength(5);
  });
});
