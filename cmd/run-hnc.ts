// What both entry points share: HNC's options from the manager flags, the CRD check, running until
// a signal, and one clear line for a start-up error. The production entry (cmd/manager.ts) and the
// developer launcher (cmd/start.ts) differ only in where the cluster comes from.
import { judgeVersion } from './kubernetes-version.js';
import { IdentityError } from '../kube/identity.js';
import { ApiError, type KubeClient } from '../kube/client.js';
import { KubeconfigError } from '../kube/kubeconfig.js';
import { loadCrds } from '../kube/install.js';
import type { Logger } from '../kube/log.js';
import { PolicyError } from '../core/hierarchy/policy.js';
import { FlagError, type ManagerFlags } from './flags.js';
import { startHnc, type Hnc } from './hnc.js';
import { RECONCILER_NICE } from './thread-priority.js';
import { existsSync } from 'node:fs';
import { WebhooksUnreachableError } from '../webhooks/index.js';

/** A start-up problem the user can fix: printed as one line, without a stack. */
export class StartupError extends Error {
  override name = 'StartupError';
}

/** Where the API server reaches the webhooks. */
export type WebhookPlacement =
  /** In the cluster (the Deployment): through the Service, failing closed, kept when HNC stops (as HNC). */
  | { by: 'service' }
  /**
   * Outside the cluster: by URL on `host`, proven reachable before anything failing closed is
   * registered, and removed when HNC stops. `fallback`: if unreachable, run without webhooks
   * (loudly) rather than fail.
   */
  | { by: 'url'; host: string; fallback: boolean }
  /** No webhooks; `why` is printed as a warning unless the user asked for it (--no-webhooks). */
  | { by: 'none'; why?: string };

export interface Placement {
  /**
   * HNC runs on the same host as a local control plane it started: the webhook port is picked
   * freely and the probe/metrics ports stay off unless asked for.
   */
  local: boolean;
  /** The flags the user gave explicitly (a local run keeps their values). */
  given: ReadonlySet<string>;
  webhooks: WebhookPlacement;
}

const IN_CLUSTER_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** True in a pod with a service account (and no kubeconfig named): the in-cluster client applies. */
export function runningInCluster(kubeconfig: string | undefined): boolean {
  return !kubeconfig && !process.env.KUBECONFIG && !!process.env.KUBERNETES_SERVICE_HOST && existsSync(IN_CLUSTER_TOKEN);
}

const isLoopback = (host: string) => host === 'localhost' || host === '::1' || host === '[::1]' || /^127\./.test(host);

/**
 * Where to register the webhooks. Never a Service outside the cluster: HNC does not run behind it,
 * and webhooks that fail closed and cannot be reached refuse every namespace change in the cluster.
 */
/**
 * How long a replica behind the webhook Service keeps answering after SIGTERM, each answer closing
 * its connection: long enough for its endpoint removal to reach kube-proxy and for the API server's
 * busy connections to it to end (docs/deploy.md); well inside terminationGracePeriodSeconds.
 */
export const WEBHOOK_DRAIN_MS = 5_000;

export function webhookPlacement(manager: ManagerFlags, opts: { inCluster: boolean; server: string }): WebhookPlacement {
  if (!manager.webhooks) return { by: 'none' };
  if (manager.webhookHost) return { by: 'url', host: manager.webhookHost, fallback: false };
  if (opts.inCluster) return { by: 'service' };
  const apiHost = new URL(opts.server).hostname;
  if (isLoopback(apiHost)) return { by: 'url', host: '127.0.0.1', fallback: true };
  return {
    by: 'none',
    why:
      `HNC runs outside the cluster at ${opts.server}, which cannot reach webhooks on this machine unless told where: ` +
      'pass --webhook-host with an address of this machine that the API server can reach, or deploy HNC in the cluster (docs/deploy.md)',
  };
}

