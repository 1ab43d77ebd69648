import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { KubeClient } from './client.js';
import type { ClusterConnection } from './kubeconfig.js';
import { CertificateAuthority, type PemPair } from './pki.js';
import { noProxyMatches, proxyFor } from './proxy.js';

describe('proxyFor', () => {
  const env = (vars: Record<string, string>) => ({ env: vars });

  it("takes the cluster's proxy-url over the environment, whatever NO_PROXY says, even for a loopback server", () => {
    const all = { HTTPS_PROXY: 'http://env-proxy:3128', NO_PROXY: '*' };
    expect(proxyFor('https://kube.example:6443', { proxyUrl: 'http://kc-proxy:8080', ...env(all) })?.href).toBe('http://kc-proxy:8080/');
    expect(proxyFor('https://127.0.0.1:6443', { proxyUrl: 'https://kc-proxy', ...env(all) })?.href).toBe('https://kc-proxy/');
  });

  it('reads HTTPS_PROXY for an https server (upper case first, then lower), HTTP_PROXY for http, as Go', () => {
    expect(proxyFor('https://kube.example', env({ HTTPS_PROXY: 'http://up:1', https_proxy: 'http://low:2' }))?.host).toBe('up:1');
    expect(proxyFor('https://kube.example', env({ https_proxy: 'http://low:2' }))?.host).toBe('low:2');
    expect(proxyFor('https://kube.example', env({ HTTPS_PROXY: '', https_proxy: 'http://low:2' }))?.host).toBe('low:2');
    expect(proxyFor('https://kube.example', env({ HTTP_PROXY: 'http://plain:3' }))).toBeUndefined();
    expect(proxyFor('http://kube.example', env({ HTTP_PROXY: 'http://plain:3', HTTPS_PROXY: 'http://up:1' }))?.host).toBe('plain:3');
    expect(proxyFor('https://kube.example', env({}))).toBeUndefined();
    // A value without a scheme is an http proxy.
    expect(proxyFor('https://kube.example', env({ HTTPS_PROXY: 'squid.corp:3128' }))?.href).toBe('http://squid.corp:3128/');
  });

  it('never proxies localhost or a loopback address from the environment', () => {
    const e = env({ HTTPS_PROXY: 'http://p:1' });
    for (const server of ['https://localhost:6443', 'https://127.0.0.1:6443', 'https://127.3.2.1', 'https://[::1]:6443'])
      expect(proxyFor(server, e), server).toBeUndefined();
    expect(proxyFor('https://10.0.0.1:6443', e)?.host).toBe('p:1');
    expect(proxyFor('https://[fd00::1]:6443', e)?.host).toBe('p:1');
  });

  it('honours NO_PROXY (then no_proxy) from the environment', () => {
    expect(proxyFor('https://kube.corp', env({ HTTPS_PROXY: 'http://p:1', NO_PROXY: 'corp' }))).toBeUndefined();
    expect(proxyFor('https://kube.corp', env({ HTTPS_PROXY: 'http://p:1', no_proxy: '.corp' }))).toBeUndefined();
    expect(proxyFor('https://kube.corp', env({ HTTPS_PROXY: 'http://p:1', NO_PROXY: 'other', no_proxy: 'corp' }))?.host).toBe('p:1');
    // The server's default port counts for entries with a port.
    expect(proxyFor('https://kube.corp', env({ HTTPS_PROXY: 'http://p:1', NO_PROXY: 'kube.corp:443' }))).toBeUndefined();
    expect(proxyFor('https://kube.corp:6443', env({ HTTPS_PROXY: 'http://p:1', NO_PROXY: 'kube.corp:443' }))?.host).toBe('p:1');
  });

  it('refuses SOCKS5 and unknown schemes with a clear error, the credentials kept out of it', () => {
    expect(() => proxyFor('https://k', { proxyUrl: 'socks5://user:secret@socks:1080' })).toThrow(
      "the cluster's proxy-url socks5://***@socks:1080: SOCKS5 proxies are not supported by hnc-ts (kubectl's are); use an http or https proxy (CONNECT)",
    );
    expect(() => proxyFor('https://k', env({ HTTPS_PROXY: 'socks5h://socks:1080' }))).toThrow(
      'HTTPS_PROXY: SOCKS5 proxies are not supported',
    );
    expect(() => proxyFor('https://k', { proxyUrl: 'ftp://p:21' })).toThrow('the proxy scheme "ftp" is not supported (http or https)');
    expect(() => proxyFor('https://k', { proxyUrl: 'not a url' })).toThrow("the cluster's proxy-url is not a URL");
  });
});

