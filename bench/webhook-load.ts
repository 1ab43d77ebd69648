// Webhook latency under load: AdmissionReviews POSTed straight to HNC's webhook server over
// keep-alive HTTPS, as the API server sends them, timed by the client from each review's scheduled
// send (the webhook's own latency, what the API server waits for).
import { randomUUID } from 'node:crypto';
import https from 'node:https';
import { pool, sleep, summarize, type Summary } from './util.js';
import { prng } from './topology.js';
import { INHERITED_FROM } from './tracker.js';

const PATHS = {
  mutateNamespace: '/mutate-namespace',
  namespaces: '/validate-v1-namespace',
  hierarchy: '/validate-hnc-x-k8s-io-v1alpha2-hierarchyconfigurations',
  objects: '/validate-objects',
  resourceQuotaStatus: '/validate-hnc-x-k8s-io-v1alpha2-resourcequotasstatus',
} as const;

export interface LoadTargets {
  root: string;
  /** Namespaces with a parent, none of them subnamespaces (leaves preferred). */
  leaves: string[];
  /** A namespace elsewhere in the tree, to "move" leaves under (dry-run / review only). */
  otherParent: string;
  /** One copy in a leaf: kind role, its name and its source namespace. */
  copy: { namespace: string; name: string; from: string };
}

export interface LatencyResult {
  /** "open" (Poisson arrivals at a fixed rate: latency at that load) or "closed" (fixed concurrency: saturation throughput). */
  mode: 'open' | 'closed';
  requests: number;
  /** Offered rate (open) or concurrency (closed). */
  offered: number;
  seconds: number;
  perSecond: number;
  /** Most requests in flight at once. */
  maxInFlight: number;
  /** Open loop: from each request's scheduled send time (the load generator's own lateness included, no coordinated omission). */
  overall: Summary;
  /** From the moment each request was actually handed to the client (what the server and the network took). */
  fromSend: Summary;
  /** How late each request was handed to the client after its scheduled time: the load generator's own lateness. */
  sendLateness: Summary;
  byRequest: Record<string, Summary & { denied: number; errors: number }>;
  /**
   * The reviews that wait for the API server (SubjectAccessReviews of a parent change) apart from
   * all the others, which are decided from memory.
   */
  bySubjectAccessReview: { with: Summary; without: Summary };
  /** Every request, when asked for (to cut a window out of the run). */
  samples?: Sample[];
}

export type Load = { mode: 'open'; rate: number } | { mode: 'closed'; concurrency: number };

/**
 * One request: its kind, when it was due (ms since the epoch, comparable across processes), how
 * long it took from then, and how late it was sent.
 */
export type Sample = {
  name: string;
  at: number;
  ms: number;
  /** Milliseconds between the scheduled send time and the actual one (0 in a closed loop). */
  late: number;
  denied: boolean;
  error: boolean;
};

/** Open-loop send times (ms after the start): exponential gaps at `rate`/s from a fixed seed, the same pattern every run. */
export function arrivals(rate: number, count: number, seed = 7): number[] {
  const rnd = prng(seed);
  const out: number[] = [];
  let due = 0;
  for (let i = 0; i < count; i++) {
    due += (-Math.log(1 - rnd()) / rate) * 1000;
    out.push(due);
  }
  return out;
}

/** What a request's sender reports; the driver adds when it was due and how late it went out. */
export type Sent = Omit<Sample, 'at' | 'ms' | 'late'>;

/**
 * Drives `count` requests: open loop (exponential inter-arrival times at `rate`/s, each request
 * timed from its *scheduled* send time, whatever is in flight and however late the generator
 * itself is: a stall of the generator or of the server counts against every request it delays)
 * or closed loop (`concurrency` requests always in flight).
 */
