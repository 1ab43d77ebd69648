// The id of the work in progress (one reconcile, one admission review): every log line written for
// it names it (`rid`), as upstream HNC's loggerWithRID does. The id is passed along explicitly: the
// work queue hands each reconcile its own (kube/watch/workqueue.ts), the webhook server uses the
// review's uid, and each logs it as a field. Not AsyncLocalStorage: on Node 20 it hooks every
// promise of the process, which cost a propagation about 2 µs per await (docs/benchmarks.md).
import { randomBytes } from 'node:crypto';

let sequence = randomBytes(4).readUInt32BE(0);

/**
 * A new reconcile id: 8 hex digits. A counter (never the same twice in 2^32 reconciles of one
 * process, and cheaper than fresh random bytes), scrambled by an odd multiplier (a bijection
 * modulo 2^32) so that ids logged one after another do not look alike.
 */
export function newRequestId(): string {
  sequence = (sequence + 1) >>> 0;
  return (Math.imul(sequence, 0x9e3779b1) >>> 0).toString(16).padStart(8, '0');
}
