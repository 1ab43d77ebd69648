// Well-known strings of the hnc.x-k8s.io/v1alpha2 API. Every value here is part of HNC's public
// contract (CRDs, labels, annotations, condition codes, webhook names), so users and tools written
// for HNC v1.1.0 keep working: change none of them without a compatibility reason.

export const GROUP = 'hnc.x-k8s.io';
export const VERSION = 'v1alpha2';
export const API_VERSION = `${GROUP}/${VERSION}` as const;

/** Aggregated, read-only group of the resource-listing API extension (not a CRD). */
export const RESOURCES_GROUP = `resources.${GROUP}` as const;

export const Kind = {
  HierarchyConfiguration: 'HierarchyConfiguration',
  SubnamespaceAnchor: 'SubnamespaceAnchor',
  HNCConfiguration: 'HNCConfiguration',
  HierarchicalResourceQuota: 'HierarchicalResourceQuota',
} as const;
export type Kind = (typeof Kind)[keyof typeof Kind];

/** Plural resource names, keyed by kind. */
export const Plural = {
  HierarchyConfiguration: 'hierarchyconfigurations',
  SubnamespaceAnchor: 'subnamespaceanchors',
  HNCConfiguration: 'hncconfigurations',
  HierarchicalResourceQuota: 'hierarchicalresourcequotas',
} as const satisfies Record<Kind, string>;
export type Plural = (typeof Plural)[keyof typeof Plural];

export const ShortName = {
  SubnamespaceAnchor: 'subns',
  HierarchicalResourceQuota: 'hrq',
} as const;

/** The only names the singleton CRDs accept (enforced by an enum in the CRD schema). */
export const Singleton = {
  /** Name of the HierarchyConfiguration in every namespace. */
  hierarchy: 'hierarchy',
  /** Name of the cluster-wide HNCConfiguration. */
  config: 'config',
} as const;

export const Label = {
  /** "true" on every managed namespace; the namespaceSelector of the objects webhook. */
  includedNamespace: `${GROUP}/included-namespace`,
  /** On propagated copies: the namespace holding the source. Its presence makes a copy. */
  inheritedFrom: `${GROUP}/inherited-from`,
  /** Forced to MANAGED_BY_VALUE on every copy; informational only. */
  appManagedBy: 'app.kubernetes.io/managed-by',
  /** "true" on the HRQ ResourceQuota singletons, for cleanup by selector. */
  hrq: `${GROUP}/hrq`,
} as const;

export const Annotation = {
  /** On a namespace: name of its parent; the source of truth that it is a subnamespace. */
  subnamespaceOf: `${GROUP}/subnamespace-of`,
  /**
   * On a namespace (hnc-ts only): the user who made it a subnamespace by setting subnamespace-of
   * (a graft), set by the mutating webhook. Its anchor was not created for it, so deleting the
   * anchor never deletes it; removing this annotation needs permission to delete the namespace.
   */
  graftedBy: `${GROUP}/grafted-by`,
  /** On a namespace: a value other than "" or MANAGED_BY_VALUE makes it external. */
  managedBy: `${GROUP}/managed-by`,
  /** OpenShift's annotation; its presence excludes an object from propagation. */
  openshiftDescription: 'openshift.io/description',
} as const;

/** Value of the managed-by label/annotation that means "HNC itself". */
export const MANAGED_BY_VALUE = GROUP;

/** Suffix of tree labels: `<ns>.tree.hnc.x-k8s.io/depth`. */
export const TREE_LABEL_SUFFIX = `.tree.${GROUP}/depth` as const;

/** The tree label a namespace and all its descendants carry for ancestor `ns`. */
export function treeLabel(ns: string): string {
  return `${ns}${TREE_LABEL_SUFFIX}`;
}

/** The ancestor named by a tree label key, or undefined if `key` is not a tree label. */
export function treeLabelNamespace(key: string): string | undefined {
  if (!key.endsWith(TREE_LABEL_SUFFIX)) return undefined;
  const ns = key.slice(0, -TREE_LABEL_SUFFIX.length);
  return ns === '' ? undefined : ns;
}

export const PROPAGATE_PREFIX = `propagate.${GROUP}` as const;

