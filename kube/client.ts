// A thin JSON client over node:https. Objects stay raw JSON (client-node's typed serializer
// drops unknown fields and turns timestamps into Dates), and every call carries its context
// into the error it throws.
import https from 'node:https';
import type { ClientRequest, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
// Type only: client-node costs ~70 MB of memory once loaded, so it is imported only for the
// configurations our own loader leaves to it (exec plugins, auth-providers) or when a caller
// hands us a KubeConfig.
import type { KubeConfig } from '@kubernetes/client-node';
import { CredentialRejections } from './credentials.js';
import { Reachability } from './reachability.js';
import { loadKubeconfig, type ClusterConnection, type Headers } from './kubeconfig.js';
import { openTunnel, proxyFor } from './proxy.js';

export interface Status {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: unknown;
}

/** A non-2xx answer from the API server, with the server's own reason and message. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly method: string,
    readonly path: string,
    readonly code: number,
    readonly status: Status | undefined,
    raw: string,
    /** How many times the request was sent again after a 429 with Retry-After. */
    readonly retries = 0,
  ) {
    super(
      `${method} ${path}: ${code} ${status?.reason ?? ''} ${status?.message ?? raw.slice(0, 300)}${retries ? ` (the last of ${retries + 1} tries)` : ''}`
        .replace(/\s+/g, ' ')
        .trim(),
    );
  }
  get reason(): string | undefined {
    return this.status?.reason;
  }
}

// One path segment made from data: built where every HNC path is (core/api/paths.ts).
export { segment } from '../core/api/paths.js';

/** A `.` or `..` segment (plain or percent-encoded), which a URL would resolve away. */
const DOT_SEGMENT = /(?:^|\/)(?:\.|%2e){1,2}(?=\/|$)/i;

/** Whether a path holds a `.` or `..` segment. */
function hasDotSegment(path: string): boolean {
  return DOT_SEGMENT.test(path);
}

/**
 * A path a URL would keep exactly as written (RFC 3986 path characters, percent-escapes as they
 * are): such a path is sent as it is, without parsing a URL for every request (HNC sends one per
 * copy). Anything else goes through URL, which escapes what must be.
 */
