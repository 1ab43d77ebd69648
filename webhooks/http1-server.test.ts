// The lean HTTP/1.1 layer over a real TLS socket on 127.0.0.1: the bytes a client sends, however
// they are cut, and what it gets back.
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import tls from 'node:tls';
import { CertificateAuthority } from '../kube/pki.js';
import { Http1Server, parseHead, type Http1App, type Http1Limits, type Http1Reply } from './http1-server.js';

// Real TLS on a shared machine: a first handshake under load can take seconds.
vi.setConfig({ testTimeout: 20_000 });

let pki: { ca: string; cert: string; key: string };
beforeAll(async () => {
  const ca = await CertificateAuthority.create('http1-test');
  const pair = await ca.issue({ commonName: 'webhook', usage: 'server', ips: ['127.0.0.1'] });
  pki = { ca: ca.certPem, cert: pair.cert, key: pair.key };
});

const LIMITS: Http1Limits = {
  maxHead: 1024,
  maxDrain: 64 * 1024,
  smallBody: 4 * 1024,
  largeSlots: 1,
  // Generous, so that a slow machine never times out the tests that do not test timeouts (those set their own).
  headTimeoutMs: 10_000,
  bodyTimeoutMs: 10_000,
  idleTimeoutMs: 60_000,
  checkEveryMs: 50,
  handshakeTimeoutMs: 1000,
};

let server: Http1Server | undefined;
const sockets: tls.TLSSocket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await server?.close(100);
  server = undefined;
});

interface Seen {
  method: string;
  target: string;
  body: string;
}

/** A server whose app echoes what it read (`/slow` answers after a turn; `/refuse` is refused before its body). */
async function start(limits: Partial<Http1Limits> = {}, app: Partial<Http1App> = {}) {
  const seen: Seen[] = [];
  let draining = false;
  server = new Http1Server(
    { cert: pki.cert, key: pki.key },
    {
      open: (head) =>
        head.target === '/refuse'
          ? { status: 404, contentType: 'text/plain', body: 'refused\n' }
          : (chunk) => (chunk.includes('!') ? 'no exclamation marks' : undefined),
      handle: (head, body): Http1Reply | Promise<Http1Reply> => {
        seen.push({ method: head.method, target: head.target, body: body.toString() });
        const reply = { status: 200, contentType: 'text/plain', body: `${head.method} ${head.target} ${body.length}:${body.toString()}` };
        return head.target === '/slow' ? new Promise((r) => setTimeout(() => r(reply), 20)) : reply;
      },
      draining: () => draining,
      ...app,
    },
    { ...LIMITS, ...limits },
  );
  const port = await server.listen(0, '127.0.0.1');
  return { port, seen, drain: () => (draining = true) };
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A raw TLS client: writes bytes as given, parses the answers as they come, and notes when the server closed. */
async function connect(port: number, alpn: string[] = ['h2', 'http/1.1']) {
  const socket = tls.connect({ host: '127.0.0.1', port, ca: pki.ca, ALPNProtocols: alpn });
  sockets.push(socket);
  socket.setNoDelay(true);
  await new Promise<void>((resolve, reject) => {
    socket.once('secureConnect', resolve);
    socket.once('error', reject);
  });
  let buf = Buffer.alloc(0);
  const answers: Answer[] = [];
  let waiters: Array<() => void> = [];
  let closed = false;
  const wake = () => {
    for (const w of waiters.splice(0)) w();
  };
  socket.on('data', (d: Buffer) => {
    buf = Buffer.concat([buf, d]);
    for (;;) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) break;
      const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines.slice(1)) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
      const status = Number(lines[0]!.split(' ')[1]);
      if (status === 100) {
        buf = buf.subarray(end + 4);
        answers.push({ status, headers, body: '' });
        continue;
      }
      const n = Number(headers['content-length']);
      if (buf.length < end + 4 + n) break;
      answers.push({ status, headers, body: buf.subarray(end + 4, end + 4 + n).toString() });
      buf = buf.subarray(end + 4 + n);
    }
    wake();
  });
  socket.on('error', () => undefined);
  socket.on('close', () => {
    closed = true;
    wake();
  });
  const until = (ok: () => boolean) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (ok()) resolve();
        else if (closed) reject(new Error(`closed with ${answers.length} answers: ${JSON.stringify(answers)}`));
        else waiters.push(check);
      };
      check();
    });
  return {
    socket,
    answers,
    write: (b: string | Buffer) => new Promise<void>((r) => socket.write(b, () => r())),
    /** Resolves once `n` answers (100 Continue included) have arrived. */
    answered: (n: number) => until(() => answers.length >= n).then(() => answers),
    /** Resolves once the server closed the connection. */
    closed: () => new Promise<void>((r) => (closed ? r() : socket.once('close', () => r()))),
    isClosed: () => closed,
    reset: () => {
      waiters = [];
    },
  };
}