/** Annotations on source objects that restrict or widen propagation (docs/behaviour.md §5.4). */
export const SelectorAnnotation = {
  select: `${PROPAGATE_PREFIX}/select`,
  treeSelect: `${PROPAGATE_PREFIX}/treeSelect`,
  none: `${PROPAGATE_PREFIX}/none`,
  all: `${PROPAGATE_PREFIX}/all`,
} as const;
export type SelectorAnnotation = (typeof SelectorAnnotation)[keyof typeof SelectorAnnotation];

/** In the order HNC lists them in error messages. */
export const SELECTOR_ANNOTATIONS: readonly SelectorAnnotation[] = [
  SelectorAnnotation.select,
  SelectorAnnotation.treeSelect,
  SelectorAnnotation.none,
  SelectorAnnotation.all,
];

export const Finalizer = {
  /** On a HierarchyConfiguration while its namespace contains anchors. */
  hasSubnamespace: `${GROUP}/hasSubnamespace`,
  /** On anchors: the bare group string. */
  anchor: GROUP,
} as const;

export const ConditionType = {
  /** Namespace: propagation stopped here and below. */
  ActivitiesHalted: 'ActivitiesHalted',
  /** Namespace and cluster: something is misconfigured, but nothing is halted. */
  BadConfiguration: 'BadConfiguration',
  /** Cluster: a type could not be synced. */
  OutOfSync: 'OutOfSync',
  /** Cluster: summary of namespace conditions; its reason is a namespace condition type. */
  NamespaceCondition: 'NamespaceCondition',
} as const;
export type ConditionType = (typeof ConditionType)[keyof typeof ConditionType];

/** Reasons of namespace conditions (HierarchyConfiguration.status.conditions). */
export const NamespaceReason = {
  AncestorHaltActivities: 'AncestorHaltActivities',
  SubnamespaceAnchorMissing: 'SubnamespaceAnchorMissing',
  DeletingCRD: 'DeletingCRD',
  IllegalManagedAnnotation: 'IllegalManagedAnnotation',
  IllegalManagedLabel: 'IllegalManagedLabel',
  IllegalParent: 'IllegalParent',
  InCycle: 'InCycle',
  ParentMissing: 'ParentMissing',
} as const;
export type NamespaceReason = (typeof NamespaceReason)[keyof typeof NamespaceReason];

/** Reasons of cluster conditions (HNCConfiguration.status.conditions), besides NamespaceCondition's. */
export const ClusterReason = {
  ResourceNotFound: 'ResourceNotFound',
  ResourceNotNamespaced: 'ResourceNotNamespaced',
  MultipleConfigurationsForType: 'MultipleConfigurationsForType',
  Unknown: 'Unknown',
} as const;
export type ClusterReason = (typeof ClusterReason)[keyof typeof ClusterReason];

/**
 * The fixed (type → reasons) table the cluster summary and the namespace_conditions metric walk.
 * Kept as HNC has it: the IllegalManaged* reasons sit under ActivitiesHalted although they are
 * emitted as BadConfiguration, so they never show in the summary (docs/behaviour.md §2.3).
 */
export const NAMESPACE_CONDITION_SUMMARY = {
  [ConditionType.ActivitiesHalted]: [
    NamespaceReason.AncestorHaltActivities,
    NamespaceReason.DeletingCRD,
    NamespaceReason.IllegalManagedAnnotation,
    NamespaceReason.IllegalManagedLabel,
    NamespaceReason.IllegalParent,
    NamespaceReason.InCycle,
    NamespaceReason.ParentMissing,
  ],
  [ConditionType.BadConfiguration]: [NamespaceReason.SubnamespaceAnchorMissing],
} as const satisfies Partial<Record<ConditionType, readonly NamespaceReason[]>>;

/** Values of SubnamespaceAnchor `.status.status`. */
export const AnchorState = {
  Ok: 'Ok',
  Missing: 'Missing',
  Conflict: 'Conflict',
  Forbidden: 'Forbidden',
} as const;
export type AnchorState = (typeof AnchorState)[keyof typeof AnchorState];

/** Reasons of the Warning events HNC emits. */
export const EventReason = {
  CannotPropagateObject: 'CannotPropagateObject',
  CannotUpdateObject: 'CannotUpdateObject',
  CannotParseSelector: 'CannotParseSelector',
  CannotWriteResourceQuota: 'CannotWriteResourceQuota',
} as const;
export type EventReason = (typeof EventReason)[keyof typeof EventReason];

