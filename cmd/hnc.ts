// Wires one HNC process: the shared caches, the controller (leading, or waiting to), the webhooks
// reading the same hierarchy, probes and metrics. Used by `npm start` and by the integration
// tests, so both run the same thing.
import { hostname } from 'node:os';
import { Manager } from '../controller/manager.js';
import { namespaceConditions } from '../core/hierarchy/plan.js';
import type { HierarchyPolicy } from '../core/hierarchy/policy.js';
import type { PropagationOptions } from '../core/propagation/decide.js';
import type { KubeClient } from '../kube/client.js';
import type { CredentialsRejectedError } from '../kube/credentials.js';
import { HierarchyCache } from '../kube/hierarchy-cache.js';
import { QuotaCache } from '../kube/quota-cache.js';
import { identityWithAddress, QuotaRouter } from '../webhooks/hrq-router.js';
import { LeaderElector, identityInPod, samePod } from '../kube/leader.js';
import type { Logger } from '../kube/log.js';
import { Metrics } from '../kube/metrics.js';
import { trimYoungGenerationWhenIdle } from '../kube/young-generation.js';
import { Webhooks } from '../webhooks/index.js';
import { admissionDeletedCondition } from '../webhooks/kept-objects.js';
import { whoAmI } from '../kube/identity.js';
import { isManager, isOwnServiceAccount } from '../core/validation/manager.js';
import { lowerThisThreadPriority } from './thread-priority.js';
import type { Endpoint } from '../webhooks/configurations.js';
import { serveProbes } from './probes.js';

/** How long a stop waits on the API server before cutting its requests off. */
const STOP_GRACE_MS = 5_000;

export interface HncOptions {
  client: KubeClient;
  policy: HierarchyPolicy;
  namespace: string;
  logger: Logger;
  workers?: number;
  objectWorkers?: number;
  qps?: number;
  propagation?: PropagationOptions;
  /** The webhooks, or false to run without them. */
  webhooks:
    | false
    | {
        port: number;
        host?: string;
        endpoint: (port: number) => Endpoint;
        certDir?: string;
        /** Prove the API server reaches the endpoint before registering (outside the cluster). */
        verifyReachable?: boolean;
        /** Delete the configurations when HNC stops (a run outside the cluster). */
        removeOnStop?: boolean;
        /** On stop, keep answering this long, each answer closing its connection (behind a Service). */
        drainMs?: number;
        /** Serve the reviews on the main thread, not the admission thread (webhooks/admission-thread.ts). */
        onMainThread?: boolean;
        /**
         * With the admission thread: once it runs, lower this (the main, reconciling) thread to this
         * nice value, so that reviews win the CPU (Linux; cmd/thread-priority.ts). The manager gives
         * RECONCILER_NICE; absent or 0: unchanged.
         */
        reconcilerNice?: number;
        /** The admission thread died (default: exit the process, for its liveness to restart it). */
        onFatal?: (err: Error) => void;
      };
  /** Reconcile only while holding this Lease (in HNC's namespace). */
  leaderElection?: { id: string; identity?: string; leaseDurationMs?: number; renewDeadlineMs?: number; retryPeriodMs?: number };
  /** Hierarchical resource quotas (--enable-hrq): off when absent. */
  hrq?: { syncIntervalMs: number };
  /** Listen addresses for /healthz+/readyz and /metrics (empty: off). */
  healthAddress?: string;
  metricsAddress?: string;
}

export interface Hnc {
  manager: Manager;
  webhooks?: Webhooks;
  metrics: Metrics;
  leader?: LeaderElector;
  probePorts: { health?: number; metrics?: number };
  /**
   * Resolves when this replica can no longer work: the API server keeps rejecting its credentials
   * (kube/credentials.ts). Its webhooks have stopped answering by then; the caller stops the rest
   * and exits (cmd/run-hnc.ts). Never rejects.
   */
  failed: Promise<Error>;
  /** Stops taking work, finishes in-flight writes, releases the lease, stops everything. */
  stop(): Promise<void>;
}

/**
 * The user HNC acts as, when its namespace's service-account group does not already say it is HNC
 * (outside a cluster, a kubeconfig's user): the webhooks must know HNC's own writes.
 */
async function managerUser(client: KubeClient, namespace: string, logger: Logger): Promise<string | undefined> {
  const self = await whoAmI(client);
  const identity = { namespace, username: self.username };
  if (isManager({ username: '', groups: self.groups }, { namespace })) return undefined;
  if (!isOwnServiceAccount(identity))
    logger.warn(
      { user: self.username },
      "HNC acts as a user that is not one of its namespace's service accounts: that user's own requests skip HNC's admission checks too; give HNC an identity of its own (docs/deploy.md)",
    );
  else logger.info({ user: self.username }, 'HNC acts as this user');
  return self.username;
}

