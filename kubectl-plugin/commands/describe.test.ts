import { describe, expect, it } from 'vitest';
import { captureIo } from '../io.js';
import { FakeApi } from '../testing/fake-api.js';
import { runDescribe } from './describe.js';

const now = new Date('2025-06-01T12:00:00Z');

function cluster(): FakeApi {
  const api = new FakeApi()
    .addNamespace('team-a', { children: ['dev', 'prod'], acd: true })
    .addNamespace('dev', { parent: 'team-a', subnamespaceOf: 'team-a' })
    .addNamespace('prod', { parent: 'team-a' });
  api.anchors.set('team-a/dev', { metadata: { name: 'dev', namespace: 'team-a' }, status: { status: 'Ok' } });
  api.anchors.set('team-a/qa', { metadata: { name: 'qa', namespace: 'team-a' }, status: { status: 'Missing' } });
  api.objects.set('dev/roles', [
    { metadata: { name: 'admin', labels: { 'hnc.x-k8s.io/inherited-from': 'team-a' } } },
    { metadata: { name: 'local' } },
  ]);
  api.objects.set('dev/rolebindings', [{ metadata: { name: 'admins', labels: { 'hnc.x-k8s.io/inherited-from': 'team-a' } } }]);
  api.events.set('team-a', [
    {
      metadata: { name: 'e1' },
      involvedObject: { kind: 'Role', namespace: 'team-a', name: 'admin' },
      reason: 'CannotPropagateObject',
      message: 'Objects with finalizers cannot be propagated',
      source: { component: 'hnc.x-k8s.io' },
      lastTimestamp: '2025-06-01T11:58:00Z',
    },
    {
      metadata: { name: 'e2' },
      reason: 'Scheduled',
      message: 'not HNC',
      source: { component: 'kubelet' },
      lastTimestamp: '2025-06-01T11:59:00Z',
    },
  ]);
  return api;
}

describe('describe', () => {
  it('shows the hierarchy, anchors, HNC events (only) of a parent', async () => {
    const io = captureIo();
    await runDescribe(cluster(), io, 'team-a', now);
    expect(io.stdout).toBe(
      [
        'Hierarchy configuration for namespace team-a',
        '  No parent',
        '  Children:',
        '  - dev (subnamespace)',
        '  - prod',
        '  - qa (Missing subnamespace)',
        '  Allows Cascading Deletion: true',
        '  No conditions',
        '',
        'No inherited objects (looked at roles, rolebindings)',
        '',
        'Events from the objects in namespace team-a',
        'Last Seen Reason                Object            Message',
        '2m        CannotPropagateObject Role:team-a/admin Objects with finalizers cannot be propagated',
        '',
      ].join('\n'),
    );
  });

  it('lists what a namespace inherits and from where', async () => {
    const io = captureIo();
    await runDescribe(cluster(), io, 'dev', now);
    expect(io.stdout).toBe(
      [
        'Hierarchy configuration for namespace dev',
        '  Parent: team-a',
        '  No children',
        '  Allows Cascading Deletion: false',
        '  No conditions',
        '',
        'Inherited objects:',
        '  - Role/admin (from team-a)',
        '  - RoleBinding/admins (from team-a)',
        '',
        'No recent HNC events for objects in this namespace',
        '',
      ].join('\n'),
    );
  });

  it('turns 403s on the parts into notes', async () => {
    const api = cluster();
    for (const call of ['get hc dev', 'list anchors dev', 'list rolebindings dev', 'list events dev']) api.forbidden.add(call);
    const io = captureIo();
    await runDescribe(api, io, 'dev', now);
    expect(io.stdout).toBe(
      [
        'Hierarchy configuration for namespace dev',
        '  (no permission to read the hierarchy configuration of dev)',
        '',
        'Inherited objects:',
        '  - Role/admin (from team-a)',
        '  (no permission to list rolebindings in dev)',
        '',
        '(no permission to list the events in dev)',
        '',
      ].join('\n'),
    );
  });

  it('looks at every type HNCConfiguration propagates, and notes the ones it may not list', async () => {
    const api = cluster();
    api.config = {
      metadata: { name: 'config' },
      status: {
        resources: [
          { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'roles', mode: 'Propagate' },
          { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'rolebindings', mode: 'Propagate' },
          { group: '', version: 'v1', resource: 'secrets', mode: 'Propagate' },
          { group: 'stable.example.com', version: 'v1', resource: 'crontabs', mode: 'AllowPropagate' },
          { group: '', version: 'v1', resource: 'configmaps', mode: 'Ignore' },
          { group: 'networking.k8s.io', version: 'v1', resource: 'networkpolicies', mode: 'Remove' },
        ],
      },
    };
    api.objects.set('dev/secrets', [{ kind: 'Secret', metadata: { name: 'db', labels: { 'hnc.x-k8s.io/inherited-from': 'team-a' } } }]);
    api.forbidden.add('list crontabs dev');
    const io = captureIo();
    await runDescribe(api, io, 'dev', now);
    expect(io.stdout).toContain(
      [
        'Inherited objects:',
        '  - Role/admin (from team-a)',
        '  - RoleBinding/admins (from team-a)',
        '  - Secret/db (from team-a)',
        '  (no permission to list crontabs.stable.example.com in dev)',
        '',
      ].join('\n'),
    );
    expect(api.calls.filter((c) => c.startsWith('list ') && c.endsWith(' dev'))).toEqual(
      expect.arrayContaining(['list roles dev', 'list rolebindings dev', 'list secrets dev', 'list crontabs dev']),
    );
    expect(api.calls).not.toContain('list configmaps dev');
    expect(api.calls).not.toContain('list networkpolicies dev');
  });

  it('falls back to the RBAC types when HNCConfiguration cannot be read, and says so', async () => {
    const api = cluster();
    api.forbidden.add('get config');
    const io = captureIo();
    await runDescribe(api, io, 'team-a', now);
    expect(io.stdout).toContain(
      '\nNo inherited objects (looked at roles, rolebindings)\n  (no permission to read HNCConfiguration config, so only roles and rolebindings were looked at)\n',
    );
  });

  it('fails when the namespace itself cannot be read', async () => {
    await expect(runDescribe(cluster(), captureIo(), 'nope', now)).rejects.toThrow('namespaces "nope" not found');
  });
});
