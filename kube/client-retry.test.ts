// The client's answer to a 429 with Retry-After, against a real HTTPS server on 127.0.0.1.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, KubeClient } from './client.js';
import { localHttpsServers, type LocalHttpsServers } from './testing-https.js';

let servers: LocalHttpsServers;
beforeAll(async () => {
  servers = await localHttpsServers('client-retry-test');
});
afterEach(() => servers.close());

/** A server that answers the first `busy` requests 429 (with `retryAfter` if given), then 200; counts them. */
async function busyServer(busy: number, retryAfter?: string): Promise<{ client: KubeClient; requests: () => number }> {
  let requests = 0;
  const { port } = await servers.serve((req, res) => {
    req.resume();
    req.on('end', () => {
      requests++;
      if (requests <= busy) {
        res.writeHead(429, { 'content-type': 'application/json', ...(retryAfter !== undefined ? { 'retry-after': retryAfter } : {}) });
        res.end(
          JSON.stringify({
            kind: 'Status',
            status: 'Failure',
            message: 'storage is (re)initializing',
            reason: 'TooManyRequests',
            code: 429,
          }),
        );
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: requests }));
      }
    });
  });
  const client = KubeClient.fromConnection({
    kind: 'direct',
    server: `https://127.0.0.1:${port}`,
    tls: { ca: Buffer.from(servers.caPem), rejectUnauthorized: true },
    headers: () => ({}),
    source: 'test',
  });
  return { client, requests: () => requests };
}

describe('KubeClient and 429 Too Many Requests', () => {
  it('sends the request again after Retry-After, as client-go does, and returns the answer', async () => {
    const { client, requests } = await busyServer(2, '0');
    expect(await client.get('/api/v1/namespaces/a')).toEqual({ ok: 3 });
    expect(requests()).toBe(3);
  });

  it('gives up after a few tries with the server’s own error', async () => {
    const { client, requests } = await busyServer(100, '0');
    await expect(client.get('/api/v1/namespaces/a')).rejects.toSatisfy((e) => e instanceof ApiError && e.code === 429);
    expect(requests()).toBe(6);
  });

  it('does not retry a 429 without Retry-After', async () => {
    const { client, requests } = await busyServer(1);
    await expect(client.get('/api/v1/namespaces/a')).rejects.toSatisfy((e) => e instanceof ApiError && e.code === 429);
    expect(requests()).toBe(1);
  });
});
