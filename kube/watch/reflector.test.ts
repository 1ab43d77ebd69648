// The reflector against a scripted fake API server on 127.0.0.1 (real TLS, real KubeClient).
// Tests wait on conditions that the server, the handlers or the metrics hooks signal; nothing
// sleeps for a guessed time.
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { KubeClient } from '../client.js';
import { CertificateAuthority } from '../pki.js';
import { Reflector } from './reflector.js';
import type { EventType, ReflectorOptions } from './reflector.js';
import type { Logger } from './logger.js';
import { Conditions } from '../testing.js';

const PATH = '/api/v1/namespaces';

interface Ns {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; resourceVersion?: string; labels?: Record<string, string> };
}

/** One open watch request on the fake server. */
class FakeWatch {
  closed = false;
  constructor(
    readonly url: URL,
    readonly res: ServerResponse,
  ) {}
  get rv(): string | null {
    return this.url.searchParams.get('resourceVersion');
  }
  send(type: string, object: unknown): void {
    this.res.write(JSON.stringify({ type, object }) + '\n');
  }
  write(raw: string | Buffer): void {
    this.res.write(raw);
  }
  /** A clean end, as when the server's timeoutSeconds runs out. */
  end(): void {
    this.res.end();
  }
  /** The connection breaks mid-stream. */
  drop(): void {
    this.res.socket?.destroy();
  }
}

type Hook = (url: URL, res: ServerResponse) => boolean;

/** A tiny API server for one cluster-scoped collection: paginated lists and scriptable watches. */
class FakeApiServer {
  readonly changes = new Conditions();
  readonly objects = new Map<string, Ns>();
  readonly lists: URL[] = [];
  readonly watches: FakeWatch[] = [];
  /** Return true to take over a list (or watch) request instead of the default answer. */
  listHook: Hook | undefined;
  watchHook: Hook | undefined;
  rv = 100;
  private server!: https.Server;
  port = 0;

  async start(pem: { cert: string; key: string }): Promise<void> {
    this.server = https.createServer({ cert: pem.cert, key: pem.key }, (req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** Creates or updates an object, bumping the resourceVersion (no watch event is sent). */
  set(name: string, labels?: Record<string, string>): Ns {
    const obj: Ns = { metadata: { name, resourceVersion: String(++this.rv), ...(labels ? { labels } : {}) } };
    this.objects.set(name, obj);
    return obj;
  }

  remove(name: string): void {
    this.objects.delete(name);
    this.rv++;
  }

  get lastWatch(): FakeWatch {
    const w = this.watches.at(-1);
    if (!w) throw new Error('no watch yet');
    return w;
  }

  untilWatches(n: number): Promise<void> {
    return this.changes.until(() => this.watches.length >= n, `${n} watch request(s)`);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'https://fake');
    if (url.pathname !== PATH) return status(res, 404, 'NotFound');
    if (url.searchParams.get('watch') === 'true') {
      const w = new FakeWatch(url, res);
      this.watches.push(w);
      req.socket.on('close', () => {
        w.closed = true;
        this.changes.notify();
      });
      this.changes.notify();
      if (this.watchHook?.(url, res)) return;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      return;
    }
    this.lists.push(url);
    this.changes.notify();
    if (this.listHook?.(url, res)) return;
    // The continue token names the snapshot and the offset, like the real one (opaque to clients).
    const token = url.searchParams.get('continue');
    const { offset, rv } = token
      ? (JSON.parse(Buffer.from(token, 'base64').toString()) as { offset: number; rv: number })
      : { offset: 0, rv: this.rv };
    const all = [...this.objects.values()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    const limit = Number(url.searchParams.get('limit') ?? 0) || all.length;
    const items = all.slice(offset, offset + limit);
    const more = offset + limit < all.length;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        kind: 'NamespaceList',
        apiVersion: 'v1',
        metadata: {
          resourceVersion: String(rv),
          ...(more ? { continue: Buffer.from(JSON.stringify({ offset: offset + limit, rv })).toString('base64') } : {}),
        },
        items,
      }),
    );
  }
}

function status(res: ServerResponse, code: number, reason: string, headers: Record<string, string> = {}): void {
  res.writeHead(code, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, code, message: reason }));
}

