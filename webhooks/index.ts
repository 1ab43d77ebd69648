// The admission webhooks of the manager: every handler decides from an in-memory hierarchy
// (core/validation does the deciding); only SubjectAccessReviews and the odd existence check go to
// the API server. The reviews are served by a worker thread with its own copy of the hierarchy
// (admission-thread.ts), or, with --webhooks-on-main-thread, from the reconcilers' own here. This
// class keeps what is the main thread's: certificates, the configurations and their repair, the
// reachability probe, the HRQ decisions, stop.
import type { ManagerIdentity } from '../core/validation/manager.js';
import { Webhook } from '../core/api/constants.js';
import { isPropagating } from '../core/api/types.js';
import { isNotFound, type KubeClient } from '../kube/client.js';
import type { HierarchyCache } from '../kube/hierarchy-cache.js';
import type { Logger } from '../kube/log.js';
import type { Metrics } from '../kube/metrics.js';
import { InternalCertificates, certificatesFromDir, watchCertDir, type ServingCerts } from './certs.js';
import { randomBytes } from 'node:crypto';
import { applyManifests } from '../kube/apply.js';
import { Reflector } from '../kube/watch/reflector.js';
import { sleep } from '../kube/watch/ratelimit.js';
import type { KubeObject } from '../kube/watch/store.js';
import {
  applyConfigurations,
  CONFIGURATION_PATHS,
  probeConfiguration,
  PROBE_LABEL,
  PROBE_PATH,
  type Endpoint,
  type LiveConfiguration,
  type ObjectRule,
} from './configurations.js';
import { AdmissionHandlers, type PropagationView } from './handlers.js';
import { AdmissionThread } from './admission-thread.js';
import type { ThreadDelay } from './admission-protocol.js';
import { apiLookups, lookupClient } from './lookups.js';
import type { IndexedType, SourceChange } from './propagation-index.js';
import { ALLOW_WHEN_CUT_OFF, ALLOW_WHILE_STARTING, JUDGED_WHEN_CUT_OFF, routeAdmission } from './routes.js';
import type { Decision } from '../core/validation/decision.js';
import type { AdmissionRequest } from './review.js';
import { QuotaWebhooks } from './hrq.js';
import { FORWARDED_PATH, type QuotaRouter } from './hrq-router.js';
import type { QuotaCache } from '../kube/quota-cache.js';
import { WebhookServer } from './server.js';
import { AdminDeletions, applyPolicies, KEPT_OBJECTS, type KeptObject } from './kept-objects.js';

export type { PropagationView } from './handlers.js';

export interface WebhookOptions {
  client: KubeClient;
  cache: HierarchyCache;
  /** HNC's namespace: its service accounts are exempt, its Secret holds the certificate. */
  namespace: string;
  /** The user HNC acts as (a SelfSubjectReview at start), exempt too: outside a cluster it is in no service-account group. */
  managerUser?: string;
  host?: string;
  port: number;
  /** How the apiserver reaches us, given the port we listen on; with a URL, the certificate is also valid for its host. */
  endpoint: (port: number) => Endpoint;
  /** A folder with tls.crt/tls.key (cert-manager); else certificates are managed internally. */
  certDir?: string;
  /** Write the webhook configurations (default true), and keep them: re-written within seconds if deleted or edited. */
  registerConfigurations?: boolean;
  /**
   * Before registering anything that fails closed, prove that the API server reaches the endpoint
   * (a dry-run namespace through a probe webhook that fails open); start() throws
   * WebhooksUnreachableError if it does not within `timeoutMs` (default 10 s). For URL endpoints
   * outside the cluster.
   */
  verifyReachable?: boolean | { timeoutMs: number };
  /** Delete the configurations on stop (a run outside the cluster: nothing must outlive it that refuses requests). */
  removeOnStop?: boolean;
  /** On stop, keep answering this long, closing each connection (behind a Service; WebhookServer.stop). */
  drainMs?: number;
  propagation?: PropagationView;
  /** Hierarchical quotas (--enable-hrq): their webhooks are served and registered. */
  quotas?: QuotaCache;
  /** With several replicas, usage raises are decided by the leader (see hrq-router.ts). */
  quotaRouter?: QuotaRouter;
  metrics?: Metrics;
  logger: Logger;
  /**
   * Serve the reviews on the main thread, from the reconcilers' hierarchy (--webhooks-on-main-thread):
   * less memory, but every review waits for whatever the main thread is doing (docs/webhooks.md).
   */
  onMainThread?: boolean;
  /** The propagation options the objects webhook's conflict check reads (the admission thread gets them once). */
  noPropagationLabels?: ReadonlyArray<{ key: string; value: string }>;
  /** Someone deleted a kept configuration or policy while this run kept it: it stays deleted until a restart (kept-objects.ts). */
  onDeletedByAdmin?: (deleted: KeptObject[]) => void;
  /** The admission thread died: end the process (default), so that its liveness restarts it. */
  onFatal?: (err: Error) => void;
}

