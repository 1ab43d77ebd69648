// The webhook configurations, with HNC's names, and the reasoning behind each failure policy:
// - The mutator only adds the included-namespace label, which the controller also adds: it may
//   fail open (Ignore) and so never blocks namespace creation when HNC is down; it is called only
//   for creations, namespaces without the label and grafts, with a 1 s timeout.
// - The namespace, hierarchy, anchor and HNCConfiguration validators fail closed (Fail): letting a
//   cycle, an unsafe deletion or a takeover through is worse than a short refusal. The namespace
//   validator skips excluded namespaces (kube-system and friends stay writable with HNC down);
//   forged tree or included-namespace labels there are refused by the API server (policies.ts).
// - The objects validator matches only the kinds being propagated (rewritten as HNCConfiguration
//   changes, unlike HNC's match-everything rule) and only included namespaces, and fails open with a
//   1 s timeout: the copies' rules are the API server's own (webhooks/policies.ts), so it is called
//   only for writes of sources (selector annotations, the overwrite check), never for copies or
//   deletions.
// - The namespace validator is called only for what needs the forest: deletions, and changes of
//   subnamespace-of, grafted-by or an external managed-by (matchConditions); HNC's labels are
//   checked by the API server (policies.ts), so plain namespace writes never wait on HNC.
// - The quota status validator (with HRQs) is called only for the API server's raises of HNC's
//   singletons and fails closed: a raise admitted unchecked would overshoot a hierarchical quota.
// - Every validator allows whatever HNC's own service accounts write (the identity core/validation
//   calls isHncServiceAccount), so the API server skips those requests (matchConditions): the
//   manager's copy, label and status writes never wait on, or load, its own webhook. The mutator is
//   still called for them (it does not exempt HNC).
import { serviceAccountsGroup, type ManagerIdentity } from '../core/validation/manager.js';
import {
  Annotation,
  GROUP,
  HRQ_RESOURCE_QUOTA_NAME,
  Label,
  MANAGED_BY_VALUE,
  Webhook,
  WebhookConfiguration,
} from '../core/api/constants.js';
import { createHash } from 'node:crypto';
import { isNotFound, type KubeClient } from '../kube/client.js';
import { applyManifests, type Manifest } from '../kube/apply.js';

/** Where the apiserver reaches the webhooks: a URL (local control plane) or a Service (in a cluster). */
export type Endpoint = { url: string } | { service: { namespace: string; name: string; port?: number } };

export interface ObjectRule {
  group: string;
  resources: string[];
}

export interface ConfigurationInput {
  endpoint: Endpoint;
  caBundle?: string;
  excludedNamespaces: readonly string[];
  /** Kinds the objects webhook guards: those being propagated. */
  objectRules: readonly ObjectRule[];
  /** Who HNC is: its requests are allowed by every validator, so never sent. */
  manager: ManagerIdentity;
  /** Hierarchical quotas are enabled: their webhooks are registered. */
  hrq?: boolean;
}

/** CEL: the request is not by HNC (as the validators' isManager decides). */
export function notByManager(id: ManagerIdentity): string {
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(id.namespace))
    throw new Error(`HNC's namespace ${JSON.stringify(id.namespace)} is not a DNS label`);
  const bySa = `has(request.userInfo.groups) && '${serviceAccountsGroup(id.namespace)}' in request.userInfo.groups`;
  if (id.username === undefined) return `!(${bySa})`;
  // A JSON string is a CEL string literal (same escapes).
  return `!((${bySa}) || request.userInfo.username == ${JSON.stringify(id.username)})`;
}

function clientConfig(endpoint: Endpoint, path: string, caBundle?: string): Record<string, unknown> {
  const ca = caBundle ? { caBundle: Buffer.from(caBundle).toString('base64') } : {};
  if ('url' in endpoint) return { url: `${endpoint.url.replace(/\/$/, '')}${path}`, ...ca };
  return { service: { ...endpoint.service, port: endpoint.service.port ?? 443, path }, ...ca };
}

const notExcluded = (excluded: readonly string[]) => ({
  matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: [...excluded].sort() }],
});

