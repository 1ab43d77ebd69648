// The id of the work in progress (one reconcile, one admission review), carried through its awaits
// by AsyncLocalStorage: every log line written while it runs names it (`rid`), as upstream HNC's
// loggerWithRID does, without each function passing a child logger along. The logger of
// kube/log.ts adds it to each line; the work queue and the webhook server start the contexts.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';

interface LogContext {
  readonly rid: string;
}

const current = new AsyncLocalStorage<LogContext>();

/** A new reconcile id: 8 hex digits, enough to tell apart the reconciles of one log. */
export function newRequestId(): string {
  return randomBytes(4).toString('hex');
}

/** Runs fn (and everything it awaits or starts) with `rid` on every log line. */
export function withRequestId<T>(rid: string, fn: () => T): T {
  return current.run({ rid }, fn);
}

/** The fields the work in progress adds to a log line: `{ rid }`, or nothing outside any. */
export function logContext(): Partial<LogContext> {
  return current.getStore() ?? {};
}
