// The messages between the main thread and the admission worker (webhooks/admission-thread.ts).
// Plain data only: they are copied by structured clone.
import type { ManagerIdentity } from '../core/validation/manager.js';
import type { Decision } from '../core/validation/decision.js';
import type { PolicyOptions } from '../core/hierarchy/policy.js';
import type { PropagationOptions } from '../core/propagation/decide.js';
import type { ClientSnapshot } from '../kube/client.js';
import type { Headers } from '../kube/kubeconfig.js';
import type { IndexedType, SourceChange } from './propagation-index.js';
import type { AdmissionRequest } from './review.js';

export interface AdmissionWorkerData {
  client: ClientSnapshot;
  /** Who HNC is: its own requests are exempt. */
  manager: ManagerIdentity;
  policy: PolicyOptions;
  /** What the conflict check reads of the propagation options (the copy policy is not needed). */
  propagation: Pick<PropagationOptions, 'noPropagationLabels'>;
  host?: string;
  port: number;
  cert: string;
  key: string;
  /** Paths whose reviews the main thread decides (the HRQ webhooks: they read its quota caches). */
  relayed: string[];
  logLevel: string;
}

/** One answered review, for the main thread's metrics: [path, milliseconds, denial reason or null if allowed]. */
export type ReviewRecord = [path: string, ms: number, denied: string | null];

/** The admission thread's event-loop delay (ms, sampled every LOOP_RESOLUTION_MS) and garbage-collection pauses since the last reset. */
export interface ThreadDelay {
  p50: number;
  p99: number;
  max: number;
  gcMaxMs: number;
  gcTotalMs: number;
  /** Milliseconds since the last reset. */
  wallMs: number;
  /**
   * Since the last reset (Linux, from /proc/thread-self/schedstat): the thread's time on a CPU, and
   * its time ready to run but waiting for one (a delay that no code of the thread can shorten).
   */
  cpuMs?: number;
  runQueueMs?: number;
  /** The thread's own V8 heap (bytes): used, and reserved (its isolate's, not the main thread's). */
  heapUsed?: number;
  heapTotal?: number;
}

export type ToWorker =
  | { t: 'cert'; cert: string; key: string }
  | { t: 'types'; types: IndexedType[] }
  | { t: 'sources'; changes: SourceChange[] }
  | { t: 'headers'; headers: Headers | undefined }
  /** Whether this replica reaches the API server (kube/reachability.ts): its caches follow the cluster. */
  | { t: 'reach'; ok: boolean }
  | { t: 'decided'; id: number; decision: Decision }
  | { t: 'loop'; id: number; reset: boolean }
  /** Send the reviews answered and lines logged so far (the metrics are being read). */
  | { t: 'flush'; id: number }
  | { t: 'stop'; drainMs: number };

export type FromWorker =
  | { t: 'listening'; port: number }
  | { t: 'synced' }
  | { t: 'probe' }
  /**
   * What was answered and logged since the last batch, sent every BATCH_MS, at once for a line at
   * warn or above, and in answer to a flush (with its id): one message, and one wake-up of the main
   * thread, per batch rather than per review.
   */
  | { t: 'batch'; records: ReviewRecord[]; lines: string[]; id?: number }
  | { t: 'relay'; id: number; path: string; review: AdmissionRequest }
  | { t: 'loop'; id: number; delay: ThreadDelay }
  | { t: 'stopped' };
