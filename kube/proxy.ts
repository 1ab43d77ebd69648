// The proxy to the API server, as kubectl (client-go) picks it: the cluster's `proxy-url` in the
// kubeconfig, for every request; otherwise the environment as Go's http.ProxyFromEnvironment
// reads it (HTTPS_PROXY for an https server, HTTP_PROXY for http, the upper-case name first; none
// for localhost, a loopback address or a host NO_PROXY names). And the way through it: a CONNECT
// tunnel (RFC 9110 9.3.6) over http or https to the proxy, in which the client then speaks TLS
// to the API server itself, so the proxy sees neither the credentials nor the objects.
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type Socket } from 'node:net';
import { rootCertificates } from 'node:tls';

/** A proxy that cannot be used: a scheme other than http/https, or an unparsable URL. */
export class ProxyError extends Error {
  override name = 'ProxyError';
}

type Env = Record<string, string | undefined>;

/** The first of the names set to a non-empty value (Go's getEnvAny). */
const envAny = (env: Env, ...names: string[]): string | undefined => names.map((n) => env[n]).find((v) => v !== undefined && v !== '');

/** A proxy URL with its secrets hidden, for messages. */
export function redactProxy(url: URL): string {
  return url.username || url.password ? `${url.protocol}//***@${url.host}` : `${url.protocol}//${url.host}`;
}

/** A proxy URL made usable here: http or https with a host; socks5 (which kubectl takes) refused with a clear message. */
function checkProxy(url: URL, where: string): URL {
  const scheme = url.protocol.slice(0, -1);
  if (scheme === 'socks5' || scheme === 'socks5h')
    throw new ProxyError(`${where}: SOCKS5 proxies are not supported by hnc-ts (kubectl's are); use an http or https proxy (CONNECT)`);
  if (scheme !== 'http' && scheme !== 'https')
    throw new ProxyError(`${where}: the proxy scheme "${scheme}" is not supported (http or https)`);
  if (!url.hostname) throw new ProxyError(`${where}: the proxy URL has no host`);
  return url;
}

/** A proxy from the environment: as Go, a value without a scheme is http (`proxy:3128`). */
function parseEnvProxy(value: string, name: string): URL {
  const text = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ProxyError(`${name}: invalid proxy URL`);
  }
  return checkProxy(url, name);
}

/** The proxy URL of a kubeconfig's cluster (`proxy-url`), checked as client-go checks it. */
export function parseProxyUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ProxyError(`the cluster's proxy-url is not a URL`);
  }
  return checkProxy(url, `the cluster's proxy-url ${redactProxy(url)}`);
}

/** A bare host (an IPv6 address without its brackets) and its port, from `host`, `host:port` or `[v6]:port`. */
function splitHostPort(entry: string): { host: string; port: string } {
  const v6 = /^\[([^\]]*)\](?::(\d+))?$/.exec(entry);
  if (v6) return { host: v6[1]!, port: v6[2] ?? '' };
  const hp = /^([^:]*):(\d+)$/.exec(entry);
  if (hp) return { host: hp[1]!, port: hp[2]! };
  return { host: entry, port: '' };
}

const family = (ip: string): 'ipv4' | 'ipv6' => (isIP(ip) === 6 ? 'ipv6' : 'ipv4');

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/**
 * Whether NO_PROXY exempts `host:port` from the proxy, by Go's rules (golang.org/x/net/http/httpproxy):
 * entries separated by commas; `*` exempts every host; an IP address, that address; a CIDR block,
 * the addresses in it; `example.com`, that host and its subdomains; `.example.com` or
 * `*.example.com`, its subdomains only; an entry with a port (`example.com:8443`, `10.0.0.1:6443`),
 * that port only.
 */
export function noProxyMatches(noProxy: string, host: string, port: string): boolean {
  const name = host.toLowerCase().replace(/^\[|\]$/g, '');
  const ip = isIP(name) ? name : undefined;
  for (const raw of noProxy.split(',')) {
    const entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    if (entry === '*') return true;
    const cidr = /^(.+)\/(\d{1,3})$/.exec(entry);
    if (cidr) {
      if (ip && isIP(cidr[1]!) && family(cidr[1]!) === family(ip)) {
        const blocks = new BlockList();
        try {
          blocks.addSubnet(cidr[1]!, Number(cidr[2]), family(cidr[1]!));
        } catch {
          continue;
        }
        if (blocks.check(ip, family(ip))) return true;
      }
      continue;
    }
    const e = splitHostPort(entry);
    if (e.port !== '' && e.port !== port) continue;
    if (isIP(e.host)) {
      if (ip && isIP(e.host) === isIP(ip)) {
        const one = new BlockList();
        one.addAddress(e.host, family(e.host));
        if (one.check(ip, family(ip))) return true;
      }
      continue;
    }
    // `*.example.com` is `.example.com`; `example.com` matches itself too.
    const suffix = e.host.startsWith('*.') ? e.host.slice(1) : e.host;
    if (suffix === '' || suffix === '.') continue;
    if (suffix.startsWith('.') ? name.endsWith(suffix) : name === suffix || name.endsWith(`.${suffix}`)) return true;
  }
  return false;
}

