import type { RequestListener } from 'node:http';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CertificateAuthority } from '../kube/pki.js';
import { localHttpsServers, type LocalHttpsServers } from '../kube/testing-https.js';
import { Http1Pool } from './http1-client.js';

let servers: LocalHttpsServers;
beforeAll(async () => {
  servers = await localHttpsServers('http1-client-test');
});
afterEach(() => servers.close());
const serve = (handler: RequestListener) => servers.serve(handler);

/** Echoes the path and the body it read, with a Content-Length. */
const echo: RequestListener = (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.from(
      JSON.stringify({ path: req.url, method: req.method, type: req.headers['content-type'], got: Buffer.concat(chunks).toString() }),
    );
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  });
};

describe('Http1Pool', () => {
  it('posts and reads each answer, over one kept-alive connection for requests one after another', async () => {
    const { port, connections } = await serve(echo);
    const pool = new Http1Pool('127.0.0.1', port, servers.caPem, 4);
    for (let i = 0; i < 3; i++) {
      const a = await pool.post(`/p${i}`, `{"i":${i}}`);
      expect(a.status).toBe(200);
      expect(JSON.parse(a.body.toString())).toEqual({ path: `/p${i}`, method: 'POST', type: 'application/json', got: `{"i":${i}}` });
      expect(a.fresh).toBe(i === 0);
      expect(a.waitMs).toBeGreaterThanOrEqual(0);
    }
    expect(connections()).toBe(1);
    pool.close();
  });

  it('opens at most maxSockets connections; the requests beyond wait for one and are all answered', async () => {
    const { port, connections } = await serve((req, res) => setTimeout(() => echo(req, res), 20));
    const pool = new Http1Pool('127.0.0.1', port, servers.caPem, 2);
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => pool.post('/x', String(i))));
    expect(answers.map((a) => (JSON.parse(a.body.toString()) as { got: string }).got).sort()).toEqual(['0', '1', '2', '3', '4', '5']);
    expect(connections()).toBe(2);
    expect(answers.filter((a) => a.fresh)).toHaveLength(2);
    // The last ones waited for a connection while the first ones were answered (20 ms each).
    expect(Math.max(...answers.map((a) => a.waitMs))).toBeGreaterThanOrEqual(15);
    pool.close();
  });

  it('reads a chunked answer, and opens a new connection after one answered with Connection: close', async () => {
    const { port, connections } = await serve((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(400, { 'content-type': 'text/plain', ...(req.url === '/close' ? { connection: 'close' } : {}) });
        res.write('no ');
        res.end('thanks\n');
      });
    });
    const pool = new Http1Pool('127.0.0.1', port, servers.caPem, 1);
    const a = await pool.post('/close', '{}');
    expect(a.status).toBe(400);
    expect(a.body.toString()).toBe('no thanks\n');
    const b = await pool.post('/again', '{}');
    expect(b.body.toString()).toBe('no thanks\n');
    expect(b.fresh).toBe(true);
    expect(connections()).toBe(2);
    pool.close();
  });

  it('fails a request whose connection is cut before its answer, and keeps serving the next on a new one', async () => {
    const { port } = await serve((req, res) => {
      if (req.url === '/cut') return req.socket.destroy();
      echo(req, res);
    });
    const pool = new Http1Pool('127.0.0.1', port, servers.caPem, 1);
    await expect(pool.post('/cut', '{}')).rejects.toThrow(/closed|ECONNRESET|socket/);
    expect((await pool.post('/fine', '{}')).status).toBe(200);
    pool.close();
  });

  it('fails a request it cannot connect for', async () => {
    const { port } = await serve(echo);
    const other = await CertificateAuthority.create('not-the-servers-ca');
    const pool = new Http1Pool('127.0.0.1', port, other.certPem, 1);
    await expect(pool.post('/x', '{}')).rejects.toThrow();
    pool.close();
  });
});