/** Handler calls as [type, name, resourceVersion, old resourceVersion]. */
class Recorder {
  readonly events: Array<[EventType, string, string | undefined, string | undefined]> = [];
  constructor(private readonly changes: Conditions) {}
  readonly handler = (type: EventType, obj: Ns, old?: Ns): void => {
    this.events.push([type, obj.metadata.name, obj.metadata.resourceVersion, old?.metadata.resourceVersion]);
    this.changes.notify();
  };
  until(n: number): Promise<void> {
    return this.changes.until(() => this.events.length >= n, `${n} handler call(s), have ${JSON.stringify(this.events)}`);
  }
}

function spyLogger(changes: Conditions): Logger & { [K in keyof Logger]: ReturnType<typeof vi.fn> } {
  const fn = () => vi.fn(() => changes.notify());
  return { debug: fn(), warn: fn(), error: fn() };
}

let serverPem: { cert: string; key: string };
let caPem: string;

beforeAll(async () => {
  const ca = await CertificateAuthority.create('fake-apiserver-ca');
  serverPem = await ca.issue({ commonName: 'fake-apiserver', usage: 'server', ips: ['127.0.0.1'] });
  caPem = ca.certPem;
});

let api: FakeApiServer;
let reflector: Reflector<Ns> | undefined;

afterEach(async () => {
  await reflector?.stop();
  reflector = undefined;
  await api?.close();
});

/** setup() with onHealth recording each change in `health` (and waking the waits on api.changes). */
async function setupRecordingHealth(opts: Partial<ReflectorOptions<Ns>> = {}) {
  const health: boolean[] = [];
  const made = await setup({
    ...opts,
    onHealth: (h) => {
      health.push(h);
      api.changes.notify();
    },
  });
  return { ...made, health };
}

/** The next `count` watch requests get `answer` (a refusal, an empty body...); later ones are served. */
function answerNextWatches(count: number, answer: (res: ServerResponse) => void): void {
  let left = count;
  api.watchHook = (_url, res) => {
    if (left === 0) return false;
    left--;
    answer(res);
    return true;
  };
}

async function setup(opts: Partial<ReflectorOptions<Ns>> = {}) {
  api = new FakeApiServer();
  await api.start(serverPem);
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      { name: 'fake', server: `https://127.0.0.1:${api.port}`, caData: Buffer.from(caPem).toString('base64'), skipTLSVerify: false },
    ],
    users: [{ name: 'u', token: 'secret' }],
    contexts: [{ name: 'c', cluster: 'fake', user: 'u' }],
    currentContext: 'c',
  });
  const client = await KubeClient.fromKubeConfig(kc);
  const changes = api.changes;
  const log = spyLogger(changes);
  const rec = new Recorder(changes);
  const r = new Reflector<Ns>({
    client,
    path: PATH,
    backoff: { initialMs: 1, maxMs: 10 },
    watchTimeoutSeconds: { min: 300, max: 300 },
    logger: log,
    metrics: { event: () => changes.notify(), error: () => changes.notify() },
    ...opts,
  });
  reflector = r;
  r.addHandler(rec.handler);
  return { r, rec, log, changes };
}

