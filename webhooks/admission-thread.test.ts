// The admission thread from the main thread's side, with a real worker and real HTTPS on
// 127.0.0.1 but no API server (its address refuses connections): the worker's caches never
// load, so its validators answer "starting up" and the mutator allows, and what it answers is
// counted in the main thread's metrics. What it decides once synced is the integration tests'.
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { Webhook } from '../core/api/constants.js';
import type { PolicyOptions } from '../core/hierarchy/policy.js';
import { KubeClient } from '../kube/client.js';
import { createLogger } from '../kube/log.js';
import { Metrics } from '../kube/metrics.js';
import { CertificateAuthority } from '../kube/pki.js';
import { namespaceReview, postHttps } from './testing.js';
import { AdmissionThread } from './admission-thread.js';

const threads: AdmissionThread[] = [];
afterEach(async () => {
  await Promise.all(threads.splice(0).map((t) => t.stop()));
});

async function start(opts: { port?: number; onFatal?: (err: Error) => void } = {}) {
  const ca = await CertificateAuthority.create('test-ca');
  const pair = await ca.issue({ commonName: 'webhook', usage: 'server', ips: ['127.0.0.1'] });
  const client = KubeClient.fromConnection({
    kind: 'direct',
    server: 'https://127.0.0.1:1',
    tls: { rejectUnauthorized: true },
    headers: () => ({}),
    source: 'test',
  });
  const metrics = new Metrics({ namespaces: () => 0, objects: () => [], conditions: () => [] });
  const lines: string[] = [];
  const thread = new AdmissionThread({
    client,
    manager: { namespace: 'hnc-system' },
    policy: {} satisfies PolicyOptions,
    propagation: {},
    host: '127.0.0.1',
    port: opts.port ?? 0,
    cert: pair.cert,
    key: pair.key,
    logger: createLogger({ level: 'info', format: 'json', destination: { write: (l: string) => lines.push(l) } }),
    metrics,
    onFatal: opts.onFatal ?? ((err) => expect.fail(`the admission thread failed: ${err.message}`)),
  });
  threads.push(thread);
  return { thread, metrics, ca: ca.certPem, lines };
}

const send = (port: number, ca: string, path: string) => postHttps(port, ca, path, namespaceReview());

// Each test starts workers that load TypeScript through tsx: seconds on a busy machine.
describe('AdmissionThread', { timeout: 60_000 }, () => {
  it('serves from its worker: validators refuse while its caches load, the mutator allows, and the main metrics count both', async () => {
    const { thread, metrics, ca, lines } = await start();
    const port = await thread.port;
    expect(thread.synced).toBe(false);
    const validated = JSON.parse((await send(port, ca, Webhook.namespaces.path)).body) as {
      response: { allowed: boolean; status: { code: number } };
    };
    expect(validated.response).toMatchObject({ allowed: false, status: { code: 503 } });
    const mutated = JSON.parse((await send(port, ca, Webhook.namespaceMutator.path)).body) as { response: { allowed: boolean } };
    expect(mutated.response.allowed).toBe(true);
    const count = async (webhook: string) =>
      (await metrics.webhookSeconds.get()).values.find(
        (v) => v.metricName === 'hnc_webhook_duration_seconds_count' && v.labels.webhook === webhook,
      )?.value ?? 0;
    // The worker sends what it answered in batches; reading the metrics brings in every review answered before.
    expect(await count(Webhook.namespaces.name)).toBe(1);
    expect(await count(Webhook.namespaceMutator.name)).toBe(1);
    const denials = (await metrics.webhookDenials.get()).values;
    expect(denials).toEqual([
      expect.objectContaining({ value: 1, labels: { webhook: Webhook.namespaces.name, reason: 'ServiceUnavailable' } }),
    ]);
    // The denial's log line, written by the main logger with the worker's fields.
    await expect
      .poll(() => lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'denied'))
      .toMatchObject({ thread: 'admission', path: Webhook.namespaces.path, reason: 'ServiceUnavailable' });
  });

  it('reports its own event-loop delay and GC pauses on request, and nothing once stopped', async () => {
    const { thread } = await start();
    await thread.port;
    const first = await thread.eventLoop(true);
    expect(first).toBeDefined();
    for (const v of Object.values(first!)) expect(Number.isFinite(v) && v >= 0).toBe(true);
    expect(first!.p50).toBeLessThanOrEqual(first!.p99);
    expect(first!.p99).toBeLessThanOrEqual(first!.max);
    // Where the kernel keeps per-thread scheduler statistics (Linux; not every sandbox), its own
    // time on a CPU and waiting for one, since the last reset, which the second ask counts from.
    if (existsSync('/proc/thread-self/schedstat')) {
      await thread.eventLoop(false);
      const second = await thread.eventLoop(true);
      expect(second!.cpuMs).toBeGreaterThan(0);
      expect(second!.runQueueMs).toBeGreaterThanOrEqual(0);
      expect(second!.cpuMs!).toBeLessThanOrEqual(second!.wallMs + 1);
    }
    await thread.stop();
    expect(await thread.eventLoop()).toBeUndefined();
  });

  it('fails to start, with why, when its port is taken; a stop is not a failure', async () => {
    const first = await start();
    const port = await first.thread.port;
    let failed: Error | undefined;
    const second = await start({ port, onFatal: (err) => (failed = err) });
    await expect(second.thread.port).rejects.toThrow(/the admission worker could not start: .*EADDRINUSE/);
    await first.thread.stop();
    await expect(send(port, first.ca, Webhook.namespaces.path)).rejects.toThrow(/ECONNREFUSED/);
    expect(failed).toBeUndefined();
  });
});
