import { describe, expect, it } from 'vitest';
import { parseSubject } from '../../core/access/index.js';
import { Label, treeLabel } from '../../core/api/index.js';
import type { AnyObject } from '../api.js';
import { captureIo } from '../io.js';
import { runCli } from '../program.js';
import { FakeApi } from '../testing/fake-api.js';
import { runAccess, type AccessFlags } from './access.js';

function binding(name: string, opts: { role?: string; to?: string[]; from?: string } = {}): AnyObject {
  const { role = 'admin', to = ['group:devs'], from } = opts;
  return {
    metadata: { name, ...(from ? { labels: { [Label.inheritedFrom]: from } } : {}) },
    roleRef: role.startsWith('Role/')
      ? { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role.slice(5) }
      : { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: to.map((t) => {
      const s = parseSubject(t);
      return s.kind === 'ServiceAccount' ? { kind: s.kind, name: s.name, namespace: s.namespace } : { kind: s.kind, name: s.name };
    }),
  };
}

/** team-a -> dev -> dev-x, and team-c; namespaces carry their tree labels as HNC sets them. */
function org(): FakeApi {
  const api = new FakeApi()
    .addNamespace('team-a', { children: ['dev'] })
    .addNamespace('dev', { parent: 'team-a', subnamespaceOf: 'team-a', children: ['dev-x'] })
    .addNamespace('dev-x', { parent: 'dev' })
    .addNamespace('team-c');
  const trees: Record<string, Record<string, number>> = {
    'team-a': { 'team-a': 0 },
    dev: { dev: 0, 'team-a': 1 },
    'dev-x': { 'dev-x': 0, dev: 1, 'team-a': 2 },
    'team-c': { 'team-c': 0 },
  };
  for (const [ns, depths] of Object.entries(trees)) {
    const obj = api.namespaces.get(ns)!;
    obj.metadata.labels = Object.fromEntries(Object.entries(depths).map(([a, d]) => [treeLabel(a), String(d)]));
  }
  const admins = { to: ['group:team-a-admins', 'user:alice'] };
  const ops = { role: 'view', to: ['group:ops'] };
  api.objects.set('team-a/rolebindings', [binding('admins', admins), binding('ops', ops)]);
  api.objects.set('dev/rolebindings', [
    binding('admins', { ...admins, from: 'team-a' }),
    binding('ops', { ...ops, from: 'team-a' }),
    binding('deploy', { role: 'Role/deployer', to: ['serviceaccount:dev:ci'] }),
  ]);
  api.objects.set('dev-x/rolebindings', [
    binding('admins', { ...admins, from: 'team-a' }),
    binding('ops', { ...ops, from: 'team-a' }),
    binding('deploy', { role: 'Role/deployer', to: ['serviceaccount:dev:ci'], from: 'dev' }),
  ]);
  api.objects.set('team-c/rolebindings', [binding('alice', { role: 'edit', to: ['user:alice'] })]);
  api.objects.set('dev/roles', [{ metadata: { name: 'deployer' } }]);
  api.objects.set('dev-x/roles', [{ metadata: { name: 'deployer', labels: { [Label.inheritedFrom]: 'dev' } } }]);
  api.objects.set(
    '/clusterroles',
    ['admin', 'edit', 'view'].map((name) => ({ metadata: { name } })),
  );
  return api;
}

async function access(api: FakeApi, flags: AccessFlags): Promise<{ stdout: string; stderr: string }> {
  const io = captureIo();
  await runAccess(api, io, flags);
  return { stdout: io.stdout, stderr: io.stderr };
}

describe('access', () => {
  it('shows every subject of a subtree with its roles and their origin, in subtree order', async () => {
    const api = org();
    const { stdout, stderr } = await access(api, { roots: ['team-a'] });
    expect(stdout).toBe(
      [
        'NAMESPACE   SUBJECT                 ROLE            BINDING   ORIGIN',
        'team-a      group ops               view            ops       own',
        'team-a      group team-a-admins     admin           admins    own',
        'team-a      user alice              admin           admins    own',
        'dev         group ops               view            ops       inherited from team-a',
        'dev         group team-a-admins     admin           admins    inherited from team-a',
        'dev         serviceaccount dev:ci   Role/deployer   deploy    own',
        'dev         user alice              admin           admins    inherited from team-a',
        'dev-x       group ops               view            ops       inherited from team-a',
        'dev-x       group team-a-admins     admin           admins    inherited from team-a',
        'dev-x       serviceaccount dev:ci   Role/deployer   deploy    inherited from dev',
        'dev-x       user alice              admin           admins    inherited from team-a',
        '',
      ].join('\n'),
    );
    expect(stderr).toBe('');
    // The subtree (3 of 4 namespaces) is read with one cluster-wide list of each type.
    expect(api.calls.filter((c) => !c.includes(' ns'))).toEqual(['list rolebindings *', 'list roles *', 'list clusterroles *']);
  });

  it('reads each namespace when the caller may not list cluster-wide, and leaves out what it may not read, with a note', async () => {
    const api = org();
    api.forbidden.add('list rolebindings *');
    api.forbidden.add('list roles *');
    api.forbidden.add('list rolebindings dev-x');
    api.forbidden.add('list clusterroles *');
    const { stdout, stderr } = await access(api, { roots: ['team-a'], subject: parseSubject('serviceaccount:dev:ci') });
    expect(stdout).toBe(
      [
        'NAMESPACE   SUBJECT                 ROLE            BINDING   ORIGIN',
        'dev         serviceaccount dev:ci   Role/deployer   deploy    own',
        '',
      ].join('\n'),
    );
    expect(stderr).toBe('Note: no permission to list rolebindings in namespace dev-x: left out\n');
    expect(api.calls).toContain('list rolebindings team-a');
    expect(api.calls).toContain('list roles dev');
  });

  it('shows only the part of a tree a namespace admin may read, with the note tree gives', async () => {
    const api = org();
    api.forbidden.add('list ns team-a.tree.hnc.x-k8s.io/depth');
    api.forbidden.add('get hc dev');
    api.forbidden.add('list clusterroles *');
    api.forbidden.add('list rolebindings *');
    const { stdout, stderr } = await access(api, { roots: ['team-a'], subject: parseSubject('user:alice') });
    expect(stdout).toContain('team-a      user alice   admin   admins    own');
    expect(stdout).toContain('dev         user alice   admin   admins    inherited from team-a');
    expect(stdout).not.toContain('dev-x');
    expect(stderr).toBe(
      'Note: no permission to read the hierarchy of dev: namespaces below it are left out\n' +
        'Note: no permission to list clusterroles: whether the ClusterRoles named exist was not checked\n',
    );
  });

  it('finds a subject everywhere the caller may read, through its implicit groups too', async () => {
    const api = org();
    api.objects.set('team-c/rolebindings', [
      binding('alice', { role: 'edit', to: ['user:alice'] }),
      binding('everyone', { role: 'view', to: ['group:system:authenticated'] }),
    ]);
    const { stdout } = await access(api, { roots: [], subject: parseSubject('user:alice') });
    expect(stdout.split('\n').slice(1, -1)).toEqual([
      'dev         user alice                   admin   admins     inherited from team-a',
      'dev-x       user alice                   admin   admins     inherited from team-a',
      'team-a      user alice                   admin   admins     own',
      'team-c      group system:authenticated   view    everyone   own',
      'team-c      user alice                   edit    alice      own',
    ]);
    expect(api.calls).toEqual(['list rolebindings *', 'list clusterroles *']);
  });

  it('without cluster-wide RoleBindings, looks in each namespace the caller may list, or says to name the subtrees', async () => {
    const api = org();
    api.forbidden.add('list rolebindings *');
    const { stdout } = await access(api, { roots: [], subject: parseSubject('user:alice') });
    expect(stdout).toContain('team-c      user alice   edit    alice     own');
    api.forbidden.add('list ns');
    await expect(access(api, { roots: [], subject: parseSubject('user:alice') })).rejects.toThrow(
      'no permission to list RoleBindings or namespaces cluster-wide; name the subtrees to look in',
    );
  });

  it('marks a binding to a role that does not exist, and says when nothing is found', async () => {
    const api = org();
    api.objects.set('dev-x/roles', []);
    api.objects.set('/clusterroles', [{ metadata: { name: 'admin' } }]);
    const { stdout } = await access(api, { roots: ['dev'] });
    expect(stdout).toContain('dev-x       serviceaccount dev:ci   Role/deployer (missing)   deploy    inherited from dev');
    expect(stdout).toContain('dev         group ops               view (missing)            ops       inherited from team-a');
    const none = await access(api, { roots: ['team-c'], subject: parseSubject('group:nobody') });
    expect(none).toEqual({ stdout: '', stderr: 'No RoleBindings found for group:nobody in the subtree of team-c.\n' });
  });

  it('prints JSON and YAML documents for scripts', async () => {
    const { stdout } = await access(org(), { roots: ['team-c'], output: 'json' });
    expect(JSON.parse(stdout)).toEqual({
      namespaces: ['team-c'],
      grants: [
        {
          namespace: 'team-c',
          subject: { kind: 'User', name: 'alice' },
          role: { kind: 'ClusterRole', name: 'edit' },
          binding: 'alice',
          origin: 'own',
        },
      ],
      notes: [],
    });
    const yaml = await access(org(), { roots: ['dev-x'], subject: parseSubject('group:ops'), output: 'yaml' });
    expect(yaml.stdout).toContain('subject: group:ops\nnamespaces:\n  - dev-x\n');
    expect(yaml.stdout).toContain('    origin: inherited\n    from: team-a\n');
  });

  it('refuses a malformed subject and a call with neither namespace nor subject before connecting', async () => {
    const io = captureIo();
    const connect = () => Promise.reject(new Error('must not connect'));
    expect(await runCli(['access', '--subject', 'alice'], { io, connect })).toBe(1);
    expect(io.stderr).toBe(
      'Error: invalid --subject: "alice" is not a subject: expected user:NAME, group:NAME or serviceaccount:NAMESPACE:NAME\n',
    );
    const io2 = captureIo();
    expect(await runCli(['access'], { io: io2, connect })).toBe(1);
    expect(io2.stderr).toBe('Error: Must specify the namespace whose subtree to show, or a --subject to look for everywhere\n');
  });
});
