// Kept-alive connections to the API server across idle timeouts: the lookups' client (webhooks/lookups.ts)
// must not fail a review's call because a server closed an idle connection.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CallOptions } from './client.js';
import { localHttpsServers, type LocalHttpsServers } from './testing-https.js';

vi.setConfig({ testTimeout: 20_000 });

let servers: LocalHttpsServers;
beforeAll(async () => {
  servers = await localHttpsServers('keep-alive-test');
});
afterEach(() => servers.close());
afterAll(() => servers.close());

/** As the lookups' client is set up (webhooks/lookups.ts, LOOKUP_CALLS), with its idle timeout given. */
const calls = (idleSocketMs = 30_000): CallOptions => ({ timeoutMs: 2_000, idleSocketMs, retryClosedConnection: true });

/**
 * Answers {} and keeps the connection alive without a Keep-Alive hint (an explicit Connection
 * header stops node adding one): the API server, a Go server, sends none, and node's client would
 * otherwise stop reusing a connection before the hinted timeout on its own.
 */
function answer(_req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json', connection: 'keep-alive' });
  res.end('{}');
}

describe('KubeClient over kept-alive connections', () => {
  it('answers a request after the server closed its idle connection (the server’s idle timeout shorter than ours)', async () => {
    const server = await servers.serve(answer, { keepAliveTimeoutMs: 200 });
    const client = servers.client(server.port).withOwnConnections(2, calls());
    await expect(client.get('/a')).resolves.toEqual({});
    // Idle past the server's timeout: it has closed the connection (the client may or may not have seen it yet).
    await vi.waitFor(() => expect(server.closed()).toBe(1), { timeout: 5_000, interval: 5 });
    await expect(client.get('/b')).resolves.toEqual({});
    expect(server.connections()).toBe(2);
    client.close();
  });

  it('sends a request once more, on a new connection, when the server closes the reused one under it', async () => {
    const seen = new Map<Socket, number>();
    let requests = 0;
    // The second request on a connection finds it closed: as the API server closing an idle
    // connection just as a request goes out on it.
    const server = await servers.serve((req, res) => {
      requests++;
      const n = (seen.get(req.socket) ?? 0) + 1;
      seen.set(req.socket, n);
      if (n === 2) req.socket.destroy();
      else answer(req, res);
    });
    const client = servers.client(server.port).withOwnConnections(1, calls());
    await expect(client.get('/a')).resolves.toEqual({});
    await expect(client.create('/b', { kind: 'SubjectAccessReview' })).resolves.toEqual({});
    expect({ requests, connections: server.connections() }).toEqual({ requests: 3, connections: 2 });
    client.close();

    // Without the retry (the controller's clients), the same close fails the request.
    const plain = servers.client(server.port).withOwnConnections(1);
    await expect(plain.get('/a')).resolves.toEqual({});
    await expect(plain.get('/b')).rejects.toThrow(/^GET \/b: /);
    plain.close();
  });

  it('closes its own idle connections before a server that keeps them longer, and answers the next request on a new one', async () => {
    const server = await servers.serve(answer, { keepAliveTimeoutMs: 60_000 });
    const client = servers.client(server.port).withOwnConnections(2, calls(100));
    await expect(client.get('/a')).resolves.toEqual({});
    // Closed by the client: the server would have kept it a minute.
    await vi.waitFor(() => expect(server.closed()).toBe(1), { timeout: 5_000, interval: 5 });
    await expect(client.get('/b')).resolves.toEqual({});
    expect(server.connections()).toBe(2);
    client.close();
  });
});

describe('KubeClient against a server that stops answering', () => {
  it('gives up on a request whose TLS handshake never completes, within its timeout, and counts it as no answer', async () => {
    // A server that accepts connections but never speaks: as one behind a firewall dropping its
    // traffic after the TCP handshake, or frozen (kube/reachability.ts).
    const sockets: Socket[] = [];
    const silent = createServer((s) => void sockets.push(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const client = servers.client((silent.address() as AddressInfo).port);
    const t0 = performance.now();
    await expect(client.request('GET', '/version', { timeoutMs: 300 })).rejects.toThrow('GET /version: no answer within 300 ms');
    expect(performance.now() - t0).toBeLessThan(2_000);
    expect(client.reachability.failing).toBe(true);
    client.close();
    for (const s of sockets) s.destroy();
    await new Promise((r) => silent.close(r));
  });
});