export async function drive(load: Load, count: number, send: (i: number) => Promise<Sent>, keepSamples = false): Promise<LatencyResult> {
  const samples: Sample[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const one = async (i: number, due: number) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    // Timed from the earlier of its due time and its actual send: a request sent up to a
    // millisecond early (timers fire on whole milliseconds, below) is timed from when it went out,
    // never credited with the time before it was sent.
    const start = Math.min(due, performance.now());
    const late = Math.max(0, performance.now() - due);
    try {
      const sent = await send(i);
      samples.push({ ...sent, at: performance.timeOrigin + due, ms: performance.now() - start, late });
    } finally {
      inFlight--;
    }
  };
  const t0 = performance.now();
  if (load.mode === 'closed') {
    await pool(
      Array.from({ length: count }, (_, i) => i),
      load.concurrency,
      (i) => one(i, performance.now()),
    );
  } else {
    const pending: Promise<void>[] = [];
    const times = arrivals(load.rate, count);
    for (let i = 0; i < count; i++) {
      const due = t0 + times[i]!;
      const wait = due - performance.now();
      // Timers fire on whole milliseconds: sleep to the one before, then send (the rest is reported as lateness).
      if (wait >= 1) await sleep(Math.floor(wait));
      pending.push(one(i, due));
    }
    await Promise.all(pending);
  }
  const seconds = (performance.now() - t0) / 1000;
  return { ...summarizeSamples(samples, load, seconds, maxInFlight), ...(keepSamples ? { samples } : {}) };
}

const SAR = 'SubjectAccessReview';

export function summarizeSamples(samples: readonly Sample[], load: Load, seconds: number, maxInFlight: number): LatencyResult {
  const byName = new Map<string, Sample[]>();
  for (const s of samples) {
    const list = byName.get(s.name);
    if (list) list.push(s);
    else byName.set(s.name, [s]);
  }
  const byRequest: LatencyResult['byRequest'] = {};
  for (const [name, list] of byName)
    byRequest[name] = {
      ...summarize(list.map((s) => s.ms)),
      denied: list.filter((s) => s.denied).length,
      errors: list.filter((s) => s.error).length,
    };
  return {
    mode: load.mode,
    requests: samples.length,
    offered: load.mode === 'open' ? load.rate : load.concurrency,
    seconds,
    perSecond: samples.length / seconds,
    maxInFlight,
    overall: summarize(samples.map((s) => s.ms)),
    fromSend: summarize(samples.map((s) => s.ms - s.late)),
    sendLateness: summarize(samples.map((s) => s.late)),
    byRequest,
    bySubjectAccessReview: {
      with: summarize(samples.filter((s) => s.name.includes(SAR)).map((s) => s.ms)),
      without: summarize(samples.filter((s) => !s.name.includes(SAR)).map((s) => s.ms)),
    },
  };
}

/**
 * The requests sent within [from, to] (epoch ms), summarized as a run of their own: the latency
 * seen while something else (a propagation) was going on. In flight counts every request of the
 * run that overlapped one sent in the window.
 */
export function windowOf(samples: readonly Sample[], load: Load, from: number, to: number): LatencyResult {
  return windowsOf([{ samples, from, to }], load);
}

/**
 * Several such windows, each cut from a run of its own, pooled into one summary (a tail from
 * several propagations rather than the ten slowest reviews of one); seconds add up, and in flight
 * is the most of any window.
 */
export function windowsOf(runs: ReadonlyArray<{ samples: readonly Sample[]; from: number; to: number }>, load: Load): LatencyResult {
  const inside: Sample[] = [];
  let max = 0;
  let seconds = 0;
  for (const { samples, from, to } of runs) {
    for (const s of samples) if (s.at >= from && s.at <= to) inside.push(s);
    const edges = samples.flatMap((s) => [
      { t: s.at, d: 1 },
      { t: s.at + s.ms, d: -1 },
    ]);
    edges.sort((a, b) => a.t - b.t || a.d - b.d);
    let now = 0;
    for (const e of edges) {
      now += e.d;
      if (e.t >= from && e.t <= to) max = Math.max(max, now);
    }
    seconds += (to - from) / 1000;
  }
  return summarizeSamples(inside, load, seconds, max);
}

/** Who the load's reviews are from (bench/scenario.ts lets it re-parent namespaces under the root). */
export const LOAD_USER = { username: 'bench-user', groups: ['system:authenticated'] };
const USER = LOAD_USER;
const gvk = (group: string, version: string, kind: string) => ({ group, version, kind });
const gvr = (group: string, version: string, resource: string) => ({ group, version, resource });