const PLAIN_PATH = /^\/[A-Za-z0-9\-._~%!$&'()*+,;=:@/]*$/;

/**
 * The options https.Agent puts into a connection pool's name beside host, port, local address
 * and family (Node's `https.Agent.prototype.getName`).
 */
const POOL_NAME_OPTIONS = [
  'ca',
  'cert',
  'clientCertEngine',
  'ciphers',
  'key',
  'pfx',
  'rejectUnauthorized',
  'servername',
  'minVersion',
  'maxVersion',
  'secureProtocol',
  'crl',
  'honorCipherOrder',
  'ecdhCurve',
  'dhparam',
  'secureOptions',
  'sessionIdContext',
  'sigalgs',
  'privateKeyIdentifier',
  'privateKeyEngine',
] as const;

/** An https.Agent's options, and the proxy to go through (kube/proxy.ts's proxyFor). */
export type PoolAgentOptions = https.AgentOptions & { proxy?: URL };

/**
 * An https.Agent that names each connection pool once. Node's agent rebuilds the name on every
 * request, at least three times (taking a socket, freeing it, removing it), by appending the CA,
 * the client certificate and the key: from Buffers (a kubeconfig's), each time decoded anew,
 * about 4 KB of text per call. HNC sends one request per copy it writes, so that was about 15 µs
 * and 13 KB of garbage per call of a request's life. The name is the same as Node's; it is reused
 * while the request's options hold the very same values (the same Buffers, by identity).
 */
export class PoolAgent extends https.Agent {
  private readonly names = new Map<string, { values: unknown[]; name: string }>();

  constructor(options?: PoolAgentOptions) {
    super(options);
  }

  /**
   * With a `proxy` among the agent's options (kube/proxy.ts's choice, kept by the copies made
   * from `options`), each connection is a CONNECT tunnel through it, TLS to the server inside.
   */
  override createConnection(
    options: https.RequestOptions,
    callback?: (err: Error | null, stream: Duplex) => void,
  ): Duplex | null | undefined {
    const proxy = (options as { proxy?: URL }).proxy;
    if (!proxy) return super.createConnection(options, callback);
    const { host, port, ca, rejectUnauthorized, timeout } = options;
    const to = { host: host ?? 'localhost', port: Number(port ?? 443), ca, rejectUnauthorized, timeoutMs: timeout };
    openTunnel(proxy, to, (err, socket) => {
      // TLS to the API server inside the tunnel, with the agent's own options (CA, client certificate, server name).
      if (socket) callback?.(null, super.createConnection({ ...options, socket } as https.RequestOptions) as Duplex);
      else callback?.(err, undefined as unknown as Duplex);
    });
    return undefined;
  }

  override getName(
    options: https.AgentOptions & { host?: string; port?: number | string; localAddress?: string; family?: number } = {},
  ): string {
    const key = `${options.host ?? ''}|${options.port ?? ''}|${options.localAddress ?? ''}|${options.family ?? ''}`;
    const o = options as Record<string, unknown>;
    const known = this.names.get(key);
    if (known && POOL_NAME_OPTIONS.every((f, i) => o[f] === known.values[i])) return known.name;
    const name = super.getName(options);
    // A handful of servers at most; bounded all the same.
    if (this.names.size >= 16) this.names.clear();
    this.names.set(key, { values: POOL_NAME_OPTIONS.map((f) => o[f]), name });
    return name;
  }
}

/** Where a request goes, as http.request options: the server's host and port, and the path with its query. */
export interface RequestTarget {
  hostname: string;
  port: string;
  path: string;
}

export const isNotFound = (e: unknown): boolean => e instanceof ApiError && e.code === 404;
export const isConflict = (e: unknown): boolean => e instanceof ApiError && e.code === 409;
export const isAlreadyExists = (e: unknown): boolean => e instanceof ApiError && e.code === 409 && e.reason === 'AlreadyExists';
export const isForbidden = (e: unknown): boolean => e instanceof ApiError && e.code === 403;

export interface RequestOptions {
  body?: unknown;
  contentType?: string;
  query?: Record<string, string | number | boolean | undefined>;
  timeoutMs?: number;
  /** The Accept header; JSON by default (e.g. a Table: `application/json;as=Table;v=v1;g=meta.k8s.io`). */
  accept?: string;
  /**
   * A 2xx answer's body is handed here chunk by chunk as it arrives, and not kept (`body` is then
   * empty; request() returns undefined): a large list can be read while the server still sends it.
   * Other answers are kept as usual, so errors and retries are unchanged.
   */
  onChunk?: (chunk: Buffer) => void;
}

export interface Response {
  statusCode: number;
  body: string;
  /** The Retry-After header, in seconds, when the answer has one. */
  retryAfterSeconds?: number;
}

/**
 * A 429 with Retry-After is the API server saying "not now" without having done anything (a
 * resource's watch cache (re)initializing after a CRD change, or API Priority and Fairness
 * shedding load): like client-go (kubectl), the request is sent again after the time it asks for,
 * within the caller's time budget, instead of failing the command or the reconcile. Unlike
 * client-go (up to 10 tries, waiting as long as asked), at most 5 tries and 2 s a wait: a
 * reconcile or a review would rather fail and be retried by its own loop than stall.
 */
const TOO_MANY_REQUESTS_RETRIES = 5;
const RETRY_AFTER_MAX_SECONDS = 2;

/** A 429's Retry-After in whole seconds (RFC 9110's delay-seconds); an empty or dated header asks for no retry here. */
function retryAfterSeconds(statusCode: number | undefined, header: string | undefined): number | undefined {
  return statusCode === 429 && header !== undefined && /^\d{1,9}$/.test(header) ? Number(header) : undefined;
}

/** How a client's requests are sent (KubeClient.withOwnConnections). */
export interface CallOptions {
  /** A request's timeout when the caller gives none (default 30 s). */
  timeoutMs?: number;
  /** A kept-alive connection idle this long is closed by us: below the server's idle timeout, so it never closes one under us. */
  idleSocketMs?: number;
  /**
   * A request whose kept-alive connection is reset before any answer is sent once more, on a new
   * connection: for requests safe to send twice (SubjectAccessReviews, reads). A server may close
   * an idle connection just as a request goes out on it.
   */
  retryClosedConnection?: boolean;
}

/** The errors of a connection closed under a request: reset, or ended before the answer ("socket hang up"). */
function isConnectionReset(err: Error): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ECONNRESET' || code === 'EPIPE';
}

