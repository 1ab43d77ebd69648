// The admission webhooks of the manager: every handler decides from the same in-memory hierarchy
// the reconcilers use (core/validation does the deciding); only SubjectAccessReviews and the odd
// existence check go to the API server.
import { Webhook } from '../core/api/constants.js';
import { isPropagating, type HierarchyConfiguration, type HNCConfiguration, type SubnamespaceAnchor } from '../core/api/types.js';
import type { PropagationContext } from '../core/propagation/decide.js';
import { conflictingDescendants } from '../core/propagation/decide.js';
import type { PropagatableObject } from '../core/propagation/copy.js';
import { validateAnchor } from '../core/validation/anchor.js';
import type { AdmissionInput, Decision } from '../core/validation/decision.js';
import {
  isPending,
  validateHierarchyConfiguration,
  type CheckAnswer,
  type HierarchyVerdict,
} from '../core/validation/hierarchy-configuration.js';
import { isGroupName, validateHncConfiguration } from '../core/validation/hnc-configuration.js';
import { mutateNamespace, type NamespaceInput } from '../core/validation/namespace-mutator.js';
import { validateNamespace } from '../core/validation/namespace.js';
import { validateObject } from '../core/validation/objects.js';
import { isNotFound, segment, type KubeClient } from '../kube/client.js';
import { Discovery } from '../kube/discovery.js';
import type { HierarchyCache } from '../kube/hierarchy-cache.js';
import type { Logger } from '../kube/log.js';
import type { Metrics } from '../kube/metrics.js';
import { userCan } from './authz.js';
import { InternalCertificates, certificatesFromDir, type ServingCerts } from './certs.js';
import { applyConfigurations, serviceAccountsGroup, type Endpoint, type ObjectRule } from './configurations.js';
import type { AdmissionRequest } from './review.js';
import { WebhookServer } from './server.js';
import { HIERARCHY_CONFIGURATION, HNC_CONFIGURATION, SUBNAMESPACE_ANCHOR } from './shapes.js';

/** What the webhooks need to know about propagation (supplied by the controller in the same process). */
export interface PropagationView {
  /** The propagation context of a type by group and resource, if it is handled at all. */
  context(group: string, resource: string): PropagationContext | undefined;
  /** The kinds propagated now: an HNCConfiguration change is checked only for kinds new to it. */
  propagatingKinds(): Array<{ group: string; kind: string }>;
}

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
  /** Write the webhook configurations (default true). */
  registerConfigurations?: boolean;
  propagation?: PropagationView;
  metrics?: Metrics;
  logger: Logger;
}

/** Sockets for admission-time API calls: a handful of SubjectAccessReviews in flight at most, even under load. */
const ADMISSION_SOCKETS = 32;

export class Webhooks {
  private server?: WebhookServer;
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
  port = 0;

