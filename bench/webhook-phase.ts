// The webhook phase of a topology: HNC restarted with its webhooks (the last restart one with its
// certificate and configurations in place, which must write nothing), then open-loop loads of
// AdmissionReviews straight to its webhook server at each offered rate, the same load at the
// highest rate while Roles are copied (bench/webhook-tail.ts), and a closed loop for saturation.
// The review floor (bench/review-floor.ts) takes the same loads in the same minutes.
import { isAlreadyExists, type KubeClient } from '../kube/client.js';
import type { Controller } from './hnc-process.js';
import { LoadGenerator } from './hnc-process.js';
import { hncWebhookHistogram, histogramDelta, scrape, waitQuiet, writeDelta, type WriteDelta } from './metrics.js';
import type { TopologyRun } from './options.js';
import { memory, type WebhookLoad, type WebhookResult } from './results.js';
import { ReviewFloorServer } from './review-floor.js';
import { descendants } from './topology.js';
import { log, sleep } from './util.js';
import { versionDiff, versions } from './verify.js';
import { LOAD_USER, type LoadTargets } from './webhook-load.js';
import { loadDuringCopies } from './webhook-tail.js';

/** How the phase gets HNC's next process (spawned ahead, code loaded) and starts it. */
export interface Restarts {
  next(): Promise<Controller>;
  start(hnc: Controller, label: string, webhooks: boolean): Promise<unknown>;
}

/** HNC's event loops and webhook histogram, read around each load. */
export interface Probe {
  /** Event-loop delay and GC since the last call (and reset for the next). */
  loops(): Promise<Pick<WebhookLoad, 'serverEventLoop' | 'admissionEventLoop'>>;
  /** HNC's own histogram of its answers (undefined without its metrics). */
  histogram(): Promise<Awaited<ReturnType<typeof hncWebhookHistogram>> | undefined>;
}

export function probe(hnc: Controller, metricsPort: number | undefined): Probe {
  return {
    loops: async () => {
      const st = await hnc.stats(true);
      return {
        serverEventLoop: { ...st.eventLoop, gcMaxMs: st.gc.maxMs, gcTotalMs: st.gc.totalMs },
        ...(st.admissionEventLoop ? { admissionEventLoop: st.admissionEventLoop } : {}),
      };
    },
    histogram: () => (metricsPort ? hncWebhookHistogram(metricsPort).catch(() => undefined) : Promise.resolve(undefined)),
  };
}

/** One open-loop load at `rate`, with HNC's side of it (its histogram only when the load was HNC's). */
export async function openLoad(gen: LoadGenerator, rate: number, seconds: number, p: Probe, hncs: boolean): Promise<WebhookLoad> {
  await p.loops();
  const hb = hncs ? await p.histogram() : undefined;
  const res = await gen.run({ mode: 'open', rate }, Math.max(50, Math.round(rate * seconds)));
  const ha = hncs ? await p.histogram() : undefined;
  return { ...res, ...(await p.loops()), ...(hb && ha ? { serverSide: histogramDelta(hb, ha) } : {}) };
}

/** Stops HNC and starts it again with its webhooks `restarts` times; the writes of the first start and of the last. */
async function restartWithWebhooks(run: TopologyRun, r: Restarts): Promise<WebhookResult['restartWrites']> {
  const restarts = Math.max(1, run.opts.webhookRestarts);
  await run.hnc.stop();
  let first: WriteDelta | undefined;
  let last: WriteDelta | undefined;
  let changed = { changed: 0, created: 0, deleted: 0 };
  for (let i = 0; i < restarts; i++) {
    // A webhook server keeps the API server's connections open: end the process rather than drain them.
    if (i > 0) await run.hnc.kill();
    const rv = await versions(run.admin);
    run.hnc = await r.next();
    const m0 = await scrape(run.admin);
    await r.start(run.hnc, `webhooks-${i + 1}`, true);
    await run.hnc.idle();
    last = writeDelta(m0, await waitQuiet(run.admin, run.opts.quietMs));
    first ??= last;
    changed = versionDiff(rv, await versions(run.admin));
  }
  return { first: first!, last: last!, objectsChangedLast: changed, restarts };
}