/** A client's connection as plain data (KubeClient.snapshot). */
export interface ClientSnapshot {
  server: string;
  tls: { ca?: string; cert?: string; key?: string; rejectUnauthorized?: boolean; servername?: string };
  headers?: Headers;
  /** The proxy the connections go through (kube/proxy.ts), if any. */
  proxy?: string;
}

/**
 * Produces the credential headers anew (a rotated token, a refreshed exec credential). `rejected`:
 * the API server has just answered 401, so a token file is read again at once, not once a minute.
 */
type CredentialSource = (rejected?: boolean) => Headers | undefined | Promise<Headers | undefined>;

/** How often credentials are read again while the API server rejects them (else once a minute). */
const REREAD_WHILE_REJECTED_MS = 1_000;

export class KubeClient {
  private refreshedAt = Date.now();
  /** When the credentials were last read anew because of a 401. */
  private rereadAt = 0;

  /** The server's host, port and path prefix, parsed once (undefined: not https, every request goes through URL). */
  private readonly origin: { hostname: string; port: string; prefix: string } | undefined;

  private constructor(
    readonly server: string,
    private base: https.RequestOptions,
    private readonly credentials: CredentialSource,
    private readonly calls: CallOptions = {},
    /** Shared by the clients withOwnConnections() makes: one identity, one verdict. */
    private readonly rejections = new CredentialRejections(),
    /** Shared the same way: one process, one route to the API server. */
    private readonly reach = new Reachability(),
  ) {
    const u = new URL(server);
    // URL keeps an IPv6 address in brackets; a request's hostname is the bare address (as node's own urlToHttpOptions gives it).
    const hostname = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
    this.origin =
      u.protocol === 'https:' && !u.username && !u.password && !u.search && !u.hash
        ? { hostname, port: u.port || '443', prefix: u.pathname.replace(/\/$/, '') }
        : undefined;
  }

  /**
   * Credentials can change under a running process (a pod's projected service-account token is
   * rotated on disk): re-read them once a minute, and every second while the API server answers
   * 401, so that a rejection is never blamed on a credential that was already replaced. A failed
   * refresh keeps the previous headers.
   */
  private refreshCredentials(): void {
    const rejected = this.rejections.suspect;
    const now = Date.now();
    if (rejected ? now - this.rereadAt < REREAD_WHILE_REJECTED_MS : now - this.refreshedAt < 60_000) return;
    this.refreshedAt = now;
    if (rejected) this.rereadAt = now;
    const apply = (headers: Headers | undefined): void => {
      if (headers) this.base = { ...this.base, headers };
    };
    try {
      const got = this.credentials(rejected);
      if (got instanceof Promise) got.then(apply, () => undefined);
      else apply(got);
    } catch {
      // Keep the previous headers.
    }
  }

  /**
   * From a kubeconfig file path, or from the default chain (KUBECONFIG, ~/.kube/config, in-cluster),
   * read by our own loader; client-node is loaded only for exec plugins and auth-providers.
   */
  static async fromKubeconfig(path?: string, context?: string): Promise<KubeClient> {
    const loaded = loadKubeconfig({ path, context });
    if (loaded.kind === 'direct') return KubeClient.fromConnection(loaded);
    const { KubeConfig } = await import('@kubernetes/client-node');
    const kc = new KubeConfig();
    // The merged kubeconfig, paths already absolute, current-context set (JSON is YAML).
    kc.loadFromString(JSON.stringify(loaded.config));
    return KubeClient.fromKubeConfig(kc);
  }

  /** From a kubeconfig resolved by kube/kubeconfig.ts. */
  static fromConnection(conn: ClusterConnection, opts: { maxSockets?: number } = {}): KubeClient {
    const proxy = proxyFor(conn.server, { proxyUrl: conn.proxyUrl });
    const agent = new PoolAgent({ keepAlive: true, maxSockets: opts.maxSockets ?? 64, ...conn.tls, proxy });
    return new KubeClient(conn.server.replace(/\/$/, ''), { agent, headers: conn.headers() }, (rejected) => conn.headers(rejected));
  }