export type Review = { path: string; name: string; body: string };

function review(path: string, name: string, request: Record<string, unknown>): Review {
  return {
    path,
    name,
    body: JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: { uid: randomUUID(), userInfo: USER, ...request },
    }),
  };
}

function namespaceObject(name: string, labels: Record<string, string>) {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } };
}

/** The mix: each kind of request HNC's webhooks decide, one after another. */
function reviews(t: LoadTargets, i: number, labelsOf: (ns: string) => Record<string, string>): Review {
  const leaf = t.leaves[i % t.leaves.length]!;
  const nsGvk = gvk('', 'v1', 'Namespace');
  const nsGvr = gvr('', 'v1', 'namespaces');
  const hcGvk = gvk('hnc.x-k8s.io', 'v1alpha2', 'HierarchyConfiguration');
  const hcGvr = gvr('hnc.x-k8s.io', 'v1alpha2', 'hierarchyconfigurations');
  const roleGvk = gvk('rbac.authorization.k8s.io', 'v1', 'Role');
  const roleGvr = gvr('rbac.authorization.k8s.io', 'v1', 'roles');
  const hc = (ns: string, parent: string) => ({
    apiVersion: 'hnc.x-k8s.io/v1alpha2',
    kind: 'HierarchyConfiguration',
    metadata: { name: 'hierarchy', namespace: ns },
    spec: { parent },
  });
  const role = (ns: string, name: string, extra: Record<string, string> = {}) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name, namespace: ns, labels: extra },
    rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
  });
  const labels = labelsOf(leaf);
  switch (i % 7) {
    case 0:
      return review(PATHS.mutateNamespace, 'namespace CREATE (mutator)', {
        kind: nsGvk,
        resource: nsGvr,
        name: `bench-new-${i}`,
        operation: 'CREATE',
        object: namespaceObject(`bench-new-${i}`, {}),
      });
    case 1:
      return review(PATHS.namespaces, 'namespace UPDATE', {
        kind: nsGvk,
        resource: nsGvr,
        name: leaf,
        operation: 'UPDATE',
        object: namespaceObject(leaf, { ...labels, team: 'x' }),
        oldObject: namespaceObject(leaf, labels),
      });
    case 2:
      return review(PATHS.namespaces, 'namespace DELETE', {
        kind: nsGvk,
        resource: nsGvr,
        name: leaf,
        operation: 'DELETE',
        oldObject: namespaceObject(leaf, labels),
      });
    case 3: {
      const parent = labelsParent(labels, leaf) ?? t.root;
      return review(PATHS.hierarchy, 'hierarchy UPDATE, same parent', {
        kind: hcGvk,
        resource: hcGvr,
        namespace: leaf,
        name: 'hierarchy',
        operation: 'UPDATE',
        object: hc(leaf, parent),
        oldObject: hc(leaf, parent),
      });
    }
    case 4: {
      const parent = labelsParent(labels, leaf) ?? t.root;
      return review(PATHS.hierarchy, 'hierarchy UPDATE, new parent (SubjectAccessReviews)', {
        kind: hcGvk,
        resource: hcGvr,
        namespace: leaf,
        name: 'hierarchy',
        operation: 'UPDATE',
        object: hc(leaf, t.otherParent),
        oldObject: hc(leaf, parent),
      });
    }
    case 5:
      return review(PATHS.objects, 'object CREATE (source)', {
        kind: roleGvk,
        resource: roleGvr,
        namespace: leaf,
        name: `bench-obj-${i}`,
        operation: 'CREATE',
        object: role(leaf, `bench-obj-${i}`),
      });
    default: {
      const c = t.copy;
      const old = role(c.namespace, c.name, { [INHERITED_FROM]: c.from });
      const changed = { ...old, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }] };
      return review(PATHS.objects, 'object UPDATE of a copy (denied)', {
        kind: roleGvk,
        resource: roleGvr,
        namespace: c.namespace,
        name: c.name,
        operation: 'UPDATE',
        object: changed,
        oldObject: old,
      });
    }
  }
}

