import { describe, expect, it } from 'vitest';
import { captureIo } from '../io.js';
import { FakeApi } from '../testing/fake-api.js';
import { loadExplain, parseObjectRef, runExplain } from './explain.js';

const inherited = (from: string) => ({ 'hnc.x-k8s.io/inherited-from': from });

/** org -> team-a -> dev, with the tree labels the controller gives dev. */
function cluster(): FakeApi {
  const api = new FakeApi()
    .addNamespace('org', { children: ['team-a'] })
    .addNamespace('team-a', { parent: 'org', children: ['dev'] })
    .addNamespace('dev', { parent: 'team-a', subnamespaceOf: 'team-a' });
  api.namespaces.get('dev')!.metadata.labels = {
    'dev.tree.hnc.x-k8s.io/depth': '0',
    'team-a.tree.hnc.x-k8s.io/depth': '1',
    'org.tree.hnc.x-k8s.io/depth': '2',
  };
  api.objects.set('team-a/roles', [
    { kind: 'Role', metadata: { name: 'reader' } },
    { kind: 'Role', metadata: { name: 'private', annotations: { 'propagate.hnc.x-k8s.io/none': 'true' } } },
  ]);
  api.objects.set('dev/roles', [{ kind: 'Role', metadata: { name: 'reader', labels: inherited('team-a') } }]);
  api.objects.set('team-a/configmaps', [{ kind: 'ConfigMap', metadata: { name: 'settings' } }]);
  api.config = {
    metadata: { name: 'config' },
    status: {
      resources: [
        { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'roles', mode: 'Propagate' },
        { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'rolebindings', mode: 'Propagate' },
        { group: '', version: 'v1', resource: 'configmaps', mode: 'AllowPropagate' },
      ],
    },
  };
  api.discovery.set('/v1', [{ name: 'configmaps', singularName: 'configmap', kind: 'ConfigMap', namespaced: true, shortNames: ['cm'] }]);
  return api;
}

async function explain(api: FakeApi, ns: string, ref: string): Promise<string> {
  const io = captureIo();
  await runExplain(api, io, ns, parseObjectRef(ref));
  return io.stdout;
}

describe('describe --object', () => {
  it('walks the spec.parent chain and reads the name in every ancestor', async () => {
    const api = cluster();
    expect(await explain(api, 'dev', 'role/reader')).toBe(
      [
        'Role reader in namespace dev: propagated from team-a',
        '  Type: roles (mode Propagate)',
        '  Ancestors, highest first: org, team-a',
        '  - team-a: source, propagates to dev: it wins (the highest ancestor whose source does)',
        '  In dev: a copy from team-a (hnc.x-k8s.io/inherited-from=team-a)',
        '',
      ].join('\n'),
    );
    expect(api.calls).toEqual(
      expect.arrayContaining([
        'get hc dev',
        'get hc team-a',
        'get hc org',
        'get roles dev/reader',
        'get roles team-a/reader',
        'get roles org/reader',
      ]),
    );
  });

  it('explains an object kept out by its selector', async () => {
    expect(await explain(cluster(), 'dev', 'roles/private')).toContain(
      '  - team-a: source, not propagated to dev: propagate.hnc.x-k8s.io/none is "true"\n',
    );
  });

  it('takes the type as resource, kind, resource.group, or a singular or short name from discovery', async () => {
    for (const ref of ['roles/reader', 'Role/reader', 'roles.rbac.authorization.k8s.io/reader']) {
      expect((await loadExplain(cluster(), 'dev', parseObjectRef(ref))).type).toEqual({
        group: 'rbac.authorization.k8s.io',
        resource: 'roles',
        kind: 'Role',
        mode: 'Propagate',
      });
    }
    const api = cluster();
    const view = await loadExplain(api, 'dev', parseObjectRef('cm/settings'));
    expect(view.type).toEqual({ group: '', resource: 'configmaps', kind: 'ConfigMap', mode: 'AllowPropagate' });
    expect(api.calls).toContain('discover /v1');
    expect(await explain(cluster(), 'dev', 'configmaps/settings')).toContain(
      '  - team-a: source, not propagated to dev: mode AllowPropagate propagates only objects with a select or treeSelect annotation, or all=true\n',
    );
  });

  it('refuses a type HNC does not handle, saying which it does', async () => {
    await expect(explain(cluster(), 'dev', 'secrets/x')).rejects.toThrow(
      'Error: HNC does not handle a type named "secrets"; the types it handles are roles, rolebindings, configmaps. To propagate another type: kubectl hns config set-resource RESOURCE [--group GROUP] --mode Propagate',
    );
    const api = cluster();
    api.forbidden.add('get config');
    await expect(explain(api, 'dev', 'cm/settings')).rejects.toThrow(
      'the types it handles are roles, rolebindings (no permission to read HNCConfiguration config, so only roles and rolebindings were looked at).',
    );
    // The RBAC types are always known.
    expect(await explain(api, 'dev', 'role/reader')).toMatch(/^Role reader in namespace dev: propagated from team-a\n/);
  });

  it('completes the chain from the tree labels when a hierarchy configuration cannot be read', async () => {
    const api = cluster();
    api.forbidden.add('get hc team-a');
    const view = await loadExplain(api, 'dev', parseObjectRef('role/reader'));
    expect(view.ancestors.map((a) => a.namespace)).toEqual(['org', 'team-a']);
    expect(view.notes).toEqual([
      'no permission to read the hierarchy configuration of team-a: the ancestors above it come from the tree labels of dev',
    ]);
    api.forbidden.add('get hc dev');
    const blind = await loadExplain(api, 'dev', parseObjectRef('role/reader'));
    expect(blind.ancestors.map((a) => a.namespace)).toEqual(['org', 'team-a']);
    expect(blind.notes).toEqual([
      'no permission to read the hierarchy configuration of dev: its ancestors come from its tree labels, and whether it is halted is unknown',
    ]);
  });

  it('marks what it may not read and reports a halted namespace', async () => {
    const api = cluster();
    api.forbidden.add('get roles org/reader');
    api.hierarchies.get('dev')!.status = {
      conditions: [
        {
          type: 'ActivitiesHalted',
          reason: 'AncestorHaltActivities',
          message: 'paused',
          status: 'True',
          lastTransitionTime: '1970-01-01T00:00:00Z',
        },
      ],
    };
    const view = await loadExplain(api, 'dev', parseObjectRef('role/reader'));
    expect(view.ancestors[0]).toEqual({ namespace: 'org', forbidden: true });
    expect(view.halted).toEqual({ type: 'ActivitiesHalted', reason: 'AncestorHaltActivities', message: 'paused' });
  });

  it('fails when the namespace cannot be read, and on a malformed --object', async () => {
    await expect(explain(cluster(), 'nope', 'role/x')).rejects.toThrow('namespaces "nope" not found');
    for (const bad of ['role', 'role/', '/x', 'a/b/c'])
      expect(() => parseObjectRef(bad)).toThrow(`Error: --object must be TYPE/NAME, e.g. role/admin or secrets/db-password; got "${bad}"`);
  });
});
