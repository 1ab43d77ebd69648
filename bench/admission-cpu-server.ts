// The review floor's server (bench/hnc-process.ts, ReviewFloorServer), bundled and run in a process of its own (or, with
// --thread, in a worker thread of it, as the manager serves): HNC's webhook server and handlers over
// a wide tree, answering the driver's questions about what the reviews cost.
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import tls from 'node:tls';
import { parseArgs } from 'node:util';
import { isMainThread, parentPort, Worker } from 'node:worker_threads';
import { PropagationMode } from '../core/api/constants.js';
import { Hierarchy } from '../core/hierarchy/hierarchy.js';
import { HierarchyPolicy } from '../core/hierarchy/policy.js';
import { createLogger } from '../kube/log.js';
import { AdmissionHandlers } from '../webhooks/handlers.js';
import { PropagationIndex } from '../webhooks/propagation-index.js';
import { ALLOW_WHILE_STARTING, routeAdmission } from '../webhooks/routes.js';
import { WebhookServer } from '../webhooks/server.js';

export const ROOT = 'bench-root';
export const child = (i: number) => `bench-c-${i}`;
export const depthLabel = (ns: string) => `${ns}.tree.hnc.x-k8s.io/depth`;
export const SOURCE = 'bench-root-0';

export interface Usage {
  /** The process's CPU (in --thread mode, the worker's and an idle main thread's). */
  cpuMs: number;
  /** The serving thread's event loop busy (performance.eventLoopUtilization): its own time, waiting for a core included. */
  busyMs: number;
  loop: { p50: number; p99: number; max: number };
  gc: { maxMs: number; totalMs: number; count: number };
  reviews: number;
}

/**
 * What serves: `node`, HNC's WebhookServer over node:https (the default); `fixed`, a bare node:tls server that only
 * finds each request's end (its Content-Length) and answers one fixed allowed review: the floor of
 * TLS, the kernel and the wake-ups, with no HTTP layer and no handler.
 */
export type HttpMode = 'node' | 'fixed';

export type ToServer = { t: 'start'; cert: string; key: string; size: number; http?: HttpMode } | { t: 'usage' };
export type FromServer = { t: 'port'; port: number } | { t: 'usage'; usage: Usage };

/** The serving side: the server and handlers over a wide tree, answering usage questions. */
async function serve(post: (m: FromServer) => void, on: (f: (m: ToServer) => void) => void): Promise<void> {
  const RESOLUTION_MS = 5;
  const loop = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  loop.enable();
  let gc = { maxMs: 0, totalMs: 0, count: 0 };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      gc = { maxMs: Math.max(gc.maxMs, e.duration), totalMs: gc.totalMs + e.duration, count: gc.count + 1 };
  }).observe({ entryTypes: ['gc'] });
  let reviews = 0;
  let cpu0 = process.cpuUsage();
  let elu0 = performance.eventLoopUtilization();
  on((m) => {
    if (m.t === 'usage') {
      const c = process.cpuUsage(cpu0);
      const ms = (ns: number) => Math.max(0, ns / 1e6 - RESOLUTION_MS);
      const elu = performance.eventLoopUtilization(elu0);
      elu0 = performance.eventLoopUtilization();
      post({
        t: 'usage',
        usage: {
          busyMs: elu.active,
          cpuMs: (c.user + c.system) / 1000,
          loop: { p50: ms(loop.percentile(50)), p99: ms(loop.percentile(99)), max: ms(loop.max) },
          gc,
          reviews,
        },
      });
      cpu0 = process.cpuUsage();
      loop.reset();
      gc = { maxMs: 0, totalMs: 0, count: 0 };
      reviews = 0;
      return;
    }
    if (m.http === 'fixed') {
      const port = fixedServer(m.cert, m.key, () => reviews++);
      void port.then((p) => post({ t: 'port', port: p }));
      return;
    }
    const h = new Hierarchy(new HierarchyPolicy());
    const facts = (labels: Record<string, string>) => ({ labels, annotations: {}, deleting: false });
    h.setNamespace(ROOT, facts({ [depthLabel(ROOT)]: '0' }));
    for (let i = 1; i < m.size; i++) {
      const ns = child(i);
      h.setNamespace(ns, facts({ [depthLabel(ns)]: '0', [depthLabel(ROOT)]: '1' }));
      h.setHierarchy(ns, { parent: ROOT, allowCascadingDeletion: false, labels: [], annotations: [], deleting: false });
    }
    const propagation = new PropagationIndex(() => h);
    propagation.setTypes([{ group: 'rbac.authorization.k8s.io', resource: 'roles', kind: 'Role', mode: PropagationMode.Propagate }]);
    propagation.apply([{ group: 'rbac.authorization.k8s.io', resource: 'roles', namespace: ROOT, name: SOURCE, present: true }]);
    const turn = () => new Promise<void>((r) => setImmediate(r));
    const handlers = new AdmissionHandlers({
      hierarchy: () => h,
      manager: { namespace: 'hnc-system' },
      propagation: propagation.view,
      lookups: {
        userCan: () => turn().then(() => true),
        namespaceExists: () => turn().then(() => true),
        resolver: () => Promise.reject(new Error('no discovery in this benchmark')),
      },
    });
    const server = routeAdmission(
      new WebhookServer({
        host: '127.0.0.1',
        port: 0,
        cert: m.cert,
        key: m.key,
        isReady: () => true,
        allowWhileStarting: ALLOW_WHILE_STARTING,
        logger: createLogger({ level: 'info', format: 'json', destination: { write: () => undefined } }),
        onReview: () => reviews++,
      }),
      handlers,
    );
    void server.start().then((port) => post({ t: 'port', port }));
  });
}

/** The `fixed` mode: each request read to its Content-Length, then one fixed answer in one write. */
function fixedServer(cert: string, key: string, counted: () => void): Promise<number> {
  const body = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'fixed', allowed: true } });
  const answer = `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  const server = tls.createServer({ cert, key, ALPNProtocols: ['http/1.1'] }, (socket) => {
    let buf: Buffer = Buffer.alloc(0);
    socket.setNoDelay(true);
    socket.on('data', (d: Buffer) => {
      buf = buf.length ? Buffer.concat([buf, d]) : d;
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const m = /\r\ncontent-length: *(\d+)/i.exec(buf.subarray(0, end).toString('latin1'));
        const total = end + 4 + Number(m?.[1] ?? 0);
        if (buf.length < total) return;
        buf = buf.subarray(total);
        counted();
        socket.write(answer);
      }
    });
    socket.on('error', () => socket.destroy());
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

if (!isMainThread) {
  void serve(
    (m) => parentPort!.postMessage(m),
    (f) => parentPort!.on('message', f),
  );
} else if (process.send) {
  const { values: flags } = parseArgs({ options: { thread: { type: 'boolean', default: false }, young: { type: 'string' } } });
  if (flags.thread) {
    const young = flags.young ? { resourceLimits: { maxYoungGenerationSizeMb: Number(flags.young) } } : {};
    const w = new Worker(new URL(import.meta.url), { ...young, name: 'hnc-admission' } as never);
    w.on('message', (m: FromServer) => process.send!(m));
    process.on('message', (m: ToServer) => w.postMessage(m));
  } else {
    void serve(
      (m) => process.send!(m),
      (f) => process.on('message', f),
    );
  }
  process.on('disconnect', () => process.exit(0));
}