/** The loud line for a run without webhooks: nothing refuses cycles, illegal parents or edits of copies. */
export function warnNoWebhooks(logger: Logger, why: string): void {
  process.stderr.write(
    `WARNING: HNC is running WITHOUT its admission webhooks: ${why}. Nothing refuses cycles, illegal parents, ` +
      'unsafe deletions or edits of propagated copies while it runs so.\n',
  );
  logger.warn({ why }, 'running without admission webhooks');
}

/** Reads /version: refuses to start where a required API is missing, warns outside the tested range. */
export async function checkKubernetesVersion(client: KubeClient, logger: Logger): Promise<void> {
  const v = await client.get<{ major?: string; minor?: string; gitVersion?: string }>('/version');
  const verdict = judgeVersion(v);
  if (verdict.kind === 'refuse') throw new StartupError(verdict.message);
  if (verdict.kind === 'warn') logger.warn({ version: v.gitVersion }, verdict.message);
  else logger.info({ version: v.gitVersion }, 'Kubernetes version supported');
}

export async function startHncFromFlags(client: KubeClient, manager: ManagerFlags, logger: Logger, where: Placement): Promise<Hnc> {
  await checkKubernetesVersion(client, logger);
  const w = where.webhooks;
  if (w.by === 'none' && w.why) warnNoWebhooks(logger, w.why);
  try {
    return await startHncWith(client, manager, logger, where);
  } catch (err) {
    if (!(err instanceof WebhooksUnreachableError)) throw err;
    if (w.by !== 'url' || !w.fallback) throw new StartupError(err.message);
    warnNoWebhooks(logger, err.message);
    return startHncWith(client, manager, logger, { ...where, webhooks: { by: 'none' } });
  }
}

function startHncWith(client: KubeClient, manager: ManagerFlags, logger: Logger, where: Placement): Promise<Hnc> {
  const { local, given } = where;
  const w = where.webhooks;
  return startHnc({
    client,
    policy: manager.policy,
    namespace: manager.namespace,
    logger,
    workers: manager.workers,
    objectWorkers: manager.objectWorkers,
    qps: manager.qps,
    propagation: manager.propagation,
    hrq: manager.hrq,
    webhooks:
      w.by === 'none'
        ? false
        : {
            port: local && !given.has('webhook-server-port') ? 0 : manager.webhookPort,
            // A loopback URL: listen only there; any other: on every interface.
            host: w.by === 'url' && isLoopback(w.host) ? '127.0.0.1' : undefined,
            endpoint: (port) =>
              w.by === 'url'
                ? { url: `https://${w.host.includes(':') ? `[${w.host}]` : w.host}:${port}` }
                : { service: { namespace: manager.namespace, name: 'hnc-webhook-service' } },
            certDir: manager.certDir,
            verifyReachable: w.by === 'url',
            removeOnStop: w.by === 'url',
            // Behind the Service, the API server's open connections to this pod end gracefully on stop.
            drainMs: w.by === 'service' ? WEBHOOK_DRAIN_MS : 0,
            onMainThread: manager.webhooksOnMainThread,
            reconcilerNice: RECONCILER_NICE,
          },
    leaderElection: manager.leaderElection
      ? {
          id: manager.leaderElectionId,
          leaseDurationMs: manager.leaseSeconds * 1000,
          renewDeadlineMs: (manager.leaseSeconds * 2000) / 3,
          retryPeriodMs: Math.min(2000, (manager.leaseSeconds * 1000) / 4),
        }
      : undefined,
    healthAddress: local && !given.has('health-probe-bind-address') ? '' : manager.healthAddress,
    metricsAddress: local && !given.has('metrics-addr') ? '' : manager.metricsAddress,
  });
}

