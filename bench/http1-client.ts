// A lean HTTP/1.1 client over keep-alive TLS connections, for the webhook load generator
// (bench/load-generator.ts). Node's https.request costs about 0.9 ms of CPU per request (the
// ClientRequest and IncomingMessage streams, the agent, header objects, a timer or two): at 500
// reviews/s that is half a core taken from the two the server under test shares, where the API
// server that really calls the webhooks runs elsewhere and a Go client costs a fraction of it. This
// one writes a request as one string and reads the answer's status line, Content-Length (or chunked
// body) and body from the socket's bytes: enough for HNC's webhook server, not a general client.
import tls from 'node:tls';

export interface Http1Answer {
  status: number;
  body: Buffer;
  /** Milliseconds from the call until the request had a connection to go out on (a free one, or a new one connected). */
  waitMs: number;
  /** Whether that connection was opened for it. */
  fresh: boolean;
}

interface Pending {
  head: string;
  body: Buffer;
  t0: number;
  resolve: (a: Http1Answer) => void;
  reject: (e: Error) => void;
  waitMs?: number;
  fresh?: boolean;
}

const CRLF2 = Buffer.from('\r\n\r\n');

/** One connection: one request at a time (no pipelining), its answer parsed from the bytes. */
class Connection {
  private buf: Buffer = Buffer.alloc(0);
  private current?: Pending;
  ready = false;
  closed = false;

  constructor(
    readonly socket: tls.TLSSocket,
    private readonly done: (c: Connection) => void,
    private readonly gone: (c: Connection, err: Error) => void,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (d: Buffer) => this.onData(d));
    const end = (err: Error) => {
      if (this.closed) return;
      this.closed = true;
      const p = this.current;
      this.current = undefined;
      p?.reject(err);
      this.gone(this, err);
    };
    socket.on('error', end);
    socket.on('close', () => end(new Error('the connection closed')));
  }

  get busy(): boolean {
    return this.current !== undefined;
  }

  send(p: Pending): void {
    this.current = p;
    // Head and body in one write, one TLS record, as the API server's Go client sends a review
    // (both through one buffered writer, flushed once): two writes made the server read twice.
    this.socket.write(Buffer.concat([Buffer.from(p.head, 'latin1'), p.body]));
  }

  private onData(d: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    const p = this.current;
    if (!p) return;
    const headEnd = this.buf.indexOf(CRLF2);
    if (headEnd < 0) return;
    const head = this.buf.subarray(0, headEnd).toString('latin1');
    const status = Number(head.slice(9, 12));
    const lower = head.toLowerCase();
    const length = /\r\ncontent-length:\s*(\d+)/.exec(lower);
    const start = headEnd + 4;
    let body: Buffer | undefined;
    let rest = 0;
    if (length) {
      const n = Number(length[1]);
      if (this.buf.length - start < n) return;
      body = this.buf.subarray(start, start + n);
      rest = start + n;
    } else if (/\r\ntransfer-encoding:\s*chunked/.test(lower)) {
      const parts: Buffer[] = [];
      let i = start;
      for (;;) {
        const eol = this.buf.indexOf('\r\n', i);
        if (eol < 0) return;
        const size = parseInt(this.buf.subarray(i, eol).toString('latin1'), 16);
        if (this.buf.length < eol + 2 + size + 2) return;
        if (size === 0) {
          rest = eol + 4;
          break;
        }
        parts.push(this.buf.subarray(eol + 2, eol + 2 + size));
        i = eol + 2 + size + 2;
      }
      body = Buffer.concat(parts);
    } else {
      this.current = undefined;
      p.reject(new Error(`an answer with neither Content-Length nor chunked encoding: ${head.split('\r\n')[0]}`));
      this.socket.destroy();
      return;
    }
    this.buf = this.buf.subarray(rest);
    this.current = undefined;
    p.resolve({ status, body: Buffer.from(body), waitMs: p.waitMs ?? NaN, fresh: p.fresh ?? false });
    if (/\r\nconnection:\s*close/.test(lower)) this.socket.destroy();
    else this.done(this);
  }
}

/** Keeps up to `maxSockets` connections to host:port; requests beyond wait in arrival order. */
export class Http1Pool {
  private readonly idle: Connection[] = [];
  private readonly waiting: Pending[] = [];
  private open = 0;

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly ca: string,
    private readonly maxSockets: number,
  ) {}

  post(path: string, body: string | Buffer, contentType = 'application/json'): Promise<Http1Answer> {
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    const head = `POST ${path} HTTP/1.1\r\nHost: ${this.host}:${this.port}\r\nContent-Type: ${contentType}\r\nContent-Length: ${bytes.length}\r\n\r\n`;
    return new Promise((resolve, reject) => {
      this.waiting.push({ head, body: bytes, t0: performance.now(), resolve, reject });
      this.dispatch();
    });
  }

  close(): void {
    for (const c of this.idle) c.socket.destroy();
    this.idle.length = 0;
  }

  private dispatch(): void {
    while (this.waiting.length) {
      const c = this.idle.pop();
      if (c) {
        const p = this.waiting.shift()!;
        p.waitMs = performance.now() - p.t0;
        c.send(p);
        continue;
      }
      if (this.open >= this.maxSockets) return;
      this.connect(this.waiting.shift()!);
    }
  }

  private connect(first: Pending): void {
    this.open++;
    const socket = tls.connect({
      host: this.host,
      port: this.port,
      ca: this.ca,
      servername: this.host === '127.0.0.1' ? undefined : this.host,
    });
    const conn = new Connection(
      socket,
      (c) => {
        this.idle.push(c);
        this.dispatch();
      },
      (c, err) => {
        this.open--;
        const i = this.idle.indexOf(c);
        if (i >= 0) this.idle.splice(i, 1);
        if (!c.ready) first.reject(err);
        this.dispatch();
      },
    );
    socket.once('secureConnect', () => {
      conn.ready = true;
      first.waitMs = performance.now() - first.t0;
      first.fresh = true;
      conn.send(first);
    });
  }
}
