// kubectl's global flags → the connection the plugin makes: each flag's effect on the server, TLS,
// credentials, impersonation and namespace, over a kubeconfig file (the project's own loader).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ClusterConnection } from '../kube/kubeconfig.js';
import { localHttpsServers } from '../kube/testing-https.js';
import type { GlobalFlags } from './cli/global-flags.js';
import { connect, impersonationHeaders, loadConnection } from './connection.js';

const dir = mkdtempSync(join(tmpdir(), 'kubectl-hns-'));
const file = (name: string, content: string): string => {
  writeFileSync(join(dir, name), content);
  return join(dir, name);
};
const kubeconfig = file(
  'config',
  `apiVersion: v1
kind: Config
clusters:
- name: one
  cluster: {server: "https://127.0.0.1:6443", certificate-authority-data: ${Buffer.from('CA-ONE').toString('base64')}}
- name: two
  cluster: {server: "https://127.0.0.2:6443"}
- name: plain
  cluster: {server: "http://127.0.0.3:8080"}
- name: socks
  cluster: {server: "https://127.0.0.4:6443", proxy-url: "socks5://jane:secret@socks.corp:1080"}
users:
- name: admin
  user: {token: admin-token}
- name: other
  user: {token: other-token}
- name: certs
  user: {client-certificate-data: ${Buffer.from('CERT').toString('base64')}, client-key-data: ${Buffer.from('KEY').toString('base64')}}
- name: plugin
  user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: get-token}}
contexts:
- name: first
  context: {cluster: one, user: admin, namespace: team-a}
- name: second
  context: {cluster: two, user: other}
- name: insecure
  context: {cluster: plain, user: admin}
- name: with-certs
  context: {cluster: one, user: certs}
- name: with-exec
  context: {cluster: one, user: plugin}
- name: via-socks
  context: {cluster: socks, user: admin}
current-context: first
`,
);
const caFile = file('ca.crt', 'CA-FILE');
const certFile = file('client.crt', 'CERT-FILE');
const keyFile = file('client.key', 'KEY-FILE');
const env = {};

function conn(flags: GlobalFlags): ClusterConnection {
  const got = loadConnection({ kubeconfig, ...flags }, env);
  if (got.kind !== 'direct') throw new Error(`expected a direct connection: ${got.reason}`);
  return got;
}

const text = (b: Buffer | undefined): string | undefined => b?.toString();