/** The API server could not reach the webhook server: nothing that fails closed was registered. */
export class WebhooksUnreachableError extends Error {
  override name = 'WebhooksUnreachableError';
}

const REPAIR_BACKOFF = { initialMs: 200, maxMs: 30_000 };

export class Webhooks {
  private server?: WebhookServer;
  /** The worker serving the reviews (unless onMainThread). */
  private thread?: AdmissionThread;
  /** Watches of the kept objects (KEPT_OBJECTS, in order): an edit is repaired at once, a deletion recorded. */
  private watches: Array<Reflector<KubeObject & LiveConfiguration>> = [];
  private readonly stopper = new AbortController();
  private reaches = true;
  private repairing?: Promise<void>;
  private repairAgain = false;
  /** The registration pass last queued (register()). */
  private lastPass: Promise<void> = Promise.resolve();
  /** Configuration writes sent (each configuration written counts one). */
  configurationWrites = 0;
  /** What an admin deleted while this run kept it: not written again until a restart. */
  readonly adminDeletions = new AdminDeletions();
  private probeNonce?: string;
  private probeSeen = false;
  private certs?: InternalCertificates;
  private stopCertDir?: () => void;
  private serving?: ServingCerts;
  /** Unknown until the controller has resolved the configured types: nothing is registered before. */
  private objectRules: ObjectRule[] | undefined;
  port = 0;

  private get manager(): ManagerIdentity {
    return { namespace: this.opts.namespace, username: this.opts.managerUser };
  }

  constructor(private readonly opts: WebhookOptions) {}

  private get h() {
    return this.opts.cache.hierarchy;
  }