describe('noProxyMatches (Go httpproxy rules)', () => {
  const cases: [noProxy: string, host: string, port: string, exempt: boolean][] = [
    ['*', 'anything.example', '443', true],
    ['', 'kube.example', '443', false],
    ['kube.example', 'kube.example', '443', true],
    ['kube.example', 'KUBE.Example', '443', true],
    ['kube.example', 'api.kube.example', '443', true],
    ['kube.example', 'otherkube.example', '443', false],
    ['.kube.example', 'kube.example', '443', false],
    ['.kube.example', 'api.kube.example', '443', true],
    ['*.kube.example', 'kube.example', '443', false],
    ['*.kube.example', 'api.kube.example', '443', true],
    [' other.example , kube.example ', 'kube.example', '443', true],
    ['kube.example:6443', 'kube.example', '6443', true],
    ['kube.example:6443', 'kube.example', '443', false],
    ['10.0.0.1', '10.0.0.1', '443', true],
    ['10.0.0.1', '10.0.0.2', '443', false],
    ['10.0.0.1:6443', '10.0.0.1', '443', false],
    ['10.0.0.0/8', '10.200.3.4', '443', true],
    ['10.0.0.0/8', '11.0.0.1', '443', false],
    ['10.0.0.0/8', 'ten.example', '443', false],
    ['fd00::/8', 'fd00::1', '443', true],
    ['fd00::/8', '::ffff:10.0.0.1', '443', false],
    ['[fd00::1]', '[fd00::1]', '443', true],
    ['fd00::1', 'fd00::2', '443', false],
    ['[fd00::1]:6443', 'fd00::1', '6443', true],
  ];
  for (const [noProxy, host, port, exempt] of cases)
    it(`NO_PROXY=${JSON.stringify(noProxy)} ${exempt ? 'exempts' : 'does not exempt'} ${host}:${port}`, () => {
      expect(noProxyMatches(noProxy, host, port)).toBe(exempt);
    });
});

// ---- through real proxies -------------------------------------------------------------------------

interface Proxy {
  url: string;
  /** The CONNECT requests received: the authority asked for and the Proxy-Authorization sent. */
  connects: { authority: string; authorization?: string }[];
  close(): Promise<void>;
}

/**
 * A CONNECT proxy on 127.0.0.1 (http, or https with `tls`): it opens the tunnel to 127.0.0.1 at the
 * port asked for, whatever the host (so that a made-up name reaches the test's server), and with
 * `authorization` it answers 407 to a CONNECT without that Proxy-Authorization.
 */