const post = (target: string, body: string, extra = '') =>
  `POST ${target} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;

describe('Http1Server', () => {
  it('speaks http/1.1 over ALPN, and answers several requests on one kept-alive connection', async () => {
    const { port } = await start();
    const c = await connect(port);
    expect(c.socket.alpnProtocol).toBe('http/1.1');
    for (let i = 0; i < 3; i++) {
      await c.write(post('/a', `body-${i}`));
      const answers = await c.answered(i + 1);
      expect(answers[i]).toEqual({
        status: 200,
        headers: { 'content-type': 'text/plain', 'content-length': '16' },
        body: `POST /a 6:body-${i}`,
      });
    }
    expect(c.isClosed()).toBe(false);
  });

  it('refuses a client that offers only h2', async () => {
    const { port } = await start();
    await expect(connect(port, ['h2'])).rejects.toThrow(/no_application_protocol|ALPN|alert/i);
  });

  it('answers pipelined requests in order, an asynchronous answer before the synchronous one behind it', async () => {
    const { port, seen } = await start();
    const c = await connect(port);
    await c.write(post('/slow', 'one') + post('/fast', 'two') + post('/slow', 'three!'.replace('!', '')) + post('/fast', ''));
    const answers = await c.answered(4);
    expect(answers.map((a) => a.body)).toEqual(['POST /slow 3:one', 'POST /fast 3:two', 'POST /slow 5:three', 'POST /fast 0:']);
    expect(seen.map((s) => s.target)).toEqual(['/slow', '/fast', '/slow', '/fast']);
  });

  it('reads a request split at every byte boundary, and one sent a byte at a time', async () => {
    const { port } = await start();
    const request = post('/split', '{"a":1}');
    const c = await connect(port);
    for (let cut = 1; cut < request.length; cut++) {
      await c.write(request.slice(0, cut));
      await c.write(request.slice(cut));
      const answers = await c.answered(cut);
      expect(answers[cut - 1]!.body).toBe('POST /split 7:{"a":1}');
    }
    const d = await connect(port);
    for (const byte of request + request) await d.write(byte);
    expect((await d.answered(2)).map((a) => a.body)).toEqual(['POST /split 7:{"a":1}', 'POST /split 7:{"a":1}']);
  });

  it('closes after the answer when the client asks (Connection: close), and after an HTTP/1.0 request', async () => {
    const { port } = await start();
    const c = await connect(port);
    await c.write(post('/a', 'x', 'Connection: close\r\n'));
    expect((await c.answered(1))[0]).toMatchObject({ status: 200, headers: { connection: 'close' }, body: 'POST /a 1:x' });
    await c.closed();
    const d = await connect(port);
    await d.write('GET /old HTTP/1.0\r\n\r\n');
    expect((await d.answered(1))[0]).toMatchObject({ status: 200, headers: { connection: 'close' }, body: 'GET /old 0:' });
    await d.closed();
  });

  it('refuses headers over the limit with a 431 and closes', async () => {
    const { port } = await start();
    const c = await connect(port);
    await c.write(post('/a', 'x', `X-Big: ${'y'.repeat(2000)}\r\n`));
    expect((await c.answered(1))[0]).toMatchObject({ status: 431, headers: { connection: 'close' } });
    await c.closed();
    // Also when the head has not ended yet.
    const d = await connect(port);
    await d.write(`POST /a HTTP/1.1\r\nX-Big: ${'y'.repeat(2000)}`);
    expect((await d.answered(1))[0]!.status).toBe(431);
    await d.closed();
  });

  it('refuses a malformed request line, a malformed header and a bad Content-Length with a 400 naming it, and closes', async () => {
    const { port } = await start();
    for (const [bytes, message] of [
      ['HELLO\r\n\r\n', 'malformed request line: "HELLO"'],
      ['POST /a  HTTP/1.1\r\n\r\n', 'malformed request line: "POST /a  HTTP/1.1"'],
      ['POST /a HTTP/1.1\r\nno colon here\r\n\r\n', 'malformed header line: "no colon here"'],
      ['POST /a HTTP/1.1\r\nContent-Length : 1\r\n\r\nx', 'malformed header name: "Content-Length "'],
      ['POST /a HTTP/1.1\r\nContent-Length: -1\r\n\r\n', 'malformed Content-Length: "-1"'],
      ['POST /a HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxy', 'conflicting Content-Length headers'],
      ['POST /a HTTP/1.1\r\nX: a\x00b\r\n\r\n', 'the request holds a control character'],
    ] as const) {
      const c = await connect(port);
      await c.write(bytes);
      expect((await c.answered(1))[0]).toMatchObject({ status: 400, headers: { connection: 'close' }, body: `${message}\n` });
      await c.closed();
    }
  });

  it('refuses a chunked body with a 411 (and a POST without a length), another HTTP version with a 505, and closes', async () => {
    const { port } = await start();
    for (const [bytes, status] of [
      ['POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n', 411],
      ['POST /a HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n', 411],
      ['POST /a HTTP/1.1\r\nHost: x\r\n\r\n', 411],
      ['PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 505],
      ['POST /a HTTP/1.1\r\nExpect: 200-ok\r\nContent-Length: 1\r\n\r\nx', 417],
    ] as const) {
      const c = await connect(port);
      await c.write(bytes);
      const [answer] = await c.answered(1);
      expect(answer).toMatchObject({ status, headers: { connection: 'close' } });
      await c.closed();
    }
  });

  it('answers Expect: 100-continue before the body is sent', async () => {
    const { port } = await start();
    const c = await connect(port);
    await c.write('POST /a HTTP/1.1\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n');
    expect((await c.answered(1))[0]!.status).toBe(100);
    await c.write('ok');
    expect((await c.answered(2))[1]).toMatchObject({ status: 200, body: 'POST /a 2:ok' });
  });

  it('drains a refused body before answering, cuts one refused by its scan at once, and closes both', async () => {
    const { port } = await start();
    const c = await connect(port);
    await c.write('POST /refuse HTTP/1.1\r\nContent-Length: 10\r\n\r\n12345');
    await c.write('67890');
    expect((await c.answered(1))[0]).toMatchObject({ status: 404, headers: { connection: 'close' }, body: 'refused\n' });
    await c.closed();
    // The scan refuses at the first chunk, before the other 9,000 declared bytes are sent.
    const d = await connect(port);
    await d.write('POST /a HTTP/1.1\r\nContent-Length: 10000\r\n\r\nhello!');
    expect((await d.answered(1))[0]).toMatchObject({ status: 400, body: 'no exclamation marks\n' });
    await d.closed();
  });

  it('answers a head that does not arrive in time (slowloris) with a 408, and a body likewise', async () => {
    const { port } = await start({ headTimeoutMs: 300, bodyTimeoutMs: 300 });
    const c = await connect(port);
    const t0 = performance.now();
    await c.write('POST /a HTTP/1.1\r\n');
    const trickle = setInterval(() => void c.write('X-A: b\r\n'), 50);
    try {
      expect((await c.answered(1))[0]).toMatchObject({ status: 408, body: `the request's headers did not arrive within 300 ms\n` });
    } finally {
      clearInterval(trickle);
    }
    await c.closed();
    expect(performance.now() - t0).toBeGreaterThanOrEqual(300);
    const d = await connect(port);
    await d.write('POST /a HTTP/1.1\r\nContent-Length: 5\r\n\r\nab');
    expect((await d.answered(1))[0]).toMatchObject({ status: 408, body: `the request's body did not arrive within 300 ms\n` });
    await d.closed();
  });

  it('closes a kept-alive connection that stays idle, and not one that keeps asking', async () => {
    const { port } = await start({ idleTimeoutMs: 1000 });
    const idle = await connect(port);
    const busy = await connect(port);
    const t0 = performance.now();
    // Asking every 200 ms for longer than the idle timeout: each request starts its idle time anew.
    for (let i = 0; performance.now() - t0 < 1500; i++) {
      await busy.write(post('/a', 'x'));
      await busy.answered(i + 1);
      await new Promise((r) => setTimeout(r, 200));
    }
    await idle.closed();
    expect(performance.now() - t0).toBeGreaterThanOrEqual(1000);
    expect(busy.isClosed()).toBe(false);
  });

  it('reads a large body only in its turn', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { port } = await start(
      {},
      {
        handle: async (head, body) => {
          if (head.target === '/hold') await gate;
          return { status: 200, contentType: 'text/plain', body: `${head.target} ${body.length}` };
        },
      },
    );
    const a = await connect(port);
    const b = await connect(port);
    const large = 'y'.repeat(5000);
    await a.write(post('/hold', large));
    await b.write(post('/next', large));
    // /next waits for /hold's slot (one large slot here).
    await new Promise((r) => setTimeout(r, 100));
    expect(b.answers).toEqual([]);
    release();
    expect((await a.answered(1))[0]!.body).toBe('/hold 5000');
    expect((await b.answered(1))[0]!.body).toBe('/next 5000');
  });

  it('answers a 500 and closes when the app throws on a head or a body chunk, and goes on serving', async () => {
    const { port } = await start(
      {},
      {
        open: (head) => {
          if (head.target === '/open') throw new Error('open failed');
          return (chunk) => {
            if (chunk.includes('boom')) throw new Error('scan failed');
            return undefined;
          };
        },
      },
    );
    for (const [bytes, message] of [
      [post('/open', 'x'), 'open failed'],
      [post('/scan', 'boom'), 'scan failed'],
    ] as const) {
      const c = await connect(port);
      await c.write(bytes);
      expect((await c.answered(1))[0]).toMatchObject({
        status: 500,
        headers: { connection: 'close' },
        body: `the request could not be answered: ${message}\n`,
      });
      await c.closed();
    }
    const d = await connect(port);
    await d.write(post('/a', 'x'));
    expect((await d.answered(1))[0]).toMatchObject({ status: 200, body: 'POST /a 1:x' });
  });

  it('reads no further request while a client that pipelines does not read its answers (they would pile up in memory)', async () => {
    let handled = 0;
    const answer = 'z'.repeat(512 * 1024);
    const { port } = await start(
      {},
      {
        handle: () => {
          handled++;
          return { status: 200, contentType: 'text/plain', body: answer };
        },
      },
    );
    const c = await connect(port);
    c.socket.pause();
    const n = 64;
    void c.write(post('/a', 'x').repeat(n));
    // The answers the kernel's buffers take (a few MB), then nothing more until the client reads:
    // wait until the count stops moving (or reaches all, as it did when every answer was kept in memory).
    let last = -1;
    while (handled !== last && handled < n) {
      last = handled;
      await new Promise((r) => setTimeout(r, 300));
    }
    expect(handled).toBeLessThan(n / 2);
    c.socket.resume();
    const answers = await c.answered(n);
    expect(answers.every((a) => a.status === 200 && a.body.length === answer.length)).toBe(true);
    expect(handled).toBe(n);
  });

  it('while draining, answers with Connection: close and closes; close() ends idle connections', async () => {
    const { port, drain } = await start();
    const idle = await connect(port);
    const c = await connect(port);
    drain();
    await c.write(post('/a', 'x'));
    expect((await c.answered(1))[0]).toMatchObject({ status: 200, headers: { connection: 'close' } });
    await c.closed();
    await server!.close(1000);
    server = undefined;
    await idle.closed();
  });
});

describe('parseHead', () => {
  it('reads the request line and the headers that matter, whatever their case', () => {
    expect(parseHead('\r\nPOST /x?timeout=10s HTTP/1.1\r\nHOST: a\r\ncontent-LENGTH:  12 \r\nConnection: Keep-Alive, Close')).toEqual({
      method: 'POST',
      target: '/x?timeout=10s',
      length: 12,
      close: true,
      expectContinue: false,
    });
    expect(parseHead('GET / HTTP/1.0\r\nConnection: keep-alive')).toMatchObject({ length: 0, close: false });
    expect(parseHead('POST / HTTP/1.1\r\n Folded: x')).toBe('malformed header name: " Folded"');
    // Only spaces and tabs surround a value: a no-break space (0xA0, read as latin1) is part of it.
    expect(parseHead('POST / HTTP/1.1\r\nContent-Length: \t5\t ')).toMatchObject({ length: 5 });
    expect(parseHead('POST / HTTP/1.1\r\nContent-Length: \xa05')).toBe('malformed Content-Length: "\xa05"');
    expect(parseHead('POST / HTTP/1.1\r\nContent-Length: 5\xa0')).toBe('malformed Content-Length: "5\xa0"');
  });
});
