// A lean HTTP/1.1 server over node:tls for the admission webhooks (docs/webhooks.md, "The HTTP
// layer"). Node's https server cost the admission thread about 0.55-0.6 CPU ms per review at
// 500/s, of which a bare TLS server answering a fixed reply costs 0.2 (bench/admission-cpu.ts,
// `--http`): the rest was the HTTP parser's callbacks, the request and response streams, header
// objects and timers. This one reads each request from the socket's bytes and writes each answer
// in one write. It serves what the API server sends a webhook and refuses the rest clearly:
// HTTP/1.1 (or 1.0) over ALPN `http/1.1`, keep-alive, bodies with a Content-Length (chunked and
// other transfer codings get a 411 and the connection is closed), one request at a time per
// connection (pipelined requests wait their turn, in order).
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';

export interface Http1Head {
  method: string;
  /** The request target as sent (origin-form: the path and query). */
  target: string;
  /** The declared Content-Length (0 when none, for a method without a body). */
  length: number;
  /** performance.now() when the head had arrived. */
  at: number;
}

export interface Http1Reply {
  status: number;
  contentType: string;
  body: string;
}

/** What a body chunk costs to keep: undefined to go on, or why it is refused (a 400, the connection cut). */
export type BodyScan = (chunk: Buffer) => string | undefined;

export interface Http1App {
  /**
   * The head has arrived, no byte of its body has been read: a reply refuses the request (its body
   * is read and dropped, up to `maxDrain`, so that the client sees the answer, then the connection
   * is closed); otherwise a scan that sees each chunk of the body as it arrives.
   */
  open(head: Http1Head): Http1Reply | BodyScan;
  /** The whole body (exactly `length` bytes): the answer. */
  handle(head: Http1Head, body: Buffer): Http1Reply | Promise<Http1Reply>;
  /** True while stopping: every answer closes its connection. */
  draining(): boolean;
}

export interface Http1Limits {
  /** The request line and headers, in bytes: beyond, a 431 (node's http server's default is 16 KiB). */
  maxHead: number;
  /** A refused body is read and dropped up to this; a longer one is cut after the answer. */
  maxDrain: number;
  /** Bodies above this wait for one of `largeSlots` before they are read. */
  smallBody: number;
  largeSlots: number;
  /** From a request's first byte until its head has arrived. */
  headTimeoutMs: number;
  /** From the head until the last byte of the body (a refused body's drain included). */
  bodyTimeoutMs: number;
  /** A kept-alive connection with no request. */
  idleTimeoutMs: number;
  /** How often the timeouts above are checked (one timer for all connections, not one per request). */
  checkEveryMs: number;
  /** The TLS handshake. */
  handshakeTimeoutMs: number;
}

const CRLF2 = Buffer.from('\r\n\r\n');
const CONTINUE = 'HTTP/1.1 100 Continue\r\n\r\n';
const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) ([^\s]+) HTTP\/(\d)\.(\d)$/;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Control characters other than the tab, anywhere in the head (CR and LF only as line ends, checked apart). */
// eslint-disable-next-line no-control-regex -- finding them is the point
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/;
const DIGITS = /^\d{1,15}$/;

const REASONS: Record<number, string> = {
  200: 'OK',
  400: 'Bad Request',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  411: 'Length Required',
  413: 'Payload Too Large',
  417: 'Expectation Failed',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
  505: 'HTTP Version Not Supported',
};

const plain = (status: number, message: string): Http1Reply => ({ status, contentType: 'text/plain', body: `${message}\n` });
const failed = (err: unknown): Http1Reply => plain(500, `the request could not be answered: ${(err as Error).message}`);

/** What a connection is doing; the timeouts depend on it. */
const enum State {
  /** Kept alive, no byte of a next request yet. */
  Idle,
  /** Reading a request's head. */
  Head,
  /** Waiting for a turn to read a large body (not timed: the bodies before it are). */
  Slot,
  /** Reading the body. */
  Body,
  /** Reading and dropping a refused body, then answering. */
  Drain,
  /** The app is answering. */
  Busy,
  /** Answered, but the client is not reading its answers: no next request is read until they are sent. */
  Sending,
  /** Answered with `Connection: close`: waiting for the client to close. */
  Closing,
}