/** The namespaces the reviews name, and their labels as the API server would send them. */
async function loadData(run: TopologyRun, port: number) {
  const { admin, topology, parent, sources, tracker } = run;
  const secret = await admin.get<{ data: Record<string, string> }>('/api/v1/namespaces/hnc-system/secrets/hnc-webhook-server-cert');
  const ca = Buffer.from(secret.data['ca.crt']!, 'base64').toString('utf8');
  const leaves = topology.namespaces.filter((ns) => !descendants(parent, ns).length && !ns.includes('-mv-')).slice(0, 200);
  const rootRole = sources.find((s) => s.namespace === topology.root && s.kind === 'roles');
  const targets: LoadTargets = {
    root: topology.root,
    leaves,
    otherParent: topology.moveParents[1]!,
    copy: { namespace: leaves[0]!, name: rootRole?.name ?? 'bench-root-0', from: topology.root },
  };
  const labels: Record<string, Record<string, string>> = {};
  for (const ns of [...leaves, topology.root]) labels[ns] = tracker.labelsOf(ns);
  return { port, ca, targets, labels };
}

/** A load generator against the review floor's server, with the same reviews as HNC's. */
async function reviewFloor(data: Awaited<ReturnType<typeof loadData>>) {
  const server = await ReviewFloorServer.start();
  const gen = await LoadGenerator.start({ ...data, port: server.port, ca: server.ca });
  return {
    gen,
    stop: async () => {
      await gen.stop();
      await server.stop();
    },
  };
}

export async function webhookPhase(run: TopologyRun, restarts: Restarts): Promise<WebhookResult> {
  const { opts, name } = run;
  // The load's user may change the hierarchy, as a platform team's may: its parent changes are
  // allowed, each after HNC's check that it may administer the namespaces concerned.
  await grantLoadUser(run.admin);
  const restartWrites = await restartWithWebhooks(run, restarts);
  const hnc = run.hnc;
  const data = await loadData(run, run.plane.webhookPort);
  const direct = await LoadGenerator.start(data);
  const idle = memory(await hnc.stats(), hnc.baseline);
  // Steady: after V8's memory reducer has given back what the heaps grew into during the start.
  await sleep(opts.webhookSteadyMs);
  const steady = memory(await hnc.stats(), hnc.baseline);
  log(`${name}: RSS with webhooks on ${idle.rssMB} MB right after the start, ${steady.rssMB} MB ${opts.webhookSteadyMs / 1000} s later`);
  const p = probe(hnc, (await hnc.stats()).metricsPort);
  const rate = Math.max(...opts.webhookRates);
  const floor = opts.reviewFloor && opts.webhookRates.length ? await reviewFloor(data) : undefined;
  await direct.warm(Math.min(400, opts.webhookRequests));
  await floor?.gen.warm(Math.min(400, opts.webhookRequests));
  // The review floor at rest, right before HNC's own loads, at the highest rate.
  const floorAtRest = floor ? await openLoad(floor.gen, rate, opts.webhookSeconds, p, false) : undefined;
  const direct_: WebhookLoad[] = [];
  for (const r of opts.webhookRates) {
    const load = await openLoad(direct, r, opts.webhookSeconds, p, true);
    direct_.push(load);
    log(`${name}: webhook at ${r}/s: p50 ${load.overall.p50.toFixed(2)} ms, p99 ${load.overall.p99.toFixed(2)} ms`);
  }
  const copies =
    opts.webhookPropagationSeconds > 0 && opts.webhookRates.length ? await loadDuringCopies(run, p, direct, floor?.gen) : undefined;
  await floor?.stop();
  await p.loops();
  const sat = await direct.run({ mode: 'closed', concurrency: opts.webhookConcurrency }, opts.webhookRequests);
  const saturation = { ...sat, ...(await p.loops()) };
  await direct.stop();
  log(`${name}: webhook saturation: ${saturation.perSecond.toFixed(0)} reviews/s at ${opts.webhookConcurrency} in flight`);
  return {
    restartWrites,
    direct: direct_,
    ...(copies?.hnc ? { duringPropagation: copies.hnc } : {}),
    ...(floorAtRest ? { reviewFloor: { atRest: floorAtRest, ...(copies?.floor ? { duringCopy: copies.floor } : {}) } } : {}),
    saturation,
    memory: { idle, steady, afterLoads: memory(await hnc.stats(), hnc.baseline) },
  };
}

/** A ClusterRole and its ClusterRoleBinding that let the webhook load's user re-parent namespaces. */
async function grantLoadUser(admin: KubeClient): Promise<void> {
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  const create = (path: string, body: object) =>
    admin.create(path, body).catch((err: unknown) => {
      if (!isAlreadyExists(err)) throw err;
    });
  await create(`${rbac}/clusterroles`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'hnc-bench-hierarchy-editor' },
    rules: [{ apiGroups: ['hnc.x-k8s.io'], resources: ['hierarchyconfigurations'], verbs: ['get', 'update'] }],
  });
  await create(`${rbac}/clusterrolebindings`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'hnc-bench-hierarchy-editor' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'hnc-bench-hierarchy-editor' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: LOAD_USER.username }],
  });
}