export async function startHnc(opts: HncOptions): Promise<Hnc> {
  const cache = new HierarchyCache(opts.client, opts.policy, opts.logger);
  let manager: Manager | undefined = undefined;
  const metrics = new Metrics({
    namespaces: () => cache.hierarchy.namespaceNames().length,
    objects: () => manager?.config.objectCounts() ?? [],
    conditions: () => {
      const counts = new Map<string, number>();
      const h = cache.hierarchy;
      for (const ns of h.namespaceNames())
        if (h.isManaged(ns))
          for (const c of namespaceConditions(h, ns)) counts.set(`${c.type}/${c.reason}`, (counts.get(`${c.type}/${c.reason}`) ?? 0) + 1);
      return [...counts].map(([k, count]) => ({ type: k.split('/')[0]!, reason: k.split('/')[1]!, count }));
    },
  });
  let leading = !opts.leaderElection;
  const quotas = opts.hrq ? new QuotaCache(opts.client, cache, opts.logger) : undefined;
  const m = new Manager({
    client: opts.client,
    policy: opts.policy,
    logger: opts.logger,
    cache,
    workers: opts.workers,
    objectWorkers: opts.objectWorkers,
    qps: opts.qps,
    propagation: opts.propagation,
    isLeader: () => leading,
    metrics,
    hrq: opts.hrq && quotas ? { syncIntervalMs: opts.hrq.syncIntervalMs, quotas } : undefined,
  });
  manager = m;
  let webhooks: Webhooks | undefined;
  let leader: LeaderElector | undefined;
  // Several replicas (leader election) judge usage raises in one place, the leader (docs/hrq.md).
  const quotaRouter =
    quotas && opts.webhooks && opts.leaderElection
      ? new QuotaRouter({
          isLeader: () => leading,
          holder: () => leader?.holder,
          readHolder: async () => leader?.readHolder(),
          ca: () => webhooks?.ca,
        })
      : undefined;
  if (opts.webhooks) {
    webhooks = new Webhooks({
      client: opts.client,
      cache,
      namespace: opts.namespace,
      managerUser: await managerUser(opts.client, opts.namespace, opts.logger),
      port: opts.webhooks.port,
      host: opts.webhooks.host,
      endpoint: opts.webhooks.endpoint,
      certDir: opts.webhooks.certDir,
      verifyReachable: opts.webhooks.verifyReachable,
      removeOnStop: opts.webhooks.removeOnStop,
      drainMs: opts.webhooks.drainMs,
      onMainThread: opts.webhooks.onMainThread,
      onFatal: opts.webhooks.onFatal,
      onDeletedByAdmin: (deleted) => m.config.admissionDeleted(admissionDeletedCondition(deleted)),
      noPropagationLabels: opts.propagation?.noPropagationLabels,
      propagation: { context: (g, r) => m.config.context(g, r), propagatingKinds: () => m.config.propagatingKinds() },
      quotas,
      quotaRouter,
      metrics,
      logger: opts.logger.child({ component: 'webhooks' }),
    });
    // Serving before the caches sync: the server answers "starting up" (503) until then.
    await webhooks.start();
    // The admission thread has started (with the priority it inherits): now the reconciling thread may yield to it.
    if (!opts.webhooks.onMainThread && opts.webhooks.reconcilerNice) {
      const lowered = lowerThisThreadPriority(opts.webhooks.reconcilerNice);
      if (lowered.applied)
        opts.logger.info({ from: lowered.from, to: lowered.to }, "lowered the controller thread's priority below the webhooks'");
      else opts.logger.info({ reason: lowered.reason }, "the controller thread's priority is unchanged");
    }
    const wh = webhooks;
    // The admission thread's copy of what the objects webhook reads of the controller.
    m.config.onSources((change) => wh.sourceChanged(change));
    m.config.onTypes(
      (types) =>
        void wh
          .setPropagatedTypes(types)
          .catch((err: unknown) => opts.logger.error({ err: (err as Error).message }, 'could not update the objects webhook rules')),
    );
  }
  // One stop of the webhooks, whichever asks first: a rejection of the credentials, or stop().
  let webhooksStopped: Promise<void> | undefined;
  const stopWebhooks = (drain: boolean) => (webhooksStopped ??= webhooks?.stop({ drain }) ?? Promise.resolve());
  const failed = new Promise<Error>((resolve) => {
    opts.client.credentialRejections.onRejected((err) => {
      onCredentialsRejected(err, opts, stopWebhooks);
      resolve(err);
    });
  });
  // A burst's young generation is given back once the controller's thread is idle (the image's --expose-gc).
  const trimmer = trimYoungGenerationWhenIdle({ logger: opts.logger });
  const cutOff = watchReachability(opts, (ok) => webhooks?.setReachesApiServer(ok));
  // Not ready while cut off from the API server: the Service stops sending this replica admissions.
  const health = await serveProbes(opts.healthAddress ?? '', {
    ready: () => cache.synced && (webhooks?.synced ?? true) && !cutOff.now(),
  });
  const metricsServer = await serveProbes(opts.metricsAddress ?? '', { registry: metrics.registry });
  await cache.start();
  // The admission thread lists the same objects itself (started with the webhooks, so usually done by now).
  await webhooks?.whenSynced;
  // Every replica keeps the quota caches: its webhooks judge usage from them.
  await quotas?.start();
  await m.start();
  if (opts.leaderElection) {
    // A container restarted in its pod (a crash, a failed liveness probe) takes its previous run's lease at once.
    const podUid = process.env.POD_UID || undefined;
    const base = identityInPod(
      opts.leaderElection.identity ?? `${hostname()}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`,
      podUid,
    );
    // The leader's webhook address rides in its identity, for the followers to forward raises to.
    const advertised = process.env.POD_IP ?? (opts.webhooks ? opts.webhooks.host : undefined) ?? '127.0.0.1';
    leader = new LeaderElector({
      client: opts.client,
      namespace: opts.namespace,
      name: opts.leaderElection.id,
      identity: quotaRouter && webhooks ? identityWithAddress(base, `https://${advertised}:${webhooks.port}`) : base,
      leaseDurationMs: opts.leaderElection.leaseDurationMs,
      renewDeadlineMs: opts.leaderElection.renewDeadlineMs,
      retryPeriodMs: opts.leaderElection.retryPeriodMs,
      isPredecessor: samePod(podUid),
      logger: opts.logger,
      onStartedLeading: () => {
        leading = true;
        m.resyncAll();
      },
      onStoppedLeading: () => {
        leading = false;
      },
    });
    leader.start();
  }
  return {
    manager: m,
    webhooks,
    metrics,
    leader,
    probePorts: { health: health?.port, metrics: metricsServer?.port },
    failed,
    async stop() {
      // Every loop ends on stop; what still waits on an API server that does not answer after the
      // grace is cut off, so a stop takes seconds whatever the cluster's state.
      const cut = setTimeout(() => opts.client.close('HNC is stopping'), STOP_GRACE_MS);
      try {
        // The webhooks drain (behind a Service) while the controller stops.
        const webhooksStopped = stopWebhooks(true);
        await m.stop(); // drains in-flight reconciles
        await leader?.stop(); // then hands the lease over
        await webhooksStopped;
        await quotas?.stop();
        await cache.stop();
        await health?.close();
        await metricsServer?.close();
        trimmer.stop();
        cutOff.stop();
      } finally {
        clearTimeout(cut);
      }
    },
  };
}

