// The lean HTTP/1.1 transport against real TLS servers on 127.0.0.1: node's https server for
// well-formed answers, a bare TLS server for what node's would never send.
import type { RequestListener } from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import tls from 'node:tls';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, KubeClient } from './client.js';
import { Http1Transport } from './http1-transport.js';
import { CertificateAuthority, type PemPair } from './pki.js';

let caPem: string;
let serving: PemPair;
const closers: Array<() => unknown> = [];
beforeAll(async () => {
  const ca = await CertificateAuthority.create('http1-transport-test');
  caPem = ca.certPem;
  serving = await ca.issue({ commonName: 'server', usage: 'server', ips: ['127.0.0.1'] });
});
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

/** A node https server; counts the TLS connections it accepted. */
async function httpsServer(handler: RequestListener): Promise<{ port: number; connections: () => number }> {
  const server = https.createServer({ ...serving, keepAliveTimeout: 10_000 }, handler);
  let connections = 0;
  server.on('secureConnection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });
  return { port: (server.address() as AddressInfo).port, connections: () => connections };
}

/** A bare TLS server: `onRequest` gets each connection's socket and the bytes of each request as they arrive. */
async function tlsServer(
  onData: (socket: tls.TLSSocket, data: Buffer, connection: number) => void,
): Promise<{ port: number; connections: () => number }> {
  let connections = 0;
  const sockets = new Set<tls.TLSSocket>();
  const server = tls.createServer({ ...serving }, (socket) => {
    const n = ++connections;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.on('data', (d: Buffer) => onData(socket, d, n));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => {
    for (const s of sockets) s.destroy();
    return new Promise((r) => server.close(r));
  });
  return { port: (server.address() as AddressInfo).port, connections: () => connections };
}

function transport(port: number, opts: { maxSockets?: number; maxBodyBytes?: number } = {}): Http1Transport {
  const t = new Http1Transport({ host: '127.0.0.1', port, ca: caPem, ...opts });
  closers.push(() => t.close());
  return t;
}

const post = (t: Http1Transport, body: unknown, timeoutMs = 5_000) =>
  t.request(
    'POST',
    '/apis/authorization.k8s.io/v1/subjectaccessreviews',
    { Authorization: 'Bearer t0k', 'content-type': 'application/json' },
    JSON.stringify(body),
    timeoutMs,
  );

describe('Http1Transport', () => {
  it('sends requests with their headers and body over one kept-alive connection, and reads each answer', async () => {
    const seen: Array<{ method?: string; url?: string; auth?: string; host?: string; body: string }> = [];
    const { port, connections } = await httpsServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({
          method: req.method,
          url: req.url,
          auth: req.headers.authorization,
          host: req.headers.host,
          body: Buffer.concat(chunks).toString(),
        });
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status: { allowed: seen.length % 2 === 1 }, n: seen.length }));
      });
    });
    const t = transport(port);
    for (let i = 1; i <= 5; i++) {
      const a = await post(t, { i, user: 'ünïcode' });
      expect(a.statusCode).toBe(201);
      expect(JSON.parse(a.body.toString())).toEqual({ status: { allowed: i % 2 === 1 }, n: i });
    }
    expect(connections()).toBe(1);
    expect(seen[4]).toEqual({
      method: 'POST',
      url: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      auth: 'Bearer t0k',
      host: `127.0.0.1:${port}`,
      body: JSON.stringify({ i: 5, user: 'ünïcode' }),
    });
  });

  it('opens no more than maxSockets connections; the requests beyond wait their turn and are all answered', async () => {
    let inFlight = 0;
    let most = 0;
    const { port, connections } = await httpsServer((req, res) => {
      inFlight++;
      most = Math.max(most, inFlight);
      req.resume();
      req.on('end', () =>
        setTimeout(() => {
          inFlight--;
          res.end(req.url);
        }, 5),
      );
    });
    const t = transport(port, { maxSockets: 2 });
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => t.request('GET', `/api/v1/namespaces/n${i}`, {}, undefined, 5_000)),
    );
    expect(answers.map((a) => a.body.toString())).toEqual(Array.from({ length: 12 }, (_, i) => `/api/v1/namespaces/n${i}`));
    expect(connections()).toBe(2);
    expect(most).toBe(2);
  });

  it('reads a chunked answer, and a 429 with its Retry-After', async () => {
    const { port } = await httpsServer((req, res) => {
      req.resume();
      if (req.url === '/busy') {
        res.writeHead(429, { 'retry-after': '1', 'content-type': 'application/json' });
        res.end('{"code":429}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      // No Content-Length: node sends it chunked, one chunk per write.
      res.write('{"items":[');
      res.write('"a",'.repeat(5000));
      res.end('"z"]}');
    });
    const t = transport(port);
    const a = await t.request('GET', '/list', {}, undefined, 5_000);
    expect(JSON.parse(a.body.toString()).items).toHaveLength(5001);
    expect(await t.request('GET', '/busy', {}, undefined, 5_000)).toMatchObject({ statusCode: 429, retryAfter: '1' });
  });

  it('fails an answer larger than maxBodyBytes, by its Content-Length or as its chunks arrive, and serves the next request on a new connection', async () => {
    const { port, connections } = await httpsServer((req, res) => {
      req.resume();
      if (req.url === '/chunked') {
        res.write('x'.repeat(600));
        res.end('x'.repeat(600));
      } else res.end(req.url === '/big' ? 'x'.repeat(2000) : 'ok');
    });
    const t = transport(port, { maxBodyBytes: 1000 });
    await expect(t.request('GET', '/big', {}, undefined, 5_000)).rejects.toThrow("the answer's body is larger than 1000 bytes (2000)");
    await expect(t.request('GET', '/chunked', {}, undefined, 5_000)).rejects.toThrow("the answer's body is larger than 1000 bytes");
    expect((await t.request('GET', '/small', {}, undefined, 5_000)).body.toString()).toBe('ok');
    expect(connections()).toBe(3);
  });

  it('gives up on an answer that does not come within the timeout, and closes that connection', async () => {
    const { port, connections } = await httpsServer((req, res) => {
      req.resume();
      if (req.url !== '/never') res.end('ok');
    });
    const t = transport(port);
    // A connection first: the deadline counts the handshake too, which a loaded machine may take 200 ms over.
    expect((await t.request('GET', '/soon', {}, undefined, 5_000)).body.toString()).toBe('ok');
    const t0 = performance.now();
    await expect(t.request('GET', '/never', {}, undefined, 200)).rejects.toThrow('no answer within 200 ms');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(190);
    expect((await t.request('GET', '/soon', {}, undefined, 5_000)).body.toString()).toBe('ok');
    expect(connections()).toBe(2);
  });

  it(
    'counts the wait for a connection in the timeout, and a TLS handshake that never ends frees its place in the pool',
    { timeout: 10_000 },
    async () => {
      // The first TCP connection is accepted and never answered (a hung handshake); later ones are served.
      const { port: served } = await httpsServer((req, res) => {
        req.resume();
        res.end('ok');
      });
      const held: net.Socket[] = [];
      const front = net.createServer((socket) => {
        if (held.length === 0) {
          held.push(socket);
          return;
        }
        const back = net.connect(served, '127.0.0.1');
        socket.pipe(back).pipe(socket);
        socket.on('error', () => back.destroy());
        back.on('error', () => socket.destroy());
      });
      await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
      closers.push(() => {
        for (const s of held) s.destroy();
        return new Promise((r) => front.close(r));
      });
      const port = (front.address() as AddressInfo).port;
      const t = new Http1Transport({ host: '127.0.0.1', port, ca: caPem, maxSockets: 1, connectTimeoutMs: 300 });
      closers.push(() => t.close());
      const t0 = performance.now();
      await expect(t.request('GET', '/a', {}, undefined, 100)).rejects.toThrow(
        `no answer within 100 ms (no connection to 127.0.0.1:${port} was ready)`,
      );
      expect(performance.now() - t0).toBeLessThan(1_000);
      // The hung handshake gives its place up after connectTimeoutMs: the next request gets a connection of its own.
      await expect.poll(() => t.open, { timeout: 5_000 }).toBe(0);
      expect((await t.request('GET', '/b', {}, undefined, 5_000)).body.toString()).toBe('ok');
      expect(held).toHaveLength(1);
    },
  );

  it('sends a request once more on a new connection when its kept-alive connection closes before any answer, but not twice', async () => {
    // Each connection answers its first request and closes on the second without a byte (as a server whose idle timeout just fired).
    const { port, connections } = await tlsServer((socket, data) => {
      const n = ((socket as unknown as { n?: number }).n ?? 0) + 1;
      (socket as unknown as { n?: number }).n = n;
      if (!data.includes('\r\n\r\n')) return;
      if (n === 1) socket.write(`HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok`);
      else socket.destroy();
    });
    const t = transport(port, { maxSockets: 1 });
    expect((await t.request('GET', '/a', {}, undefined, 5_000)).body.toString()).toBe('ok');
    // The second goes out on the kept-alive connection, which closes; it is sent again on a new one, which answers.
    expect((await t.request('GET', '/b', {}, undefined, 5_000)).body.toString()).toBe('ok');
    expect(connections()).toBe(2);
    // A connection that closes without answering the very first request: not a stale keep-alive, no second try.
    const { port: rude, connections: rudeConnections } = await tlsServer((socket) => socket.destroy());
    await expect(transport(rude).request('GET', '/c', {}, undefined, 5_000)).rejects.toThrow('the connection closed');
    expect(rudeConnections()).toBe(1);
  });

  it('refuses what is not an HTTP/1.1 answer, a malformed length, and an unsupported encoding, and reads an answer that ends with its connection', async () => {
    const answers: Record<string, string> = {
      '/garbage': 'SSH-2.0-OpenSSH\r\n\r\n',
      '/length': 'HTTP/1.1 200 OK\r\nContent-Length: 12abc\r\n\r\n',
      '/gzip': 'HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n',
      '/continue': 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nafter',
      '/until-close': 'HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nto the end',
    };
    const { port } = await tlsServer((socket, data) => {
      const path = data.toString('latin1').split(' ')[1]!;
      socket.write(answers[path]!);
      if (path === '/until-close') socket.end();
    });
    const t = transport(port);
    const get = (path: string) => t.request('GET', path, {}, undefined, 5_000);
    await expect(get('/garbage')).rejects.toThrow('not an HTTP/1.1 answer: "SSH-2.0-OpenSSH"');
    await expect(get('/length')).rejects.toThrow('a malformed Content-Length in the answer: "12abc"');
    await expect(get('/gzip')).rejects.toThrow('an unsupported Transfer-Encoding in the answer: "gzip"');
    // The interim answer is skipped; the extra byte after the answer closes the connection rather than frame the next.
    expect((await get('/continue')).body.toString()).toBe('afte');
    expect(await get('/until-close')).toMatchObject({ statusCode: 200, body: Buffer.from('to the end') });
  });

  it('refuses a header or path that would split the request, sending nothing', async () => {
    let requests = 0;
    const { port } = await httpsServer((req, res) => {
      requests++;
      res.end();
    });
    const t = transport(port);
    await expect(t.request('GET', '/a', { authorization: 'Bearer x\r\nX-Evil: 1' }, undefined, 5_000)).rejects.toThrow(
      'refusing the header "authorization": a name or value with a line break',
    );
    await expect(t.request('GET', '/a b', {}, undefined, 5_000)).rejects.toThrow('refusing the path "/a b"');
    await expect(t.request('GET', '/a\r\n', {}, undefined, 5_000)).rejects.toThrow('refusing the path');
    expect(requests).toBe(0);
  });

  it('says which server could not be reached, and close() fails what is in flight and every later request', async () => {
    const { port } = await httpsServer(() => undefined);
    closers
      .splice(0)
      .reverse()
      .forEach((c) => void c());
    await expect(transport(port).request('GET', '/a', {}, undefined, 5_000)).rejects.toThrow(
      `connecting to 127.0.0.1:${port}: connect ECONNREFUSED`,
    );
    const { port: silent } = await httpsServer((req) => req.resume());
    const t = transport(silent);
    const pending = t.request('GET', '/a', {}, undefined, 0);
    await new Promise((r) => setTimeout(r, 50));
    t.close(new Error('stopping'));
    await expect(pending).rejects.toThrow('stopping');
    await expect(t.request('GET', '/b', {}, undefined, 5_000)).rejects.toThrow('stopping');
    expect(t.open).toBe(0);
  });
});