  constructor(private readonly opts: WebhookOptions) {
    this.api = opts.client.withOwnConnections(ADMISSION_SOCKETS);
    this.discovery = new Discovery(this.api);
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
      allowWhileStarting: new Set([Webhook.namespaceMutator.path]),
      logger: opts.logger,
      onReview: (path, verdict, ms) => {
        const webhook = Object.values(Webhook).find((w) => w.path === path)?.name ?? path;
        opts.metrics?.webhookSeconds.observe({ webhook }, ms / 1000);
        if (!verdict.allowed) opts.metrics?.webhookDenials.inc({ webhook, reason: verdict.reason });
      },
    });
    server
      .route(Webhook.namespaceMutator.path, (r) => mutateNamespace(this.h, this.input<NamespaceInput>(r)))
      .route(Webhook.namespaces.path, (r) => this.withChecks(r, validateNamespace(this.h, this.input<NamespaceInput>(r))))
      .route(Webhook.subnamespaceAnchors.path, (r) => validateAnchor(this.h, this.input<SubnamespaceAnchor>(r)), SUBNAMESPACE_ANCHOR)
      .route(Webhook.hierarchyConfigurations.path, (r) => this.hierarchy(r), HIERARCHY_CONFIGURATION)
      .route(Webhook.hncConfigurations.path, (r) => this.hncConfiguration(r), HNC_CONFIGURATION)
      .route(Webhook.objects.path, (r) => this.object(r));
    this.port = await server.start();
    this.server = server;
    this.certs?.startRenewal((c) => {
      server.setCertificate(c.cert, c.key);
      this.serving = c;
      void this.register();
    });
    await this.register();
    opts.logger.info({ port: this.port }, 'webhooks serving');
  }

  async stop(): Promise<void> {
    this.certs?.stop();
    await this.server?.stop();
  }

  /** The kinds being propagated: the objects webhook guards exactly these. */
  async setPropagatedTypes(types: Array<{ group: string; resource: string; mode: string }>): Promise<void> {
    const byGroup = new Map<string, string[]>();
    for (const t of types) if (isPropagating(t.mode)) byGroup.set(t.group, [...(byGroup.get(t.group) ?? []), t.resource]);
    this.objectRules = [...byGroup].map(([group, resources]) => ({ group, resources })).sort((a, b) => (a.group < b.group ? -1 : 1));
    if (this.server) await this.register();
  }

  private async register(): Promise<void> {
    // Registering before the propagated kinds are known would empty the objects webhook's rules
    // (of a running cluster, on a restart) only to fill them again a moment later.
    if (this.opts.registerConfigurations === false || this.objectRules === undefined) return;
    await applyConfigurations(this.opts.client, {
      endpoint: this.opts.endpoint(this.port),
      caBundle: this.serving?.ca,
      excludedNamespaces: [...this.h.policy.excluded],
      objectRules: this.objectRules ?? [],
      managerNamespace: this.opts.namespace,
    });
  }

  private input<T>(r: AdmissionRequest): AdmissionInput<T> {
    const groups = r.userInfo.groups ?? [];
    return {
      operation: r.operation,
      name: r.name,
      namespace: r.namespace,
      object: (r.object ?? undefined) as T | undefined,
      oldObject: (r.oldObject ?? undefined) as T | undefined,
      userInfo: r.userInfo,
      // HNC's own service accounts are exempt from every validator; no other identity is.
      isHncServiceAccount: groups.includes(serviceAccountsGroup(this.opts.namespace)),
    };
  }

  private hierarchy(r: AdmissionRequest): Promise<Decision> {
    return this.withChecks(r, validateHierarchyConfiguration(this.h, this.input<HierarchyConfiguration>(r)));
  }

  /** Runs the server checks a verdict still needs (SubjectAccessReviews, existence) and completes it. */
  private async withChecks(r: AdmissionRequest, verdict: HierarchyVerdict): Promise<Decision> {
    if (!isPending(verdict)) return verdict;
    const answers = await Promise.all(
      verdict.checks.map(async (check): Promise<CheckAnswer> => {
        try {
          if (check.kind === 'authorize') return { allowed: await userCan(this.api, r.userInfo, check.review.resourceAttributes) };
          const exists = await this.api.get(`/api/v1/namespaces/${segment(check.namespace)}`).then(
            () => true,
            (e: unknown) => (isNotFound(e) ? false : Promise.reject(e)),
          );
          return { exists };
        } catch (err) {
          return { error: (err as Error).message };
        }
      }),
    );
    return verdict.complete(answers);
  }

  private async hncConfiguration(r: AdmissionRequest): Promise<Decision> {
    const input = this.input<HNCConfiguration>(r);
    // Discovery answers for the groups the new spec names, fetched before the pure decision (the
    // reconciler's resolver: both agree on what the configuration names). A group that is not a
    // DNS subdomain is refused by the validator; it is never put into a URL.
    const groups = (input.object?.spec?.resources ?? []).map((x) => x.group ?? '').filter((g) => g === '' || isGroupName(g));
    const resolve = await this.discovery.resolver(groups);
    const propagating = this.opts.propagation?.propagatingKinds() ?? [];
    return validateHncConfiguration(this.h, input, {
      resolve,
      propagating,
    });
  }

  private object(r: AdmissionRequest): Decision {
    const ctx = this.opts.propagation?.context(r.resource.group, r.resource.resource);
    const propagating = ctx !== undefined && isPropagating(ctx.type.mode);
    return validateObject(this.h, this.input<PropagatableObject>(r), {
      resource: { group: r.resource.group, resource: r.resource.resource },
      propagating,
      overwrittenIn: ctx ? (ns, name, obj) => conflictingDescendants(ctx, ns, name, obj) : undefined,
    });
  }
}
