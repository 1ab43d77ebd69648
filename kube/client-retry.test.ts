// The client's answer to a 429 with Retry-After, against a real HTTPS server on 127.0.0.1.
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, KubeClient } from './client.js';
import { CertificateAuthority } from './pki.js';

let ca: CertificateAuthority;
let serving: { cert: string; key: string };
beforeAll(async () => {
  ca = await CertificateAuthority.create('client-retry-test');
  serving = await ca.issue({ commonName: 'server', usage: 'server', ips: ['127.0.0.1'] });
});

const servers: https.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A server that answers the first `busy` requests 429 (with `retryAfter` if given), then 200; counts them. */
async function busyServer(busy: number, retryAfter?: string): Promise<{ client: KubeClient; requests: () => number }> {
  let requests = 0;
  const server = https.createServer(serving, (req, res) => {
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
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const client = KubeClient.fromConnection({
    kind: 'direct',
    server: `https://127.0.0.1:${port}`,
    tls: { ca: Buffer.from(ca.certPem), rejectUnauthorized: true },
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
