// A lean HTTP/1.1 transport over keep-alive TLS connections, for the requests an admission review
// waits on (SubjectAccessReviews, the parent-existence check, discovery: kube/client.ts with
// `transport: 'http1'`, used by the admission thread's lookups). Node's https.request costs the
// calling thread about as much CPU per request as serving a whole review (the ClientRequest and
// IncomingMessage streams, the agent, header objects, a timer per request); this writes a request's
// head and body as one write and reads the answer from the socket's bytes (docs/webhooks.md, "The
// admission thread"). Not a general client: no streaming (watches stay on node's https), no
// compression (none is asked for), no pipelining (one request at a time per connection).
import tls from 'node:tls';

export interface Http1TransportOptions {
  host: string;
  port: number;
  ca?: string | Buffer;
  cert?: string | Buffer;
  key?: string | Buffer;
  rejectUnauthorized?: boolean;
  servername?: string;
  /** Connections open at most; requests beyond wait in arrival order (default 8). */
  maxSockets?: number;
  /** An answer's body larger than this fails the request and closes its connection (default 16 MiB). */
  maxBodyBytes?: number;
  /** A kept-alive connection unused this long is closed (default 60 s; the API server keeps them longer). */
  idleMs?: number;
  /** A TCP connect and TLS handshake not done within this fails (default 10 s): a hung one would hold a connection's place. */
  connectTimeoutMs?: number;
}

export interface Http1Answer {
  statusCode: number;
  body: Buffer;
  /** The Retry-After header, as sent. */
  retryAfter?: string;
}

/** An answer's head and its headers together may not exceed this (the API server's are a few hundred bytes). */
const MAX_HEAD_BYTES = 64 * 1024;
const CRLF = Buffer.from('\r\n');
const CRLF2 = Buffer.from('\r\n\r\n');
/** A header value or path with a CR, LF or NUL would split the request: refused, never sent. */
const UNSAFE = /[\r\n\0]/;

interface Pending {
  method: string;
  path: string;
  request: Buffer;
  timeoutMs: number;
  resolve: (a: Http1Answer) => void;
  reject: (e: Error) => void;
  /** Sent once already on a kept-alive connection that closed before answering. */
  resent?: boolean;
  /** The request's deadline, from its arrival: the wait for a connection counts, as node's request timeout counts the connect. */
  timer?: NodeJS.Timeout;
  /** The connection it was last sent on. */
  sentOn?: Connection;
}

/** How the answer's body is delimited. */
type Framing = { kind: 'length'; left: number } | { kind: 'chunked'; left: number; trailers: boolean } | { kind: 'close' };

class Connection {
  private buf: Buffer = Buffer.alloc(0);
  current?: Pending;
  /** Answered at least one request (so a close before the next answer is a stale keep-alive, worth one more try). */
  reused = false;
  private head?: { statusCode: number; retryAfter?: string; close: boolean; framing: Framing };
  private parts: Buffer[] = [];
  private bodyBytes = 0;
  /** Bytes of the current answer seen (any: a close after the first byte is not retried). */
  private answered = false;
  private idleTimer?: NodeJS.Timeout;
  closed = false;

