// The client's answer to a 429 with Retry-After, against a real HTTPS server on 127.0.0.1.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, type KubeClient } from './client.js';
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
  const client = servers.client(port);
  return { client, requests: () => requests };
}

/** Polls a condition each turn of the event loop until it holds. */
async function eventuallyTrue(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise<void>((resolve) => setImmediate(resolve));
}

describe('KubeClient and 429 Too Many Requests', () => {
  it('sends the request again after Retry-After, as client-go does, and returns the answer', async () => {
    const { client, requests } = await busyServer(2, '0');
    expect(await client.get('/api/v1/namespaces/a')).toEqual({ ok: 3 });
    expect(requests()).toBe(3);
  });

  it('gives up after a few tries with the server’s own error, saying how many', async () => {
    const { client, requests } = await busyServer(100, '0');
    const err = await client.get('/api/v1/namespaces/a').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe(429);
    expect((err as ApiError).message).toContain('storage is (re)initializing (the last of 6 tries)');
    expect(requests()).toBe(6);
  });

  it('waits the time asked before sending again', async () => {
    const { client, requests } = await busyServer(1, '1');
    const start = Date.now();
    expect(await client.get('/api/v1/namespaces/a')).toEqual({ ok: 2 });
    expect(Date.now() - start).toBeGreaterThanOrEqual(1000);
    expect(requests()).toBe(2);
  });

  it('does not retry past the caller’s timeout', async () => {
    const { client, requests } = await busyServer(1, '1');
    await expect(client.request('GET', '/api/v1/namespaces/a', { timeoutMs: 500 })).rejects.toSatisfy(
      (e) => e instanceof ApiError && e.code === 429 && e.retries === 0,
    );
    expect(requests()).toBe(1);
  });

  it('retries with no timeout at all (0, as --request-timeout=0)', async () => {
    const { client, requests } = await busyServer(1, '0');
    expect(await client.request('GET', '/api/v1/namespaces/a', { timeoutMs: 0 })).toEqual({ ok: 2 });
    expect(requests()).toBe(2);
  });

  it('ends a wait for a retry when the client is closed', async () => {
    const { client, requests } = await busyServer(1, '2');
    const answer = client.get('/api/v1/namespaces/a').catch((e: unknown) => e);
    await eventuallyTrue(() => requests() === 1);
    const start = Date.now();
    client.close('stopping');
    expect(String(await answer)).toContain('stopping');
    expect(Date.now() - start).toBeLessThan(1000);
    expect(requests()).toBe(1);
  });

  it('opens a watch again after a 429 with Retry-After, and hands on the last answer', async () => {
    const { client, requests } = await busyServer(2, '0');
    const { res } = await client.streamRetrying('/api/v1/namespaces', { watch: 'true' });
    let body = '';
    for await (const chunk of res) body += String(chunk);
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(body)).toEqual({ ok: 3 });
    expect(requests()).toBe(3);
    const refused = await busyServer(1);
    const { res: last } = await refused.client.streamRetrying('/api/v1/namespaces', { watch: 'true' });
    last.resume();
    expect(last.statusCode).toBe(429);
    expect(refused.requests()).toBe(1);
  });

  it('does not retry on an empty Retry-After', async () => {
    const { client, requests } = await busyServer(1, '');
    await expect(client.get('/api/v1/namespaces/a')).rejects.toSatisfy((e) => e instanceof ApiError && e.code === 429);
    expect(requests()).toBe(1);
  });

  it('does not retry a 429 without Retry-After', async () => {
    const { client, requests } = await busyServer(1);
    await expect(client.get('/api/v1/namespaces/a')).rejects.toSatisfy((e) => e instanceof ApiError && e.code === 429);
    expect(requests()).toBe(1);
  });
});
