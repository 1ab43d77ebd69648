// Plain HTTP endpoints for the kubelet and Prometheus: /healthz (the process answers), /readyz
// (caches synced, webhooks serving), /metrics.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from '../kube/metrics.js';

export interface ProbeRoutes {
  ready?: () => boolean;
  registry?: Registry;
}

/** Parses Go-style listen addresses: ":8081", "127.0.0.1:0", "0". Empty means disabled. */
export function parseAddress(addr: string): { host: string; port: number } | undefined {
  if (addr === '' || addr === '0') return undefined;
  const i = addr.lastIndexOf(':');
  // No host (":8081"): every address, IPv6 and IPv4 alike.
  const host = i <= 0 ? '' : addr.slice(0, i).replace(/^\[(.*)\]$/, '$1');
  const port = Number(i < 0 ? addr : addr.slice(i + 1));
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`not a listen address: ${JSON.stringify(addr)}`);
  return { host, port };
}

export async function serveProbes(addr: string, routes: ProbeRoutes): Promise<{ port: number; close(): Promise<void> } | undefined> {
  const at = parseAddress(addr);
  if (!at) return undefined;
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path === '/healthz' || path === '/livez') return void res.end('ok');
    if (path === '/readyz' && routes.ready) {
      const ok = routes.ready();
      res.statusCode = ok ? 200 : 503;
      return void res.end(ok ? 'ok' : 'not ready: caches not synced yet');
    }
    if (path === '/metrics' && routes.registry) {
      const registry = routes.registry;
      void registry.metrics().then((body) => {
        res.setHeader('content-type', registry.contentType);
        res.end(body);
      });
      return;
    }
    res.statusCode = 404;
    res.end('not found');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if (at.host) server.listen(at.port, at.host, () => resolve());
    else server.listen(at.port, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