export class Http1Server {
  private readonly server: tls.Server;
  private readonly connections = new Set<Connection>();
  private readonly large: Slots;
  private timer?: NodeJS.Timeout;
  private stopping = false;

  constructor(
    opts: { cert: string; key: string },
    readonly app: Http1App,
    readonly limits: Http1Limits,
  ) {
    this.large = new Slots(limits.largeSlots);
    this.server = tls.createServer(
      // The API server's Go client offers h2 and http/1.1: only the second is served.
      { cert: opts.cert, key: opts.key, ALPNProtocols: ['http/1.1'], handshakeTimeout: limits.handshakeTimeoutMs },
      (socket) => {
        const c = new Connection(socket, this);
        this.connections.add(c);
        socket.once('close', () => {
          this.connections.delete(c);
          c.closed();
        });
        if (this.stopping) c.end();
      },
    );
    // A failed handshake (a plain-HTTP probe, an unknown CA) concerns that client only.
    this.server.on('tlsClientError', (_err, socket) => socket.destroy());
  }

  get slots(): Slots {
    return this.large;
  }

  setSecureContext(cert: string, key: string): void {
    this.server.setSecureContext({ cert, key });
  }

  async listen(port: number, host: string): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.timer = setInterval(() => this.checkTimeouts(), this.limits.checkEveryMs);
    this.timer.unref();
    return (this.server.address() as AddressInfo).port;
  }

  /**
   * Stops accepting, closes the idle connections at once and every other one after its answer
   * (the app's `draining`), and cuts what is still open after `graceMs`. Resolves when all are closed.
   */
  close(graceMs: number): Promise<void> {
    this.stopping = true;
    return new Promise<void>((resolve) => {
      const cut = setTimeout(() => {
        for (const c of this.connections) c.destroy();
      }, graceMs);
      cut.unref();
      this.server.close(() => {
        clearTimeout(cut);
        if (this.timer) clearInterval(this.timer);
        resolve();
      });
      for (const c of this.connections) if (c.idle) c.end();
    });
  }

  get isStopping(): boolean {
    return this.stopping;
  }

  private checkTimeouts(): void {
    const now = performance.now();
    for (const c of this.connections) c.checkTimeout(now);
  }
}

/** One client connection: its bytes not yet consumed and where it is in the current request. */
class Connection {
  private buf: Buffer | undefined;
  /** Bytes of `buf` already searched for the head's end. */
  private searched = 0;
  private state = State.Idle;
  private since = performance.now();
  private head?: Http1Head;
  /** The client asked for the connection to close after this request (or spoke HTTP/1.0 without keep-alive). */
  private closeAfter = false;
  private left = 0;
  private chunks: Buffer[] = [];
  private scan?: BodyScan;
  private refusal?: Http1Reply;
  private holdsSlot = false;
  private gone = false;
  /** Reading stopped: bytes of a next request came while this one was answered (or waits for a slot). */
  private paused = false;
  /** Inside pump(): an answer given synchronously lets the loop go on to the next request. */
  private pumping = false;