describe('KubeClient over the lean transport', () => {
  it('gives the same answers and errors as over node https: the object, an ApiError with the server’s status, a retried 429', async () => {
    let busy = 1;
    const { port, connections } = await httpsServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.url === '/api/v1/namespaces/missing') {
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({ kind: 'Status', status: 'Failure', message: 'namespaces "missing" not found', reason: 'NotFound', code: 404 }),
          );
        } else if (busy-- > 0) {
          res.writeHead(429, { 'retry-after': '0' });
          res.end('{}');
        } else {
          res.writeHead(201, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ status: { allowed: true }, auth: req.headers.authorization }));
        }
      });
    });
    const client = KubeClient.fromSnapshot(
      { server: `https://127.0.0.1:${port}`, tls: { ca: caPem }, headers: { authorization: 'Bearer abc' } },
      () => ({ authorization: 'Bearer abc' }),
      { maxSockets: 2, transport: 'http1' },
    );
    closers.push(() => client.close());
    expect(await client.create('/apis/authorization.k8s.io/v1/subjectaccessreviews', { spec: {} })).toEqual({
      status: { allowed: true },
      auth: 'Bearer abc',
    });
    const err = await client.get('/api/v1/namespaces/missing').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).message).toBe('GET /api/v1/namespaces/missing: 404 NotFound namespaces "missing" not found');
    expect(connections()).toBe(1);
    client.close('done');
    await expect(client.get('/api/v1/namespaces/x')).rejects.toThrow('GET /api/v1/namespaces/x: done');
  });
});
