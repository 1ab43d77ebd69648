// The webhook configurations, with HNC's names, and the reasoning behind each failure policy:
// - The mutator only adds the included-namespace label, which the controller also adds: it may
//   fail open (Ignore) and so never blocks namespace creation when HNC is down.
// - The namespace, hierarchy, anchor and HNCConfiguration validators fail closed (Fail): letting a
//   cycle, an unsafe deletion or a takeover through is worse than a short refusal. The namespace
//   validator skips excluded namespaces (kube-system and friends stay writable with HNC down);
//   a second entry sees them only when a write sets, changes or removes HNC's labels there
//   (matchConditions), so forged tree or included-namespace labels are refused as in HNC.
// - The objects validator matches only the kinds being propagated (rewritten as HNCConfiguration
//   changes, unlike HNC's match-everything rule) and only included namespaces, with a short timeout.
// - Every validator allows whatever HNC's own service accounts write (the identity core/validation
//   calls isHncServiceAccount), so the API server skips those requests (matchConditions): the
//   manager's copy, label and status writes never wait on, or load, its own webhook. The mutator is
//   still called for them (it does not exempt HNC).
import { Label, TREE_LABEL_SUFFIX, Webhook, WebhookConfiguration } from '../core/api/constants.js';
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
  /** HNC's namespace: requests by its service accounts are allowed by every validator, so never sent. */
  managerNamespace: string;
}

/** The group every service account of a namespace is in: how the validators recognise HNC's own requests. */
export const serviceAccountsGroup = (namespace: string) => `system:serviceaccounts:${namespace}`;

/** CEL: the request is not by one of HNC's service accounts (as the validators' isHncServiceAccount decides). */
export function notByManager(namespace: string): string {
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(namespace))
    throw new Error(`HNC's namespace ${JSON.stringify(namespace)} is not a DNS label`);
  return `!(has(request.userInfo.groups) && '${serviceAccountsGroup(namespace)}' in request.userInfo.groups)`;
}

function clientConfig(endpoint: Endpoint, path: string, caBundle?: string): Record<string, unknown> {
  const ca = caBundle ? { caBundle: Buffer.from(caBundle).toString('base64') } : {};
  if ('url' in endpoint) return { url: `${endpoint.url.replace(/\/$/, '')}${path}`, ...ca };
  return { service: { ...endpoint.service, port: endpoint.service.port ?? 443, path }, ...ca };
}

const notExcluded = (excluded: readonly string[]) => ({
  matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: [...excluded].sort() }],
});

/** A label only HNC may set: a tree label (matched as HNC does) or the included-namespace label. */
const hncLabel = (k: string) => `(${k}.contains('${TREE_LABEL_SUFFIX}') || ${k} == '${Label.includedNamespace}')`;

/**
 * CEL: the request adds, changes or removes one of HNC's labels. Evaluated by the API server, so
 * ordinary writes to excluded namespaces never reach HNC (and never fail when it is down).
 */
export const CHANGES_HNC_LABELS = [
  `(has(object.metadata.labels) && object.metadata.labels.exists(k, ${hncLabel('k')} && (request.operation == 'CREATE' ||`,
  `!has(oldObject.metadata.labels) || !(k in oldObject.metadata.labels) || oldObject.metadata.labels[k] != object.metadata.labels[k])))`,
  `|| (request.operation == 'UPDATE' && has(oldObject.metadata.labels) && oldObject.metadata.labels.exists(k, ${hncLabel('k')} &&`,
  `(!has(object.metadata.labels) || !(k in object.metadata.labels))))`,
].join(' ');

export function validatingConfiguration(input: ConfigurationInput): Manifest {
  const common = { sideEffects: 'None', admissionReviewVersions: ['v1'], matchPolicy: 'Equivalent' };
  const notHnc = { name: 'not-hnc', expression: notByManager(input.managerNamespace) };
  const hnc = (resources: string[], operations: string[]) => [
    { apiGroups: ['hnc.x-k8s.io'], apiVersions: ['v1alpha2'], operations, resources, scope: '*' },
  ];
  const webhooks: Record<string, unknown>[] = [
    {
      name: Webhook.namespaces.name,
      clientConfig: clientConfig(input.endpoint, Webhook.namespaces.path, input.caBundle),
      rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE', 'DELETE'], resources: ['namespaces'], scope: '*' }],
      namespaceSelector: notExcluded(input.excludedNamespaces),
      matchConditions: [notHnc],
      failurePolicy: 'Fail',
      timeoutSeconds: 5,
      ...common,
    },
    ...(input.excludedNamespaces.length === 0
      ? []
      : [
          {
            name: Webhook.excludedNamespaces.name,
            clientConfig: clientConfig(input.endpoint, Webhook.excludedNamespaces.path, input.caBundle),
            rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['namespaces'], scope: '*' }],
            namespaceSelector: {
              matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: [...input.excludedNamespaces].sort() }],
            },
            matchConditions: [notHnc, { name: 'changes-hnc-labels', expression: CHANGES_HNC_LABELS }],
            failurePolicy: 'Fail',
            timeoutSeconds: 5,
            ...common,
          },
        ]),
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
      matchConditions: [notHnc],
      failurePolicy: 'Fail',
      timeoutSeconds: 2,
      ...common,
    },
  ];
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
        failurePolicy: 'Ignore',
        timeoutSeconds: 2,
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        reinvocationPolicy: 'Never',
      },
    ],
  };
}

const HASH_ANNOTATION = 'hnc.x-k8s.io/configuration-hash';

/**
 * Writes both configurations by server-side apply, each only when what we would write differs
 * from what we wrote last (a hash annotation says), so a restart sends no write at all.
 */
export async function applyConfigurations(client: KubeClient, input: ConfigurationInput): Promise<void> {
  const wanted: Manifest[] = [];
  for (const m of [mutatingConfiguration(input), validatingConfiguration(input)]) {
    const hash = createHash('sha256').update(JSON.stringify(m)).digest('hex').slice(0, 32);
    const path =
      m.kind === 'MutatingWebhookConfiguration'
        ? `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${m.metadata.name}`
        : `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${m.metadata.name}`;
    const live = await client
      .get<{ metadata: { annotations?: Record<string, string> } }>(path)
      .catch((e: unknown) => (isNotFound(e) ? undefined : Promise.reject(e)));
    if (live?.metadata.annotations?.[HASH_ANNOTATION] === hash) continue;
    wanted.push({ ...m, metadata: { ...m.metadata, annotations: { [HASH_ANNOTATION]: hash } } });
  }
  if (wanted.length) await applyManifests(client, wanted);
}
