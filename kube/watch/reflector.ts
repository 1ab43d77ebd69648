// A list+watch reflector for one resource collection, modelled on client-go's Reflector: it keeps
// a Store equal to the server's state and tells handlers what changed. It exists because
// client-node's informer can hang silently on a dead connection, stops for good on errors and
// mixes typed and raw objects (see docs/architecture.md#the-watch-layer-kubewatch).
//
// Loop: LIST (paginated) -> replace the store -> WATCH from the list's resourceVersion -> on a
// normal end, WATCH again from the last resourceVersion seen; on 410 Gone, LIST again; on any
// other error, back off and retry whichever step failed. Only stop() ends the loop.
import type { IncomingMessage } from 'node:http';
import { ApiError } from '../client.js';
import type { KubeClient, Status } from '../client.js';
import type { Reachability } from '../reachability.js';
import { LineSplitter } from './lines.js';
import { noopLogger } from './logger.js';
import type { Logger } from './logger.js';
import { Backoff, sleep } from './ratelimit.js';
import type { StatefulBackoffOptions } from './ratelimit.js';
import { deepFreeze, objectKey, Store } from './store.js';
import type { KubeObject, ReadonlyStore } from './store.js';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/**
 * Called for every change, after the store has been updated. `oldObj` is the previous cached state
 * (absent for ADDED). The type says what happened to the cache: an ADDED for an object already
 * cached arrives as MODIFIED. A DELETED found by a relist (the delete event itself was missed)
 * carries the last known state as both `obj` and `oldObj`. Handlers should be quick (enqueue a
 * key); a throw or a rejected promise is logged and does not affect the reflector or other handlers.
 */
export type EventHandler<T> = (type: EventType, obj: T, oldObj?: T) => unknown;

/** Optional hooks for metrics. */
export interface ReflectorMetrics {
  list?(): void;
  watch?(): void;
  /** A 410 Gone forced a relist. */
  gone?(): void;
  /** A list or watch failed and will be retried. */
  error?(err: unknown): void;
  event?(type: EventType | 'BOOKMARK'): void;
}

export interface ReflectorOptions<T extends KubeObject> {
  client: Pick<KubeClient, 'stream'> & { readonly reachability?: Pick<Reachability, 'onRegained'> };
  /** Collection path, e.g. /api/v1/namespaces or /apis/hnc.x-k8s.io/v1alpha2/hierarchyconfigurations. */
  path: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Name in logs; the path by default. */
  name?: string;
  /** Items per list page (default 500). */
  pageSize?: number;
  /** Range for the server-side watch timeout, chosen at random per watch (default 300..600 s, as client-go). */
  watchTimeoutSeconds?: { min: number; max: number };
  /**
   * Reconnect when a watch has received no bytes (events or bookmarks) for this long (default
   * 150 s; the API server sends bookmarks about once a minute). This is what detects a half-open
   * connection, which otherwise hangs forever.
   */
  idleTimeoutMs?: number;
  /** Limit for one list page (default 60 s). */
  requestTimeoutMs?: number;
  /** Retry backoff (default 0.8 s doubling to 30 s, ±50 % jitter, reset after 2 healthy minutes). */
  backoff?: StatefulBackoffOptions;
  /** Applied to every object before it is cached, e.g. `stripManagedFields`. */
  transform?: (obj: T) => T;
  /** Deep-freeze cached objects (default true): see store.ts on immutability. */
  freeze?: boolean;
  logger?: Logger;
  metrics?: ReflectorMetrics;
  /**
   * Told, on each change, whether the cache is following the server. False when a list or watch
   * fails and will be retried (an error status such as 401/403, a refused or dropped connection,
   * a watch ERROR event, a watch ended at once with nothing received, a 410 Gone that repeats) or
   * a watch went silent for idleTimeoutMs; true after a successful list, and when a watch delivers
   * again (an event or a bookmark). Not on the expected restarts: a watch the server ends (its
   * timeout) and that is re-opened at once, or a first 410 Gone followed at once by a relist, keep
   * the state as it is. Starts false; the first list makes it true.
   */
  onHealth?: (healthy: boolean, reason?: string) => void;
}