/** `source.component` of every event HNC emits. */
export const EVENT_SOURCE_COMPONENT = GROUP;

export const PropagationMode = {
  Propagate: 'Propagate',
  Ignore: 'Ignore',
  Remove: 'Remove',
  AllowPropagate: 'AllowPropagate',
} as const;
export type PropagationMode = (typeof PropagationMode)[keyof typeof PropagationMode];

/** Same order as the CRD enum. */
export const PROPAGATION_MODES: readonly PropagationMode[] = [
  PropagationMode.Propagate,
  PropagationMode.Ignore,
  PropagationMode.Remove,
  PropagationMode.AllowPropagate,
];

export const RBAC_GROUP = 'rbac.authorization.k8s.io';

/** Types HNC always propagates; they may not appear in HNCConfiguration.spec.resources. */
export const ENFORCED_TYPES = [
  { group: RBAC_GROUP, resource: 'roles', kind: 'Role', mode: PropagationMode.Propagate },
  { group: RBAC_GROUP, resource: 'rolebindings', kind: 'RoleBinding', mode: PropagationMode.Propagate },
] as const;

/** HNC's own namespace unless `--namespace` says otherwise. */
export const DEFAULT_HNC_NAMESPACE = 'hnc-system';

/**
 * Namespaces HNC never manages by default. HNC's own namespace is excluded too, but it is
 * configurable, so callers add it (the shipped manifests exclude all four).
 */
export const DEFAULT_EXCLUDED_NAMESPACES = ['kube-system', 'kube-public', 'kube-node-lease'] as const;

/** Default `--nopropagation-label` of the shipped manifests (Rancher's objects). */
export const DEFAULT_NOPROPAGATION_LABEL = { key: 'cattle.io/creator', value: 'norman' } as const;

/** Built-in exclusions: objects never propagated whatever the selectors say (docs/behaviour.md §5.5). */
export const SECRET_TYPE_SA_TOKEN = 'kubernetes.io/service-account-token';
export const SECRET_TYPE_HELM_RELEASE = 'helm.sh/release.v1';
export const UNPROPAGATED_CONFIGMAPS = ['istio-ca-root-cert', 'kube-root-ca.crt'] as const;

/** Name of the per-namespace ResourceQuota singleton that enforces HRQs. */
export const HRQ_RESOURCE_QUOTA_NAME = `hrq.${GROUP}` as const;

export const WebhookConfiguration = {
  validating: 'hnc-validating-webhook-configuration',
  mutating: 'hnc-mutating-webhook-configuration',
} as const;

export const WEBHOOK_SERVICE = 'hnc-webhook-service';

/** Webhook names and their serving paths (docs/behaviour.md §7.1). */
export const Webhook = {
  namespaceMutator: { name: `namespacelabel.${GROUP}`, path: '/mutate-namespace' },
  namespaces: { name: `namespaces.${GROUP}`, path: '/validate-v1-namespace' },
  /** The namespace validator again, for excluded namespaces, called only when HNC's labels change. */
  excludedNamespaces: { name: `excluded-namespaces.${GROUP}`, path: '/validate-v1-namespace' },
  hierarchyConfigurations: {
    name: `hierarchyconfigurations.${GROUP}`,
    path: '/validate-hnc-x-k8s-io-v1alpha2-hierarchyconfigurations',
  },
  subnamespaceAnchors: {
    name: `subnamespaceanchors.${GROUP}`,
    path: '/validate-hnc-x-k8s-io-v1alpha2-subnamespaceanchors',
  },
  hncConfigurations: {
    name: `hncconfigurations.${GROUP}`,
    path: '/validate-hnc-x-k8s-io-v1alpha2-hncconfigurations',
  },
  objects: { name: `objects.${GROUP}`, path: '/validate-objects' },
  hrq: { name: `hrq.${GROUP}`, path: '/validate-hnc-x-k8s-io-v1alpha2-hrq' },
  /** (hnc-ts) Turns unquoted numbers in an HRQ (`cpu: 1.5`) into quantity text before the schema sees them. */
  hrqQuantities: { name: `hrqquantities.${GROUP}`, path: '/mutate-hnc-x-k8s-io-v1alpha2-hrq' },
  resourceQuotaStatus: {
    name: `resourcesquotasstatus.${GROUP}`,
    path: '/validate-hnc-x-k8s-io-v1alpha2-resourcequotasstatus',
  },
} as const;