/**
 * The proxy for requests to `server`, or undefined for a direct connection: the cluster's
 * `proxy-url` if it has one (whatever NO_PROXY says, as kubectl); otherwise HTTPS_PROXY (or
 * https_proxy) for an https server, HTTP_PROXY (or http_proxy) for an http one, unless the server
 * is localhost, a loopback address, or named by NO_PROXY (no_proxy). Throws ProxyError for a
 * proxy that cannot be used.
 */
export function proxyFor(server: string, opts: { proxyUrl?: string; env?: Env } = {}): URL | undefined {
  if (opts.proxyUrl) return parseProxyUrl(opts.proxyUrl);
  const env = opts.env ?? process.env;
  const target = new URL(server);
  const name = target.protocol === 'https:' ? 'HTTPS_PROXY' : target.protocol === 'http:' ? 'HTTP_PROXY' : undefined;
  if (!name) return undefined;
  const value = envAny(env, name, name.toLowerCase());
  if (value === undefined) return undefined;
  const host = target.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || (isIP(host) && LOOPBACK.check(host, family(host)))) return undefined;
  const port = target.port || (target.protocol === 'https:' ? '443' : '80');
  if (noProxyMatches(envAny(env, 'NO_PROXY', 'no_proxy') ?? '', host, port)) return undefined;
  return parseEnvProxy(value, name);
}

/** What a tunnel needs besides the proxy: where to, and how to trust an https proxy. */
export interface TunnelOptions {
  host: string;
  port: number;
  /** The API server's CA: an https proxy is trusted by it as well as by the system's roots (Go uses one TLS configuration for both). */
  ca?: string | Buffer | Array<string | Buffer>;
  rejectUnauthorized?: boolean;
  /** How long to wait for the proxy's answer to CONNECT. */
  timeoutMs?: number;
}

/**
 * Opens a CONNECT tunnel through `proxy` to `host:port` and hands over the socket (to the proxy,
 * now a byte pipe to the server), for the caller to start TLS in it. Credentials in the proxy
 * URL (`http://user:password@proxy:3128`) are sent as Proxy-Authorization: Basic.
 */
export function openTunnel(proxy: URL, o: TunnelOptions, callback: (err: Error | null, socket?: Socket) => void): void {
  const authority = `${isIP(o.host) === 6 ? `[${o.host}]` : o.host}:${o.port}`;
  const headers: http.OutgoingHttpHeaders = { host: authority };
  if (proxy.username || proxy.password) {
    const userinfo = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
    headers['proxy-authorization'] = `Basic ${Buffer.from(userinfo).toString('base64')}`;
  }
  const secure = proxy.protocol === 'https:';
  const proxyHost = proxy.hostname.replace(/^\[|\]$/g, '');
  const common: http.RequestOptions = {
    host: proxyHost,
    port: Number(proxy.port || (secure ? 443 : 80)),
    method: 'CONNECT',
    path: authority,
    headers,
    agent: false,
    timeout: o.timeoutMs ?? 30_000,
  };
  const extraCa = o.ca === undefined ? [] : Array.isArray(o.ca) ? o.ca : [o.ca];
  const req = secure
    ? https.request({
        ...common,
        ca: [...rootCertificates, ...extraCa],
        rejectUnauthorized: o.rejectUnauthorized ?? true,
        // The proxy's own name (Node would take the Host header's, the server's); none for an address.
        servername: isIP(proxyHost) ? '' : proxyHost,
      })
    : http.request(common);
  const via = `through the proxy ${redactProxy(proxy)}`;
  let done = false;
  const finish = (err: Error | null, socket?: Socket): void => {
    if (done) return;
    done = true;
    callback(err, socket);
  };
  req.once('connect', (res, socket, head) => {
    if (res.statusCode !== 200) {
      socket.destroy();
      finish(new Error(`cannot reach ${authority} ${via}: it answered CONNECT with ${res.statusCode} ${res.statusMessage ?? ''}`.trim()));
      return;
    }
    socket.setTimeout(0);
    // Bytes the proxy sent after its answer belong to the tunnel (none before TLS starts, in practice).
    if (head.length > 0) socket.unshift(head);
    finish(null, socket);
  });
  req.once('timeout', () => req.destroy(new Error(`no answer to CONNECT ${authority} ${via} within ${common.timeout} ms`)));
  req.once('error', (err) => finish(new Error(`cannot reach ${authority} ${via}: ${err.message}`, { cause: err })));
  req.end();
}