/**
 * The API server's raise of a namespace's HRQ singleton usage (what its quota system sends the
 * `resourcesquotasstatus` webhook before admitting a Service or a Pod): `services` from k-1 to k and
 * `requests.cpu` by 100m, k cycling 1..3 over namespaces spread across the tree, so that each is
 * judged against every HRQ above it (subtree sums) and those under a 2-Service HRQ are refused at 3.
 * Dry-run reviews: the decision is the same, but no reservation is held, so the quota state does
 * not drift from one load to the next (a real raise also records one: a map entry and a timer).
 */
export function quotaStatusReview(namespaces: readonly string[], i: number): Review {
  const ns = namespaces[(i * 7919) % namespaces.length]!;
  const k = 1 + (i % 3);
  const rq = (n: number) => ({
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: 'hrq.hnc.x-k8s.io', namespace: ns, resourceVersion: '1' },
    status: { used: { services: String(n), 'requests.cpu': `${100 * n}m` } },
  });
  return review(PATHS.resourceQuotaStatus, `ResourceQuota status raise to services=${k}`, {
    kind: gvk('', 'v1', 'ResourceQuota'),
    resource: gvr('', 'v1', 'resourcequotas'),
    subResource: 'status',
    namespace: ns,
    name: 'hrq.hnc.x-k8s.io',
    operation: 'UPDATE',
    userInfo: { username: 'system:apiserver', groups: ['system:masters'] },
    dryRun: true,
    object: rq(k),
    oldObject: rq(k - 1),
  });
}

/** The parent a namespace's tree labels imply (the ancestor at depth 1). */
function labelsParent(labels: Record<string, string>, _ns: string): string | undefined {
  for (const [k, v] of Object.entries(labels))
    if (v === '1' && k.endsWith('.tree.hnc.x-k8s.io/depth')) return k.slice(0, -'.tree.hnc.x-k8s.io/depth'.length);
  return undefined;
}

/**
 * Connections the direct client keeps open: 500 reviews/s answered in a few milliseconds need two
 * or three at once, a stall of 50 ms about 25; beyond the pool, reviews wait in the client (timed
 * from their scheduled send, so the wait counts against them).
 */
export const DIRECT_POOL = 32;

/** POSTs one review over `agent`: the answer's status and whether it allowed the request. */
function postReview(agent: https.Agent, port: number, r: Review): Promise<{ status: number; allowed: boolean }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path: r.path,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(r.body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          let allowed = false;
          try {
            allowed =
              (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { response?: { allowed?: boolean } }).response?.allowed === true;
          } catch {
            allowed = false;
          }
          resolve({ status: res.statusCode ?? 0, allowed });
        });
      },
    );
    req.on('error', reject);
    req.end(r.body);
  });
}

/**
 * A client for HNC's webhook server on 127.0.0.1:`port`, trusting HNC's own CA: node's https with
 * a keep-alive agent, as the API server keeps its connections to a webhook open.
 */
export function directClient(
  port: number,
  caPem: string,
  targets: LoadTargets,
  labelsOf: (ns: string) => Record<string, string>,
  /** Another mix than HNC's usual one (e.g. quotaStatusReview). */
  generate?: (i: number) => Review,
  poolSize = DIRECT_POOL,
) {
  const agent = new https.Agent({ keepAlive: true, maxSockets: poolSize, ca: caPem });
  const send = async (i: number): Promise<Sent> => {
    const r = generate ? generate(i) : reviews(targets, i, labelsOf);
    try {
      const res = await postReview(agent, port, r);
      return { name: r.name, denied: !res.allowed, error: res.status !== 200 };
    } catch {
      return { name: r.name, denied: false, error: true };
    }
  };
  return {
    /** Every connection of the pool opened, and the JIT warmed up, not measured. */
    warm: (n: number) => drive({ mode: 'closed', concurrency: poolSize }, Math.max(n, 4 * poolSize), send),
    run: (load: Load, count: number, keepSamples = false) => drive(load, count, send, keepSamples),
    close: () => agent.destroy(),
  };
}