  /** From a client-node KubeConfig (the kubectl plugin, tests). */
  static async fromKubeConfig(kc: KubeConfig, opts: { maxSockets?: number } = {}): Promise<KubeClient> {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig names no current cluster');
    const tls: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(tls);
    const agent = new PoolAgent({
      keepAlive: true,
      maxSockets: opts.maxSockets ?? 64,
      ca: tls.ca,
      cert: tls.cert,
      key: tls.key,
      rejectUnauthorized: tls.rejectUnauthorized,
      proxy: proxyFor(cluster.server, { proxyUrl: cluster.proxyUrl }),
    });
    const credentials = async (): Promise<Headers | undefined> => {
      const fresh: https.RequestOptions = {};
      await kc.applyToHTTPSOptions(fresh);
      return fresh.headers as Headers | undefined;
    };
    return new KubeClient(cluster.server.replace(/\/$/, ''), { ...tls, agent }, credentials);
  }

  /**
   * The same cluster and credentials over connections of its own: requests a caller waits on
   * (an admission review's SubjectAccessReviews) never queue behind this client's bulk traffic
   * (the propagation writes) for a free socket. `calls` sets their timeout, how long an idle
   * connection is kept, and a second try on a kept-alive connection closed under a request.
   */
  withOwnConnections(maxSockets: number, calls: CallOptions = {}): KubeClient {
    const agent = this.base.agent instanceof https.Agent ? this.base.agent : undefined;
    const own = new PoolAgent({
      ...(agent?.options ?? {}),
      keepAlive: true,
      maxSockets,
      // The agent closes a free socket idle this long (a request's own timeout applies while it is in use).
      ...(calls.idleSocketMs !== undefined ? { timeout: calls.idleSocketMs } : {}),
    });
    return new KubeClient(this.server, { ...this.base, agent: own }, this.credentials, calls, this.rejections, this.reach);
  }

  /**
   * The API server's verdict on this client's credentials, from every answer it gives (a 401 or
   * not): its onRejected() tells when it keeps rejecting them (kube/credentials.ts).
   */
  get credentialRejections(): CredentialRejections {
    return this.rejections;
  }

  /** Whether the API server answers this client's requests at all (kube/reachability.ts). */
  get reachability(): Reachability {
    return this.reach;
  }

  /**
   * What a client in another thread needs to reach the same API server with the same identity
   * (the admission worker, webhooks/admission-thread.ts): plain data, PEM as text. Credentials
   * that change are sent on by the caller (currentHeaders()).
   */
  snapshot(): ClientSnapshot {
    const agent = this.base.agent instanceof https.Agent ? this.base.agent : undefined;
    const o = (agent?.options ?? {}) as PoolAgentOptions;
    const pem = (v: unknown): string | undefined =>
      v === undefined || v === null ? undefined : Buffer.isBuffer(v) ? v.toString('utf8') : typeof v === 'string' ? v : undefined;
    return {
      server: this.server,
      tls: { ca: pem(o.ca), cert: pem(o.cert), key: pem(o.key), rejectUnauthorized: o.rejectUnauthorized, servername: o.servername },
      headers: this.base.headers as Headers | undefined,
      ...(o.proxy ? { proxy: o.proxy.href } : {}),
    };
  }

  /** A client from a snapshot(); `credentials` gives the latest headers (re-read once a minute, as any client's). */
  static fromSnapshot(s: ClientSnapshot, credentials: CredentialSource, opts: { maxSockets?: number } = {}): KubeClient {
    const agent = new PoolAgent({
      keepAlive: true,
      maxSockets: opts.maxSockets ?? 64,
      ...s.tls,
      ...(s.proxy ? { proxy: new URL(s.proxy) } : {}),
    });
    return new KubeClient(s.server, { agent, headers: s.headers }, credentials);
  }

  /** The credential headers as they are now (a rotated token read anew); the last known ones if that fails. */
  async currentHeaders(): Promise<Headers | undefined> {
    try {
      return (await this.credentials()) ?? (this.base.headers as Headers | undefined);
    } catch {
      return this.base.headers as Headers | undefined;
    }
  }