interface WatchEvent {
  type?: string;
  object?: unknown;
}

interface ListPage<T> {
  apiVersion?: string;
  kind?: string;
  metadata?: { resourceVersion?: string; continue?: string };
  items?: T[];
}

const DEFAULT_BACKOFF: StatefulBackoffOptions = { initialMs: 800, maxMs: 30_000, jitter: 0.5, resetAfterMs: 120_000 };
/** A watch that ends sooner than this with nothing received counts as a failure (stops reconnect storms). */
const MIN_HEALTHY_WATCH_MS = 1000;

/** True for 410 Gone: the requested resourceVersion (or continue token) is too old. */
export function isGone(err: unknown): boolean {
  return err instanceof ApiError && (err.code === 410 || err.reason === 'Expired' || err.reason === 'Gone');
}

/** Drops metadata.managedFields, which is large and never needed by a controller. */
export function stripManagedFields<T extends KubeObject>(obj: T): T {
  const meta = obj.metadata as (KubeObject['metadata'] & { managedFields?: unknown }) | undefined;
  if (meta?.managedFields !== undefined) delete meta.managedFields;
  return obj;
}

export class Reflector<T extends KubeObject = KubeObject> {
  private readonly cache = new Store<T>();
  private readonly handlers = new Set<EventHandler<T>>();
  private readonly stopper = new AbortController();
  private readonly backoff: Backoff;
  private readonly log: Logger;
  private readonly name: string;
  private loop: Promise<void> | undefined;
  private isSynced = false;
  private resolveSynced!: () => void;
  private rejectSynced!: (err: Error) => void;
  private lastActivity = 0;
  private healthy = false;

  /** Resolves after the first full list has been applied; rejects if stopped before that. */
  readonly synced: Promise<void>;

  constructor(private readonly opts: ReflectorOptions<T>) {
    this.backoff = new Backoff(opts.backoff ?? DEFAULT_BACKOFF);
    this.log = opts.logger ?? noopLogger;
    this.name = opts.name ?? opts.path;
    this.synced = new Promise<void>((resolve, reject) => {
      this.resolveSynced = resolve;
      this.rejectSynced = reject;
    });
    // Nobody has to await `synced`; a rejection on stop must not count as unhandled.
    this.synced.catch(() => {});
  }

  /** The cache. Read-only for everyone but this reflector. */
  get store(): ReadonlyStore<T> {
    return this.cache;
  }

  /** Registers an index on the cache (see Store.addIndex). */
  addIndex(name: string, fn: (obj: T) => readonly string[]): void {
    this.cache.addIndex(name, fn);
  }

  /**
   * Adds a handler; returns a function that removes it. A handler added after objects are cached
   * first receives an ADDED for each of them, so late subscribers miss nothing.
   */
  addHandler(handler: EventHandler<T>): () => void {
    this.handlers.add(handler);
    for (const obj of this.cache.list()) this.call(handler, 'ADDED', obj, undefined);
    return () => this.handlers.delete(handler);
  }

  hasSynced(): boolean {
    return this.isSynced;
  }

  /** The resourceVersion the next watch resumes from. */
  get resourceVersion(): string {
    return this.cache.resourceVersion;
  }

  /** When the last bytes arrived from the server (epoch ms, 0 = never): for a staleness gauge. */
  get lastActivityAt(): number {
    return this.lastActivity;
  }

  /** False from a failed list or watch until the next successful list or delivering watch (see onHealth); left as it was on stop. */
  get isHealthy(): boolean {
    return this.healthy;
  }

  /** Starts listing and watching in the background. Returns this, for chaining. */
  start(): this {
    if (this.loop) throw new Error(`reflector ${this.name}: already started`);
    if (this.stopper.signal.aborted) throw new Error(`reflector ${this.name}: stopped`);
    this.loop = this.run();
    return this;
  }

