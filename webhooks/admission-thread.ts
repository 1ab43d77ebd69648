// Serves the admission webhooks from a worker thread (webhooks/admission-worker.ts): its own event
// loop and heap, so a review never waits for the main thread's reconciles, TLS writes or garbage
// collection (docs/webhooks.md, "The admission thread"). This is the main thread's side: it starts
// the worker, sends it what only the main thread knows (propagated types and sources, certificate
// renewals, credentials), decides the relayed HRQ reviews, records the worker's reviews in the
// main /metrics registry, re-logs its lines, and stops it. A worker that dies is fatal (onFatal):
// a webhook server that silently stopped answering would refuse every guarded change.
import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import type { Decision } from '../core/validation/decision.js';
import { Webhook } from '../core/api/constants.js';
import type { KubeClient } from '../kube/client.js';
import type { Logger } from '../kube/log.js';
import type { Metrics } from '../kube/metrics.js';
import type { AdmissionWorkerData, FromWorker, ThreadDelay, ToWorker } from './admission-protocol.js';
import type { IndexedType, SourceChange } from './propagation-index.js';
import type { AdmissionRequest } from './review.js';

export interface AdmissionThreadOptions extends Omit<AdmissionWorkerData, 'client' | 'relayed' | 'logLevel'> {
  client: KubeClient;
  /** Reviews of these paths are decided here, on the main thread (the HRQ webhooks). */
  relayed?: ReadonlyMap<string, (review: AdmissionRequest) => Decision | Promise<Decision>>;
  logger: Logger;
  metrics?: Metrics;
  /** A review reached the reachability probe's path. */
  onProbe?: () => void;
  /** The worker died or failed: the caller ends the process (its liveness) rather than run without webhooks. */
  onFatal: (err: Error) => void;
}

/** How often the worker gets the credentials anew (a rotated service-account token). */
const CREDENTIALS_EVERY_MS = 30_000;

const LEVELS: Record<number, 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal'> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
};

/**
 * The worker's entry file beside this module, with this module's extension: the compiled image's
 * .js, the benchmark bundle's .mjs (built beside it, bench/hnc-process.ts), or .ts under tsx and
 * vitest, where the worker first registers tsx's loader (a worker does not inherit a loader
 * registered by --import, and node 20 cannot load TypeScript by itself).
 */