  url(path: string, query?: RequestOptions['query']): URL {
    // Every caller builds paths with segment(); this is the net under them.
    if (hasDotSegment(path)) throw new Error(`refusing the API path ${JSON.stringify(path)}: it has a "." or ".." segment`);
    const u = new URL(this.server + path);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) u.searchParams.set(k, String(v));
    return u;
  }

  /**
   * Where a request for `path` goes: the same request line as url() gives, built without parsing
   * a URL when the path is plain (the common case: paths are built with segment()); url() itself
   * otherwise.
   */
  target(path: string, query?: RequestOptions['query']): RequestTarget | URL {
    const o = this.origin;
    if (!o || !PLAIN_PATH.test(path)) return this.url(path, query);
    if (hasDotSegment(path)) throw new Error(`refusing the API path ${JSON.stringify(path)}: it has a "." or ".." segment`);
    let search = '';
    if (query) {
      const params = new URLSearchParams();
      for (const k of Object.keys(query)) {
        const v = query[k];
        if (v !== undefined) params.set(k, String(v));
      }
      search = params.size ? `?${params.toString()}` : '';
    }
    return { hostname: o.hostname, port: o.port, path: o.prefix + path + search };
  }

  private readonly inFlight = new Set<ClientRequest>();
  private closed?: Error;
  /** The retries' waits in progress (close() ends them). */
  private readonly waits = new Set<() => void>();

  /**
   * Ends every request in flight and fails every later one at once: the last step of a stop that
   * must not wait on an API server that does not answer (each request would wait its timeout).
   */
  close(reason = 'the Kubernetes client was closed'): void {
    this.closed = new Error(reason);
    for (const req of this.inFlight) req.destroy(this.closed);
    this.inFlight.clear();
    for (const wake of [...this.waits]) wake();
  }

  /** Waits before a retry; close() ends the wait at once (the retry then fails as closed). */
  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.waits.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.waits.add(wake);
    });
  }

  /** Sends one request and returns the raw answer, whatever its status code. */
  raw(method: string, path: string, opts: RequestOptions = {}): Promise<Response> {
    if (this.closed) return Promise.reject(new Error(`${method} ${path}: ${this.closed.message}`));
    this.refreshCredentials();
    const target = this.target(path, opts.query);
    const pathname = target instanceof URL ? target.pathname : this.origin!.prefix + path;
    const payload = opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    // One headers object per request (HNC makes one request per copy it writes).
    const headers: OutgoingHttpHeaders = { ...((this.base.headers as OutgoingHttpHeaders | undefined) ?? {}) };
    headers.accept = opts.accept ?? 'application/json';
    if (payload !== undefined) {
      headers['content-type'] = opts.contentType ?? 'application/json';
      headers['content-length'] = Buffer.byteLength(payload);
    }
    const timeoutMs = opts.timeoutMs ?? this.calls.timeoutMs ?? 30_000;
    const options: https.RequestOptions = { ...this.base, method, headers, timeout: timeoutMs };
    const send = (again: boolean): Promise<Response> =>
      new Promise((resolve, reject) => {
        const onResponse = (res: IncomingMessage) => {
          const chunks: Buffer[] = [];
          const code = res.statusCode ?? 0;
          this.rejections.answered(code, `${method} ${pathname}`);
          this.reach.answered();
          const sink = opts.onChunk && code >= 200 && code < 300 ? opts.onChunk : (c: Buffer) => chunks.push(c);
          res.on('data', sink);
          res.on('end', () => {
            const retryAfter = retryAfterSeconds(res.statusCode, res.headers['retry-after']);
            resolve({
              statusCode: res.statusCode ?? 0,
              body: chunks.length === 0 ? '' : (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString('utf8'),
              ...(retryAfter !== undefined ? { retryAfterSeconds: retryAfter } : {}),
            });
          });
          res.on('error', reject);
        };
        const req =
          target instanceof URL ? https.request(target, options, onResponse) : https.request({ ...options, ...target }, onResponse);
        let answered = false;
        req.once('response', () => (answered = true));
        this.inFlight.add(req);
        req.on('close', () => this.inFlight.delete(req));
        req.on('timeout', () => req.destroy(new Error(`${method} ${pathname}: no answer within ${timeoutMs} ms`)));
        req.on('error', (err) => {
          // A kept-alive connection the server closed as this request went out on it (its idle
          // timeout): nothing was answered, so the request is sent once more, on a new connection.
          if (!again && this.calls.retryClosedConnection && req.reusedSocket && !answered && isConnectionReset(err) && !this.closed)
            return resolve(send(true));
          // No answer (a refused, dropped or timed-out connection), unless we closed it ourselves.
          if (!answered && !this.closed) this.reach.failed();
          reject(new Error(`${method} ${pathname}: ${err.message}`, { cause: err }));
        });
        // The body with the end: the headers and the body leave in one write.
        req.end(payload);
      });
    return send(false);
  }

  /**
   * Opens a streaming GET (a watch). The caller reads the body line by line and destroys the
   * request to stop; `signal` aborts it too. Non-2xx answers are resolved too: check statusCode.
   */
  stream(
    path: string,
    query: RequestOptions['query'],
    signal?: AbortSignal,
    accept = 'application/json',
  ): Promise<{ req: ClientRequest; res: IncomingMessage }> {
    this.refreshCredentials();
    const u = this.url(path, query);
    return new Promise((resolve, reject) => {
      const req = https.request(u, { ...this.base, method: 'GET', headers: { ...(this.base.headers ?? {}), accept }, signal }, (res) => {
        this.rejections.answered(res.statusCode ?? 0, `GET ${u.pathname}`);
        this.reach.answered();
        resolve({ req, res });
      });
      req.on('error', (err) => {
        if (!signal?.aborted && !this.closed) this.reach.failed();
        reject(new Error(`watch ${u.pathname}: ${err.message}`, { cause: err }));
      });
      req.end();
    });
  }

  /**
   * stream(), opened again after a 429 with Retry-After as request() sends a request again (a
   * command's watch: right after a CRD change a list may succeed while the watch cache is still
   * initializing). The reflector does not use it: it backs off on its own. The last answer is
   * returned whatever its status, as stream() does.
   */
  async streamRetrying(
    path: string,
    query: RequestOptions['query'],
    accept?: string,
  ): Promise<{ req: ClientRequest; res: IncomingMessage }> {
    for (let retries = 0; ; retries++) {
      if (this.closed) throw new Error(`watch ${path}: ${this.closed.message}`);
      const opened = await this.stream(path, query, undefined, accept);
      const seconds = retryAfterSeconds(opened.res.statusCode, opened.res.headers['retry-after']);
      if (seconds === undefined || retries >= TOO_MANY_REQUESTS_RETRIES) return opened;
      // The 429's body (a Status) is read to its end, so its connection goes back to the pool.
      await new Promise<void>((resolve) => {
        opened.res
          .on('end', resolve)
          .on('error', () => resolve())
          .on('close', resolve);
        opened.res.resume();
      });
      await this.wait(Math.min(seconds, RETRY_AFTER_MAX_SECONDS) * 1000);
    }
  }

  /** Sends one request and parses the JSON answer; a non-2xx answer throws an ApiError. */
  async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    // The caller's timeout bounds the retries too: no retry that could not be answered within it
    // (0, as kubectl's --request-timeout=0, is no timeout).
    const budget = opts.timeoutMs ?? this.calls.timeoutMs ?? 30_000;
    const deadline = budget > 0 ? Date.now() + budget : Infinity;
    let res = await this.raw(method, path, opts);
    let retries = 0;
    while (res.retryAfterSeconds !== undefined && retries < TOO_MANY_REQUESTS_RETRIES) {
      const waitMs = Math.min(res.retryAfterSeconds, RETRY_AFTER_MAX_SECONDS) * 1000;
      const left = deadline - Date.now() - waitMs;
      if (left <= 0) break;
      await this.wait(waitMs);
      retries++;
      res = await this.raw(method, path, { ...opts, timeoutMs: budget > 0 ? left : 0 });
    }
    if (res.statusCode < 200 || res.statusCode >= 300) {
      let status: Status | undefined;
      try {
        status = JSON.parse(res.body) as Status;
      } catch {
        status = undefined;
      }
      throw new ApiError(method, path, res.statusCode, status, res.body, retries);
    }
    return (res.body ? JSON.parse(res.body) : undefined) as T;
  }

  get<T = unknown>(path: string, query?: RequestOptions['query']): Promise<T> {
    return this.request<T>('GET', path, { query });
  }
  create<T = unknown>(path: string, body: unknown, query?: RequestOptions['query']): Promise<T> {
    return this.request<T>('POST', path, { body, query });
  }
  replace<T = unknown>(path: string, body: unknown, query?: RequestOptions['query']): Promise<T> {
    return this.request<T>('PUT', path, { body, query });
  }
  mergePatch<T = unknown>(path: string, body: unknown, query?: RequestOptions['query']): Promise<T> {
    return this.request<T>('PATCH', path, { body, query, contentType: 'application/merge-patch+json' });
  }
  delete<T = unknown>(path: string, query?: RequestOptions['query']): Promise<T> {
    return this.request<T>('DELETE', path, { query });
  }
}
