// The admission webhooks of the manager: every handler decides from the same in-memory hierarchy
// the reconcilers use (core/validation does the deciding); only SubjectAccessReviews and the odd
// existence check go to the API server.
import { Webhook, WebhookConfiguration } from '../core/api/constants.js';
import { isPropagating } from '../core/api/types.js';
import { isNotFound, segment, type KubeClient } from '../kube/client.js';
import { Discovery } from '../kube/discovery.js';
import type { HierarchyCache } from '../kube/hierarchy-cache.js';
import type { Logger } from '../kube/log.js';
import type { Metrics } from '../kube/metrics.js';
import { userCan } from './authz.js';
import { InternalCertificates, certificatesFromDir, type ServingCerts } from './certs.js';
import { randomBytes } from 'node:crypto';
import { allow } from '../core/validation/decision.js';
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
import { AdmissionHandlers, type AdmissionLookups, type PropagationView } from './handlers.js';
import { QuotaWebhooks } from './hrq.js';
import { FORWARDED_PATH, type QuotaRouter } from './hrq-router.js';
import type { QuotaCache } from '../kube/quota-cache.js';
import { WebhookServer } from './server.js';
import { HIERARCHY_CONFIGURATION, HNC_CONFIGURATION, SUBNAMESPACE_ANCHOR } from './shapes.js';

export type { PropagationView } from './handlers.js';

export interface WebhookOptions {
  client: KubeClient;
  cache: HierarchyCache;
  /** HNC's namespace: its service accounts are exempt, its Secret holds the certificate. */
  namespace: string;
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
}

/** Sockets for admission-time API calls: a handful of SubjectAccessReviews in flight at most, even under load. */
const ADMISSION_SOCKETS = 32;

/** The API server could not reach the webhook server: nothing that fails closed was registered. */
export class WebhooksUnreachableError extends Error {
  override name = 'WebhooksUnreachableError';
}

const REPAIR_BACKOFF = { initialMs: 200, maxMs: 30_000 };

export class Webhooks {
  private server?: WebhookServer;
  /** Watches of the two configurations: a deletion or an edit is repaired at once. */
  private watches: Array<Reflector<KubeObject & LiveConfiguration>> = [];
  private readonly stopper = new AbortController();
  private repairing?: Promise<void>;
  private repairAgain = false;
  /** The registration pass last queued (register()). */
  private lastPass: Promise<void> = Promise.resolve();
  /** Configuration writes sent (each configuration written counts one). */
  configurationWrites = 0;
  private probeNonce?: string;
  private probeSeen = false;
  private certs?: InternalCertificates;
  private serving?: ServingCerts;
  /** Unknown until the controller has resolved the configured types: nothing is registered before. */
  private objectRules: ObjectRule[] | undefined;
  private readonly discovery: Discovery;
  /**
   * The API calls a review waits on (SubjectAccessReviews, existence checks, discovery), over
   * connections of their own: never queued behind the controller's writes (docs/webhooks.md).
   */
  private readonly api: KubeClient;
  /** What each webhook answers (the server only routes to it). */
  readonly handlers: AdmissionHandlers;
  port = 0;

