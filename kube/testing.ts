// Test doubles of the reconcilers' side effects (kube/writes.ts): they record what a reconciler
// asks for, and fail the writes a test tells them to, as the API server would (an ApiError with its
// code and reason). They are not a fake API server: nothing is stored, nothing is validated, and
// no watch event follows. A test that needs the server's answer uses the real one (test/integration).
// Test-only: nothing outside tests imports this file.
import { ApiError } from './client.js';
import { Store, type KubeObject } from './watch/store.js';
import type { DeleteOptions, EventTarget, Events, WriteOptions, WriteVerb, Writes } from './writes.js';

export interface RecordedWrite {
  verb: WriteVerb;
  path: string;
  body?: unknown;
  preconditions?: DeleteOptions['preconditions'];
  /** False if the write was made to fail. */
  ok: boolean;
}

const METHOD: Record<WriteVerb, string> = { create: 'POST', update: 'PUT', patch: 'PATCH', delete: 'DELETE' };
const REASON: Record<number, string> = { 403: 'Forbidden', 404: 'NotFound', 409: 'Conflict', 422: 'Invalid', 500: 'InternalError' };

/** The error the API server's answer would turn into (kube/client.ts). */
export function apiError(verb: WriteVerb, path: string, code: number, reason = REASON[code] ?? 'Unknown'): ApiError {
  const message = `${reason} (made to fail by the test)`;
  return new ApiError(METHOD[verb], path, code, { kind: 'Status', status: 'Failure', code, reason, message }, '');
}

export class RecordingWrites implements Writes {
  /** Every write asked for, in order, failed or not. */
  readonly writes: RecordedWrite[] = [];
  private readonly failures: Array<{ verb: WriteVerb; path: string | RegExp; code: number; reason?: string }> = [];

  /** The next write of `verb` whose path is `path` (or matches it) fails with this status code. */
  failNext(verb: WriteVerb, path: string | RegExp, code: number, reason?: string): this {
    this.failures.push({ verb, path, code, reason });
    return this;
  }

  /** The writes as one line each ("delete /api/v1/namespaces/a/roles/r"), failures marked. */
  lines(): string[] {
    return this.writes.map((w) => `${w.verb} ${w.path}${w.ok ? '' : ' (failed)'}`);
  }

  clear(): void {
    this.writes.length = 0;
  }

  create<T>(path: string, body: unknown, opts: WriteOptions = {}): Promise<T> {
    return this.record<T>({ verb: 'create', path, body }, opts.answer);
  }

  replace<T>(path: string, body: unknown, opts: WriteOptions = {}): Promise<T> {
    return this.record<T>({ verb: 'update', path, body }, opts.answer);
  }

  mergePatch<T>(path: string, patch: unknown): Promise<T> {
    return this.record<T>({ verb: 'patch', path, body: patch });
  }

  delete<T>(path: string, opts: DeleteOptions = {}): Promise<T> {
    return this.record<T>({ verb: 'delete', path, preconditions: opts.preconditions });
  }

  private record<T>(write: Omit<RecordedWrite, 'ok'>, answer: WriteOptions['answer'] = 'object'): Promise<T> {
    const i = this.failures.findIndex(
      (f) => f.verb === write.verb && (typeof f.path === 'string' ? f.path === write.path : f.path.test(write.path)),
    );
    const failure = i >= 0 ? this.failures.splice(i, 1)[0] : undefined;
    this.writes.push({ ...write, ok: !failure });
    if (failure) return Promise.reject(apiError(write.verb, write.path, failure.code, failure.reason));
    // The body back, as the server would answer with what it stored (a delete answers a Status),
    // or only its metadata when that was asked for.
    if (write.verb === 'delete') return Promise.resolve({ kind: 'Status', status: 'Success' } as T);
    const stored = structuredClone(write.body) as { metadata?: { name?: string; uid?: string } };
    // A created object gets its uid, as from the API server.
    if (write.verb === 'create' && stored?.metadata && !stored.metadata.uid) stored.metadata.uid = `uid-${stored.metadata.name}`;
    return Promise.resolve(
      (answer === 'metadata'
        ? { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: stored?.metadata ?? {} }
        : stored) as T,
    );
  }
}

export interface RecordedEvent {
  type: 'Warning' | 'Normal';
  target: EventTarget;
  reason: string;
  message: string;
}

export class RecordingEvents implements Events {
  readonly events: RecordedEvent[] = [];

  warn(target: EventTarget, reason: string, message: string): Promise<void> {
    this.events.push({ type: 'Warning', target, reason, message });
    return Promise.resolve();
  }

  normal(target: EventTarget, reason: string, message: string): Promise<void> {
    this.events.push({ type: 'Normal', target, reason, message });
    return Promise.resolve();
  }

  /** The events as one line each ("Warning ns/name Reason"). */
  lines(): string[] {
    return this.events.map((e) => `${e.type} ${e.target.namespace ? `${e.target.namespace}/` : ''}${e.target.name} ${e.reason}`);
  }
}

/** A store holding these objects, as a synced watch cache would. */
export function storeOf<T extends KubeObject>(objects: readonly T[] = []): Store<T> {
  const store = new Store<T>();
  for (const o of objects) store.upsert(o);
  return store;
}

// Waiting on a condition: the fake under test calls notify() when something changed, and
// until(pred) re-checks then. Nothing sleeps for a guessed time.

/** `until(pred)` resolves once pred holds, re-checked on every `notify()`; it rejects at a bound. */
export class Conditions {
  private readonly waiters = new Set<() => void>();

  notify(): void {
    for (const w of [...this.waiters]) w();
  }

  until(pred: () => boolean, what: string, ms = 3000): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!pred()) return;
        this.waiters.delete(check);
        clearTimeout(timer);
        resolve();
      };
      // A bound, not a guess: reaching it means the test failed.
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`timed out waiting for: ${what}`));
      }, ms);
      this.waiters.add(check);
      check();
    });
  }
}
