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