  constructor(
    readonly socket: tls.TLSSocket,
    private readonly transport: Http1Transport,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (d: Buffer) => this.onData(d));
    socket.on('error', (err) => this.end(err));
    socket.on('close', () => this.end(new Error('the connection closed')));
  }

  send(p: Pending): void {
    clearTimeout(this.idleTimer);
    this.socket.ref();
    this.current = p;
    p.sentOn = this;
    this.answered = false;
    this.socket.write(p.request);
  }

  /** Idle in the pool: does not keep the process alive, and is closed after `idleMs`. */
  parked(idleMs: number): void {
    this.socket.unref();
    this.idleTimer = setTimeout(() => this.socket.destroy(), idleMs);
    this.idleTimer.unref();
  }

  /** Fails the request in flight and closes the connection (it may hold part of an answer). */
  fail(err: Error): void {
    const p = this.current;
    this.current = undefined;
    if (p) this.transport.settle(p, err);
    this.socket.destroy();
  }

  private end(err: Error): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.idleTimer);
    const p = this.current;
    this.current = undefined;
    if (p && this.head?.framing.kind === 'close' && !this.socket.errored) {
      // A body delimited by the connection's end: the close is its end.
      this.transport.settle(p, undefined, this.answer(this.head));
    } else if (p) this.transport.settle(p, err, undefined, this.reused && !this.answered);
    this.transport.gone(this);
  }

  private answer(h: NonNullable<Connection['head']>): Http1Answer {
    const body = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts);
    return { statusCode: h.statusCode, body, ...(h.retryAfter !== undefined ? { retryAfter: h.retryAfter } : {}) };
  }

  private onData(d: Buffer): void {
    if (!this.current) {
      // Bytes nobody asked for: the connection can no longer be trusted to frame the next answer.
      this.socket.destroy();
      return;
    }
    this.answered = true;
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    try {
      this.parse();
    } catch (err) {
      this.fail(err as Error);
    }
  }

  private parse(): void {
    const max = this.transport.maxBodyBytes;
    for (;;) {
      if (!this.head) {
        const end = this.buf.indexOf(CRLF2);
        if (end < 0) {
          if (this.buf.length > MAX_HEAD_BYTES) throw new Error(`the answer's head is larger than ${MAX_HEAD_BYTES} bytes`);
          return;
        }
        if (end > MAX_HEAD_BYTES) throw new Error(`the answer's head is larger than ${MAX_HEAD_BYTES} bytes`);
        const lines = this.buf.subarray(0, end).toString('latin1').split('\r\n');
        this.buf = this.buf.subarray(end + 4);
        const status = /^HTTP\/1\.([01]) (\d{3})(?: |$)/.exec(lines[0]!);
        if (!status) throw new Error(`not an HTTP/1.1 answer: ${JSON.stringify(lines[0]!.slice(0, 80))}`);
        const statusCode = Number(status[2]);
        // An interim answer (100 Continue; none is asked for) is skipped.
        if (statusCode >= 100 && statusCode < 200) continue;
        let length: number | undefined;
        let chunked = false;
        let close = status[1] === '0';
        let retryAfter: string | undefined;
        for (let i = 1; i < lines.length; i++) {
          const line = lines[i]!;
          const colon = line.indexOf(':');
          if (colon <= 0) throw new Error(`a malformed header line in the answer: ${JSON.stringify(line.slice(0, 80))}`);
          const name = line.slice(0, colon).trim().toLowerCase();
          const value = line.slice(colon + 1).trim();
          if (name === 'content-length') {
            if (!/^\d{1,15}$/.test(value) || (length !== undefined && length !== Number(value)))
              throw new Error(`a malformed Content-Length in the answer: ${JSON.stringify(value)}`);
            length = Number(value);
          } else if (name === 'transfer-encoding') {
            if (value.toLowerCase() !== 'chunked')
              throw new Error(`an unsupported Transfer-Encoding in the answer: ${JSON.stringify(value)}`);
            chunked = true;
          } else if (name === 'connection') {
            const v = value.toLowerCase();
            if (v.includes('close')) close = true;
            else if (v.includes('keep-alive')) close = false;
          } else if (name === 'retry-after') retryAfter = value;
        }
        const bodiless = statusCode === 204 || statusCode === 304 || this.current!.method === 'HEAD';
        const framing: Framing = bodiless
          ? { kind: 'length', left: 0 }
          : chunked
            ? { kind: 'chunked', left: -1, trailers: false }
            : length !== undefined
              ? { kind: 'length', left: length }
              : { kind: 'close' };
        if (framing.kind === 'length' && framing.left > max)
          throw new Error(`the answer's body is larger than ${max} bytes (${framing.left})`);
        if (framing.kind === 'close') close = true;
        this.head = { statusCode, retryAfter, close, framing };
        this.parts = [];
        this.bodyBytes = 0;
      }
      const f = this.head.framing;
      if (f.kind === 'length') {
        const take = Math.min(f.left, this.buf.length);
        if (take) this.keep(this.buf.subarray(0, take));
        this.buf = this.buf.subarray(take);
        f.left -= take;
        if (f.left > 0) return;
        this.complete();
        return;
      }
      if (f.kind === 'close') {
        if (this.buf.length) this.keep(this.buf);
        this.buf = Buffer.alloc(0);
        if (this.bodyBytes > max) throw new Error(`the answer's body is larger than ${max} bytes`);
        return;
      }
      // Chunked: a size line, its bytes and a CRLF, until a zero size, then trailers up to an empty line.
      for (;;) {
        if (f.trailers) {
          const eol = this.buf.indexOf(CRLF);
          if (eol < 0) {
            if (this.buf.length > MAX_HEAD_BYTES) throw new Error(`the answer's trailers are larger than ${MAX_HEAD_BYTES} bytes`);
            return;
          }
          this.buf = this.buf.subarray(eol + 2);
          if (eol === 0) {
            this.complete();
            return;
          }
          continue;
        }
        if (f.left < 0) {
          const eol = this.buf.indexOf(CRLF);
          if (eol < 0) {
            if (this.buf.length > 1024) throw new Error('a malformed chunk size in the answer');
            return;
          }
          const size = /^([0-9a-fA-F]{1,8})(?:;.*)?$/.exec(this.buf.subarray(0, eol).toString('latin1'));
          if (!size) throw new Error('a malformed chunk size in the answer');
          this.buf = this.buf.subarray(eol + 2);
          const n = parseInt(size[1]!, 16);
          if (n === 0) {
            f.trailers = true;
            continue;
          }
          if (this.bodyBytes + n > max) throw new Error(`the answer's body is larger than ${max} bytes`);
          f.left = n;
        }
        // The chunk's bytes, then its CRLF.
        if (this.buf.length < f.left + 2) {
          if (this.buf.length > f.left) return;
          if (this.buf.length) this.keep(this.buf);
          f.left -= this.buf.length;
          this.buf = Buffer.alloc(0);
          return;
        }
        this.keep(this.buf.subarray(0, f.left));
        if (this.buf[f.left] !== 13 || this.buf[f.left + 1] !== 10) throw new Error('a chunk in the answer does not end with CRLF');
        this.buf = this.buf.subarray(f.left + 2);
        f.left = -1;
      }
    }
  }

  private keep(b: Buffer): void {
    // A copy: the socket's buffer may be reused, and a slice would keep all of it alive.
    this.parts.push(Buffer.from(b));
    this.bodyBytes += b.length;
  }

  private complete(): void {
    const h = this.head!;
    const p = this.current!;
    const answer = this.answer(h);
    this.head = undefined;
    this.parts = [];
    this.current = undefined;
    this.reused = true;
    if (this.buf.length) {
      // More than one answer for one request: close rather than guess.
      h.close = true;
    }
    this.transport.settle(p, undefined, answer);
    if (h.close) this.socket.destroy();
    else this.transport.free(this);
  }
}