  constructor(
    private readonly socket: tls.TLSSocket,
    private readonly server: Http1Server,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (d: Buffer) => this.onData(d));
    socket.on('error', () => socket.destroy());
  }

  get idle(): boolean {
    return this.state === State.Idle && !this.buf;
  }

  /** Closes gracefully: what was written is sent first. */
  end(): void {
    this.to(State.Closing);
    this.socket.end();
  }

  destroy(): void {
    this.socket.destroy();
  }

  closed(): void {
    this.gone = true;
    this.buf = undefined;
    this.chunks = [];
    this.releaseSlot();
  }

  checkTimeout(now: number): void {
    const waited = now - this.since;
    const { limits } = this.server;
    switch (this.state) {
      case State.Idle:
        if (waited > limits.idleTimeoutMs) this.destroy();
        break;
      case State.Head:
        if (waited > limits.headTimeoutMs)
          this.refuseNow(plain(408, `the request's headers did not arrive within ${limits.headTimeoutMs} ms`));
        break;
      case State.Body:
      case State.Drain:
        if (waited > limits.bodyTimeoutMs)
          this.refuseNow(plain(408, `the request's body did not arrive within ${limits.bodyTimeoutMs} ms`));
        break;
      case State.Sending:
      case State.Closing:
        // The client did not read our answer, or did not close after our `Connection: close`.
        if (waited > limits.bodyTimeoutMs) this.destroy();
        break;
      default:
    }
  }

  private to(state: State): void {
    this.state = state;
    this.since = performance.now();
  }

  private onData(d: Buffer): void {
    if (this.state === State.Closing || this.gone) return;
    this.buf = this.buf ? Buffer.concat([this.buf, d]) : d;
    if (this.state === State.Busy || this.state === State.Slot || this.state === State.Sending) {
      // Pipelined: keep what came, read no more until this request is answered (and its answer sent). Not paused
      // otherwise: stopping and restarting the socket's reads for every request costs more than the rest of the layer.
      this.pause();
      return;
    }
    this.pump();
  }

  /** Consumes what `buf` holds, request by request, until it needs more bytes or an answer. */
  private pump(): void {
    this.pumping = true;
    try {
      for (;;) {
        const buf = this.buf;
        if (!buf) return;
        switch (this.state) {
          case State.Idle:
          case State.Head:
            if (!this.readHead(buf)) return;
            break;
          case State.Body:
            if (!this.readBody(buf)) return;
            break;
          case State.Drain:
            if (!this.drain(buf)) return;
            break;
          default:
            return;
        }
      }
    } finally {
      this.pumping = false;
    }
  }

  /** Takes `n` bytes off the front of `buf`. */
  private take(n: number): Buffer {
    const buf = this.buf!;
    if (n >= buf.length) {
      this.buf = undefined;
      this.searched = 0;
      return buf;
    }
    this.buf = buf.subarray(n);
    this.searched = 0;
    return buf.subarray(0, n);
  }

  /** True when it consumed a head (go on), false when it needs more bytes or the connection is done. */
  private readHead(buf: Buffer): boolean {
    if (this.state === State.Idle) this.to(State.Head);
    const { limits } = this.server;
    const end = buf.indexOf(CRLF2, Math.max(0, this.searched - 3));
    if (end < 0) {
      this.searched = buf.length;
      if (buf.length > limits.maxHead) this.refuseNow(plain(431, `the request's headers are larger than ${limits.maxHead} bytes`));
      return false;
    }
    if (end + 4 > limits.maxHead) {
      this.refuseNow(plain(431, `the request's headers are larger than ${limits.maxHead} bytes`));
      return false;
    }
    const text = this.take(end + 4).toString('latin1', 0, end);
    const parsed = parseHead(text);
    if (typeof parsed === 'string' || 'status' in parsed) {
      this.refuseNow(typeof parsed === 'string' ? plain(400, parsed) : parsed);
      return false;
    }
    const { method, target, length, close, expectContinue } = parsed;
    this.closeAfter = close;
    const head: Http1Head = { method, target, length, at: performance.now() };
    this.head = head;
    let opened: Http1Reply | BodyScan;
    try {
      opened = this.server.app.open(head);
    } catch (err) {
      // Thrown from a socket's data event, it would end the thread (and every connection with it).
      this.refuseNow(failed(err));
      return false;
    }
    if (typeof opened !== 'function') {
      // Refused before its body: drop the body (the client then reads the answer), unless the client waits for our word.
      if (expectContinue || length === 0) this.refuseNow(opened);
      else if (length > limits.maxDrain) this.refuseNow(opened);
      else {
        this.refusal = opened;
        this.left = length;
        this.to(State.Drain);
      }
      return !this.done;
    }
    this.scan = opened;
    this.left = length;
    this.chunks = [];
    if (expectContinue) this.socket.write(CONTINUE);
    if (length > limits.smallBody) {
      // Large bodies take turns: their memory is bounded, and the event loop's turns stay short.
      this.to(State.Slot);
      this.pause();
      void this.server.slots.take().then(() => {
        if (this.gone) return this.server.slots.give();
        this.holdsSlot = true;
        this.resume();
        this.to(State.Body);
        this.pump();
      });
      return false;
    }
    this.to(State.Body);
    if (length > 0) return true;
    this.answer(Buffer.alloc(0));
    return this.state === State.Idle;
  }

  private get done(): boolean {
    return this.state === State.Closing || this.gone;
  }

  private readBody(buf: Buffer): boolean {
    const chunk = this.take(Math.min(this.left, buf.length));
    this.left -= chunk.length;
    let refused: string | undefined;
    try {
      refused = this.scan!(chunk);
    } catch (err) {
      this.refuseNow(failed(err));
      return false;
    }
    if (refused !== undefined) {
      this.refuseNow(plain(400, refused));
      return false;
    }
    this.chunks.push(chunk);
    if (this.left > 0) return false;
    const body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    this.chunks = [];
    this.answer(body);
    return this.state === State.Idle;
  }

  private drain(buf: Buffer): boolean {
    const n = Math.min(this.left, buf.length);
    this.take(n);
    this.left -= n;
    if (this.left > 0) return false;
    this.reply(this.refusal!, true, false);
    return false;
  }

  private answer(body: Buffer): void {
    this.to(State.Busy);
    let reply: Http1Reply | Promise<Http1Reply>;
    try {
      reply = this.server.app.handle(this.head!, body);
    } catch (err) {
      reply = failed(err);
    }
    // Answered at once when the app could (no promise, no microtask turn); else when it has.
    if (reply instanceof Promise)
      reply.then(
        (r) => this.answered(r),
        (err) => this.answered(failed(err)),
      );
    else this.answered(reply);
  }

  private answered(reply: Http1Reply): void {
    this.releaseSlot();
    if (this.gone) return;
    const close = this.closeAfter || this.server.app.draining() || this.server.isStopping;
    const sent = this.reply(reply, close, false);
    if (close) return;
    if (!sent) {
      // A client that pipelines without reading its answers: they would pile up in memory without
      // bound (each answered in turn from the requests read), so the next request waits until this
      // answer has gone out.
      this.to(State.Sending);
      this.pause();
      this.socket.once('drain', () => {
        if (this.gone || this.state !== State.Sending) return;
        this.next();
      });
      return;
    }
    this.next();
  }

  /** Ready for the next request. */
  private next(): void {
    this.to(State.Idle);
    this.resume();
    // A request that came behind this one (pipelined) is already here; not from within pump() itself.
    if (this.buf && !this.pumping) this.pump();
  }

  /** Answers a request refused as it is, without reading further, and cuts the connection once the answer is out. */
  private refuseNow(reply: Http1Reply): void {
    this.reply(reply, true, true);
  }

  /** False when the answer waits in memory for the client to read (the socket's buffer is full). */
  private reply(reply: Http1Reply, close: boolean, cut: boolean): boolean {
    if (this.gone || this.state === State.Closing) return true;
    this.releaseSlot();
    const status = `${reply.status} ${REASONS[reply.status] ?? 'Unknown'}`;
    const length = Buffer.byteLength(reply.body);
    // Head and body in one write: one TLS record, one system call.
    const text = `HTTP/1.1 ${status}\r\nContent-Type: ${reply.contentType}\r\nContent-Length: ${length}\r\n${close ? 'Connection: close\r\n' : ''}\r\n${reply.body}`;
    if (!close) return this.socket.write(text);
    this.buf = undefined;
    this.chunks = [];
    this.to(State.Closing);
    if (cut) {
      // The rest of the request is not read (nor decrypted): the answer goes out, then the connection is cut.
      this.socket.write(text, () => this.socket.destroy());
      this.socket.pause();
    } else this.socket.end(text);
    return true;
  }

  private pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.socket.pause();
  }

  private resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.socket.resume();
  }

  private releaseSlot(): void {
    if (!this.holdsSlot) return;
    this.holdsSlot = false;
    this.server.slots.give();
  }
}