function startWorker(data: AdmissionWorkerData): Worker {
  const here = import.meta.url;
  const ext = /\.[cm]?[jt]s$/.exec(new URL(here).pathname)?.[0] ?? '.js';
  const entry = new URL(`./admission-worker${ext}`, here);
  const opts = { workerData: data, name: 'hnc-admission' };
  if (!ext.endsWith('ts')) return new Worker(entry, opts);
  const tsx = pathToFileURL(createRequire(here).resolve('tsx/esm/api')).href.replace(/\.cjs$/, '.mjs');
  const boot = `import(${JSON.stringify(tsx)}).then((t) => { t.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(boot, { ...opts, eval: true });
}

export class AdmissionThread {
  private readonly worker: Worker;
  private isSynced = false;
  private stopping = false;
  private exited = false;
  private stopped?: () => void;
  private pendingSources: SourceChange[] = [];
  private readonly loopAsks = new Map<number, (d: ThreadDelay | undefined) => void>();
  private readonly flushes = new Map<number, () => void>();
  private nextAsk = 1;
  private readonly credentialTimer: NodeJS.Timeout;
  /** The port the worker listens on. */
  readonly port: Promise<number>;
  private markSynced!: () => void;
  /** Resolves once the worker's caches have listed what the webhooks decide from. */
  readonly whenSynced = new Promise<void>((resolve) => (this.markSynced = resolve));

  constructor(private readonly opts: AdmissionThreadOptions) {
    const { client, relayed, logger, metrics, onProbe, onFatal, ...rest } = opts;
    this.worker = startWorker({ ...rest, client: client.snapshot(), relayed: [...(relayed?.keys() ?? [])], logLevel: logger.level });
    let listening: (port: number) => void;
    let failed: (err: Error) => void;
    this.port = new Promise<number>((resolve, reject) => {
      listening = resolve;
      failed = reject;
    });
    let started = false;
    // The first webhook of a path names it (the namespaces validator, not the excluded-namespaces one on the same path).
    const webhookName = new Map<string, string>();
    for (const w of Object.values(Webhook)) if (!webhookName.has(w.path)) webhookName.set(w.path, w.name);
    this.worker.on('message', (m: FromWorker) => {
      switch (m.t) {
        case 'listening':
          started = true;
          listening(m.port);
          break;
        case 'synced':
          this.isSynced = true;
          this.markSynced();
          break;
        case 'probe':
          onProbe?.();
          break;
        case 'batch':
          for (const [path, ms, denied] of m.records) {
            const webhook = webhookName.get(path) ?? path;
            metrics?.webhookSeconds.observe({ webhook }, ms / 1000);
            if (denied !== null) metrics?.webhookDenials.inc({ webhook, reason: denied });
          }
          for (const line of m.lines) this.relog(line);
          if (m.id !== undefined) this.flushes.get(m.id)?.();
          this.flushes.delete(m.id ?? -1);
          break;
        case 'relay':
          void this.decide(m.id, m.path, m.review);
          break;
        case 'loop':
          this.loopAsks.get(m.id)?.(m.delay);
          this.loopAsks.delete(m.id);
          break;
        case 'stopped':
          this.stopped?.();
          break;
      }
    });
    const fatal = (err: Error) => {
      if (this.stopping) return;
      clearInterval(this.credentialTimer);
      if (!started) return failed(new Error(`the admission worker could not start: ${err.message}`, { cause: err }));
      logger.fatal({ err: err.message, stack: err.stack, thread: 'admission' }, 'the admission webhook thread failed');
      onFatal(err);
    };
    // The worker sends its reviews in batches: reading the metrics brings them in first.
    metrics?.syncWebhooksWith(() => this.flush());
    this.worker.on('error', fatal);
    this.worker.on('exit', (code) => {
      this.exited = true;
      for (const answer of this.loopAsks.values()) answer(undefined);
      this.loopAsks.clear();
      for (const done of this.flushes.values()) done();
      this.flushes.clear();
      fatal(new Error(`the admission worker exited (code ${code})`));
    });
    // A rotated token reaches the worker's client within this interval (it re-reads its own no sooner).
    let last = JSON.stringify(client.snapshot().headers);
    this.credentialTimer = setInterval(() => {
      void client.currentHeaders().then((headers) => {
        const now = JSON.stringify(headers);
        if (now !== last) this.post({ t: 'headers', headers });
        last = now;
      });
    }, CREDENTIALS_EVERY_MS);
    this.credentialTimer.unref();
  }

  /** True once the worker's caches have listed what the webhooks decide from. */
  get synced(): boolean {
    return this.isSynced;
  }

  setCertificate(cert: string, key: string): void {
    this.post({ t: 'cert', cert, key });
  }

  /** The configured types (with their modes): the objects and HNCConfiguration webhooks read them. */
  setTypes(types: readonly IndexedType[]): void {
    this.post({ t: 'types', types: types.map((t) => ({ group: t.group, resource: t.resource, kind: t.kind, mode: t.mode })) });
  }

  /** Whether this replica reaches the API server: while it does not, the worker decides nothing that needs its caches. */
  setReachesApiServer(ok: boolean): void {
    this.post({ t: 'reach', ok });
  }

  /** A source appeared or went: sent with the others of the same turn, in one message. */
  sourceChanged(change: SourceChange): void {
    if (this.pendingSources.length === 0) setImmediate(() => this.flushSources());
    this.pendingSources.push(change);
  }

  /** The worker's event-loop delay and GC pauses since the last reset (and resets them if asked); undefined once it is stopping. */
  eventLoop(reset = false): Promise<ThreadDelay | undefined> {
    if (this.stopping || this.exited) return Promise.resolve(undefined);
    const id = this.nextAsk++;
    return new Promise((resolve) => {
      this.loopAsks.set(id, resolve);
      this.post({ t: 'loop', id, reset });
    });
  }

  /** Resolves once the reviews the worker answered so far are in the metrics (and its lines logged). */
  flush(): Promise<void> {
    if (this.stopping || this.exited) return Promise.resolve();
    const id = this.nextAsk++;
    return new Promise((resolve) => {
      this.flushes.set(id, resolve);
      this.post({ t: 'flush', id });
    });
  }

  /** Stops serving (draining `drainMs` first, behind a Service) and ends the worker. */
  async stop(drainMs = 0): Promise<void> {
    if (this.stopping) return;
    this.flushSources();
    clearInterval(this.credentialTimer);
    if (this.exited) return;
    this.stopping = true;
    clearInterval(this.credentialTimer);
    const stopped = new Promise<void>((resolve) => {
      this.stopped = resolve;
      this.worker.once('exit', () => resolve());
    });
    this.worker.postMessage({ t: 'stop', drainMs } satisfies ToWorker);
    // The worker's own stop is bounded (the server cuts connections after a second, the watches end at once).
    const limit = setTimeout(() => this.stopped?.(), drainMs + 10_000);
    await stopped;
    clearTimeout(limit);
    await this.worker.terminate();
  }

  private flushSources(): void {
    if (this.pendingSources.length === 0) return;
    this.post({ t: 'sources', changes: this.pendingSources });
    this.pendingSources = [];
  }

  private post(m: ToWorker): void {
    if (!this.stopping) this.worker.postMessage(m);
  }

  private async decide(id: number, path: string, review: AdmissionRequest): Promise<void> {
    const handler = this.opts.relayed?.get(path);
    let decision: Decision;
    try {
      if (!handler) throw new Error(`no handler on the main thread for ${path}`);
      decision = await handler(review);
    } catch (err) {
      // The same answer the server gives for a handler that throws.
      this.opts.logger.error({ path, uid: review.uid, err: (err as Error).message }, 'webhook handler failed');
      decision = { allowed: false, code: 500, reason: 'InternalError', message: `Internal error occurred: ${(err as Error).message}` };
    }
    // A relayed review is answered even while stopping: the worker drains.
    this.worker.postMessage({ t: 'decided', id, decision } satisfies ToWorker);
  }

  /** A worker's log line, written by the main logger (its format and destination), fields kept. */
  private relog(line: string): void {
    try {
      const {
        level,
        msg,
        time: _time,
        name: _name,
        ...fields
      } = JSON.parse(line) as Record<string, unknown> & { level: number; msg?: string };
      this.opts.logger[LEVELS[level] ?? 'info']({ ...fields, thread: 'admission' }, msg ?? '');
    } catch {
      this.opts.logger.info({ line, thread: 'admission' }, 'unparsed line from the admission worker');
    }
  }
}
