// Test-only: real HTTPS servers on 127.0.0.1, with a certificate authority of their own, for the
// tests of HTTP clients (kube/client.ts). Register `afterEach(servers.close)`.
import type { RequestListener } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { KubeClient } from './client.js';
import { CertificateAuthority } from './pki.js';

export interface LocalHttpsServers {
  /** The CA that signed the servers' certificate (PEM), for the client to trust. */
  caPem: string;
  /** Starts a server; `connections` counts the TLS connections it accepted. */
  serve(handler: RequestListener): Promise<{ port: number; connections: () => number }>;
  /** A KubeClient of the server on `port`, trusting the servers' CA, with no credentials. */
  client(port: number): KubeClient;
  /** Stops every server started so far. */
  close(): Promise<void>;
}

export async function localHttpsServers(name: string): Promise<LocalHttpsServers> {
  const ca = await CertificateAuthority.create(name);
  const serving = await ca.issue({ commonName: 'server', usage: 'server', ips: ['127.0.0.1'] });
  const started: https.Server[] = [];
  return {
    caPem: ca.certPem,
    async serve(handler) {
      const server = https.createServer({ ...serving, keepAliveTimeout: 10_000 }, handler);
      started.push(server);
      let connections = 0;
      server.on('secureConnection', () => connections++);
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      return { port: (server.address() as AddressInfo).port, connections: () => connections };
    },
    client(port) {
      return KubeClient.fromConnection({
        kind: 'direct',
        server: `https://127.0.0.1:${port}`,
        tls: { ca: Buffer.from(ca.certPem), rejectUnauthorized: true },
        headers: () => ({}),
        source: 'test',
      });
    },
    async close() {
      for (const s of started.splice(0)) {
        s.closeAllConnections();
        await new Promise((r) => s.close(r));
      }
    },
  };
}