  /** Aborts any request in flight and resolves when the loop has ended. No handler runs after. */
  async stop(): Promise<void> {
    if (!this.stopper.signal.aborted) {
      this.stopper.abort(new Error(`reflector ${this.name}: stopped`));
      if (!this.isSynced) this.rejectSynced(new Error(`reflector ${this.name}: stopped before the first list completed`));
    }
    await this.loop;
  }

  private get stopped(): boolean {
    return this.stopper.signal.aborted;
  }

  private async run(): Promise<void> {
    let needList = true;
    let goneInARow = 0;
    while (!this.stopped) {
      try {
        if (needList) {
          await this.list();
          needList = false;
        }
        await this.watch();
        goneInARow = 0;
      } catch (err) {
        if (this.stopped) break;
        this.opts.metrics?.error?.(err);
        // A first 410 Gone is the usual end of a watch whose history expired: the relist follows at once.
        if (!(isGone(err) && goneInARow === 0)) this.setHealth(false, String(err));
        let delay: number;
        if (isGone(err)) {
          needList = true;
          this.opts.metrics?.gone?.();
          // History expired: relist at once, unless the server keeps saying so (then back off).
          delay = goneInARow++ === 0 ? 0 : this.backoff.next();
          this.log.debug({ resource: this.name, err: String(err), delay }, 'resourceVersion expired; relisting');
        } else {
          delay = Math.max(this.backoff.next(), retryAfterMs(err));
          this.log.warn({ resource: this.name, err, delay, relist: needList }, 'list/watch failed; retrying');
        }
        try {
          await sleep(delay, this.stopper.signal);
        } catch {
          break;
        }
      }
    }
  }

  /** Lists every page, then replaces the store, telling handlers only what changed. */
  private async list(): Promise<void> {
    this.opts.metrics?.list?.();
    const pageSize = this.opts.pageSize ?? 500;
    let limit: number | undefined = pageSize;
    let items: T[] = [];
    let cont: string | undefined;
    let expired = 0;
    let rv = '';
    for (;;) {
      let page: ListPage<T>;
      try {
        // No resourceVersion: a consistent read, so the store never starts out older than the
        // server (RV "0" would be cheaper but may be stale, and it ignores `limit`).
        page = await this.getJson<ListPage<T>>({
          limit,
          continue: cont,
          labelSelector: this.opts.labelSelector,
          fieldSelector: this.opts.fieldSelector,
        });
      } catch (err) {
        if (cont === undefined || !isGone(err)) throw err;
        // The continue token outlived the server's snapshot (a slow list of a big collection).
        // Start over; if it expires again, ask for everything in one response.
        if (++expired >= 2) limit = undefined;
        this.log.debug({ resource: this.name, expired }, 'list continue token expired; restarting the list');
        items = [];
        cont = undefined;
        continue;
      }
      // List items carry no apiVersion/kind; fill them in so cached objects are self-describing.
      const kind = page.kind?.replace(/List$/, '');
      for (const item of page.items ?? []) {
        const it = item as KubeObject;
        if (it.apiVersion === undefined && page.apiVersion) it.apiVersion = page.apiVersion;
        if (it.kind === undefined && kind) it.kind = kind;
        items.push(this.prepare(item));
      }
      rv = page.metadata?.resourceVersion ?? '';
      cont = page.metadata?.continue || undefined;
      if (!cont) break;
    }
    this.stopper.signal.throwIfAborted();
    for (const change of this.cache.replace(items, rv)) this.emit(change.type, change.obj, change.old);
    this.log.debug({ resource: this.name, count: items.length, resourceVersion: rv }, 'listed');
    if (!this.isSynced) {
      this.isSynced = true;
      this.resolveSynced();
    }
    // After hasSynced() is true: a hook that reads it sees the list it is told about.
    this.setHealth(true);
  }