interface ParsedHead {
  method: string;
  target: string;
  length: number;
  close: boolean;
  expectContinue: boolean;
}

/** The request line and the headers that matter here; a message (a 400) or a reply when it is refused. */
export function parseHead(text: string): ParsedHead | Http1Reply | string {
  // A client may send an empty line or two before a request (RFC 9112, 2.2).
  let start = 0;
  while (text.startsWith('\r\n', start)) start += 2;
  if (CONTROL.test(text)) return 'the request holds a control character';
  const lines = text.slice(start).split('\r\n');
  const line = lines[0]!;
  const m = REQUEST_LINE.exec(line);
  if (!m) return `malformed request line: ${JSON.stringify(line.slice(0, 100))}`;
  if (m[3] !== '1') return plain(505, `HTTP/${m[3]}.${m[4]} is not served: HTTP/1.1 only`);
  let close = m[4] === '0';
  let length: number | undefined;
  let coding: string | undefined;
  let expect: string | undefined;
  for (let i = 1; i < lines.length; i++) {
    const h = lines[i]!;
    if (h.includes('\r') || h.includes('\n')) return 'a header line holds a bare CR or LF';
    const colon = h.indexOf(':');
    if (colon <= 0) return `malformed header line: ${JSON.stringify(h.slice(0, 100))}`;
    const name = h.slice(0, colon);
    // Leading whitespace is a folded line (obsolete) and trailing is not allowed (RFC 9112, 5.1).
    if (!TOKEN.test(name)) return `malformed header name: ${JSON.stringify(name.slice(0, 100))}`;
    const value = trimOws(h.slice(colon + 1));
    switch (name.toLowerCase()) {
      case 'content-length': {
        if (!DIGITS.test(value)) return `malformed Content-Length: ${JSON.stringify(value.slice(0, 100))}`;
        const n = Number(value);
        if (length !== undefined && length !== n) return 'conflicting Content-Length headers';
        length = n;
        break;
      }
      case 'transfer-encoding':
        coding = coding === undefined ? value : `${coding}, ${value}`;
        break;
      case 'connection':
        for (const token of value.toLowerCase().split(',')) {
          const t = token.trim();
          if (t === 'close') close = true;
          else if (t === 'keep-alive' && m[4] === '0') close = false;
        }
        break;
      case 'expect':
        expect = value.toLowerCase();
        break;
      default:
    }
  }
  if (coding !== undefined) {
    return plain(411, `request bodies with a Transfer-Encoding (${coding.slice(0, 100)}) are not accepted: send a Content-Length`);
  }
  if (expect !== undefined && expect !== '100-continue') return plain(417, `Expect: ${expect.slice(0, 100)} is not supported`);
  const method = m[1]!;
  if (length === undefined) {
    if (method === 'POST' || method === 'PUT' || method === 'PATCH') return plain(411, 'a request body needs a Content-Length');
    length = 0;
  }
  return { method, target: m[2]!, length, close, expectContinue: expect !== undefined };
}

/**
 * A header value without the spaces and tabs around it (RFC 9112, 5: OWS), and nothing else:
 * String.trim() also takes a no-break space (0xA0 read as latin1) and other Unicode spaces, which
 * would read `Content-Length: \xA05` as 5 where other parsers refuse it.
 */
function trimOws(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && (value[start] === ' ' || value[start] === '\t')) start++;
  while (end > start && (value[end - 1] === ' ' || value[end - 1] === '\t')) end--;
  return value.slice(start, end);
}

/** A counting semaphore: take() waits in arrival order for one of `n` slots. */
export class Slots {
  private free: number;
  private readonly waiting: Array<() => void> = [];
  constructor(n: number) {
    this.free = n;
  }
  take(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }
  give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}
