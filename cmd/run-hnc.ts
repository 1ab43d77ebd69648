// What both entry points share: HNC's options from the manager flags, the CRD check, running until
// a signal, and one clear line for a start-up error. The production entry (cmd/manager.ts) and the
// developer launcher (cmd/start.ts) differ only in where the cluster comes from.
import { ApiError, type KubeClient } from '../kube/client.js';
import { loadCrds } from '../kube/install.js';
import type { Logger } from '../kube/log.js';
import { PolicyError } from '../core/hierarchy/policy.js';
import { FlagError, type ManagerFlags } from './flags.js';
import { startHnc, type Hnc } from './hnc.js';

/** A start-up problem the user can fix: printed as one line, without a stack. */
export class StartupError extends Error {
  override name = 'StartupError';
}

export interface Placement {
  /**
   * HNC runs on the same host as a local API server: webhooks are registered by URL on
   * 127.0.0.1 and the probe/metrics ports stay off unless asked for.
   */
  local: boolean;
  /** The flags the user gave explicitly (a local run keeps their values). */
  given: ReadonlySet<string>;
}

export function startHncFromFlags(client: KubeClient, manager: ManagerFlags, logger: Logger, where: Placement): Promise<Hnc> {
  const { local, given } = where;
  return startHnc({
    client,
    policy: manager.policy,
    namespace: manager.namespace,
    logger,
    workers: manager.workers,
    objectWorkers: manager.objectWorkers,
    qps: manager.qps,
    propagation: manager.propagation,
    webhooks: manager.webhooks
      ? {
          port: local && !given.has('webhook-server-port') ? 0 : manager.webhookPort,
          host: local ? '127.0.0.1' : undefined,
          endpoint: (port) =>
            local ? { url: `https://127.0.0.1:${port}` } : { service: { namespace: manager.namespace, name: 'hnc-webhook-service' } },
          certDir: manager.certDir,
        }
      : false,
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
 * Runs until SIGINT or SIGTERM, then `stop` (HNC first, then whatever it ran on). A second signal,
 * or a stop that takes longer than `graceMs`, ends the process at once.
 */
export function runUntilSignal(stop: () => Promise<void>, graceMs = 20_000): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      process.stderr.write(`${signal} again: exiting now\n`);
      process.exit(1);
    }
    stopping = true;
    process.stderr.write(`${signal}: stopping ...\n`);
    setTimeout(() => {
      process.stderr.write(`still stopping after ${graceMs / 1000} s: exiting now\n`);
      process.exit(1);
    }, graceMs).unref();
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`hnc: stopping failed: ${err instanceof Error ? err.message : String(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // Keep the process alive until a signal arrives.
  setInterval(() => undefined, 1 << 30);
}

const KNOWN_ERRORS = [StartupError, ApiError, FlagError, PolicyError];

/** One line for an error a user can act on; a stack only for a bug. */
export function describeStartupError(err: unknown): string {
  const known =
    KNOWN_ERRORS.some((k) => err instanceof k) || ((err as { code?: string } | undefined)?.code ?? '').startsWith('ERR_PARSE_ARGS');
  const net = (err as { code?: string } | undefined)?.code;
  if (!known && net && ['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ETIMEDOUT', 'ECONNRESET', 'ENOENT', 'EACCES'].includes(net)) {
    return `hnc: ${(err as Error).message}`;
  }
  return `hnc: ${known ? (err as Error).message : err instanceof Error ? (err.stack ?? err.message) : String(err)}`;
}
