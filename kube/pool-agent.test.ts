// The client's agent names its connection pools once (kube/client.ts, PoolAgent): the same names
// as Node's own agent, a new name when a TLS option changes, and connections still reused.
import https from 'node:https';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PoolAgent } from './client.js';
import { localHttpsServers, type LocalHttpsServers } from './testing-https.js';

let servers: LocalHttpsServers;
beforeAll(async () => {
  servers = await localHttpsServers('pool-agent-test');
});
afterEach(() => servers.close());

describe('PoolAgent.getName', () => {
  const ca = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
  const key = Buffer.from('-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n');

  it("gives Node's own name, again and again", () => {
    const options = { host: '127.0.0.1', port: 6443, ca, cert: ca, key, rejectUnauthorized: true, servername: 'kubernetes' };
    const node = new https.Agent().getName(options);
    const agent = new PoolAgent();
    expect(agent.getName(options)).toBe(node);
    expect(agent.getName({ ...options })).toBe(node);
    expect(node).toContain('MIIE'); // the key is part of it: a pool per identity
  });

  it('gives a new name when the host, port or a TLS option differs', () => {
    const agent = new PoolAgent();
    const base = { host: '127.0.0.1', port: 6443, ca, rejectUnauthorized: true };
    const first = agent.getName(base);
    for (const other of [
      { ...base, port: 6444 },
      { ...base, host: '127.0.0.2' },
      { ...base, ca: Buffer.from('-----BEGIN CERTIFICATE-----\nOTHER\n-----END CERTIFICATE-----\n') },
      { ...base, rejectUnauthorized: false },
      { ...base, key },
    ]) {
      const name = agent.getName(other);
      expect(name).toBe(new https.Agent().getName(other));
      expect(name).not.toBe(first);
    }
    expect(agent.getName(base)).toBe(first);
  });
});

describe('KubeClient over PoolAgent', () => {
  it('reuses one connection for requests one after another', async () => {
    const { port, connections } = await servers.serve((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      });
    });
    const client = servers.client(port);
    for (let i = 0; i < 5; i++) expect(await client.get('/api/v1/namespaces')).toEqual({ ok: true });
    expect(connections()).toBe(1);
  });
});
