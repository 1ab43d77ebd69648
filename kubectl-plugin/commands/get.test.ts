// `kubectl hns get` against the in-memory API: the subtree, the table, partial access, -A, -o.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { captureIo } from '../io.js';
import { FakeApi } from '../testing/fake-api.js';
import { loadSubtree, runGet, type GetFlags } from './get.js';
import { matchResource, resolveResource, type FoundResource } from './resources.js';

const cacheDir = mkdtempSync(join(tmpdir(), 'hns-get-'));

/** a → b → c, and x outside; secrets in each; tree labels as HNC sets them. */
function cluster(): FakeApi {
  const api = new FakeApi()
    .addNamespace('a', { children: ['b'] })
    .addNamespace('b', { parent: 'a', children: ['c'] })
    .addNamespace('c', { parent: 'b' })
    .addNamespace('x');
  const labels: Record<string, string[]> = { a: ['a'], b: ['a', 'b'], c: ['a', 'b', 'c'], x: ['x'] };
  for (const [ns, roots] of Object.entries(labels)) {
    const n = api.namespaces.get(ns);
    if (n) n.metadata.labels = Object.fromEntries(roots.map((r) => [`${r}.tree.hnc.x-k8s.io/depth`, '0']));
    api.objects.set(`${ns}/secrets`, [{ metadata: { name: `s-${ns}` }, data: { k: 'dg==' } }]);
  }
  api.discovery.set('/v1', [
    { name: 'secrets', singularName: 'secret', kind: 'Secret', namespaced: true },
    { name: 'namespaces', singularName: 'namespace', kind: 'Namespace', namespaced: false, shortNames: ['ns'] },
  ]);
  api.discovery.set('rbac.authorization.k8s.io/v1', [{ name: 'roles', singularName: 'role', kind: 'Role', namespaced: true }]);
  return api;
}

async function get(api: FakeApi, flags: Partial<GetFlags> & { resource: string }) {
  const io = captureIo();
  await runGet(api, io, { namespace: 'a', cacheDir, ...flags });
  return io;
}

describe('kubectl hns get', () => {
  it('lists the subtree as a table with a NAMESPACE column; -o wide adds the wide columns', async () => {
    const api = cluster();
    expect((await get(api, { resource: 'secret' })).stdout).toBe('NAMESPACE   NAME\na           s-a\nb           s-b\nc           s-c\n');
    expect((await get(api, { resource: 'secrets', namespace: 'b', output: 'wide' })).stdout).toBe(
      'NAMESPACE   NAME   DATA\nb           s-b    1\nc           s-c    1\n',
    );
  });

  it('-A lists every namespace in one request; NAME picks one object', async () => {
    const api = cluster();
    expect((await get(api, { resource: 'secrets', allNamespaces: true })).stdout).toContain('x           s-x\n');
    expect(api.calls.filter((c) => c.startsWith('table'))).toEqual(['table secrets *']);
    expect((await get(api, { resource: 'secrets', name: 's-b' })).stdout).toBe('NAMESPACE   NAME\nb           s-b\n');
  });

  it('lists a large share of the cluster with one cluster-wide request, a small one namespace by namespace', async () => {
    const api = cluster();
    await get(api, { resource: 'secrets' });
    expect(api.calls.filter((c) => c.startsWith('table'))).toEqual(['table secrets *']);
    for (let i = 0; i < 40; i++) api.addNamespace(`other-${i}`);
    api.calls.length = 0;
    expect((await get(api, { resource: 'secrets', namespace: 'b' })).stdout).toBe('NAMESPACE   NAME\nb           s-b\nc           s-c\n');
    expect(api.calls.filter((c) => c.startsWith('table'))).toEqual(['table secrets b', 'table secrets c']);
    // A user who may not list cluster-wide gets the per-namespace lists.
    const limited = cluster();
    limited.forbidden.add('table secrets *');
    expect((await get(limited, { resource: 'secrets' })).stdout).toBe(
      'NAMESPACE   NAME\na           s-a\nb           s-b\nc           s-c\n',
    );
    expect(limited.calls.filter((c) => c.startsWith('table'))).toEqual([
      'table secrets *',
      'table secrets a',
      'table secrets b',
      'table secrets c',
    ]);
  });

  it('prints the subtree root first also when the cluster-wide list comes in another order', async () => {
    const api = new FakeApi().addNamespace('m', { parent: 'z' }).addNamespace('z', { children: ['m'] });
    for (const [ns, roots] of [
      ['m', ['z', 'm']],
      ['z', ['z']],
    ] as const) {
      const n = api.namespaces.get(ns);
      if (n) n.metadata.labels = Object.fromEntries(roots.map((r) => [`${r}.tree.hnc.x-k8s.io/depth`, '0']));
      api.objects.set(`${ns}/secrets`, [{ metadata: { name: `s-${ns}` } }]);
    }
    api.discovery.set('/v1', [{ name: 'secrets', singularName: 'secret', kind: 'Secret', namespaced: true }]);
    expect((await get(api, { resource: 'secrets', namespace: 'z' })).stdout).toBe('NAMESPACE   NAME\nz           s-z\nm           s-m\n');
    expect((await get(api, { resource: 'secrets', namespace: 'z', output: 'name' })).stdout).toBe('secret/s-z\nsecret/s-m\n');
    expect(api.calls.filter((c) => c.startsWith('table'))).toEqual(['table secrets *']);
  });

  it('says when nothing is found', async () => {
    const io = await get(cluster(), { resource: 'secrets', name: 'none' });
    expect([io.stdout, io.stderr]).toEqual(['', 'No resources found in the subtree of a.\n']);
  });

  it('-o name and -o json print the objects', async () => {
    const api = cluster();
    expect((await get(api, { resource: 'secrets', output: 'name' })).stdout).toBe('secret/s-a\nsecret/s-b\nsecret/s-c\n');
    const json = JSON.parse((await get(api, { resource: 'secrets', output: 'json' })).stdout) as { kind: string; items: unknown[] };
    expect(json.kind).toBe('List');
    expect(json.items).toHaveLength(3);
    expect(json.items[0]).toMatchObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's-a', namespace: 'a' } });
  });

  it('a user who may read only part of the subtree sees that part and a note', async () => {
    const api = cluster();
    api.forbidden.add('list ns a.tree.hnc.x-k8s.io/depth');
    api.forbidden.add('table secrets b');
    const io = await get(api, { resource: 'secrets' });
    expect(io.stdout).toBe('NAMESPACE   NAME\na           s-a\nc           s-c\n');
    expect(io.stderr).toBe('Note: no permission to list secrets in namespace b: left out\n');
    api.forbidden.add('get hc b');
    expect(await loadSubtree(api, 'a')).toEqual({
      namespaces: ['a', 'b'],
      notes: ['no permission to read the hierarchy of b: namespaces below it are left out'],
      readBy: 'hierarchy',
    });
  });

  it('refuses a cluster-scoped or unknown resource', async () => {
    await expect(get(cluster(), { resource: 'ns' })).rejects.toThrow('Error: namespaces are not namespaced');
    await expect(get(cluster(), { resource: 'bogus' })).rejects.toThrow('Error: the server doesn\'t have a resource type "bogus"');
  });
});