async function startProxy(opts: { tls?: PemPair; authorization?: string } = {}): Promise<Proxy> {
  const connects: Proxy['connects'] = [];
  const refuse = (_req: http.IncomingMessage, res: http.ServerResponse) => res.writeHead(405).end();
  const server = opts.tls ? https.createServer(opts.tls, refuse) : http.createServer(refuse);
  const sockets = new Set<net.Socket>();
  server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    const authorization = req.headers['proxy-authorization'];
    connects.push({ authority: req.url ?? '', ...(authorization ? { authorization } : {}) });
    client.on('error', () => undefined);
    if (opts.authorization && authorization !== opts.authorization) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const port = Number(/:(\d+)$/.exec(req.url ?? '')?.[1]);
    const upstream = net.connect(port, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client).pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    connects,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

describe('KubeClient through a proxy', () => {
  let ca: CertificateAuthority;
  let api: https.Server;
  let apiPort: number;
  /** The requests the API server answered: path and the Authorization it got. */
  const seen: { path: string; authorization?: string }[] = [];
  const proxies: Proxy[] = [];
  const proxy = async (opts?: Parameters<typeof startProxy>[0]) => {
    const p = await startProxy(opts);
    proxies.push(p);
    return p;
  };
  /** A client of the API server as `host` (any name: the proxy connects to 127.0.0.1), with a bearer token. */
  const connection = (host: string, proxyUrl?: string): ClusterConnection => ({
    kind: 'direct',
    server: `https://${host}:${apiPort}`,
    tls: { ca: Buffer.from(ca.certPem), rejectUnauthorized: true },
    headers: () => ({ Authorization: 'Bearer the-token' }),
    source: 'test',
    ...(proxyUrl ? { proxyUrl } : {}),
  });

  beforeAll(async () => {
    ca = await CertificateAuthority.create('proxy-test');
    // 0.0.0.0 is not a loopback address to the proxy rules, yet reaches 127.0.0.1 on Linux: a
    // server that NO_PROXY, and only NO_PROXY, sends around the proxy.
    const serving = await ca.issue({ commonName: 'apiserver', usage: 'server', dnsNames: ['kube.test'], ips: ['127.0.0.1', '0.0.0.0'] });
    api = https.createServer(serving, (req, res) => {
      seen.push({ path: req.url ?? '', ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) });
      res.setHeader('content-type', 'application/json').end(JSON.stringify({ kind: 'Namespace', metadata: { name: 'x' } }));
    });
    await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
    apiPort = (api.address() as AddressInfo).port;
  });
  afterAll(async () => {
    api.closeAllConnections();
    await new Promise((r) => api.close(r));
  });
  beforeEach(() => {
    seen.length = 0;
    for (const name of ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy']) vi.stubEnv(name, '');
  });
  afterEach(async () => {
    vi.unstubAllEnvs();
    for (const p of proxies.splice(0)) await p.close();
  });

  it('goes through HTTPS_PROXY: a CONNECT to the server, TLS to the server inside, the credentials unseen by the proxy', async () => {
    const p = await proxy();
    vi.stubEnv('HTTPS_PROXY', p.url);
    // kube.test resolves nowhere: only the proxy's tunnel reaches the server.
    const client = KubeClient.fromConnection(connection('kube.test'));
    expect(await client.get('/api/v1/namespaces/x')).toEqual({ kind: 'Namespace', metadata: { name: 'x' } });
    expect(p.connects).toEqual([{ authority: `kube.test:${apiPort}` }]);
    expect(seen).toEqual([{ path: '/api/v1/namespaces/x', authorization: 'Bearer the-token' }]);
    // The tunnel is kept alive and reused, as a direct connection; a watch uses it too.
    await client.get('/api/v1/namespaces/x');
    const { req, res } = await client.stream('/api/v1/namespaces', { watch: 1 });
    expect(res.statusCode).toBe(200);
    req.destroy();
    expect(p.connects.length).toBeLessThanOrEqual(2);
    expect(seen.map((s) => s.path)).toEqual(['/api/v1/namespaces/x', '/api/v1/namespaces/x', '/api/v1/namespaces?watch=1']);
    client.close();
  });

  it('connects directly to a server NO_PROXY names', async () => {
    const p = await proxy();
    vi.stubEnv('HTTPS_PROXY', p.url);
    vi.stubEnv('NO_PROXY', 'other.example,0.0.0.0');
    const client = KubeClient.fromConnection(connection('0.0.0.0'));
    await client.get('/api/v1/namespaces/x');
    expect(seen).toHaveLength(1);
    expect(p.connects).toEqual([]);
    // Without NO_PROXY, the same server is reached through the proxy.
    vi.stubEnv('NO_PROXY', '');
    const proxied = KubeClient.fromConnection(connection('0.0.0.0'));
    await proxied.get('/api/v1/namespaces/x');
    expect(p.connects).toEqual([{ authority: `0.0.0.0:${apiPort}` }]);
    client.close();
    proxied.close();
  });

  it("uses the cluster's proxy-url over HTTPS_PROXY and NO_PROXY, with the URL's user and password as Proxy-Authorization", async () => {
    const expected = `Basic ${Buffer.from('jane:p@ss:word').toString('base64')}`;
    const kc = await proxy({ authorization: expected });
    const env = await proxy();
    vi.stubEnv('HTTPS_PROXY', env.url);
    vi.stubEnv('NO_PROXY', '*');
    const url = new URL(kc.url);
    url.username = 'jane';
    url.password = 'p@ss:word';
    const client = KubeClient.fromConnection(connection('kube.test', url.href));
    expect(await client.get('/api/v1/namespaces/x')).toMatchObject({ kind: 'Namespace' });
    expect(kc.connects).toEqual([{ authority: `kube.test:${apiPort}`, authorization: expected }]);
    expect(env.connects).toEqual([]);
    // The copies of the client (its own connections; another thread's, from its snapshot) keep the proxy.
    const own = client.withOwnConnections(1);
    await own.get('/api/v1/namespaces/x');
    const snapshot = client.snapshot();
    expect(snapshot.proxy).toBe(url.href);
    const other = KubeClient.fromSnapshot(snapshot, () => undefined);
    await other.get('/api/v1/namespaces/x');
    expect(kc.connects).toHaveLength(3);
    expect(seen).toHaveLength(3);
    for (const c of [client, own, other]) c.close();
  });

  it("fails with the proxy's answer when it refuses the tunnel (407 without credentials)", async () => {
    const kc = await proxy({ authorization: 'Basic nope' });
    const client = KubeClient.fromConnection(connection('kube.test', kc.url));
    await expect(client.get('/api/v1/namespaces/x')).rejects.toThrow(
      `GET /api/v1/namespaces/x: cannot reach kube.test:${apiPort} through the proxy ${kc.url}: it answered CONNECT with 407 Proxy Authentication Required`,
    );
    expect(seen).toEqual([]);
    client.close();
  });

  it('goes through an https proxy, trusted by the cluster CA as kubectl trusts it', async () => {
    const proxyCert = await ca.issue({ commonName: 'proxy', usage: 'server', ips: ['127.0.0.1'] });
    const p = await proxy({ tls: proxyCert });
    const client = KubeClient.fromConnection(connection('kube.test', p.url));
    expect(await client.get('/api/v1/namespaces/x')).toMatchObject({ kind: 'Namespace' });
    expect(p.connects).toEqual([{ authority: `kube.test:${apiPort}` }]);
    client.close();
  });
});