  constructor(private readonly opts: WebhookOptions) {
    this.api = opts.client.withOwnConnections(ADMISSION_SOCKETS);
    this.discovery = new Discovery(this.api);
    this.handlers = new AdmissionHandlers({
      hierarchy: () => opts.cache.hierarchy,
      namespace: opts.namespace,
      propagation: opts.propagation,
      lookups: this.lookups(),
    });
  }

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
    const isReady = () => opts.cache.synced;
    const server = new WebhookServer({
      host: opts.host,
      port: opts.port,
      cert: this.serving.cert,
      key: this.serving.key,
      isReady,
      allowWhileStarting: new Set([Webhook.namespaceMutator.path, PROBE_PATH]),
      logger: opts.logger,
      onReview: (path, verdict, ms) => {
        // The server answers the probe itself while the caches load (it needs none): any review on
        // its path, registered only in the probe configuration, shows the API server reaches us.
        if (path === PROBE_PATH && this.probeNonce !== undefined) this.probeSeen = true;
        const webhook = Object.values(Webhook).find((w) => w.path === path)?.name ?? path;
        opts.metrics?.webhookSeconds.observe({ webhook }, ms / 1000);
        if (!verdict.allowed) opts.metrics?.webhookDenials.inc({ webhook, reason: verdict.reason });
      },
    });
    server
      .route(Webhook.namespaceMutator.path, (r) => this.handlers.mutateNamespace(r))
      .route(Webhook.namespaces.path, (r) => this.handlers.namespace(r))
      .route(Webhook.subnamespaceAnchors.path, (r) => this.handlers.anchor(r), SUBNAMESPACE_ANCHOR)
      .route(Webhook.hierarchyConfigurations.path, (r) => this.handlers.hierarchyConfiguration(r), HIERARCHY_CONFIGURATION)
      .route(Webhook.hncConfigurations.path, (r) => this.handlers.hncConfiguration(r), HNC_CONFIGURATION)
      .route(Webhook.objects.path, (r) => this.handlers.object(r))
      .route(PROBE_PATH, () => allow());
    if (opts.quotas) {
      const quotas = new QuotaWebhooks(opts.client, opts.quotas, opts.logger, opts.quotaRouter);
      server
        .route(FORWARDED_PATH, (r) => quotas.forwarded(r))
        .route(Webhook.hrq.path, (r) => quotas.validateHrq(r))
        .route(Webhook.hrqQuantities.path, (r) => quotas.mutateHrq(r))
        .route(Webhook.resourceQuotaStatus.path, (r) => quotas.resourceQuotaStatus(r));
    }
    this.port = await server.start();
    this.server = server;
    if (opts.verifyReachable && opts.registerConfigurations !== false) {
      try {
        await this.probe(typeof opts.verifyReachable === 'object' ? opts.verifyReachable.timeoutMs : 10_000);
      } catch (err) {
        this.stopper.abort();
        await server.stop();
        throw err;
      }
    }
    if (opts.registerConfigurations !== false) this.watchConfigurations();
    this.certs?.startRenewal((c) => {
      server.setCertificate(c.cert, c.key);
      this.serving = c;
      void this.register();
    });
    await this.register();
    opts.logger.info({ port: this.port }, 'webhooks serving');
  }

  /** The CA that signed the serving certificate (internal certificates only). */
  get ca(): string | undefined {
    return this.serving?.ca;
  }

  async stop(): Promise<void> {
    // Behind a Service the server first drains (WebhookServer.stop) while the rest stops.
    const drained = this.opts.drainMs ? this.server?.stop(this.opts.drainMs) : undefined;
    this.stopper.abort();
    this.opts.quotaRouter?.close();
    this.certs?.stop();
    await Promise.all(this.watches.map((w) => w.stop()));
    await this.repairing;
    if (this.opts.removeOnStop && this.opts.registerConfigurations !== false) await this.removeConfigurations();
    await (drained ?? this.server?.stop());
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

  /** Watches both configurations by name; any change or deletion queues a repair (written only if it differs). */
  private watchConfigurations(): void {
    const watch = (path: string, name: string) => {
      const r = new Reflector<KubeObject & LiveConfiguration>({
        client: this.opts.client,
        path,
        fieldSelector: `metadata.name=${name}`,
        name,
        logger: this.opts.logger,
      });
      r.addHandler(() => this.repair());
      r.start();
      return r;
    };
    this.watches = [
      watch('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', WebhookConfiguration.validating),
      watch('/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', WebhookConfiguration.mutating),
    ];
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

  /** No repair running or due, and the watches hold both configurations (for tests). */
  get configurationsSettled(): boolean {
    return (
      !this.repairing &&
      !this.repairAgain &&
      this.watches.length > 0 &&
      this.watches.every((w) => w.hasSynced() && w.store.list().length === 1)
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
  }

  /** The kinds being propagated: the objects webhook guards exactly these. */
  async setPropagatedTypes(types: Array<{ group: string; resource: string; mode: string }>): Promise<void> {
    const byGroup = new Map<string, string[]>();
    for (const t of types) if (isPropagating(t.mode)) byGroup.set(t.group, [...(byGroup.get(t.group) ?? []), t.resource]);
    this.objectRules = [...byGroup].map(([group, resources]) => ({ group, resources })).sort((a, b) => (a.group < b.group ? -1 : 1));
    if (this.server) await this.register();
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
      written = await applyConfigurations(this.opts.client, {
        endpoint: this.opts.endpoint(this.port),
        caBundle: this.serving?.ca,
        excludedNamespaces: [...this.h.policy.excluded],
        objectRules: this.objectRules ?? [],
        managerNamespace: this.opts.namespace,
        hrq: this.opts.quotas !== undefined,
      });
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

  /** The API server calls the handlers' decisions wait on, over the webhooks' own connections. */
  private lookups(): AdmissionLookups {
    return {
      userCan: (user, check) => userCan(this.api, user, check),
      namespaceExists: (name) =>
        this.api.get(`/api/v1/namespaces/${segment(name)}`).then(
          () => true,
          (e: unknown) => (isNotFound(e) ? false : Promise.reject(e)),
        ),
      // The reconciler's resolver: both agree on what a configuration names.
      resolver: (groups) => this.discovery.resolver(groups),
    };
  }
}