describe('matchResource', () => {
  const r = (group: string, resource: string, kind: string, shortNames: string[] = []): FoundResource => ({
    group,
    version: 'v1',
    resource,
    kind,
    namespaced: true,
    singular: kind.toLowerCase(),
    shortNames,
  });
  const all = [r('', 'pods', 'Pod', ['po']), r('apps', 'deployments', 'Deployment', ['deploy']), r('example.com', 'pods', 'Pod')];
  it.each([
    ['pods', ''],
    ['pod', ''],
    ['po', ''],
    ['Pod', ''],
    ['pods.v1', ''],
    ['deploy', 'apps'],
    ['deployments.apps', 'apps'],
    ['deployment.v1.apps', 'apps'],
    ['pods.example.com', 'example.com'],
  ])('%s is in the group "%s"', (typed, group) => {
    expect(matchResource(all, typed)?.group).toBe(group);
  });
});

describe('--cache-dir keeps discovery', () => {
  it('resolves from the cache for ten minutes, and asks again on a miss or when it is older', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hns-cache-'));
    const api = cluster();
    const t = 1_000_000;
    expect((await resolveResource(api, 'secret', dir, t)).resource).toBe('secrets');
    const asked = () => api.calls.filter((c) => c.startsWith('discover')).length;
    const first = asked();
    expect(first).toBeGreaterThan(0);
    expect((await resolveResource(api, 'roles', dir, t + 60_000)).group).toBe('rbac.authorization.k8s.io');
    expect(asked()).toBe(first);
    // A name the cache does not know: discovery again (a new CRD may serve it).
    api.discovery.set('example.com/v1', [{ name: 'widgets', singularName: 'widget', kind: 'Widget', namespaced: true }]);
    expect((await resolveResource(api, 'widget', dir, t + 120_000)).group).toBe('example.com');
    expect(asked()).toBeGreaterThan(first);
    const second = asked();
    await resolveResource(api, 'secret', dir, t + 11 * 60_000 + 120_000);
    expect(asked()).toBeGreaterThan(second);
  });
});