/** A pool of up to `maxSockets` keep-alive connections to one server; requests beyond wait in arrival order. */
export class Http1Transport {
  private readonly idle: Connection[] = [];
  private readonly waiting: Pending[] = [];
  private readonly connections = new Set<Connection>();
  private connecting = 0;
  /** The handshakes in progress, each ended by calling it with why. */
  private readonly handshakes = new Set<(err: Error) => void>();
  private closedWith?: Error;
  readonly maxBodyBytes: number;
  private readonly maxSockets: number;
  private readonly idleMs: number;
  private readonly hostHeader: string;

  constructor(private readonly opts: Http1TransportOptions) {
    this.maxBodyBytes = opts.maxBodyBytes ?? 16 * 1024 * 1024;
    this.maxSockets = Math.max(1, opts.maxSockets ?? 8);
    this.idleMs = opts.idleMs ?? 60_000;
    this.hostHeader = `${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${opts.port}`;
  }

  /**
   * Sends one request (`path` with its query, as on the request line) and resolves with the answer,
   * whatever its status. Rejects on a connection error, a malformed or too large answer, or no
   * complete answer within `timeoutMs` of this call, the wait for a connection included (0: none).
   * A request whose kept-alive connection closes before any byte of the answer is sent once more on
   * a new one, as node's agent would not: callers only send requests that are safe to repeat
   * (reviews and reads).
   */
  request(
    method: string,
    path: string,
    headers: Record<string, string | number>,
    body: string | undefined,
    timeoutMs: number,
  ): Promise<Http1Answer> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    if (!/^[A-Z]+$/.test(method)) return Promise.reject(new Error(`refusing the method ${JSON.stringify(method)}`));
    if (UNSAFE.test(path) || path.includes(' ') || !path.startsWith('/'))
      return Promise.reject(new Error(`refusing the path ${JSON.stringify(path)}`));
    let head = `${method} ${path} HTTP/1.1\r\nHost: ${this.hostHeader}\r\n`;
    for (const name of Object.keys(headers)) {
      const value = String(headers[name]);
      if (UNSAFE.test(name) || UNSAFE.test(value) || !/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name))
        return Promise.reject(new Error(`refusing the header ${JSON.stringify(name)}: a name or value with a line break`));
      const lower = name.toLowerCase();
      if (lower === 'host' || lower === 'content-length' || lower === 'connection' || lower === 'transfer-encoding') continue;
      head += `${name}: ${value}\r\n`;
    }
    const payload = body === undefined ? undefined : Buffer.from(body, 'utf8');
    if (payload !== undefined) head += `Content-Length: ${payload.length}\r\n`;
    head += '\r\n';
    const request = payload ? Buffer.concat([Buffer.from(head, 'latin1'), payload]) : Buffer.from(head, 'latin1');
    return new Promise((resolve, reject) => {
      const p: Pending = { method, path, request, timeoutMs, resolve, reject };
      if (timeoutMs > 0) p.timer = setTimeout(() => this.expire(p), timeoutMs);
      this.waiting.push(p);
      this.dispatch();
    });
  }

  /** A request's deadline passed: its connection is closed if it is in flight (it may hold part of an answer), else it leaves the queue. */
  private expire(p: Pending): void {
    p.timer = undefined;
    if (p.sentOn?.current === p) {
      p.sentOn.fail(new Error(`no answer within ${p.timeoutMs} ms`));
      return;
    }
    const i = this.waiting.indexOf(p);
    if (i >= 0) this.waiting.splice(i, 1);
    this.settle(p, new Error(`no answer within ${p.timeoutMs} ms (no connection to ${this.hostHeader} was ready)`));
  }

  /** Fails every request waiting or in flight with `err`, closes every connection, and fails every later request. */
  close(err: Error = new Error('the transport was closed')): void {
    this.closedWith = err;
    for (const p of this.waiting.splice(0)) this.settle(p, err);
    for (const c of [...this.connections]) c.fail(err);
    for (const failed of [...this.handshakes]) failed(err);
    this.connections.clear();
    this.idle.length = 0;
  }

  /** Open connections (in use or idle). */
  get open(): number {
    return this.connections.size + this.connecting;
  }

  /** @internal A request's end: the answer, or the error (and whether it may be sent once more). */
  settle(p: Pending, err: Error | undefined, answer?: Http1Answer, resendable = false): void {
    if (!answer && resendable && !p.resent && !this.closedWith) {
      // Sent again within the same deadline.
      p.resent = true;
      this.waiting.unshift(p);
      queueMicrotask(() => this.dispatch());
      return;
    }
    clearTimeout(p.timer);
    p.timer = undefined;
    if (answer) p.resolve(answer);
    else p.reject(err ?? new Error('the connection closed'));
  }

  /** @internal A connection ready for the next request. */
  free(c: Connection): void {
    if (this.closedWith) {
      c.socket.destroy();
      return;
    }
    const next = this.waiting.shift();
    if (next) c.send(next);
    else {
      c.parked(this.idleMs);
      this.idle.push(c);
    }
  }

  /** @internal A connection that closed. */
  gone(c: Connection): void {
    this.connections.delete(c);
    const i = this.idle.indexOf(c);
    if (i >= 0) this.idle.splice(i, 1);
    this.dispatch();
  }

  private dispatch(): void {
    while (this.waiting.length && !this.closedWith) {
      const c = this.idle.pop();
      if (c) {
        c.send(this.waiting.shift()!);
        continue;
      }
      // A connection is opened for a request that has none coming, up to maxSockets.
      if (this.connecting >= this.waiting.length || this.connections.size + this.connecting >= this.maxSockets) return;
      this.connect();
    }
  }

  private connect(): void {
    this.connecting++;
    const o = this.opts;
    const socket = tls.connect({
      host: o.host,
      port: o.port,
      ca: o.ca,
      cert: o.cert,
      key: o.key,
      rejectUnauthorized: o.rejectUnauthorized ?? true,
      // SNI takes a name, not an address (as node's https sets it).
      servername: o.servername ?? (/^[\d.]+$|:/.test(o.host) ? undefined : o.host),
      ALPNProtocols: ['http/1.1'],
    });
    let settled = false;
    const failed = (err: Error) => {
      if (settled) return;
      settled = true;
      this.handshakes.delete(failed);
      this.connecting--;
      socket.destroy();
      // The first waiting request gets the connection's error (the others may still get a connection).
      clearTimeout(timer);
      const p = this.waiting.shift();
      if (p) this.settle(p, new Error(`connecting to ${this.hostHeader}: ${err.message}`, { cause: err }));
      this.dispatch();
    };
    const connectTimeoutMs = o.connectTimeoutMs ?? 10_000;
    const timer = setTimeout(() => failed(new Error(`no TLS handshake within ${connectTimeoutMs} ms`)), connectTimeoutMs);
    timer.unref();
    this.handshakes.add(failed);
    socket.once('error', failed);
    socket.once('close', () => failed(new Error('the connection closed during the TLS handshake')));
    socket.once('secureConnect', () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      this.handshakes.delete(failed);
      socket.removeListener('error', failed);
      this.connecting--;
      const c = new Connection(socket, this);
      this.connections.add(c);
      this.free(c);
    });
  }
}