describe('Reflector', () => {
  it('lists in pages, fills in kind, then watches from the list resourceVersion', async () => {
    const { r, rec } = await setup({ pageSize: 2 });
    for (const n of ['a', 'b', 'c', 'd', 'e']) api.set(n);
    expect(r.hasSynced()).toBe(false);
    r.start();
    await r.synced;
    expect(r.hasSynced()).toBe(true);
    expect(api.lists.map((u) => [u.searchParams.get('limit'), u.searchParams.has('continue')])).toEqual([
      ['2', false],
      ['2', true],
      ['2', true],
    ]);
    expect(r.store.keys().sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(rec.events.map((e) => e[0] + ' ' + e[1]).sort()).toEqual(['ADDED a', 'ADDED b', 'ADDED c', 'ADDED d', 'ADDED e']);
    const a = r.store.get('a')!;
    expect(a).toMatchObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' } });
    expect(Object.isFrozen(a.metadata)).toBe(true);
    expect(r.resourceVersion).toBe('105');

    await api.untilWatches(1);
    const q = api.lastWatch.url.searchParams;
    expect(Object.fromEntries(q)).toMatchObject({
      watch: 'true',
      allowWatchBookmarks: 'true',
      resourceVersion: '105',
      timeoutSeconds: '300',
    });
  });

  it('restarts a list whose continue token expired', async () => {
    const { r, rec } = await setup({ pageSize: 2 });
    for (const n of ['a', 'b', 'c', 'd', 'e']) api.set(n);
    let expired = false;
    api.listHook = (url, res) => {
      if (expired || !url.searchParams.has('continue')) return false;
      expired = true;
      status(res, 410, 'Expired');
      return true;
    };
    r.start();
    await r.synced;
    expect(api.lists.map((u) => u.searchParams.has('continue'))).toEqual([false, true, false, true, true]);
    expect(r.store.size).toBe(5);
    // The aborted first attempt reached no handler: the store is replaced once, from a whole list.
    expect(rec.events).toHaveLength(5);
  });

  it('applies events however the stream is cut, including inside a UTF-8 character', async () => {
    const { r, rec } = await setup();
    api.set('a');
    api.set('b');
    r.start();
    await api.untilWatches(1);
    await rec.until(2);
    const w = api.lastWatch;
    const body = Buffer.from(
      [
        { type: 'ADDED', object: { metadata: { name: 'f', resourceVersion: '201', labels: { owner: 'Jürgen €' } } } },
        { type: 'MODIFIED', object: { metadata: { name: 'a', resourceVersion: '202' } } },
        { type: 'DELETED', object: { metadata: { name: 'b', resourceVersion: '203' } } },
      ]
        .map((e) => JSON.stringify(e) + '\n')
        .join(''),
    );
    // Cut into 7-byte pieces, flushed one by one; the multi-byte characters get split.
    for (let i = 0; i < body.length; i += 7) w.write(body.subarray(i, i + 7));
    await rec.until(5);
    expect(rec.events.slice(2)).toEqual([
      ['ADDED', 'f', '201', undefined],
      ['MODIFIED', 'a', '202', '101'],
      ['DELETED', 'b', '203', '102'],
    ]);
    expect(r.store.get('f')?.metadata.labels).toEqual({ owner: 'Jürgen €' });
    expect(r.store.keys().sort()).toEqual(['a', 'f']);
    expect(r.resourceVersion).toBe('203');
  });

  it('relists on a 410 ERROR event and reports only real differences', async () => {
    const { r, rec } = await setup();
    for (const n of ['a', 'b', 'c']) api.set(n);
    r.start();
    await api.untilWatches(1);
    // Changes the watch never reported: b deleted, c modified, d added; a untouched.
    api.remove('b');
    api.set('c', { changed: 'yes' });
    api.set('d');
    api.lastWatch.send('ERROR', {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'Expired',
      code: 410,
      message: 'too old resource version',
    });
    api.lastWatch.end();
    await api.untilWatches(2);
    expect(api.lists).toHaveLength(2);
    expect(api.lists[1]!.searchParams.has('resourceVersion')).toBe(false);
    expect(rec.events.slice(3).sort()).toEqual([
      ['ADDED', 'd', '106', undefined],
      ['DELETED', 'b', '102', '102'],
      ['MODIFIED', 'c', '105', '103'],
    ]);
    expect(r.store.keys().sort()).toEqual(['a', 'c', 'd']);
    expect(api.lastWatch.rv).toBe('106');
  });

  it('relists when the watch request itself answers 410', async () => {
    const { r, rec } = await setup();
    api.set('a');
    api.set('b');
    let gone = true;
    api.watchHook = (_url, res) => {
      if (!gone) return false;
      gone = false;
      api.remove('a');
      status(res, 410, 'Expired');
      return true;
    };
    r.start();
    await api.untilWatches(2);
    expect(api.lists).toHaveLength(2);
    expect(rec.events).toEqual([
      ['ADDED', 'a', '101', undefined],
      ['ADDED', 'b', '102', undefined],
      ['DELETED', 'a', '101', '101'],
    ]);
    expect(api.lastWatch.rv).toBe('103');
  });

  it('reconnects after a dropped connection and resumes from the last resourceVersion', async () => {
    const { r, rec } = await setup();
    api.set('a');
    r.start();
    await api.untilWatches(1);
    api.lastWatch.send('MODIFIED', { metadata: { name: 'a', resourceVersion: '150' } });
    await rec.until(2);
    api.lastWatch.drop();
    await api.untilWatches(2);
    expect(api.lastWatch.rv).toBe('150');
    expect(api.lists).toHaveLength(1);
    // The new watch works.
    api.lastWatch.send('ADDED', { metadata: { name: 'z', resourceVersion: '151' } });
    await rec.until(3);
    expect(r.store.get('z')).toBeDefined();
    expect(r.hasSynced()).toBe(true);
  });

  it('reconnects a watch that goes silent for the idle timeout', async () => {
    const { r, log } = await setup({ idleTimeoutMs: 150 });
    api.set('a');
    r.start();
    await api.untilWatches(1);
    const first = api.lastWatch;
    // The server keeps the connection open and says nothing.
    await api.untilWatches(2);
    await api.changes.until(() => first.closed, 'the silent watch to be closed by the client');
    expect(api.lastWatch.rv).toBe('101');
    expect(api.lists).toHaveLength(1);
    expect(log.warn).toHaveBeenCalledWith(expect.objectContaining({ idleMs: 150 }), expect.stringContaining('silent'));
  });

  it('moves the resume point on a bookmark without calling handlers', async () => {
    const { r, rec } = await setup();
    api.set('a');
    r.start();
    await api.untilWatches(1);
    api.lastWatch.send('BOOKMARK', { kind: 'Namespace', apiVersion: 'v1', metadata: { resourceVersion: '777' } });
    await api.changes.until(() => r.resourceVersion === '777', 'bookmark applied');
    expect(rec.events).toHaveLength(1);
    api.lastWatch.drop();
    await api.untilWatches(2);
    expect(api.lastWatch.rv).toBe('777');
  });

  it('reports health: not on a normal watch restart or a first 410, false on a 403, true once a watch delivers again', async () => {
    const { r, health } = await setupRecordingHealth();
    api.set('a');
    r.start();
    await api.untilWatches(1);
    expect(health).toEqual([true]);
    // The server ends the watch (its timeout) and it is re-opened at once: no change.
    api.lastWatch.send('BOOKMARK', { kind: 'Namespace', apiVersion: 'v1', metadata: { resourceVersion: '120' } });
    await api.changes.until(() => r.resourceVersion === '120', 'bookmark applied');
    api.lastWatch.end();
    await api.untilWatches(2);
    // History expired: relisted at once, no change either.
    api.lastWatch.send('ERROR', { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410 });
    await api.untilWatches(3);
    expect(api.lists).toHaveLength(2);
    expect(health).toEqual([true]);
    // The permission to watch is lost: the next watches are refused.
    answerNextWatches(3, (res) => {
      status(res, 403, 'Forbidden');
    });
    api.lastWatch.send('BOOKMARK', { kind: 'Namespace', apiVersion: 'v1', metadata: { resourceVersion: '130' } });
    await api.changes.until(() => r.resourceVersion === '130', 'bookmark applied');
    api.lastWatch.end();
    await api.changes.until(() => health.length === 2, 'unhealthy');
    expect(health).toEqual([true, false]);
    expect(r.isHealthy).toBe(false);
    // Allowed again: a watch that is open but has delivered nothing is not yet healthy...
    await api.untilWatches(7);
    expect(api.lastWatch.closed).toBe(false);
    expect(health).toEqual([true, false]);
    // ...one that delivers is (after what it delivered was applied).
    api.lastWatch.send('ADDED', { metadata: { name: 'z', resourceVersion: '131' } });
    await api.changes.until(() => health.length === 3, 'healthy again');
    expect(health).toEqual([true, false, true]);
    expect(r.store.get('z')).toBeDefined();
    expect(api.lists).toHaveLength(2);
  });

  it('reports a silent watch as unhealthy, and a successful relist as healthy', async () => {
    const { r, health } = await setupRecordingHealth({ idleTimeoutMs: 150 });
    api.set('a');
    r.start();
    await api.untilWatches(2);
    await api.changes.until(() => health.length === 2, 'unhealthy after the idle timeout');
    expect(health).toEqual([true, false]);
    answerNextWatches(2, (res) => {
      status(res, 410, 'Expired');
    });
    // The silent watch is cut again; the next answers 410: the first is relisted at once, and that list is healthy.
    await api.changes.until(() => health.length === 3, 'healthy after a relist');
    expect(health).toEqual([true, false, true]);
    expect(api.lists.length).toBeGreaterThanOrEqual(2);
  });

  it('tells onHealth of the first list once hasSynced() is true', async () => {
    const seen: Array<[boolean, boolean]> = [];
    const self: { r?: Reflector<Ns> } = {};
    const { r } = await setup({
      onHealth: (h) => {
        seen.push([h, self.r!.hasSynced()]);
        api.changes.notify();
      },
    });
    self.r = r;
    api.set('a');
    r.start();
    await api.changes.until(() => seen.length === 1, 'healthy');
    expect(seen).toEqual([[true, true]]);
  });

  it('reports a watch that keeps closing at once after a list as unhealthy once, without relisting or flapping', async () => {
    const { r, health } = await setupRecordingHealth();
    api.set('a');
    answerNextWatches(4, (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end();
    });
    r.start();
    await api.untilWatches(5);
    expect(health).toEqual([true, false]);
    expect(api.lists).toHaveLength(1);
    // The fifth stays open: it is not healthy until it delivers.
    await api.changes.until(() => !api.lastWatch.closed && api.watches.length === 5, 'the fifth watch open');
    expect(r.isHealthy).toBe(false);
    api.lastWatch.send('BOOKMARK', { kind: 'Namespace', apiVersion: 'v1', metadata: { resourceVersion: '140' } });
    await api.changes.until(() => health.length === 3, 'healthy on the bookmark');
    expect(health).toEqual([true, false, true]);
  });

  it('reports a 410 Gone that repeats as unhealthy, and each relist between as healthy (one change each way per relist)', async () => {
    const { r, health } = await setupRecordingHealth();
    api.set('a');
    answerNextWatches(3, (res) => {
      status(res, 410, 'Expired');
    });
    r.start();
    // list, 410 (the first: relist at once, no change), list, 410 (false), list (true), 410 (false), list (true), watch.
    await api.untilWatches(4);
    await api.changes.until(() => api.lists.length === 4 && health.length === 5, 'the last relist');
    expect(health).toEqual([true, false, true, false, true]);
    expect(r.isHealthy).toBe(true);
  });

  it('keeps going when a handler throws or rejects', async () => {
    const { r, rec, log } = await setup();
    r.addHandler(() => {
      throw new Error('sync boom');
    });
    r.addHandler(async () => {
      throw new Error('async boom');
    });
    api.set('a');
    r.start();
    await api.untilWatches(1);
    api.lastWatch.send('ADDED', { metadata: { name: 'b', resourceVersion: '120' } });
    api.lastWatch.send('ADDED', { metadata: { name: 'c', resourceVersion: '121' } });
    await rec.until(3);
    // Two failing handlers, three objects.
    await api.changes.until(() => log.error.mock.calls.length === 6, 'six handler errors logged');
    expect(log.error).toHaveBeenCalledWith(expect.objectContaining({ key: 'c', type: 'ADDED' }), 'event handler failed');
    expect(r.store.keys().sort()).toEqual(['a', 'b', 'c']);
    expect(api.watches).toHaveLength(1);
    expect(api.lastWatch.closed).toBe(false);
  });

  it('replays cached objects to a handler added late', async () => {
    const { r } = await setup();
    api.set('a');
    api.set('b');
    r.start();
    await r.synced;
    const late = new Recorder(api.changes);
    r.addHandler(late.handler);
    expect(late.events.map((e) => e[0] + ' ' + e[1]).sort()).toEqual(['ADDED a', 'ADDED b']);
  });

  it('retries a failing list with backoff, then syncs', async () => {
    const { r, log } = await setup();
    api.set('a');
    let failures = 2;
    api.listHook = (_url, res) => {
      if (failures === 0) return false;
      failures--;
      status(res, 500, 'InternalError');
      return true;
    };
    r.start();
    await r.synced;
    expect(api.lists).toHaveLength(3);
    expect(log.warn).toHaveBeenCalledTimes(2);
    expect(r.store.keys()).toEqual(['a']);
  });

  it('stop() aborts a hanging list, rejects synced, and ends the loop', async () => {
    const { r } = await setup();
    const held: ServerResponse[] = [];
    api.listHook = (_url, res) => {
      held.push(res);
      return true;
    };
    r.start();
    await api.changes.until(() => api.lists.length === 1, 'the list request');
    await r.stop();
    await expect(r.synced).rejects.toThrow(/stopped before/);
    expect(r.hasSynced()).toBe(false);
  });

  it('stop() closes an open watch', async () => {
    const { r } = await setup();
    api.set('a');
    r.start();
    await api.untilWatches(1);
    await r.stop();
    await api.changes.until(() => api.lastWatch.closed, 'the watch connection to close');
    expect(api.watches).toHaveLength(1);
  });
});
