// Our kubeconfig loader (kube/kubeconfig.ts), on temporary files, and KubeClient built from it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient } from './client.js';
import { loadKubeconfig, TOKEN_FILE_REFRESH_MS, type ClusterConnection, type LoadOptions } from './kubeconfig.js';
import { CertificateAuthority } from './pki.js';

const root = mkdtempSync(join(tmpdir(), 'kubeconfig-test-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

/** A fresh directory with the given files (relative path → content). */
function dirWith(files: Record<string, string>): string {
  const dir = join(root, `d${n++}`);
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), content);
  }
  mkdirSync(dir, { recursive: true });
  return dir;
}

const PEM = (label: string, body: string) => `-----BEGIN ${label}-----\n${Buffer.from(body).toString('base64')}\n-----END ${label}-----\n`;
const b64 = (s: string) => Buffer.from(s).toString('base64');

/** No KUBECONFIG, an empty home, not in a pod: only what a test adds. */
const isolated = (extra: Partial<LoadOptions> = {}): LoadOptions => ({
  env: {},
  home: dirWith({}),
  serviceAccountDir: join(root, 'no-sa'),
  ...extra,
});

function direct(opts: LoadOptions): ClusterConnection {
  const got = loadKubeconfig(opts);
  if (got.kind !== 'direct') throw new Error(`expected a direct connection, got ${got.kind}: ${got.reason}`);
  return got;
}

const simple = (server: string, user = '{token: t}') => `
clusters: [{name: c, cluster: {server: "${server}"}}]
users: [{name: u, user: ${user}}]
contexts: [{name: ctx, context: {cluster: c, user: u, namespace: ns}}]
current-context: ctx
`;