  /** One watch request, from the current resourceVersion until the server or a timer ends it. */
  private async watch(): Promise<void> {
    const { min, max } = this.opts.watchTimeoutSeconds ?? { min: 300, max: 600 };
    const timeoutSeconds = Math.floor(min + Math.random() * (max - min + 1));
    const idleMs = this.opts.idleTimeoutMs ?? 150_000;
    const abort = linkedAbort(this.stopper.signal);
    let endedBy: 'idle' | 'deadline' | 'regained' | undefined;
    // After a cut-off this watch's connection may hang for a while yet: a new one resumes at once.
    const offRegained = this.opts.client.reachability?.onRegained(() => {
      endedBy = 'regained';
      abort.controller.abort();
    });
    // The idle timer runs from the request on, so a server that never answers is caught too.
    const idle = setTimeout(() => {
      endedBy = 'idle';
      abort.controller.abort();
    }, idleMs);
    // A hard deadline a little after the server's own, in case the server never ends the watch.
    const deadline = setTimeout(
      () => {
        endedBy = 'deadline';
        abort.controller.abort();
      },
      (timeoutSeconds + 5) * 1000,
    );
    const started = performance.now();
    let received = false;
    let res: IncomingMessage | undefined;
    try {
      this.opts.metrics?.watch?.();
      const query = {
        watch: true,
        allowWatchBookmarks: true,
        resourceVersion: this.cache.resourceVersion,
        timeoutSeconds,
        labelSelector: this.opts.labelSelector,
        fieldSelector: this.opts.fieldSelector,
      };
      res = (await this.opts.client.stream(this.opts.path, query, abort.controller.signal)).res;
      idle.refresh();
      if (res.statusCode !== 200) throw await apiError('WATCH', this.opts.path, res);
      const lines = new LineSplitter();
      for await (const chunk of res) {
        // Nothing from a watch that has been cut loose may reach the store.
        if (endedBy || this.stopped) break;
        idle.refresh();
        received = true;
        this.lastActivity = Date.now();
        let delivered = false;
        for (const line of lines.push(chunk as Buffer)) {
          this.handleEvent(JSON.parse(line) as WatchEvent);
          delivered = true;
          if (this.stopped) break;
        }
        // Healthy again once this chunk's events are applied: a replay longer than one chunk is
        // still arriving (as behind as any watch that lags, not a failure).
        if (delivered && !this.healthy && !this.stopped) this.setHealth(true);
      }
      const rest = lines.end();
      if (rest && !endedBy && !this.stopped)
        this.log.warn(
          { resource: this.name, bytes: rest.length },
          'watch ended inside an event; it is dropped and the next watch resumes before it',
        );
    } catch (err) {
      // Our own abort (stop, idle, deadline) surfaces as an error from the stream: not a failure.
      if (!this.stopped && !endedBy) throw err;
    } finally {
      clearTimeout(idle);
      clearTimeout(deadline);
      offRegained?.();
      abort.dispose();
      if (res && !res.complete) res.destroy();
    }
    if (endedBy === 'regained') this.log.debug({ resource: this.name }, 'the API server answers again; watching anew');
    if (endedBy === 'idle') {
      this.log.warn({ resource: this.name, idleMs }, 'watch silent for too long; reconnecting');
      if (!this.stopped) this.setHealth(false, `watch silent for ${idleMs} ms`);
    }
    if (!endedBy && !this.stopped && !received && performance.now() - started < MIN_HEALTHY_WATCH_MS) {
      throw new Error(`watch ${this.opts.path}: closed at once with nothing received`);
    }
  }

