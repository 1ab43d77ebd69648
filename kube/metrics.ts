// Prometheus metrics (prom-client). One registry per process; the parts of the manager record into
// it through small hooks, and gauges that describe the model are computed when scraped.
import client from 'prom-client';
import type { QueueMetrics } from './watch/workqueue.js';

export type Registry = client.Registry;

export class Metrics {
  readonly registry = new client.Registry();
  readonly reconciles: client.Counter<'controller' | 'result'>;
  readonly reconcileSeconds: client.Histogram<'controller'>;
  readonly queueDepth: client.Gauge<'controller'>;
  readonly apiWrites: client.Counter<'verb' | 'result'>;
  readonly propagationSeconds: client.Histogram<'type'>;
  readonly webhookSeconds: client.Histogram<'webhook'>;
  readonly webhookDenials: client.Counter<'webhook' | 'reason'>;
  /** Run before the webhook metrics are read (the admission thread's reviews not yet sent in). */
  private webhookSync?: () => Promise<void>;

  constructor(collectors: {
    namespaces: () => number;
    objects: () => Array<{ type: string; sources: number; copies: number }>;
    conditions: () => Array<{ type: string; reason: string; count: number }>;
  }) {
    const r = this.registry;
    client.collectDefaultMetrics({ register: r, prefix: 'hnc_process_' });
    this.reconciles = new client.Counter({
      name: 'hnc_reconciles_total',
      help: 'Reconciles run, by controller and result',
      labelNames: ['controller', 'result'],
      registers: [r],
    });
    this.reconcileSeconds = new client.Histogram({
      name: 'hnc_reconcile_duration_seconds',
      help: 'Time a reconcile took',
      labelNames: ['controller'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
      registers: [r],
    });
    this.queueDepth = new client.Gauge({
      name: 'hnc_queue_depth',
      help: 'Keys waiting in a work queue',
      labelNames: ['controller'],
      registers: [r],
    });
    this.apiWrites = new client.Counter({
      name: 'hnc_api_writes_total',
      help: 'Writes the controller sent to the API server',
      labelNames: ['verb', 'result'],
      registers: [r],
    });
    this.propagationSeconds = new client.Histogram({
      name: 'hnc_propagation_duration_seconds',
      help: 'Time from a source change being seen to its copies in one namespace being written',
      labelNames: ['type'],
      buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
      registers: [r],
    });
    this.webhookSeconds = new client.Histogram({
      name: 'hnc_webhook_duration_seconds',
      help: 'Time to answer an admission review',
      labelNames: ['webhook'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.25, 1],
      registers: [r],
      collect: () => this.webhookSync?.(),
    });
    this.webhookDenials = new client.Counter({
      name: 'hnc_webhook_denials_total',
      help: 'Admission reviews denied, by webhook and reason',
      labelNames: ['webhook', 'reason'],
      registers: [r],
      collect: () => this.webhookSync?.(),
    });
    new client.Gauge({
      name: 'hnc_namespaces',
      help: 'Namespaces in the forest',
      registers: [r],
      collect() {
        this.set(collectors.namespaces());
      },
    });
    new client.Gauge({
      name: 'hnc_source_objects',
      help: 'Source objects by propagated type',
      labelNames: ['type'],
      registers: [r],
      collect() {
        this.reset();
        for (const o of collectors.objects()) this.set({ type: o.type }, o.sources);
      },
    });
    new client.Gauge({
      name: 'hnc_propagated_objects',
      help: 'Copies in place by propagated type',
      labelNames: ['type'],
      registers: [r],
      collect() {
        this.reset();
        for (const o of collectors.objects()) this.set({ type: o.type }, o.copies);
      },
    });
    new client.Gauge({
      name: 'hnc_namespace_conditions',
      help: 'Namespaces with a condition, by type and reason',
      labelNames: ['type', 'reason'],
      registers: [r],
      collect() {
        this.reset();
        for (const c of collectors.conditions()) this.set({ type: c.type, reason: c.reason }, c.count);
      },
    });
  }

  /** `sync` brings the webhook metrics up to date (the admission thread's batched reviews) whenever they are read. */
  syncWebhooksWith(sync: () => Promise<void>): void {
    this.webhookSync = sync;
  }
}

/** Work queue hooks that feed the metrics of one controller. */
export function queueMetrics(metrics: Metrics | undefined, controller: string): QueueMetrics | undefined {
  if (!metrics) return undefined;
  return {
    depth: (n) => metrics.queueDepth.set({ controller }, n),
    done: (_key, ms, failed) => {
      metrics.reconciles.inc({ controller, result: failed ? 'error' : 'success' });
      metrics.reconcileSeconds.observe({ controller }, ms / 1000);
    },
  };
}