describe('loadKubeconfig: sources and merging', () => {
  it('merges the KUBECONFIG list as kubectl does: the first file defining a name wins, current-context from the first file setting it', () => {
    const a = dirWith({
      config: `
clusters:
- {name: shared, cluster: {server: "https://a.example:6443"}}
contexts:
- {name: from-a, context: {cluster: shared, user: alice}}
`,
    });
    const b = dirWith({
      config: `
clusters:
- {name: shared, cluster: {server: "https://b.example:6443"}}
- {name: only-b, cluster: {server: "https://only-b.example"}}
users:
- {name: alice, user: {token: alice-from-b}}
contexts:
- {name: from-a, context: {cluster: only-b, user: alice}}
- {name: from-b, context: {cluster: only-b, user: alice}}
current-context: from-a
`,
    });
    const c = dirWith({
      config: `
users:
- {name: alice, user: {token: alice-from-c}}
current-context: from-b
`,
    });
    const env = { KUBECONFIG: [join(a, 'config'), join(root, 'missing', 'config'), join(b, 'config'), join(c, 'config')].join(delimiter) };
    const conn = direct(isolated({ env }));
    expect(conn.context).toBe('from-a');
    expect(conn.server).toBe('https://a.example:6443');
    expect(conn.headers()).toEqual({ Authorization: 'Bearer alice-from-b' });
    expect(conn.source).toContain('KUBECONFIG=');
    expect(direct(isolated({ env, context: 'from-b' })).server).toBe('https://only-b.example');
  });

  it('takes an explicit path over KUBECONFIG, and KUBECONFIG over ~/.kube/config', () => {
    const explicit = dirWith({ config: simple('https://explicit') });
    const fromEnv = dirWith({ config: simple('https://env') });
    const home = dirWith({ '.kube/config': simple('https://home') });
    const env = { KUBECONFIG: join(fromEnv, 'config'), KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' };
    expect(direct({ env, home, path: join(explicit, 'config') }).server).toBe('https://explicit');
    expect(direct({ env, home }).server).toBe('https://env');
    expect(direct({ env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' }, home }).server).toBe('https://home');
  });

  it('resolves relative paths against the directory of the file naming them', () => {
    const a = dirWith({
      'kube/config': `
clusters: [{name: c, cluster: {server: "https://x", certificate-authority: pki/ca.crt}}]
contexts: [{name: ctx, context: {cluster: c, user: u}}]
current-context: ctx
`,
      'kube/pki/ca.crt': PEM('CERTIFICATE', 'ca-of-a'),
    });
    const b = dirWith({
      'other/config': `
users: [{name: u, user: {client-certificate: certs/u.crt, client-key: certs/u.key, tokenFile: ../token}}]
`,
      'other/certs/u.crt': PEM('CERTIFICATE', 'user-cert'),
      'other/certs/u.key': PEM('PRIVATE KEY', 'user-key'),
      token: 'file-token\n',
    });
    const conn = direct(isolated({ env: { KUBECONFIG: `${join(a, 'kube/config')}${delimiter}${join(b, 'other/config')}` } }));
    expect(conn.tls.ca?.toString()).toBe(PEM('CERTIFICATE', 'ca-of-a'));
    expect(conn.tls.cert?.toString()).toBe(PEM('CERTIFICATE', 'user-cert'));
    expect(conn.tls.key?.toString()).toBe(PEM('PRIVATE KEY', 'user-key'));
    expect(conn.headers()).toEqual({ Authorization: 'Bearer file-token' });
  });
});

describe('loadKubeconfig: contexts', () => {
  const dir = dirWith({
    config: `
clusters: [{name: c, cluster: {server: "https://c"}}, {name: d, cluster: {server: "https://d"}}]
users: [{name: u, user: {token: t}}]
contexts:
- {name: ctx, context: {cluster: c, user: u, namespace: ns}}
- {name: other, context: {cluster: d}}
- {name: no-cluster, context: {user: u}}
- {name: bad-cluster, context: {cluster: nope, user: u}}
- {name: bad-user, context: {cluster: c, user: nobody}}
current-context: ctx
`,
    'no-current': `
clusters: [{name: c, cluster: {server: "https://c"}}]
contexts: [{name: ctx, context: {cluster: c}}]
`,
    'dangling-current': `
clusters: [{name: c, cluster: {server: "https://c"}}]
current-context: gone
`,
  });
  const path = join(dir, 'config');

  it('uses current-context, or the context asked for', () => {
    const conn = direct(isolated({ path }));
    expect([conn.context, conn.server, conn.namespace]).toEqual(['ctx', 'https://c', 'ns']);
    const other = direct(isolated({ path, context: 'other' }));
    expect([other.context, other.server, other.namespace]).toEqual(['other', 'https://d', undefined]);
    // A context without a user: no credentials.
    expect(other.headers()).toEqual({});
  });

  it('names what is missing', () => {
    expect(() => loadKubeconfig(isolated({ path, context: 'x' }))).toThrow(`context "x" does not exist in the kubeconfig (${path})`);
    expect(() => loadKubeconfig(isolated({ path: join(dir, 'no-current') }))).toThrow('the kubeconfig names no current context');
    expect(() => loadKubeconfig(isolated({ path: join(dir, 'dangling-current') }))).toThrow(
      'the current context "gone" does not exist in the kubeconfig',
    );
    expect(() => loadKubeconfig(isolated({ path, context: 'no-cluster' }))).toThrow('context "no-cluster" names no cluster');
    expect(() => loadKubeconfig(isolated({ path, context: 'bad-cluster' }))).toThrow(
      'cluster "nope" (of context "bad-cluster") does not exist in the kubeconfig',
    );
    expect(() => loadKubeconfig(isolated({ path, context: 'bad-user' }))).toThrow(
      'user "nobody" (of context "bad-user") does not exist in the kubeconfig',
    );
    expect(() => loadKubeconfig(isolated({ path: join(dir, 'absent') }))).toThrow(`cannot read the kubeconfig ${join(dir, 'absent')}`);
    expect(() => loadKubeconfig(isolated())).toThrow(/^no kubeconfig: KUBECONFIG is not set, .*\.kube\/config does not exist/);
    expect(() => loadKubeconfig(isolated({ env: { KUBECONFIG: join(dir, 'absent') } }))).toThrow('none of the files in KUBECONFIG exists');
    const broken = dirWith({ config: 'clusters: [unclosed' });
    expect(() => loadKubeconfig(isolated({ path: join(broken, 'config') }))).toThrow('cannot parse the kubeconfig');
    const noKey = dirWith({ config: simple('https://x', `{client-certificate-data: ${b64('c')}}`) });
    expect(() => loadKubeconfig(isolated({ path: join(noKey, 'config') }))).toThrow('user "u" has a client certificate but no client key');
  });
});

describe("loadKubeconfig: overrides (kubectl's connection flags)", () => {
  const dir = dirWith({
    config: simple('https://c', `{client-certificate-data: ${b64('CERT')}, client-key-data: ${b64('KEY')}, as: someone}`),
    'ca.crt': 'CA-FILE',
  });
  const path = join(dir, 'config');

  it('a credential flag replaces all of the user’s credentials; impersonation stays unless overridden', () => {
    const conn = direct(isolated({ path, overrides: { token: 'flag' } }));
    expect([conn.tls.cert, conn.tls.key, conn.headers()]).toEqual([
      undefined,
      undefined,
      { Authorization: 'Bearer flag', 'Impersonate-User': 'someone' },
    ]);
    expect(direct(isolated({ path, overrides: { as: 'other', asGroups: ['g'], asUid: '7' } })).headers()).toEqual({
      'Impersonate-User': 'other',
      'Impersonate-Group': ['g'],
      'Impersonate-Uid': '7',
    });
  });

  it('cluster flags replace the cluster’s fields; a CA flag or insecure drops the CA data', () => {
    const conn = direct(
      isolated({ path, overrides: { server: 'https://s', certificateAuthority: join(dir, 'ca.crt'), tlsServerName: 'n' } }),
    );
    expect([conn.server, conn.tls.ca?.toString(), conn.tls.servername]).toEqual(['https://s', 'CA-FILE', 'n']);
    const insecure = direct(isolated({ path, overrides: { insecureSkipTlsVerify: true } }));
    expect([insecure.tls.rejectUnauthorized, insecure.tls.ca]).toEqual([false, undefined]);
  });

  it('--server needs no kubeconfig; an explicitly named cluster, user or context must exist', () => {
    const bare = direct(isolated({ overrides: { server: 'https://only', token: 't' } }));
    expect([bare.server, bare.headers(), bare.context, bare.source]).toEqual([
      'https://only',
      { Authorization: 'Bearer t' },
      undefined,
      'the command-line flags',
    ]);
    expect(() => loadKubeconfig(isolated({ path, overrides: { cluster: 'nope' } }))).toThrow(
      `cluster "nope" does not exist in the kubeconfig (${path})`,
    );
    expect(() => loadKubeconfig(isolated({ path, overrides: { user: 'nope' } }))).toThrow(
      `user "nope" does not exist in the kubeconfig (${path})`,
    );
    expect(() => loadKubeconfig(isolated({ path, context: 'nope', overrides: { server: 'https://s' } }))).toThrow(
      'context "nope" does not exist',
    );
  });
});

describe('loadKubeconfig: clusters and users', () => {
  it('reads TLS settings: CA data, client certificate data, insecure-skip-tls-verify, tls-server-name', () => {
    const dir = dirWith({
      config: `
clusters:
- name: c
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority-data: ${b64(PEM('CERTIFICATE', 'ca'))}
    tls-server-name: api.example
- {name: insecure, cluster: {server: "https://x", insecure-skip-tls-verify: true}}
users: [{name: u, user: {client-certificate-data: ${b64(PEM('CERTIFICATE', 'c'))}, client-key-data: ${b64(PEM('PRIVATE KEY', 'k'))}}}]
contexts: [{name: ctx, context: {cluster: c, user: u}}, {name: insecure, context: {cluster: insecure, user: u}}]
current-context: ctx
`,
    });
    const conn = direct(isolated({ path: join(dir, 'config') }));
    expect(conn.tls).toEqual({
      ca: Buffer.from(PEM('CERTIFICATE', 'ca')),
      cert: Buffer.from(PEM('CERTIFICATE', 'c')),
      key: Buffer.from(PEM('PRIVATE KEY', 'k')),
      rejectUnauthorized: true,
      servername: 'api.example',
    });
    expect(conn.headers()).toEqual({});
    expect(direct(isolated({ path: join(dir, 'config'), context: 'insecure' })).tls.rejectUnauthorized).toBe(false);
  });

  it("reads a cluster's proxy-url (kube/proxy.ts uses it)", () => {
    const dir = dirWith({
      config: `
clusters:
- {name: c, cluster: {server: "https://10.0.0.1:6443", proxy-url: "http://jane:pw@proxy.corp:3128"}}
- {name: d, cluster: {server: "https://10.0.0.2:6443"}}
users: [{name: u, user: {token: t}}]
contexts: [{name: ctx, context: {cluster: c, user: u}}, {name: direct, context: {cluster: d, user: u}}]
current-context: ctx
`,
    });
    expect(direct(isolated({ path: join(dir, 'config') })).proxyUrl).toBe('http://jane:pw@proxy.corp:3128');
    expect(direct(isolated({ path: join(dir, 'config'), context: 'direct' })).proxyUrl).toBeUndefined();
  });

  it('re-reads a token file at most once a minute (rotation)', () => {
    const dir = dirWith({ config: simple('https://x', '{tokenFile: token}'), token: 'first\n' });
    let now = 1_000_000;
    const conn = direct(isolated({ path: join(dir, 'config'), now: () => now }));
    expect(conn.headers()).toEqual({ Authorization: 'Bearer first' });
    writeFileSync(join(dir, 'token'), 'second');
    now += TOKEN_FILE_REFRESH_MS - 1;
    expect(conn.headers()).toEqual({ Authorization: 'Bearer first' });
    now += 1;
    expect(conn.headers()).toEqual({ Authorization: 'Bearer second' });
    // A file missing in the middle of a rotation: the last token stays.
    rmSync(join(dir, 'token'));
    now += TOKEN_FILE_REFRESH_MS;
    expect(conn.headers()).toEqual({ Authorization: 'Bearer second' });
    writeFileSync(join(dir, 'token'), 'third');
    now += TOKEN_FILE_REFRESH_MS;
    expect(conn.headers()).toEqual({ Authorization: 'Bearer third' });
  });

  it('re-reads a token file at once when the API server has rejected the token it holds', () => {
    const dir = dirWith({ config: simple('https://x', '{tokenFile: token}'), token: 'first\n' });
    const conn = direct(isolated({ path: join(dir, 'config'), now: () => 1_000_000 }));
    expect(conn.headers()).toEqual({ Authorization: 'Bearer first' });
    writeFileSync(join(dir, 'token'), 'second');
    expect(conn.headers()).toEqual({ Authorization: 'Bearer first' });
    expect(conn.headers(true)).toEqual({ Authorization: 'Bearer second' });
  });

  it('fails clearly on an unreadable token file, unless an inline token is there to fall back on', () => {
    const missing = dirWith({ config: simple('https://x', '{tokenFile: nope}') });
    expect(() => loadKubeconfig(isolated({ path: join(missing, 'config') }))).toThrow(
      `cannot read the token file ${join(missing, 'nope')}`,
    );
    const withInline = dirWith({ config: simple('https://x', '{tokenFile: nope, token: inline}') });
    expect(direct(isolated({ path: join(withInline, 'config') })).headers()).toEqual({ Authorization: 'Bearer inline' });
  });

  it('sends basic auth for username/password, and refuses it together with a token', () => {
    const dir = dirWith({
      config: simple('https://x', '{username: admin, password: "s3cr:t"}'),
      both: simple('https://x', '{username: a, password: b, token: t}'),
    });
    expect(direct(isolated({ path: join(dir, 'config') })).headers()).toEqual({ Authorization: `Basic ${b64('admin:s3cr:t')}` });
    expect(() => loadKubeconfig(isolated({ path: join(dir, 'both') }))).toThrow('user "u" has both a token and a username/password');
  });

  it('adds impersonation headers', () => {
    const user = `{token: t, as: jane, as-uid: "42", as-groups: [dev, ops], as-user-extra: {scopes: [view, edit], "a/b": [x]}}`;
    const dir = dirWith({ config: simple('https://x', user) });
    expect(direct(isolated({ path: join(dir, 'config') })).headers()).toEqual({
      Authorization: 'Bearer t',
      'Impersonate-User': 'jane',
      'Impersonate-Uid': '42',
      'Impersonate-Group': ['dev', 'ops'],
      'Impersonate-Extra-scopes': ['view', 'edit'],
      'Impersonate-Extra-a%2Fb': ['x'],
    });
  });

  it('leaves exec and auth-provider users to client-node, with the merged kubeconfig and absolute paths', () => {
    const dir = dirWith({
      config: `
clusters: [{name: c, cluster: {server: "https://x", certificate-authority: ca.crt}}]
users:
- {name: e, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: ./bin/creds, args: [a]}}}
- {name: p, user: {auth-provider: {name: oidc, config: {idp-issuer-url: "https://issuer"}}}}
- {name: bare, user: {exec: {command: gke-gcloud-auth-plugin}}}
contexts: [{name: e, context: {cluster: c, user: e}}, {name: p, context: {cluster: c, user: p}}, {name: bare, context: {cluster: c, user: bare}}]
current-context: p
`,
    });
    const got = loadKubeconfig(isolated({ path: join(dir, 'config'), context: 'e' }));
    expect(got.kind).toBe('client-node');
    if (got.kind !== 'client-node') return;
    expect(got.reason).toBe('user "e" uses an exec credential plugin');
    expect(got.context).toBe('e');
    expect(got.config['current-context']).toBe('e');
    expect(got.config.clusters[0]?.cluster['certificate-authority']).toBe(join(dir, 'ca.crt'));
    expect(got.config.users.find((u) => u.name === 'e')?.user.exec).toEqual({
      apiVersion: 'client.authentication.k8s.io/v1',
      command: join(dir, 'bin/creds'),
      args: ['a'],
    });
    // A bare command name is looked up in PATH, as kubectl does.
    expect(got.config.users.find((u) => u.name === 'bare')?.user.exec?.command).toBe('gke-gcloud-auth-plugin');
    const p = loadKubeconfig(isolated({ path: join(dir, 'config') }));
    expect(p.kind === 'client-node' && p.reason).toBe('user "p" uses the auth-provider "oidc"');
  });
});

describe('loadKubeconfig: in-cluster', () => {
  it('uses the service account when there is no kubeconfig', () => {
    const sa = dirWith({ token: 'sa-token-1\n', 'ca.crt': PEM('CERTIFICATE', 'cluster-ca'), namespace: 'hnc-system' });
    let now = 0;
    const env = { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' };
    const conn = direct(isolated({ env, serviceAccountDir: sa, now: () => now }));
    expect(conn.source).toBe('in-cluster');
    expect(conn.server).toBe('https://10.96.0.1:443');
    expect(conn.tls).toEqual({ ca: Buffer.from(PEM('CERTIFICATE', 'cluster-ca')), rejectUnauthorized: true });
    expect(conn.namespace).toBe('hnc-system');
    expect(conn.headers()).toEqual({ Authorization: 'Bearer sa-token-1' });
    writeFileSync(join(sa, 'token'), 'sa-token-2');
    now += TOKEN_FILE_REFRESH_MS;
    expect(conn.headers()).toEqual({ Authorization: 'Bearer sa-token-2' });
    expect(
      direct(isolated({ env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '6443' }, serviceAccountDir: sa })).server,
    ).toBe('https://[fd00::1]:6443');
  });

  it('names what is missing', () => {
    const env = { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' };
    const empty = dirWith({});
    expect(() => loadKubeconfig(isolated({ env, serviceAccountDir: empty }))).toThrow(`cannot read the token file ${join(empty, 'token')}`);
    const sa = dirWith({ token: 't' });
    expect(() => loadKubeconfig(isolated({ env, serviceAccountDir: sa, context: 'x' }))).toThrow('context "x" does not exist');
    // Only the host: not in a pod.
    expect(() => loadKubeconfig(isolated({ env: { KUBERNETES_SERVICE_HOST: '10.96.0.1' }, serviceAccountDir: sa }))).toThrow(
      'no kubeconfig',
    );
  });
});

describe('KubeClient.fromKubeconfig', () => {
  let ca: CertificateAuthority;
  let server: https.Server;
  let port: number;
  let user: { cert: string; key: string };

  beforeAll(async () => {
    ca = await CertificateAuthority.create('test-ca');
    // Valid only for a DNS name, so that reaching 127.0.0.1 needs tls-server-name.
    const serving = await ca.issue({ commonName: 'apiserver', usage: 'server', dnsNames: ['apiserver.test'] });
    user = await ca.issue({ commonName: 'jane', organizations: ['devs'], usage: 'client' });
    server = https.createServer({ ...serving, ca: ca.certPem, requestCert: true, rejectUnauthorized: false }, (req, res) => {
      const socket = req.socket as TLSSocket;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          cn: socket.authorized ? socket.getPeerCertificate().subject.CN : null,
          authorization: req.headers.authorization ?? null,
          servername: (socket as TLSSocket & { servername?: string }).servername,
        }),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('builds the agent from client certificate data, and authenticates with it', async () => {
    const dir = dirWith({
      config: `
clusters: [{name: c, cluster: {server: "https://127.0.0.1:${port}/", certificate-authority-data: ${b64(ca.certPem)}, tls-server-name: apiserver.test}}]
users: [{name: u, user: {client-certificate-data: ${b64(user.cert)}, client-key-data: ${b64(user.key)}}}]
contexts: [{name: ctx, context: {cluster: c, user: u}}]
current-context: ctx
`,
    });
    const client = await KubeClient.fromKubeconfig(join(dir, 'config'));
    expect(client.server).toBe(`https://127.0.0.1:${port}`);
    const agent = (client as unknown as { base: https.RequestOptions }).base.agent as https.Agent;
    expect(agent).toBeInstanceOf(https.Agent);
    expect(agent.options).toMatchObject({
      keepAlive: true,
      ca: Buffer.from(ca.certPem),
      cert: Buffer.from(user.cert),
      key: Buffer.from(user.key),
      rejectUnauthorized: true,
      servername: 'apiserver.test',
    });
    expect(await client.get('/version')).toEqual({ cn: 'jane', authorization: null, servername: 'apiserver.test' });
  });

  // The fallback imports @kubernetes/client-node on demand: seconds on a busy machine.
  it('falls back to client-node for an exec credential plugin', async () => {
    const dir = dirWith({
      'bin/creds.mjs': `process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'from-exec-' + process.argv[2] } }));`,
    });
    writeFileSync(
      join(dir, 'config'),
      `
clusters: [{name: c, cluster: {server: "https://127.0.0.1:${port}", certificate-authority: ca.crt, tls-server-name: apiserver.test}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(join(dir, 'bin/creds.mjs'))}, x], interactiveMode: Never}}}]
contexts: [{name: ctx, context: {cluster: c, user: u}}]
current-context: ctx
`,
    );
    writeFileSync(join(dir, 'ca.crt'), ca.certPem);
    const client = await KubeClient.fromKubeconfig(join(dir, 'config'));
    expect(await client.get('/version')).toMatchObject({ authorization: 'Bearer from-exec-x' });
  }, 30_000);
});
