import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type https from 'node:https';
import { describe, expect, it } from 'vitest';
import { connect, impersonationHeaders, loadKubeConfig } from './connection.js';

const dir = mkdtempSync(join(tmpdir(), 'kubectl-hns-'));
const kubeconfig = join(dir, 'config');
writeFileSync(
  kubeconfig,
  `apiVersion: v1
kind: Config
clusters:
- name: one
  cluster: {server: "https://127.0.0.1:6443"}
- name: two
  cluster: {server: "https://127.0.0.2:6443"}
- name: plain
  cluster: {server: "http://127.0.0.3:8080"}
users:
- name: admin
  user: {token: admin-token}
- name: other
  user: {token: other-token}
contexts:
- name: first
  context: {cluster: one, user: admin, namespace: team-a}
- name: second
  context: {cluster: two, user: other}
- name: insecure
  context: {cluster: plain, user: admin}
current-context: first
`,
);

async function headersOf(flags: Parameters<typeof loadKubeConfig>[0]): Promise<Record<string, unknown>> {
  const opts: https.RequestOptions = {};
  await loadKubeConfig(flags).applyToHTTPSOptions(opts);
  return opts.headers as Record<string, unknown>;
}

describe('connection', () => {
  it('uses the kubeconfig’s current context and its namespace', async () => {
    const session = await connect({ kubeconfig });
    expect(session.api.server).toBe('https://127.0.0.1:6443');
    expect(session.namespace).toBe('team-a');
    expect((await connect({ kubeconfig, namespace: 'x' })).namespace).toBe('x');
  });

  it('--context, --cluster and --user pick other entries', async () => {
    const second = await connect({ kubeconfig, context: 'second' });
    expect([second.api.server, second.namespace]).toEqual(['https://127.0.0.2:6443', 'default']);
    expect((await connect({ kubeconfig, cluster: 'two' })).api.server).toBe('https://127.0.0.2:6443');
    expect(await headersOf({ kubeconfig, user: 'other' })).toMatchObject({ Authorization: 'Bearer other-token' });
  });

  it('names what does not exist', async () => {
    await expect(connect({ kubeconfig, context: 'nope' })).rejects.toThrow('Error: context "nope" does not exist');
    await expect(connect({ kubeconfig, cluster: 'nope' })).rejects.toThrow('Error: cluster "nope" does not exist');
    await expect(connect({ kubeconfig, user: 'nope' })).rejects.toThrow('Error: user "nope" does not exist');
    await expect(connect({ kubeconfig: join(dir, 'missing') })).rejects.toThrow(/^Error: cannot load the kubeconfig: ENOENT/);
    await expect(connect({ kubeconfig, context: 'insecure' })).rejects.toThrow(
      'Error: only https API servers are supported; the kubeconfig names http://127.0.0.3:8080',
    );
    await expect(connect({ kubeconfig, requestTimeout: 'later' })).rejects.toThrow(/invalid argument "later" for "--request-timeout"/);
  });

  it('adds impersonation headers for --as and --as-group, next to the credentials', async () => {
    expect(await headersOf({ kubeconfig, as: 'alice', asGroup: ['devs', 'ops'] })).toEqual({
      Authorization: 'Bearer admin-token',
      'Impersonate-User': 'alice',
      'Impersonate-Group': ['devs', 'ops'],
    });
    expect(await headersOf({ kubeconfig })).toEqual({ Authorization: 'Bearer admin-token' });
  });

  it('refuses --as-group without --as, as kubectl does', () => {
    expect(() => impersonationHeaders(undefined, ['devs'])).toThrow(
      'Error: requesting groups without impersonating a user (--as-group needs --as)',
    );
  });
});