/** CEL: an annotation's value in the request's object or old object, or "(absent)" (no label or annotation value starts so). */
const annotation = (obj: 'object' | 'oldObject', key: string) =>
  `(${obj} != null && has(${obj}.metadata.annotations) && ${JSON.stringify(key)} in ${obj}.metadata.annotations ? ${obj}.metadata.annotations[${JSON.stringify(key)}] : '(absent)')`;
const annotationChanges = (key: string) => `${annotation('object', key)} != ${annotation('oldObject', key)}`;

/**
 * CEL: a namespace request the namespace validator must judge from the forest: a deletion, a change
 * of subnamespace-of or grafted-by, or a namespace handed to an external manager. Everything else it
 * checks (HNC's labels) the API server checks itself (policies.ts), so other writes never call HNC.
 */
export const NEEDS_THE_FOREST = [
  `request.operation == 'DELETE'`,
  annotationChanges(Annotation.subnamespaceOf),
  annotationChanges(Annotation.graftedBy),
  `!(${annotation('object', Annotation.managedBy)} in ['(absent)', '', ${JSON.stringify(MANAGED_BY_VALUE)}])`,
].join(' || ');

/** CEL: the mutator has something to do: a creation (it may label it), a namespace without the included label, a graft. */
export const NEEDS_THE_MUTATOR = [
  `request.operation == 'CREATE'`,
  `!has(object.metadata.labels)`,
  `!(${JSON.stringify(Label.includedNamespace)} in object.metadata.labels)`,
  annotationChanges(Annotation.subnamespaceOf),
].join(' || ');

/** CEL: a write of a source (neither old nor new object is a copy), not a deletion: all the objects webhook still judges. */
export const WRITES_A_SOURCE = [
  `request.operation != 'DELETE'`,
  `!(object != null && has(object.metadata.labels) && ${JSON.stringify(Label.inheritedFrom)} in object.metadata.labels)`,
  `!(oldObject != null && has(oldObject.metadata.labels) && ${JSON.stringify(Label.inheritedFrom)} in oldObject.metadata.labels)`,
].join(' && ');

/** CEL: the API server's quota admission raising the usage of an HRQ singleton (webhooks/hrq.ts judges only those). */
export const SINGLETON_RAISE = `request.name == ${JSON.stringify(HRQ_RESOURCE_QUOTA_NAME)} && request.userInfo.username == 'system:apiserver'`;