describe('global flags take effect on the connection', () => {
  // Each row: the flags, and what the connection must show for them.
  it.each<[string, GlobalFlags, (c: ClusterConnection) => unknown, unknown]>([
    [
      'no flags: the current context',
      {},
      (c) => [c.server, c.namespace, c.headers().Authorization],
      ['https://127.0.0.1:6443', 'team-a', 'Bearer admin-token'],
    ],
    ['--context', { context: 'second' }, (c) => [c.server, c.headers().Authorization], ['https://127.0.0.2:6443', 'Bearer other-token']],
    ['--cluster', { cluster: 'two' }, (c) => [c.server, c.headers().Authorization], ['https://127.0.0.2:6443', 'Bearer admin-token']],
    ['--user', { user: 'other' }, (c) => [c.server, c.headers().Authorization], ['https://127.0.0.1:6443', 'Bearer other-token']],
    ['-n/--namespace', { namespace: 'elsewhere' }, (c) => c.namespace, 'elsewhere'],
    [
      '-s/--server',
      { server: 'https://10.0.0.9:443' },
      (c) => [c.server, c.headers().Authorization],
      ['https://10.0.0.9:443', 'Bearer admin-token'],
    ],
    [
      '--token replaces the user’s credentials',
      { context: 'with-certs', token: 'flag-token' },
      (c) => [c.headers().Authorization, c.tls.cert],
      ['Bearer flag-token', undefined],
    ],
    [
      '--username/--password',
      { username: 'ann', password: 'pw' },
      (c) => c.headers().Authorization,
      `Basic ${Buffer.from('ann:pw').toString('base64')}`,
    ],
    [
      '--client-certificate/--client-key',
      { clientCertificate: certFile, clientKey: keyFile },
      (c) => [text(c.tls.cert), text(c.tls.key), c.headers().Authorization],
      ['CERT-FILE', 'KEY-FILE', undefined],
    ],
    ['--certificate-authority replaces the CA data', { certificateAuthority: caFile }, (c) => text(c.tls.ca), 'CA-FILE'],
    ['--insecure-skip-tls-verify', { insecureSkipTlsVerify: true }, (c) => [c.tls.rejectUnauthorized, c.tls.ca], [false, undefined]],
    [
      '--insecure-skip-tls-verify=false',
      { insecureSkipTlsVerify: false },
      (c) => [c.tls.rejectUnauthorized, text(c.tls.ca)],
      [true, 'CA-ONE'],
    ],
    ['--tls-server-name', { tlsServerName: 'kubernetes.default' }, (c) => c.tls.servername, 'kubernetes.default'],
    ['--as', { as: 'alice' }, (c) => c.headers()['Impersonate-User'], 'alice'],
    ['--as-group (repeated)', { as: 'alice', asGroup: ['devs', 'ops'] }, (c) => c.headers()['Impersonate-Group'], ['devs', 'ops']],
    ['--as-uid', { as: 'alice', asUid: '42' }, (c) => c.headers()['Impersonate-Uid'], '42'],
    ['a token flag makes an exec user direct', { context: 'with-exec', token: 't' }, (c) => c.headers().Authorization, 'Bearer t'],
  ])('%s', (_name, flags, read, expected) => {
    expect(read(conn(flags))).toEqual(expected);
  });

  it('--server and --token need no kubeconfig at all, as with kubectl', () => {
    const got = loadConnection({ server: 'https://10.1.1.1:6443', token: 'tok', certificateAuthority: caFile }, { KUBECONFIG: '' });
    expect(got.kind === 'direct' && [got.server, got.headers().Authorization, text(got.tls.ca)]).toEqual([
      'https://10.1.1.1:6443',
      'Bearer tok',
      'CA-FILE',
    ]);
  });

  it('leaves an exec user to client-node, with the flags applied to its entries', () => {
    const got = loadConnection({ kubeconfig, context: 'with-exec', server: 'https://10.0.0.7:6443', namespace: 'x' }, env);
    expect(got.kind).toBe('client-node');
    if (got.kind !== 'client-node') return;
    const ctx = got.config.contexts.find((c) => c.name === got.context)?.context;
    expect(ctx?.namespace).toBe('x');
    expect(got.config.clusters.find((c) => c.name === ctx?.cluster)?.cluster.server).toBe('https://10.0.0.7:6443');
  });

  it('connect() uses the context’s namespace unless -n says otherwise', async () => {
    const session = await connect({ kubeconfig });
    expect([session.api.server, session.namespace]).toEqual(['https://127.0.0.1:6443', 'team-a']);
    expect((await connect({ kubeconfig, namespace: 'x' })).namespace).toBe('x');
    expect((await connect({ kubeconfig, context: 'second' })).namespace).toBe('default');
    expect((await connect({ kubeconfig, cacheDir: '/tmp/c' })).cacheDir).toBe('/tmp/c');
  });

  it('names what does not exist', async () => {
    await expect(connect({ kubeconfig, context: 'nope' })).rejects.toThrow(/^Error: context "nope" does not exist/);
    await expect(connect({ kubeconfig, cluster: 'nope' })).rejects.toThrow(/^Error: cluster "nope" does not exist/);
    await expect(connect({ kubeconfig, user: 'nope' })).rejects.toThrow(/^Error: user "nope" does not exist/);
    await expect(connect({ kubeconfig: join(dir, 'missing') })).rejects.toThrow(/^Error: cannot read the kubeconfig .*missing/);
    await expect(connect({ kubeconfig, context: 'insecure' })).rejects.toThrow(
      'Error: only https API servers are supported; the kubeconfig names http://127.0.0.3:8080',
    );
    // kubectl takes SOCKS5 proxies; hnc-ts says it does not (the password kept out of the message).
    await expect(connect({ kubeconfig, context: 'via-socks' })).rejects.toThrow(
      "Error: cannot use the kubeconfig: the cluster's proxy-url socks5://***@socks.corp:1080: SOCKS5 proxies are not supported",
    );
    await expect(connect({ kubeconfig, requestTimeout: 'later' })).rejects.toThrow(/invalid argument "later" for "--request-timeout"/);
    await expect(connect({ kubeconfig, clientCertificate: certFile })).rejects.toThrow(/has a client certificate but no client key/);
  });

  it('refuses --as-group or --as-uid without --as, as kubectl does', () => {
    expect(() => impersonationHeaders({ asGroup: ['devs'] })).toThrow('Error: requesting uid or groups without impersonating a user');
    expect(() => impersonationHeaders({ asUid: '1' })).toThrow('Error: requesting uid or groups without impersonating a user');
  });
});

describe('an exec user’s connection', () => {
  const servers = localHttpsServers('kubectl-hns-exec');
  afterEach(async () => (await servers).close());

  it('opens as many watches at once as any other user’s (get --watch keeps one per namespace it cannot watch cluster-wide)', async () => {
    const https = await servers;
    const open = new Set<string>();
    const { port } = await https.serve((req, res) => {
      // A watch that stays open: its head is sent, no event yet.
      res.writeHead(req.headers.authorization === 'Bearer exec-token' ? 200 : 401, { 'content-type': 'application/json' });
      res.flushHeaders();
      open.add(req.url!);
    });
    const credential = JSON.stringify({
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      status: { token: 'exec-token' },
    });
    const config = file(
      'exec-config',
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          {
            name: 'local',
            cluster: { server: `https://127.0.0.1:${port}`, 'certificate-authority-data': Buffer.from(https.caPem).toString('base64') },
          },
        ],
        users: [
          {
            name: 'exec',
            user: {
              exec: {
                apiVersion: 'client.authentication.k8s.io/v1',
                command: process.execPath,
                args: ['-e', `console.log(${JSON.stringify(credential)})`],
              },
            },
          },
        ],
        contexts: [{ name: 'local', context: { cluster: 'local', user: 'exec' } }],
        'current-context': 'local',
      }),
    );
    const session = await connect({ kubeconfig: config });
    const n = 80;
    const watches = Array.from({ length: n }, (_, i) =>
      session.api
        .watch({ group: '', version: 'v1', resource: 'configmaps' }, `ns-${i}`, { table: false }, () => undefined)
        .catch(() => undefined),
    );
    // Until every watch is open on the server (64 were, the rest waiting for a socket, for ever).
    await expect.poll(() => open.size, { timeout: 20_000, interval: 50 }).toBe(n);
    await (await servers).close();
    await Promise.all(watches);
  }, 40_000);
});