  async start(): Promise<void> {
    const { opts } = this;
    if (opts.certDir) this.serving = certificatesFromDir(opts.certDir);
    else {
      const endpoint = opts.endpoint(opts.port);
      const host = 'url' in endpoint ? new URL(endpoint.url).hostname : undefined;
      const isIp = host !== undefined && /^[\d.]+$|:/.test(host);
      const svc = 'service' in endpoint ? endpoint.service : { name: 'hnc-webhook-service', namespace: opts.namespace };
      this.certs = new InternalCertificates({
        client: opts.client,
        namespace: opts.namespace,
        dnsNames: [`${svc.name}.${svc.namespace}.svc`, `${svc.name}.${svc.namespace}.svc.cluster.local`, ...(host && !isIp ? [host] : [])],
        ips: host && isIp ? [host] : [],
        logger: opts.logger,
      });
      this.serving = await this.certs.ensure();
    }
    // The HRQ webhooks read the quota caches, which are the main thread's: decided here either way.
    const quotaRoutes = new Map<string, (r: AdmissionRequest) => Decision | Promise<Decision>>();
    if (opts.quotas) {
      const quotas = new QuotaWebhooks(opts.client, opts.quotas, opts.logger, opts.quotaRouter, () => this.reaches);
      quotaRoutes
        .set(FORWARDED_PATH, (r) => quotas.forwarded(r))
        .set(Webhook.hrq.path, (r) => quotas.validateHrq(r))
        .set(Webhook.hrqQuantities.path, (r) => quotas.mutateHrq(r))
        .set(Webhook.resourceQuotaStatus.path, (r) => quotas.resourceQuotaStatus(r));
    }
    // The reviews on the probe's path (registered only in the probe configuration) show the API server reaches us.
    const onProbe = () => {
      if (this.probeNonce !== undefined) this.probeSeen = true;
    };
    if (opts.onMainThread) {
      const server = new WebhookServer({
        host: opts.host,
        port: opts.port,
        cert: this.serving.cert,
        key: this.serving.key,
        isReady: () => opts.cache.synced,
        allowWhileStarting: ALLOW_WHILE_STARTING,
        reachesApiServer: () => this.reaches,
        allowWhenCutOff: ALLOW_WHEN_CUT_OFF,
        judgedWhenCutOff: JUDGED_WHEN_CUT_OFF,
        logger: opts.logger,
        onReview: (path, verdict, ms) => {
          if (path === PROBE_PATH) onProbe();
          const webhook = Object.values(Webhook).find((w) => w.path === path)?.name ?? path;
          opts.metrics?.webhookSeconds.observe({ webhook }, ms / 1000);
          if (!verdict.allowed) opts.metrics?.webhookDenials.inc({ webhook, reason: verdict.reason });
        },
      });
      // The API calls a review waits on, over connections of their own: never queued behind the controller's writes.
      const handlers = new AdmissionHandlers({
        hierarchy: () => opts.cache.hierarchy,
        manager: this.manager,
        propagation: opts.propagation,
        lookups: apiLookups(lookupClient(opts.client)),
      });
      routeAdmission(server, handlers);
      for (const [path, handler] of quotaRoutes) server.route(path, handler);
      this.port = await server.start();
      this.server = server;
    } else {
      const thread = new AdmissionThread({
        client: opts.client,
        manager: this.manager,
        policy: opts.cache.hierarchy.policy.options,
        propagation: { noPropagationLabels: opts.noPropagationLabels },
        host: opts.host,
        port: opts.port,
        cert: this.serving.cert,
        key: this.serving.key,
        relayed: quotaRoutes,
        logger: opts.logger,
        metrics: opts.metrics,
        onProbe,
        onFatal:
          opts.onFatal ??
          (() => {
            process.stderr.write('hnc: the admission webhook thread failed (see the log); exiting\n');
            process.exit(1);
          }),
      });
      this.port = await thread.port;
      this.thread = thread;
    }
    if (opts.verifyReachable && opts.registerConfigurations !== false) {
      try {
        await this.probe(typeof opts.verifyReachable === 'object' ? opts.verifyReachable.timeoutMs : 10_000);
      } catch (err) {
        this.stopper.abort();
        await this.server?.stop();
        await this.thread?.stop();
        throw err;
      }
    }
    if (opts.registerConfigurations !== false) this.watchConfigurations();
    this.certs?.startRenewal(this.serving, (c) => this.swapCertificates(c));
    if (opts.certDir) this.stopCertDir = watchCertDir(opts.certDir, this.serving, (c) => this.swapCertificates(c), opts.logger);
    await this.register();
    opts.logger.info({ port: this.port }, 'webhooks serving');
  }

