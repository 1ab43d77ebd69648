// What the reconcilers may do to the cluster: the writes (Writes) and the Events (Events). The
// Writer (kube/writer.ts) and the EventRecorder (kube/events.ts) are the real ones; a unit test
// gives a reconciler an in-memory recorder instead (kube/testing.ts), so its glue is tested in
// milliseconds. The real API server stays the integration tests' job.
import type { RequestOptions } from './client.js';

export type WriteVerb = 'create' | 'update' | 'patch' | 'delete';

/**
 * What a create or an update answers: the whole object the server stored (the default), or only
 * its metadata (`metadata`: a PartialObjectMetadata, with the new resourceVersion), for a caller
 * that reads nothing else. A copy's answer then leaves out its content: less for the API server to
 * send and for HNC to parse, on every one of the thousands of writes of a propagation.
 */
export type WriteAnswer = 'object' | 'metadata';

export interface WriteOptions {
  query?: RequestOptions['query'];
  answer?: WriteAnswer;
}

/** With preconditions, a delete happens only if the object still has that uid and resourceVersion. */
export interface DeleteOptions {
  query?: RequestOptions['query'];
  preconditions?: { uid?: string; resourceVersion?: string };
}

export interface Writes {
  /** POST to a collection path; resolves to the object the server stored (or its metadata, as asked). */
  create<T>(path: string, body: unknown, opts?: WriteOptions): Promise<T>;
  /** PUT of a whole object; its metadata.resourceVersion makes it fail with 409 on a stale read. */
  replace<T>(path: string, body: unknown, opts?: WriteOptions): Promise<T>;
  /** A JSON merge patch (only the keys that differ). */
  mergePatch<T>(path: string, patch: unknown): Promise<T>;
  delete<T>(path: string, opts?: DeleteOptions): Promise<T>;
}

/** The object an Event is about (its involvedObject). */
export interface EventTarget {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  name: string;
  uid?: string;
}

/** Kubernetes Events about an object (best effort: recording one never fails a reconcile). */
export interface Events {
  warn(target: EventTarget, reason: string, message: string): Promise<void>;
  normal(target: EventTarget, reason: string, message: string): Promise<void>;
}
