// A TCP proxy that spreads connections over HNC replicas' webhook ports, in turn: what a Service
// does in a cluster, for the tests that run several replicas as processes or in-process.
import net from 'node:net';

export interface RoundRobin {
  port: number;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1; each new connection goes to the next of `backends` (read at connection time: it may grow). */
export async function roundRobinProxy(backends: readonly number[]): Promise<RoundRobin> {
  let next = 0;
  const open = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(backends[next++ % backends.length]!, '127.0.0.1');
    for (const s of [client, upstream]) {
      open.add(s);
      s.on('close', () => open.delete(s));
    }
    client.pipe(upstream).pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close);
    upstream.on('error', close);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    // The API server keeps its connections alive: closed here, or the server would wait for them.
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        for (const s of open) s.destroy();
      }),
  };
}