export function validatingConfiguration(input: ConfigurationInput): Manifest {
  const common = { sideEffects: 'None', admissionReviewVersions: ['v1'], matchPolicy: 'Equivalent' };
  const notHnc = { name: 'not-hnc', expression: notByManager(input.manager) };
  const hnc = (resources: string[], operations: string[]) => [
    { apiGroups: ['hnc.x-k8s.io'], apiVersions: ['v1alpha2'], operations, resources, scope: '*' },
  ];
  const webhooks: Record<string, unknown>[] = [
    {
      name: Webhook.namespaces.name,
      clientConfig: clientConfig(input.endpoint, Webhook.namespaces.path, input.caBundle),
      rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE', 'DELETE'], resources: ['namespaces'], scope: '*' }],
      namespaceSelector: notExcluded(input.excludedNamespaces),
      matchConditions: [notHnc, { name: 'needs-the-forest', expression: NEEDS_THE_FOREST }],
      failurePolicy: 'Fail',
      timeoutSeconds: 5,
      ...common,
    },
    {
      name: Webhook.hierarchyConfigurations.name,
      clientConfig: clientConfig(input.endpoint, Webhook.hierarchyConfigurations.path, input.caBundle),
      rules: hnc(['hierarchyconfigurations'], ['CREATE', 'UPDATE']),
      matchConditions: [notHnc],
      failurePolicy: 'Fail',
      timeoutSeconds: 5,
      ...common,
    },
    {
      name: Webhook.subnamespaceAnchors.name,
      clientConfig: clientConfig(input.endpoint, Webhook.subnamespaceAnchors.path, input.caBundle),
      rules: hnc(['subnamespaceanchors'], ['CREATE', 'UPDATE', 'DELETE']),
      matchConditions: [notHnc],
      failurePolicy: 'Fail',
      timeoutSeconds: 5,
      ...common,
    },
    {
      name: Webhook.hncConfigurations.name,
      clientConfig: clientConfig(input.endpoint, Webhook.hncConfigurations.path, input.caBundle),
      rules: hnc(['hncconfigurations'], ['CREATE', 'UPDATE', 'DELETE']),
      matchConditions: [notHnc],
      failurePolicy: 'Fail',
      timeoutSeconds: 5,
      ...common,
    },
    {
      name: Webhook.objects.name,
      clientConfig: clientConfig(input.endpoint, Webhook.objects.path, input.caBundle),
      rules: input.objectRules
        .filter((r) => r.resources.length)
        .map((r) => ({
          apiGroups: [r.group],
          apiVersions: ['*'],
          operations: ['CREATE', 'UPDATE', 'DELETE'],
          resources: [...r.resources].sort(),
          scope: 'Namespaced',
        })),
      namespaceSelector: { matchLabels: { [Label.includedNamespace]: 'true' } },
      matchConditions: [notHnc, { name: 'writes-a-source', expression: WRITES_A_SOURCE }],
      // Fails open: the copies' rules are the API server's (policies.ts); a source's checks wait for HNC's next look.
      failurePolicy: 'Ignore',
      timeoutSeconds: 1,
      ...common,
    },
  ];
  if (input.hrq) {
    webhooks.push(
      {
        name: Webhook.hrq.name,
        clientConfig: clientConfig(input.endpoint, Webhook.hrq.path, input.caBundle),
        rules: hnc(['hierarchicalresourcequotas'], ['CREATE', 'UPDATE']),
        failurePolicy: 'Fail',
        timeoutSeconds: 5,
        ...common,
      },
      // Only the API server's raises of HNC's singletons, and those fail closed (HNC fails open):
      // a hierarchical quota is a limit, and admitting a raise unchecked while HNC cannot answer
      // (down, frozen, a handover) overshoots it. Other quotas never call HNC.
      {
        name: Webhook.resourceQuotaStatus.name,
        clientConfig: clientConfig(input.endpoint, Webhook.resourceQuotaStatus.path, input.caBundle),
        rules: [
          { apiGroups: [''], apiVersions: ['v1'], operations: ['UPDATE'], resources: ['resourcequotas/status'], scope: 'Namespaced' },
        ],
        matchConditions: [{ name: 'singleton-raise', expression: SINGLETON_RAISE }],
        failurePolicy: 'Fail',
        timeoutSeconds: 2,
        ...common,
      },
    );
  }
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: WebhookConfiguration.validating },
    webhooks,
  };
}

export function mutatingConfiguration(input: ConfigurationInput): Manifest {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: WebhookConfiguration.mutating },
    webhooks: [
      {
        name: Webhook.namespaceMutator.name,
        clientConfig: clientConfig(input.endpoint, Webhook.namespaceMutator.path, input.caBundle),
        rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['namespaces'], scope: '*' }],
        namespaceSelector: notExcluded(input.excludedNamespaces),
        matchConditions: [{ name: 'needs-the-mutator', expression: NEEDS_THE_MUTATOR }],
        failurePolicy: 'Ignore',
        timeoutSeconds: 1,
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        reinvocationPolicy: 'Never',
      },
      ...(input.hrq
        ? [
            {
              name: Webhook.hrqQuantities.name,
              clientConfig: clientConfig(input.endpoint, Webhook.hrqQuantities.path, input.caBundle),
              rules: [
                {
                  apiGroups: ['hnc.x-k8s.io'],
                  apiVersions: ['v1alpha2'],
                  operations: ['CREATE', 'UPDATE'],
                  resources: ['hierarchicalresourcequotas'],
                  scope: '*',
                },
              ],
              failurePolicy: 'Fail',
              timeoutSeconds: 2,
              sideEffects: 'None',
              admissionReviewVersions: ['v1'],
              reinvocationPolicy: 'Never',
            },
          ]
        : []),
    ],
  };
}

const HASH_ANNOTATION = 'hnc.x-k8s.io/configuration-hash';

export const CONFIGURATION_PATHS = {
  validating: `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${WebhookConfiguration.validating}`,
  mutating: `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${WebhookConfiguration.mutating}`,
} as const;

/** A configuration as read back: what we wrote plus the API server's defaults. */
export interface LiveConfiguration {
  metadata: { annotations?: Record<string, string>; resourceVersion?: string };
  webhooks?: Array<Record<string, unknown>>;
}