  /**
   * New certificates or CA bundle (renewed, or an admin rotated them): the configurations get the
   * new bundle before this replica serves a certificate that needs it, so that the API server never
   * meets a certificate it does not trust yet. The bundle holds the CA before for a while, so the
   * replicas that still serve the old one are trusted too.
   */
  private async swapCertificates(c: ServingCerts): Promise<void> {
    const served = this.serving?.cert;
    this.serving = c;
    await this.register().catch((err: unknown) => {
      this.opts.logger.warn({ err: (err as Error).message }, 'could not write the new CA bundle; serving the new certificate anyway');
      this.repair();
    });
    if (c.cert === served) return;
    this.server?.setCertificate(c.cert, c.key);
    this.thread?.setCertificate(c.cert, c.key);
    this.opts.logger.info(
      { previousCaUntil: c.previousCaUntil && new Date(c.previousCaUntil).toISOString() },
      'serving the new webhook certificate',
    );
  }

  /** The CAs to trust for a replica's serving certificate (internal certificates only; two during a CA change). */
  get ca(): string | undefined {
    return this.serving?.ca;
  }

  /** True once the caches the webhooks decide from have listed everything (the worker's own, off the main thread). */
  get synced(): boolean {
    return this.thread ? this.thread.synced : this.opts.cache.synced;
  }

  /** Resolves once synced is true. */
  get whenSynced(): Promise<void> {
    return this.thread ? this.thread.whenSynced : this.opts.cache.whenSynced;
  }

  /** The admission thread's event-loop delay and GC pauses since the last reset (undefined on the main thread). */
  admissionEventLoop(reset = false): Promise<ThreadDelay | undefined> {
    return this.thread?.eventLoop(reset) ?? Promise.resolve(undefined);
  }

  /**
   * Whether this replica reaches the API server (kube/reachability.ts). While it does not, its
   * caches may be stale: the reviews that need them are answered 503, the fail-open ones allowed.
   */
  setReachesApiServer(ok: boolean): void {
    this.reaches = ok;
    this.thread?.setReachesApiServer(ok);
  }

  /** A source of a propagated type appeared or went (the admission thread's conflict checks). */
  sourceChanged(change: SourceChange): void {
    this.thread?.sourceChanged(change);
  }

  /**
   * Stops serving and watching. `drain: false` closes the server at once even behind a Service: the
   * caches it decides from no longer follow the cluster (HNC's credentials were rejected), so an
   * answer during a drain would be a stale one.
   */
  async stop(opts: { drain?: boolean } = {}): Promise<void> {
    const drainMs = opts.drain === false ? 0 : this.opts.drainMs;
    // Behind a Service the server first drains (WebhookServer.stop) while the rest stops.
    const drained = drainMs ? (this.thread?.stop(drainMs) ?? this.server?.stop(drainMs)) : undefined;
    this.stopper.abort();
    this.opts.quotaRouter?.close();
    this.certs?.stop();
    this.stopCertDir?.();
    await Promise.all(this.watches.map((w) => w.stop()));
    await this.repairing;
    if (this.opts.removeOnStop && this.opts.registerConfigurations !== false) await this.removeConfigurations();
    await (drained ?? Promise.all([this.server?.stop(), this.thread?.stop()]));
  }

