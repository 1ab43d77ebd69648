import { describe, expect, it } from 'vitest';
import type { KubeClient } from './client.js';
import { resourceOf, Writer } from './writer.js';

const failingOn = (bad: string) =>
  ({
    request: (_method: string, path: string) => (path === bad ? Promise.reject(new Error('refused')) : Promise.resolve({})),
  }) as unknown as KubeClient;

describe('Writer', () => {
  it('counts every attempt, failed ones too, by verb and resource', async () => {
    const w = new Writer(failingOn('/api/v1/namespaces/a/roles/bad'), { qps: 1000 });
    await w.create('/apis/rbac.authorization.k8s.io/v1/namespaces/a/roles', {});
    await w.delete('/api/v1/namespaces/a/roles/bad').catch(() => undefined);
    await w.mergePatch('/api/v1/namespaces/a', {});
    expect(w.total).toBe(3);
    expect(w.counts).toEqual({ create: 1, update: 0, patch: 1, delete: 1 });
    expect(w.writesTo('roles')).toBe(2);
    expect(w.writesTo('namespaces')).toBe(1);
  });

  it('says which writes came after a mark, and how many it no longer keeps', async () => {
    const w = new Writer(failingOn(''), { qps: 10_000 });
    await w.create('/api/v1/namespaces/a/configmaps', {});
    const mark = w.total;
    expect(w.writesSince(mark)).toEqual([]);
    await w.replace('/api/v1/namespaces/a/configmaps/x', {});
    expect(w.writesSince(mark)).toEqual(['update /api/v1/namespaces/a/configmaps/x']);
    for (let i = 0; i < 40; i++) await w.delete(`/api/v1/namespaces/a/configmaps/c${i}`);
    const since = w.writesSince(mark);
    expect(since[0]).toBe('(9 earlier not kept)');
    expect(since).toHaveLength(33);
    expect(since.at(-1)).toBe('delete /api/v1/namespaces/a/configmaps/c39');
  });

  it('names the resource of a path', () => {
    expect(resourceOf('/api/v1/namespaces/x/roles/y')).toBe('roles');
    expect(resourceOf('/api/v1/namespaces/x')).toBe('namespaces');
    expect(resourceOf('/apis/hnc.x-k8s.io/v1alpha2/hncconfigurations/config')).toBe('hncconfigurations');
  });
});
