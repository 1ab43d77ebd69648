import { afterEach, describe, expect, it, vi } from 'vitest';
import type { KubeClient, RequestOptions } from './client.js';
import { METADATA_ONLY, rateLimitKey, resourceOf, Writer } from './writer.js';

const failingOn = (bad: string) =>
  ({
    request: (_method: string, path: string) => (path === bad ? Promise.reject(new Error('refused')) : Promise.resolve({})),
  }) as unknown as KubeClient;

/** A client that records each request's path as it is sent. */
const recording = () => {
  const sent: string[] = [];
  const client = {
    request: (_method: string, path: string) => {
      sent.push(path);
      return Promise.resolve({});
    },
  } as unknown as KubeClient;
  return { sent, client };
};

describe('Writer', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

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

  it('limits each resource type on its own, as HNC does: one busy type does not hold back another', async () => {
    vi.useFakeTimers();
    const { sent, client } = recording();
    const w = new Writer(client, { qps: 10, burst: 2 });
    const roles = [1, 2, 3, 4].map((i) => w.create('/apis/rbac.authorization.k8s.io/v1/namespaces/a/roles', { i }));
    // Other types, including a namespaced subresource, go at once while Roles wait.
    await w.mergePatch('/api/v1/namespaces/a', {});
    await w.create('/apis/rbac.authorization.k8s.io/v1/namespaces/a/rolebindings', {});
    await w.replace('/apis/hnc.x-k8s.io/v1alpha2/namespaces/a/hierarchyconfigurations/hierarchy/status', {});
    await w.create('/api/v1/namespaces/a/events', {});
    expect(sent.filter((p) => p.endsWith('/roles'))).toHaveLength(2); // the burst
    expect(sent).toHaveLength(6);
    await vi.advanceTimersByTimeAsync(99);
    expect(sent.filter((p) => p.endsWith('/roles'))).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent.filter((p) => p.endsWith('/roles'))).toHaveLength(3); // then qps
    await vi.advanceTimersByTimeAsync(100);
    await Promise.all(roles);
    expect(w.total).toBe(8);
  });

  it("shares a type's budget between an object and its status, and tells same-named resources of two groups apart", async () => {
    vi.useFakeTimers();
    const { sent, client } = recording();
    const w = new Writer(client, { qps: 10, burst: 1 });
    await w.create('/apis/hnc.x-k8s.io/v1alpha2/namespaces/a/hierarchyconfigurations', {});
    const status = w.replace('/apis/hnc.x-k8s.io/v1alpha2/namespaces/a/hierarchyconfigurations/hierarchy/status', {});
    await w.create('/api/v1/namespaces/a/events', {});
    await w.create('/apis/events.k8s.io/v1/namespaces/a/events', {});
    expect(sent).toHaveLength(3);
    await vi.advanceTimersByTimeAsync(100);
    await status;
    expect(sent).toHaveLength(4);
  });

  it('refuses a limit a token bucket cannot have', () => {
    expect(() => new Writer(recording().client, { qps: 0 })).toThrow('qps > 0');
  });

  it('names the rate-limited type of a path: group and resource', () => {
    expect(rateLimitKey('/api/v1/namespaces/x')).toBe('/namespaces');
    expect(rateLimitKey('/api/v1/namespaces/x/events')).toBe('/events');
    expect(rateLimitKey('/apis/rbac.authorization.k8s.io/v1/namespaces/x/roles/y')).toBe('rbac.authorization.k8s.io/roles');
    expect(rateLimitKey('/apis/hnc.x-k8s.io/v1alpha2/namespaces/x/hierarchyconfigurations/hierarchy/status')).toBe(
      'hnc.x-k8s.io/hierarchyconfigurations',
    );
    expect(rateLimitKey('/apis/hnc.x-k8s.io/v1alpha2/hncconfigurations/config')).toBe('hnc.x-k8s.io/hncconfigurations');
  });

  it('asks for the metadata only when told to, for a create or an update, and for the whole object otherwise', async () => {
    const sent: Array<[string, RequestOptions]> = [];
    const client = {
      request: (method: string, _path: string, opts: RequestOptions) => {
        sent.push([method, opts]);
        return Promise.resolve({});
      },
    } as unknown as KubeClient;
    const w = new Writer(client, { qps: 1000 });
    await w.create('/api/v1/namespaces/a/configmaps', { metadata: { name: 'x' } }, { answer: 'metadata', query: { dryRun: 'All' } });
    await w.replace('/api/v1/namespaces/a/configmaps/x', { metadata: { name: 'x' } }, { answer: 'metadata' });
    await w.create('/api/v1/namespaces/a/configmaps', {});
    await w.replace('/api/v1/namespaces/a/configmaps/x', {}, { answer: 'object' });
    await w.mergePatch('/api/v1/namespaces/a', {});
    expect(sent.map(([method, opts]) => [method, opts.accept])).toEqual([
      ['POST', METADATA_ONLY],
      ['PUT', METADATA_ONLY],
      ['POST', undefined],
      ['PUT', undefined],
      ['PATCH', undefined],
    ]);
    expect(sent[0]![1]).toMatchObject({ body: { metadata: { name: 'x' } }, query: { dryRun: 'All' } });
    expect(METADATA_ONLY).toBe('application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json');
  });
});