  /**
   * Proves the API server reaches us: registers the probe configuration (fails open, matches only
   * a namespace labelled with a fresh nonce), sends dry-run creations of such a namespace until the
   * probe handler sees one, then leaves the probe for register() to replace. On failure the probe
   * configuration is deleted and nothing else was registered.
   */
  private async probe(timeoutMs: number): Promise<void> {
    const { client, logger } = this.opts;
    const endpoint = this.opts.endpoint(this.port);
    const where = 'url' in endpoint ? endpoint.url : `service ${endpoint.service.namespace}/${endpoint.service.name}`;
    this.probeNonce = randomBytes(8).toString('hex');
    this.probeSeen = false;
    await applyManifests(client, [probeConfiguration(endpoint, this.serving?.ca, this.probeNonce)]);
    const deadline = Date.now() + timeoutMs;
    let lastError = '';
    while (!this.probeSeen && Date.now() < deadline && !this.stopper.signal.aborted) {
      try {
        await client.request('POST', '/api/v1/namespaces', {
          query: { dryRun: 'All' },
          body: { metadata: { name: `hnc-reachability-probe-${this.probeNonce}`, labels: { [PROBE_LABEL]: this.probeNonce } } },
        });
      } catch (err) {
        lastError = (err as Error).message;
      }
      // The API server picks up a new configuration within moments: ask again until it calls us.
      if (!this.probeSeen) await sleep(250, this.stopper.signal).catch(() => undefined);
    }
    if (this.probeSeen) {
      logger.info({ endpoint: where }, 'the API server reaches the webhooks');
      return;
    }
    await client.delete(CONFIGURATION_PATHS.validating).catch(() => undefined);
    throw new WebhooksUnreachableError(
      `the API server at ${client.server} did not reach the webhooks at ${where} within ${timeoutMs / 1000} s` +
        `${lastError ? ` (${lastError})` : ''}; no webhook was registered`,
    );
  }

  /**
   * Watches every kept object by name; a change queues a repair (written only if it differs), a
   * deletion by someone else once registered is recorded and left alone (kept-objects.ts).
   */
  private watchConfigurations(): void {
    const watch = (kept: KeptObject) => {
      const r = new Reflector<KubeObject & LiveConfiguration>({
        client: this.opts.client,
        path: kept.collection,
        fieldSelector: `metadata.name=${kept.name}`,
        name: kept.name,
        logger: this.opts.logger,
      });
      r.addHandler((type) => {
        if (type === 'DELETED' && this.adminDeletions.sawDeleted(kept.path)) {
          this.opts.logger.warn(
            { kind: kept.kind, name: kept.name },
            'an admission object HNC keeps was deleted: not writing it back until HNC restarts',
          );
          this.opts.onDeletedByAdmin?.(this.adminDeletions.list());
        } else this.repair();
      });
      r.start();
      return r;
    };
    this.watches = KEPT_OBJECTS.map(watch);
  }

  /** One repair pass at a time; a change during a pass runs another; failures retry with backoff until stop. */
  private repair(): void {
    if (this.stopper.signal.aborted || this.objectRules === undefined) return;
    this.repairAgain = true;
    if (this.repairing) return;
    this.repairing = (async () => {
      let delay = REPAIR_BACKOFF.initialMs;
      while (this.repairAgain && !this.stopper.signal.aborted) {
        this.repairAgain = false;
        try {
          await this.register();
          delay = REPAIR_BACKOFF.initialMs;
        } catch (err) {
          this.opts.logger.warn({ err: (err as Error).message, delay }, 'could not repair the webhook configurations; retrying');
          this.repairAgain = true;
          await sleep(delay, this.stopper.signal).catch(() => undefined);
          delay = Math.min(delay * 2, REPAIR_BACKOFF.maxMs);
        }
      }
    })().finally(() => (this.repairing = undefined));
  }

  /** No repair running or due, and the watches hold every kept object not deleted by an admin (for tests). */
  get configurationsSettled(): boolean {
    return (
      !this.repairing &&
      !this.repairAgain &&
      this.watches.length > 0 &&
      this.watches.every((w, i) => w.hasSynced() && w.store.list().length === (this.adminDeletions.has(KEPT_OBJECTS[i]!.path) ? 0 : 1))
    );
  }

