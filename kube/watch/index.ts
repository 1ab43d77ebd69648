// The watch layer: reflectors fill stores from list+watch, handlers enqueue keys on work queues,
// and rate limiters keep retries and writes polite.
export { Reflector, isGone, stripManagedFields } from './reflector.js';
export type { EventHandler, EventType, ReflectorMetrics, ReflectorOptions } from './reflector.js';
export { Store, deepFreeze, makeKey, objectKey, splitKey } from './store.js';
export type { IndexFunc, KubeObject, ReadonlyStore, StoreChange } from './store.js';
export { WorkQueue } from './workqueue.js';
export type { QueueHandler, QueueMetrics, QueueStats, ReconcileResult, WorkQueueOptions } from './workqueue.js';
export { Backoff, TokenBucket, backoffDelay, sleep } from './ratelimit.js';
export type { BackoffOptions, StatefulBackoffOptions, TokenBucketOptions } from './ratelimit.js';
export { LineSplitter } from './lines.js';
export { noopLogger } from './logger.js';
export type { Logger } from './logger.js';
