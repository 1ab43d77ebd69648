// The client and credentials the API server rejects, against a real HTTPS server on 127.0.0.1:
// after a 401 the credentials are read anew at once (a token rotated on disk), and every answer's
// status reaches the client's CredentialRejections, shared with its withOwnConnections() copies.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, KubeClient } from './client.js';
import { localHttpsServers, type LocalHttpsServers } from './testing-https.js';

let servers: LocalHttpsServers;
beforeAll(async () => {
  servers = await localHttpsServers('client-credentials-test');
});
afterEach(() => servers.close());

/** A server that accepts only `Bearer <valid>`, and a client whose token the test sets, recording each read. */
async function tokenServer(valid: () => string) {
  const { port } = await servers.serve((req, res) => {
    req.resume();
    const ok = req.headers.authorization === `Bearer ${valid()}`;
    res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
    res.end(JSON.stringify(ok ? { ok: true } : { kind: 'Status', status: 'Failure', reason: 'Unauthorized', code: 401 }));
  });
  let token = 'old';
  const reads: Array<boolean | undefined> = [];
  const client = KubeClient.fromConnection({
    kind: 'direct',
    server: `https://127.0.0.1:${port}`,
    tls: { ca: Buffer.from(servers.caPem), rejectUnauthorized: true },
    headers: (rejected) => {
      reads.push(rejected);
      return { Authorization: `Bearer ${token}` };
    },
    source: 'test',
  });
  return { client, reads, setToken: (t: string) => (token = t) };
}

const status = (p: Promise<unknown>) =>
  p.then(
    () => 200,
    (e: unknown) => (e instanceof ApiError ? e.code : Promise.reject(e)),
  );

describe('KubeClient and rejected credentials', () => {
  it('reads a rotated token at once after a 401, not a minute later, and is trusted again', async () => {
    const { client, reads, setToken } = await tokenServer(() => 'new');
    expect(await status(client.get('/api/v1/namespaces'))).toBe(401);
    expect(client.credentialRejections.suspect).toBe(true);
    setToken('new'); // the kubelet wrote the new token
    expect(await status(client.get('/api/v1/namespaces'))).toBe(200);
    expect(reads.slice(1)).toEqual([true]); // the first read was the client's own, at creation
    expect(client.credentialRejections.suspect).toBe(false);
  });

  it('reads them anew at most once a second while rejected', async () => {
    const { client, reads } = await tokenServer(() => 'never');
    for (let i = 0; i < 5; i++) expect(await status(client.get('/api/v1/namespaces'))).toBe(401);
    expect(reads.filter((r) => r === true)).toHaveLength(1);
  });

  it('counts the 401s of watches and of its withOwnConnections() copies with its own', async () => {
    const { client } = await tokenServer(() => 'never');
    const own = client.withOwnConnections(2);
    expect(own.credentialRejections).toBe(client.credentialRejections);
    const { res } = await own.stream('/api/v1/namespaces', { watch: true });
    expect(res.statusCode).toBe(401);
    res.resume();
    expect(client.credentialRejections.suspect).toBe(true);
  });

  it('a copy for another thread (fromSnapshot) keeps a verdict of its own', async () => {
    const { client } = await tokenServer(() => 'never');
    const copy = KubeClient.fromSnapshot(client.snapshot(), () => undefined);
    expect(copy.credentialRejections).not.toBe(client.credentialRejections);
  });
});