/** How often the cut-off state is looked at, and the API server probed while requests fail. */
const REACHABILITY_EVERY_MS = 1_000;
/** A replica that heard nothing from the API server this long asks it (a hanging request tells nothing). */
const QUIET_PROBE_MS = 4_000;

/**
 * Follows whether this replica reaches the API server (kube/reachability.ts): after 4 s without an
 * answer, and every second while its requests fail, it asks for /version (so that an answer ends
 * the state at once); it logs each change and tells `onChange`. `now()` says whether it is cut off.
 */
function watchReachability(opts: HncOptions, onChange: (reaches: boolean) => void): { now(): boolean; stop(): void } {
  const reach = opts.client.reachability;
  let cutOff = false;
  let probing = false;
  // A connection of its own: behind requests that hang, a probe would wait for a socket, not time out.
  const prober = opts.client.withOwnConnections(1);
  const probe = () => {
    probing = true;
    void prober
      .request('GET', '/version', { timeoutMs: REACHABILITY_EVERY_MS })
      .catch(() => undefined)
      .finally(() => (probing = false));
  };
  const timer = setInterval(() => {
    if (!probing && (reach.failing || reach.quietMs >= QUIET_PROBE_MS)) probe();
    if (reach.cutOff === cutOff) return;
    cutOff = reach.cutOff;
    if (cutOff)
      opts.logger.warn(
        { server: opts.client.server },
        'cannot reach the API server: not ready, and admission reviews that need the hierarchy are answered 503 until it answers again',
      );
    else {
      opts.logger.info({ server: opts.client.server }, 'the API server answers again');
      reach.regained();
    }
    onChange(!cutOff);
  }, REACHABILITY_EVERY_MS);
  timer.unref();
  return {
    now: () => cutOff,
    stop: () => {
      clearInterval(timer);
      prober.close('HNC is stopping');
    },
  };
}

/**
 * The API server keeps rejecting HNC's credentials (a force-deleted pod, a revoked token): its
 * watches cannot resume, so every admission answer would come from a forest that no longer follows
 * the cluster. The webhook server closes at once, its kept-alive connections with it, so that the
 * API server calls another replica (or, with none, refuses only HNC's own operations).
 */
function onCredentialsRejected(err: CredentialsRejectedError, opts: HncOptions, stopWebhooks: (drain: boolean) => Promise<void>): void {
  opts.logger.fatal(
    { err: err.message, rejections: err.rejections, forMs: err.forMs, lastRequest: err.lastRequest, server: opts.client.server },
    'credentials rejected by the API server: this replica stops answering admission reviews and exits',
  );
  stopWebhooks(false).catch((e: unknown) => opts.logger.error({ err: (e as Error).message }, 'could not stop the webhook server'));
}