/**
 * True when every field of `wanted` has the same value in `live` (objects compared field by field,
 * arrays element by element): the API server adds defaults, so equality would never hold.
 */
export function contains(live: unknown, wanted: unknown): boolean {
  if (Array.isArray(wanted)) return Array.isArray(live) && live.length === wanted.length && wanted.every((w, i) => contains(live[i], w));
  if (wanted !== null && typeof wanted === 'object') {
    if (live === null || typeof live !== 'object' || Array.isArray(live)) return false;
    return Object.entries(wanted).every(([k, v]) => contains((live as Record<string, unknown>)[k], v));
  }
  return live === wanted;
}

/**
 * Writes both configurations by server-side apply, each only when the live one differs from what
 * we would write: missing (deleted by someone), edited, or written from other input (the hash
 * annotation says), so a restart or a repair pass over intact configurations sends no write at all.
 * `read` gives the live configuration (a watch cache; a GET by default). Returns the writes sent.
 */
export async function applyConfigurations(
  client: KubeClient,
  input: ConfigurationInput,
  read: (path: string) => Promise<LiveConfiguration | undefined> = liveObject(client),
  /** Paths not to write (deleted by an admin while this run kept them: webhooks/kept-objects.ts). */
  skip: (path: string) => boolean = () => false,
): Promise<number> {
  const items = [mutatingConfiguration(input), validatingConfiguration(input)].map((m) => ({
    manifest: m,
    path: m.kind === 'MutatingWebhookConfiguration' ? CONFIGURATION_PATHS.mutating : CONFIGURATION_PATHS.validating,
    compared: (o: Manifest | LiveConfiguration) => (o as { webhooks?: unknown }).webhooks,
  }));
  return applyChanged(client, items, read, skip);
}

/** A GET that answers undefined for an object that does not exist. */
export const liveObject =
  <T>(client: KubeClient) =>
  (path: string): Promise<T | undefined> =>
    client.get<T>(path).catch((e: unknown) => (isNotFound(e) ? undefined : Promise.reject(e)));

/**
 * Server-side applies each manifest whose live object differs from it (missing, edited, or written
 * from other input: a hash of the manifest rides in an annotation), skipping `skip`'s paths.
 * Returns the writes sent. The webhook configurations and the admission policies both keep theirs so.
 */
export async function applyChanged(
  client: KubeClient,
  items: ReadonlyArray<{ manifest: Manifest; path: string; compared: (o: Manifest | LiveConfiguration) => unknown }>,
  read: (path: string) => Promise<LiveConfiguration | undefined>,
  skip: (path: string) => boolean,
): Promise<number> {
  const wanted: Manifest[] = [];
  for (const { manifest: m, path, compared } of items) {
    if (skip(path)) continue;
    const hash = createHash('sha256').update(JSON.stringify(m)).digest('hex').slice(0, 32);
    const live = await read(path);
    if (live?.metadata.annotations?.[HASH_ANNOTATION] === hash && contains(compared(live), compared(m))) continue;
    wanted.push({ ...m, metadata: { ...m.metadata, annotations: { [HASH_ANNOTATION]: hash } } });
  }
  if (wanted.length) await applyManifests(client, wanted);
  return wanted.length;
}

export const PROBE_PATH = '/probe-reachability';
export const PROBE_LABEL = 'hnc.x-k8s.io/reachability-probe';

/**
 * What proves the API server reaches the webhook server before any webhook that fails closed is
 * registered: the validating configuration holding only a probe webhook that fails open (Ignore)
 * and matches only a dry-run namespace labelled with `nonce`.
 */
export function probeConfiguration(endpoint: Endpoint, caBundle: string | undefined, nonce: string): Manifest {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name: WebhookConfiguration.validating },
    webhooks: [
      {
        name: `reachability-probe.${GROUP}`,
        clientConfig: clientConfig(endpoint, PROBE_PATH, caBundle),
        rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['namespaces'], scope: '*' }],
        objectSelector: { matchLabels: { [PROBE_LABEL]: nonce } },
        failurePolicy: 'Ignore',
        timeoutSeconds: 5,
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      },
    ],
  };
}