  private handleEvent(ev: WatchEvent): void {
    const type = ev.type;
    if (type === 'ERROR') {
      const status = (ev.object ?? {}) as Status;
      throw new ApiError('WATCH', this.opts.path, status.code ?? 500, status, JSON.stringify(ev.object));
    }
    const raw = ev.object as T | undefined;
    if (!raw || typeof raw !== 'object') throw new Error(`watch ${this.opts.path}: ${type} event without an object`);
    const rv = raw.metadata?.resourceVersion;
    if (type === 'BOOKMARK') {
      // A bookmark only moves the resume point forward; its object is otherwise empty.
      if (rv) this.cache.setResourceVersion(rv);
      this.opts.metrics?.event?.('BOOKMARK');
      return;
    }
    if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') {
      this.log.warn({ resource: this.name, type }, 'unknown watch event type; ignored');
      return;
    }
    const obj = this.prepare(raw);
    let old: T | undefined;
    let effective: EventType;
    if (type === 'DELETED') {
      old = this.cache.delete(objectKey(obj));
      effective = 'DELETED';
    } else {
      old = this.cache.upsert(obj);
      effective = old ? 'MODIFIED' : 'ADDED';
    }
    if (rv) this.cache.setResourceVersion(rv);
    this.opts.metrics?.event?.(effective);
    this.emit(effective, obj, old);
  }

  private setHealth(healthy: boolean, reason?: string): void {
    if (healthy === this.healthy) return;
    this.healthy = healthy;
    try {
      this.opts.onHealth?.(healthy, reason);
    } catch (err) {
      this.log.error({ resource: this.name, err }, 'health hook failed');
    }
  }

  private prepare(obj: T): T {
    const out = this.opts.transform ? this.opts.transform(obj) : obj;
    return this.opts.freeze === false ? out : deepFreeze(out);
  }

  private emit(type: EventType, obj: T, old: T | undefined): void {
    for (const h of this.handlers) this.call(h, type, obj, old);
  }

  private call(handler: EventHandler<T>, type: EventType, obj: T, old: T | undefined): void {
    const fail = (err: unknown): void => {
      this.log.error({ resource: this.name, err, type, key: obj.metadata?.name ? objectKey(obj) : undefined }, 'event handler failed');
    };
    try {
      const r = handler(type, obj, old);
      if (r instanceof Promise) r.catch(fail);
    } catch (err) {
      fail(err);
    }
  }

  /** A GET that the reflector's stop signal can abort (KubeClient.get cannot be aborted). */
  private async getJson<R>(query: Record<string, string | number | undefined>): Promise<R> {
    const ms = this.opts.requestTimeoutMs ?? 60_000;
    const abort = linkedAbort(this.stopper.signal);
    const timer = setTimeout(() => abort.controller.abort(new Error(`GET ${this.opts.path}: no answer within ${ms} ms`)), ms);
    try {
      const { res } = await this.opts.client.stream(this.opts.path, query, abort.controller.signal);
      if (res.statusCode !== 200) throw await apiError('GET', this.opts.path, res);
      return JSON.parse(await readBody(res)) as R;
    } finally {
      clearTimeout(timer);
      abort.dispose();
    }
  }
}

/** An AbortController that also aborts when `parent` does; dispose() unhooks it from the parent. */
function linkedAbort(parent: AbortSignal): { controller: AbortController; dispose: () => void } {
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(parent.reason);
  if (parent.aborted) onAbort();
  else parent.addEventListener('abort', onAbort, { once: true });
  return { controller, dispose: () => parent.removeEventListener('abort', onAbort) };
}

async function readBody(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** An ApiError that keeps the Retry-After header: the API server's 429s carry it with a plain-text body. */
class ThrottledError extends ApiError {
  constructor(
    method: string,
    path: string,
    code: number,
    status: Status | undefined,
    raw: string,
    readonly retryAfterSeconds: number,
  ) {
    super(method, path, code, status, raw);
  }
}

async function apiError(method: string, path: string, res: IncomingMessage): Promise<ApiError> {
  const body = await readBody(res);
  let status: Status | undefined;
  try {
    status = JSON.parse(body) as Status;
  } catch {
    status = undefined;
  }
  const retryAfter = Number(res.headers['retry-after']);
  if (Number.isFinite(retryAfter) && retryAfter > 0) return new ThrottledError(method, path, res.statusCode ?? 0, status, body, retryAfter);
  return new ApiError(method, path, res.statusCode ?? 0, status, body);
}

/** The wait the server asked for (Retry-After header or Status details), capped at a minute; 0 if none. */
function retryAfterMs(err: unknown): number {
  if (!(err instanceof ApiError)) return 0;
  const details = err.status?.details as { retryAfterSeconds?: number } | undefined;
  const seconds = err instanceof ThrottledError ? err.retryAfterSeconds : (details?.retryAfterSeconds ?? 0);
  return Math.min(seconds, 60) * 1000;
}