/** Fails with the fix when the cluster lacks any of HNC's CRDs. */
export async function checkCrds(client: KubeClient): Promise<void> {
  const missing: string[] = [];
  for (const crd of loadCrds()) {
    try {
      await client.get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`);
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) missing.push(crd.metadata.name);
      else throw err;
    }
  }
  if (missing.length)
    throw new StartupError(
      `the cluster lacks the HNC CRDs ${missing.join(', ')}: run again with --install-crds, or kubectl apply -k crds/`,
    );
}

/**
 * A terminal's Ctrl-C signals every process of its foreground group: npm and tsx relay it to us
 * too, so the same signal arrives two or three times within moments. Those are one stop.
 */
export const RELAYED_SIGNAL_MS = 1_000;

export interface SignalOptions {
  /** A stop longer than this ends the process at once (default 20 s). */
  graceMs?: number;
  /** What must not be left behind when the process ends without a full stop (synchronous, best effort). */
  abandon?: () => void;
  /**
   * Resolves when HNC cannot go on (Hnc.failed: its credentials are rejected): then the same stop
   * as on a signal, and an exit with code 1, for the kubelet to restart the container (or, its pod
   * gone, for another replica to answer instead).
   */
  fatal?: Promise<Error>;
}

/**
 * Runs until SIGINT or SIGTERM, then `stop` (HNC first, then whatever it ran on). A second signal
 * (not a relay of the first), or a stop that takes longer than the grace, ends the process at once
 * after `abandon`. A `fatal` failure stops the same way, then exits with code 1.
 */
export function runUntilSignal(stop: () => Promise<void>, opts: SignalOptions = {}): void {
  const graceMs = opts.graceMs ?? 20_000;
  let firstAt: number | undefined;
  const exitNow = (why: string) => {
    process.stderr.write(`${why}: exiting now\n`);
    try {
      opts.abandon?.();
    } finally {
      process.exit(1);
    }
  };
  /** The one stop: `why` is printed first; the process then exits with `code` (1 if the stop fails). */
  const stopAndExit = (why: string, code: number) => {
    firstAt = Date.now();
    process.stderr.write(`${why}: stopping ...\n`);
    setTimeout(() => exitNow(`still stopping after ${graceMs / 1000} s`), graceMs).unref();
    stop().then(
      () => process.exit(code),
      (err: unknown) => {
        process.stderr.write(`hnc: stopping failed: ${err instanceof Error ? err.message : String(err)}\n`);
        process.exit(1);
      },
    );
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (firstAt !== undefined) {
      if (Date.now() - firstAt < RELAYED_SIGNAL_MS) return;
      exitNow(`${signal} again`);
    }
    stopAndExit(signal, 0);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  void opts.fatal?.then((err) => {
    if (firstAt === undefined) stopAndExit(`hnc: ${err.message}`, 1);
  });
  // Keep the process alive until a signal arrives.
  setInterval(() => undefined, 1 << 30);
}

const KNOWN_ERRORS = [StartupError, ApiError, FlagError, PolicyError, KubeconfigError, IdentityError];
const NETWORK_CODES = ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'ECONNRESET', 'EPROTO'];
const FILE_CODES = ['ENOENT', 'EACCES', 'EISDIR'];
const TLS_CODE = /^(ERR_TLS_|UNABLE_TO_|SELF_SIGNED_|DEPTH_ZERO_|CERT_)/;

/** One line for an error a user can act on; a stack only for a bug. */
export function describeStartupError(err: unknown): string {
  // A Node.js error's code is a string; an API error's is its HTTP status, a number.
  const code = (e: unknown) => {
    const c = (e as { code?: unknown } | undefined)?.code;
    return typeof c === 'string' ? c : '';
  };
  const message = err instanceof Error ? err.message.split('\n')[0]! : String(err);
  if (KNOWN_ERRORS.some((k) => err instanceof k) || code(err).startsWith('ERR_PARSE_ARGS')) return `hnc: ${message}`;
  // The client wraps socket errors (their code is on the cause).
  const cause = code(err) || code((err as { cause?: unknown } | undefined)?.cause);
  if (NETWORK_CODES.includes(cause) || TLS_CODE.test(cause) || /no answer within/.test(message))
    return `hnc: cannot reach the API server: ${message}`;
  if (FILE_CODES.includes(cause)) return `hnc: ${message}`;
  return `hnc: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`;
}
