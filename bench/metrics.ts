// What the API server itself counts: writes by verb and resource (apiserver_request_total); and
// HNC's own histogram of its webhook answers. Writes are counted at the API server, not by the
// manager, so that nothing HNC does is missed.
import type { KubeClient } from '../kube/client.js';

export const WRITE_VERBS = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'APPLY', 'DELETECOLLECTION']);
/**
 * The API server writes its own identity lease every 10 s; nothing else in the control plane
 * writes while the benchmark measures (the controller-manager is given time to settle first).
 */
const BACKGROUND_RESOURCES = new Set(['leases']);
/**
 * Access reviews are POSTs that store nothing: questions, not writes. HNC asks them (its own access
 * to each propagated kind before propagating it; the webhooks' permission checks).
 */
const QUERY_RESOURCES = new Set([
  'selfsubjectaccessreviews',
  'subjectaccessreviews',
  'localsubjectaccessreviews',
  'selfsubjectreviews',
  'tokenreviews',
]);
const notAWrite = (resource: string) => BACKGROUND_RESOURCES.has(resource) || QUERY_RESOURCES.has(resource);

export interface RequestCount {
  /** Every label of the series, as the API server printed them: the series' identity. */
  series: string;
  verb: string;
  group: string;
  resource: string;
  subresource: string;
  code: string;
  dryRun: boolean;
  count: number;
}

export interface Histogram {
  /** Upper bounds (seconds) and cumulative counts, +Inf last. */
  buckets: Array<{ le: number; count: number }>;
  sum: number;
  count: number;
}

export interface Snapshot {
  at: number;
  requests: RequestCount[];
}

const LABELS = /(\w+)="((?:[^"\\]|\\.)*)"/g;

function labelsOf(s: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of s.matchAll(LABELS)) out[m[1]!] = m[2]!;
  return out;
}

export function parseMetrics(text: string, at = performance.now()): Snapshot {
  const requests: RequestCount[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('apiserver_request_total{')) {
      const close = line.lastIndexOf('}');
      const l = labelsOf(line.slice(0, close));
      requests.push({
        series: line.slice(0, close + 1),
        verb: l.verb ?? '',
        group: l.group ?? '',
        resource: l.resource ?? '',
        subresource: l.subresource ?? '',
        code: l.code ?? '',
        dryRun: !!l.dry_run,
        count: Number(line.slice(close + 1)),
      });
    }
  }
  return { at, requests };
}

export async function scrape(admin: KubeClient): Promise<Snapshot> {
  const res = await admin.raw('GET', '/metrics', { timeoutMs: 30_000 });
  if (res.statusCode !== 200) throw new Error(`GET /metrics: ${res.statusCode}`);
  return parseMetrics(res.body);
}

const key = (r: RequestCount) => r.series;

export interface WriteDelta {
  /** Non-dry-run writes, background resources excluded. */
  total: number;
  /** By `resource[/subresource] VERB code`, only non-zero entries. */
  byRequest: Record<string, number>;
  /** By resource[/subresource]. */
  byResource: Record<string, number>;
  /** Writes refused with 409 (conflicts, already exists). */
  conflicts: number;
  /** Writes that failed otherwise (4xx/5xx other than 409). */
  errors: number;
}

export function writeDelta(before: Snapshot, after: Snapshot): WriteDelta {
  const prior = new Map(before.requests.map((r) => [key(r), r.count]));
  const out: WriteDelta = { total: 0, byRequest: {}, byResource: {}, conflicts: 0, errors: 0 };
  for (const r of after.requests) {
    if (!WRITE_VERBS.has(r.verb) || r.dryRun || notAWrite(r.resource)) continue;
    const d = r.count - (prior.get(key(r)) ?? 0);
    if (d <= 0) continue;
    const res = r.subresource ? `${r.resource}/${r.subresource}` : r.resource;
    out.total += d;
    out.byRequest[`${res} ${r.verb} ${r.code}`] = (out.byRequest[`${res} ${r.verb} ${r.code}`] ?? 0) + d;
    out.byResource[res] = (out.byResource[res] ?? 0) + d;
    if (r.code === '409') out.conflicts += d;
    else if (!r.code.startsWith('2')) out.errors += d;
  }
  return out;
}

export function totalWrites(s: Snapshot): number {
  let n = 0;
  for (const r of s.requests) if (WRITE_VERBS.has(r.verb) && !r.dryRun && !notAWrite(r.resource)) n += r.count;
  return n;
}

/** Waits until the API server has seen no write for `quietMs` (the controller-manager settling, HNC's last status write). */
export async function waitQuiet(admin: KubeClient, quietMs = 2500, timeoutMs = 600_000): Promise<Snapshot> {
  const deadline = Date.now() + timeoutMs;
  let last = await scrape(admin);
  let since = Date.now();
  for (;;) {
    await new Promise((r) => setTimeout(r, 250));
    const now = await scrape(admin);
    if (totalWrites(now) !== totalWrites(last)) since = Date.now();
    last = now;
    if (Date.now() - since >= quietMs) return now;
    if (Date.now() > deadline) throw new Error(`the API server kept seeing writes for ${timeoutMs} ms`);
  }
}

export interface HistogramSummary {
  calls: number;
  meanMs: number;
  /** Share of calls that took at most 5 ms (the target's bound is a bucket edge). */
  within5ms: number;
  /** The bucket edge (ms) under which 50 % / 99 % of the calls fall: an upper bound, not a value. */
  p50UpperMs: number;
  p99UpperMs: number;
}

/** HNC's own view of its webhook latency: hnc_webhook_duration_seconds from its /metrics, all webhooks. */
export async function hncWebhookHistogram(port: number): Promise<Histogram> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  const h: Histogram = { buckets: [], sum: 0, count: 0 };
  for (const line of (await res.text()).split('\n')) {
    if (!line.startsWith('hnc_webhook_duration_seconds')) continue;
    const close = line.lastIndexOf('}');
    const v = Number(line.slice(close + 1));
    if (line.startsWith('hnc_webhook_duration_seconds_bucket')) {
      const le = /le="([^"]+)"/.exec(line)?.[1];
      const edge = le === '+Inf' ? Infinity : Number(le);
      const b = h.buckets.find((x) => x.le === edge);
      if (b) b.count += v;
      else h.buckets.push({ le: edge, count: v });
    } else if (line.startsWith('hnc_webhook_duration_seconds_sum')) h.sum += v;
    else if (line.startsWith('hnc_webhook_duration_seconds_count')) h.count += v;
  }
  h.buckets.sort((a, b) => a.le - b.le);
  return h;
}

/** Summary of the reviews between two readings of a histogram (bounded by its buckets' edges). */
export function histogramDelta(before: Histogram, after: Histogram): HistogramSummary {
  const count = after.count - before.count;
  const buckets = after.buckets.map((x) => ({ le: x.le, count: x.count - (before.buckets.find((y) => y.le === x.le)?.count ?? 0) }));
  const under = (q: number) => (buckets.find((x) => x.count >= q * count)?.le ?? Infinity) * 1000;
  const at5 = buckets.find((x) => Math.abs(x.le - 0.005) < 1e-9)?.count;
  return {
    calls: count,
    meanMs: count ? ((after.sum - before.sum) / count) * 1000 : NaN,
    within5ms: at5 === undefined || !count ? NaN : at5 / count,
    p50UpperMs: under(0.5),
    p99UpperMs: under(0.99),
  };
}
