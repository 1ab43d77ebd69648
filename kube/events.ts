// Kubernetes Events (core/v1) as HNC emits them: Warning, source component hnc.x-k8s.io. The same
// event (object, reason, message) is recorded once: a reconcile that retries does not spam.
// Events are writes like any other: they go through the Writer, under its QPS limit, and are
// counted (as creates of the resource "events").
import { createHash } from 'node:crypto';
import { EVENT_SOURCE_COMPONENT } from '../core/api/constants.js';
import { isAlreadyExists } from './client.js';
import type { Logger } from './watch/logger.js';
import type { Events, EventTarget, Writes } from './writes.js';

export class EventRecorder implements Events {
  private readonly recent = new Set<string>();

  constructor(
    private readonly writer: Pick<Writes, 'create'>,
    private readonly log: Logger,
  ) {}

  warn(target: EventTarget, reason: string, message: string): Promise<void> {
    return this.record('Warning', target, reason, message);
  }

  normal(target: EventTarget, reason: string, message: string): Promise<void> {
    return this.record('Normal', target, reason, message);
  }

  private async record(type: 'Warning' | 'Normal', target: EventTarget, reason: string, message: string): Promise<void> {
    // Keyed by time too for Normal events, so that a condition that comes back is recorded again.
    const id = createHash('sha256')
      .update(
        `${type}/${target.kind}/${target.namespace}/${target.name}/${target.uid}/${reason}/${message}/${type === 'Normal' ? Date.now() : ''}`,
      )
      .digest('hex')
      .slice(0, 16);
    if (this.recent.has(id)) return;
    this.recent.add(id);
    if (this.recent.size > 10_000) this.recent.clear();
    const namespace = target.namespace ?? 'default';
    const now = new Date().toISOString();
    try {
      await this.writer.create(`/api/v1/namespaces/${namespace}/events`, {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: `${target.name}.${id}`, namespace },
        involvedObject: {
          apiVersion: target.apiVersion,
          kind: target.kind,
          namespace: target.namespace,
          name: target.name,
          uid: target.uid,
        },
        reason,
        message,
        type,
        source: { component: EVENT_SOURCE_COMPONENT },
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
      });
    } catch (err) {
      if (!isAlreadyExists(err))
        this.log.warn({ namespace, name: target.name, reason, err: (err as Error).message }, 'could not record an event');
    }
  }
}
