import { describe, expect, it } from 'vitest';
import { KubeClient, segment } from './client.js';

describe('segment', () => {
  it('keeps a name inside its path segment', () => {
    expect(segment('team-a')).toBe('team-a');
    expect(segment('rbac.authorization.k8s.io')).toBe('rbac.authorization.k8s.io');
    expect(segment('../api/v1/namespaces/kube-system/secrets')).toBe('..%2Fapi%2Fv1%2Fnamespaces%2Fkube-system%2Fsecrets');
    expect(segment('a?watch=1#x')).toBe('a%3Fwatch%3D1%23x');
  });

  it('refuses the segments a URL resolves, and the empty one', () => {
    for (const bad of ['.', '..', '']) expect(() => segment(bad)).toThrow('cannot be a segment of an API path');
  });
});

describe('KubeClient.url', () => {
  const client = KubeClient.fromConnection({
    server: 'https://127.0.0.1:6443',
    tls: { rejectUnauthorized: true },
    headers: () => ({}),
  } as never);

  it('builds the path as given', () => {
    expect(client.url('/apis/example.com').pathname).toBe('/apis/example.com');
    expect(client.url(`/apis/${segment('../api/v1')}`).pathname).toBe('/apis/..%2Fapi%2Fv1');
  });

  it('refuses a path a URL would resolve elsewhere, encoded or not', () => {
    for (const path of ['/apis/../api/v1/secrets', '/apis/./x', '/apis/%2e%2e/api', '/apis/.%2E/api', '/apis/x/..'])
      expect(() => client.url(path)).toThrow('has a "." or ".." segment');
  });
});

describe('KubeClient.target', () => {
  const at = (server: string) => KubeClient.fromConnection({ server, tls: { rejectUnauthorized: true }, headers: () => ({}) } as never);
  const client = at('https://127.0.0.1:6443');
  /** The request line url() gives: what target() must send too. */
  const line = (c: KubeClient, path: string, query?: Record<string, string | number | boolean | undefined>) => {
    const u = c.url(path, query);
    return u.pathname + u.search;
  };

  it('sends a plain path as it is, with the same request line and host as url()', () => {
    const cases: Array<[string, Record<string, string | number | boolean | undefined>?]> = [
      ['/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/roles'],
      [`/api/v1/namespaces/${segment('a')}/configmaps/${segment('x:y@z')}`],
      [`/apis/${segment('../api/v1')}`],
      ['/api/v1/namespaces', { labelSelector: 'a in (b, c),!d', limit: 500, continue: undefined, watch: true }],
      ['/api/v1/namespaces', { fieldSelector: 'metadata.name=x&y' }],
      ['/api/v1/namespaces', {}],
    ];
    for (const [path, query] of cases) {
      const t = client.target(path, query);
      expect(t).not.toBeInstanceOf(URL);
      expect(t).toEqual({ hostname: '127.0.0.1', port: '6443', path: line(client, path, query) });
    }
  });

  it("keeps the server's path prefix, the default port, and an IPv6 address without its brackets", () => {
    expect(at('https://example.com/k8s/clusters/c-1').target('/api/v1/namespaces')).toEqual({
      hostname: 'example.com',
      port: '443',
      path: '/k8s/clusters/c-1/api/v1/namespaces',
    });
    expect(at('https://[::1]:6443').target('/version')).toEqual({ hostname: '::1', port: '6443', path: '/version' });
  });

  it('leaves to URL a path that is not plain, so that it is escaped as before', () => {
    const t = client.target('/api/v1/namespaces/a b');
    expect(t).toBeInstanceOf(URL);
    expect((t as URL).pathname).toBe('/api/v1/namespaces/a%20b');
  });

  it('refuses a dot segment on either way', () => {
    for (const path of ['/apis/../api/v1/secrets', '/apis/./x', '/apis/%2e%2e/api', '/apis/.%2E/api', '/apis/x/..', '/apis/x y/..'])
      expect(() => client.target(path)).toThrow('has a "." or ".." segment');
    // Dots inside a segment are names, not segments.
    expect(client.target('/apis/x/..a/.b./...')).toEqual({ hostname: '127.0.0.1', port: '6443', path: '/apis/x/..a/.b./...' });
  });
});