  /** Deletes the configurations if they still point at this run's endpoint (never someone else's). */
  private async removeConfigurations(): Promise<void> {
    const endpoint = this.opts.endpoint(this.port);
    const pointsHere = (w: Record<string, unknown>) => {
      const cc = w.clientConfig as { url?: string; service?: { namespace?: string; name?: string } } | undefined;
      if ('url' in endpoint) return cc?.url?.startsWith(endpoint.url.replace(/\/$/, '') + '/') === true;
      return cc?.service?.namespace === endpoint.service.namespace && cc.service.name === endpoint.service.name;
    };
    for (const path of [CONFIGURATION_PATHS.validating, CONFIGURATION_PATHS.mutating]) {
      try {
        const live = await this.opts.client.get<LiveConfiguration>(path);
        if (!(live.webhooks ?? []).every(pointsHere)) {
          this.opts.logger.warn({ path }, 'not removing a webhook configuration that points elsewhere');
          continue;
        }
        await this.opts.client.request('DELETE', path, {
          body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { resourceVersion: live.metadata.resourceVersion } },
        });
        this.configurationWrites++;
        this.opts.logger.info({ path }, 'removed the webhook configuration');
      } catch (err) {
        if (!isNotFound(err)) this.opts.logger.warn({ path, err: (err as Error).message }, 'could not remove the webhook configuration');
      }
    }
    // The policies point nowhere, and only this run wrote them: bindings first, then policies.
    for (const kept of KEPT_OBJECTS.filter((o) => o.kind.startsWith('ValidatingAdmissionPolicy')).reverse()) {
      try {
        await this.opts.client.delete(kept.path);
        this.configurationWrites++;
        this.opts.logger.info({ path: kept.path }, 'removed the admission policy');
      } catch (err) {
        if (!isNotFound(err))
          this.opts.logger.warn({ path: kept.path, err: (err as Error).message }, 'could not remove the admission policy');
      }
    }
  }

  /** The kinds being propagated: the objects webhook guards exactly these. */
  async setPropagatedTypes(types: IndexedType[]): Promise<void> {
    this.thread?.setTypes(types);
    const byGroup = new Map<string, string[]>();
    for (const t of types) if (isPropagating(t.mode)) byGroup.set(t.group, [...(byGroup.get(t.group) ?? []), t.resource]);
    this.objectRules = [...byGroup].map(([group, resources]) => ({ group, resources })).sort((a, b) => (a.group < b.group ? -1 : 1));
    if (this.server || this.thread) await this.register();
  }

  /**
   * One registration pass after another: two at once (the propagated kinds arriving while a
   * repair runs, the watch's event of our own first write) would both read the configurations
   * before either wrote, and both write the same one. Each pass reads what the one before wrote.
   */
  private register(): Promise<void> {
    const pass = this.lastPass.then(() => this.registerPass());
    this.lastPass = pass.catch(() => undefined);
    return pass;
  }

  private async registerPass(): Promise<void> {
    // Registering before the propagated kinds are known would empty the objects webhook's rules
    // (of a running cluster, on a restart) only to fill them again a moment later.
    if (this.opts.registerConfigurations === false || this.objectRules === undefined || this.stopper.signal.aborted) return;
    let written = 0;
    try {
      // Read fresh (a GET each), not from the watches: a cache a moment behind our own last write
      // would make a pass write the same configuration twice.
      const input = {
        endpoint: this.opts.endpoint(this.port),
        caBundle: this.serving?.ca,
        excludedNamespaces: [...this.h.policy.excluded],
        includedNamespaceRegex: this.h.policy.options.includedNamespaceRegex,
        objectRules: this.objectRules ?? [],
        manager: this.manager,
        hrq: this.opts.quotas !== undefined,
      };
      const skip = (path: string) => this.adminDeletions.has(path);
      written = await applyConfigurations(this.opts.client, input, undefined, skip);
      // The API server's own checks (policies.ts): the rules that hold while HNC is down.
      written += await applyPolicies(this.opts.client, input, skip);
      this.adminDeletions.arm();
    } catch (err) {
      this.opts.metrics?.apiWrites.inc({ verb: 'patch', result: 'error' });
      throw err;
    }
    if (written) {
      this.configurationWrites += written;
      this.opts.metrics?.apiWrites.inc({ verb: 'patch', result: 'success' }, written);
      this.opts.logger.info({ written }, 'wrote the webhook configurations');
    }
  }
}
