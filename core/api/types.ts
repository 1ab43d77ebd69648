// Wire shapes of the four hnc.x-k8s.io/v1alpha2 kinds, as JSON on the API server. Hand-written to
// match crds/*.yaml (core/api/crds.test.ts checks the two agree where it matters).
// apiVersion and kind are optional because list items do not always carry them.

import { API_VERSION, AnchorState, ENFORCED_TYPES, PropagationMode, Singleton, type Kind } from './constants.js';

/** The subset of metav1.ObjectMeta HNC reads or writes. */
export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
}

export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
}

/** A label or annotation as written in HierarchyConfiguration and anchor specs. */
export interface MetaKVP {
  key: string;
  value: string;
}

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** metav1.Condition. HNC always sets status "True". */
export interface Condition {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
  /** RFC 3339 date-time. */
  lastTransitionTime: string;
  observedGeneration?: number;
}

interface HncObject<K extends Kind> {
  apiVersion?: typeof API_VERSION;
  kind?: K;
  metadata: ObjectMeta;
}

interface HncList<K extends Kind, T> {
  apiVersion?: typeof API_VERSION;
  kind?: `${K}List`;
  metadata?: ListMeta;
  items: T[];
}

export interface HierarchyConfigurationSpec {
  /** Parent namespace; empty or absent for a root. */
  parent?: string;
  allowCascadingDeletion?: boolean;
  labels?: MetaKVP[];
  annotations?: MetaKVP[];
}

export interface HierarchyConfigurationStatus {
  /** Direct children, sorted. */
  children?: string[];
  conditions?: Condition[];
}

export interface HierarchyConfiguration extends HncObject<'HierarchyConfiguration'> {
  spec?: HierarchyConfigurationSpec;
  status?: HierarchyConfigurationStatus;
}
export type HierarchyConfigurationList = HncList<'HierarchyConfiguration', HierarchyConfiguration>;

export interface SubnamespaceAnchorSpec {
  labels?: MetaKVP[];
  annotations?: MetaKVP[];
}

export interface SubnamespaceAnchorStatus {
  /** `.status.status`: an AnchorState, though the CRD does not enforce it. */
  status?: string;
}

export interface SubnamespaceAnchor extends HncObject<'SubnamespaceAnchor'> {
  spec?: SubnamespaceAnchorSpec;
  status?: SubnamespaceAnchorStatus;
}
export type SubnamespaceAnchorList = HncList<'SubnamespaceAnchor', SubnamespaceAnchor>;

export interface ResourceSpec {
  /** API group; empty or absent for the core group. */
  group?: string;
  /** Plural resource name, e.g. "secrets". */
  resource: string;
  /** Empty or absent means Propagate; see effectiveMode(). */
  mode?: PropagationMode;
}

export interface ResourceStatus {
  group: string;
  /** The API version HNC uses for this type. */
  version: string;
  resource: string;
  mode?: string;
  /** Present unless the mode is Ignore. */
  numPropagatedObjects?: number;
  /** Present only for Propagate and AllowPropagate. */
  numSourceObjects?: number;
}

export interface HNCConfigurationSpec {
  resources?: ResourceSpec[];
}

export interface HNCConfigurationStatus {
  resources?: ResourceStatus[];
  conditions?: Condition[];
}

export interface HNCConfiguration extends HncObject<'HNCConfiguration'> {
  spec?: HNCConfigurationSpec;
  status?: HNCConfigurationStatus;
}
export type HNCConfigurationList = HncList<'HNCConfiguration', HNCConfiguration>;

/** corev1.ResourceList: resource name → quantity (a string such as "500m", or an integer). */
export type ResourceList = Record<string, string | number>;

export interface HierarchicalResourceQuotaSpec {
  hard?: ResourceList;
}

export interface HierarchicalResourceQuotaStatus {
  hard?: ResourceList;
  used?: ResourceList;
  requestsSummary?: string;
  limitsSummary?: string;
}

export interface HierarchicalResourceQuota extends HncObject<'HierarchicalResourceQuota'> {
  spec?: HierarchicalResourceQuotaSpec;
  status?: HierarchicalResourceQuotaStatus;
}
export type HierarchicalResourceQuotaList = HncList<'HierarchicalResourceQuota', HierarchicalResourceQuota>;

// ---- core and meta types HNC reads ------------------------------------------------------------

/** A core/v1 Namespace: the fields HNC reads. */
export interface NamespaceObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta & { name: string };
  status?: { phase?: string };
}

/** authentication.k8s.io/v1 UserInfo, as an AdmissionRequest carries it (and a SubjectAccessReview takes it). */
export interface UserInfo {
  readonly username: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** metav1.APIResource: one resource of an API group version, as discovery lists it. */
export interface ApiResource {
  /** The plural name, e.g. "roles"; a subresource is "roles/status". */
  name: string;
  singularName?: string;
  kind: string;
  namespaced: boolean;
  verbs?: string[];
  shortNames?: string[];
}

const MODES: ReadonlySet<string> = new Set(Object.values(PropagationMode));
const ANCHOR_STATES: ReadonlySet<string> = new Set(Object.values(AnchorState));

export function isPropagationMode(x: unknown): x is PropagationMode {
  return typeof x === 'string' && MODES.has(x);
}

export function isAnchorState(x: unknown): x is AnchorState {
  return typeof x === 'string' && ANCHOR_STATES.has(x);
}

/**
 * The mode HNC acts on for a configured value: empty means Propagate, and anything else unknown
 * (only possible if the schema was bypassed) behaves as Ignore.
 */
export function effectiveMode(mode: string | undefined): PropagationMode {
  if (mode === undefined || mode === '') return PropagationMode.Propagate;
  return isPropagationMode(mode) ? mode : PropagationMode.Ignore;
}

/** The modes in which a type's sources are copied. */
export type PropagatingMode = typeof PropagationMode.Propagate | typeof PropagationMode.AllowPropagate;

/**
 * Whether a type in this mode has its sources copied: Propagate (also an empty mode) or
 * AllowPropagate; not Remove or Ignore.
 */
export function isPropagating(mode: PropagationMode): mode is PropagatingMode;
export function isPropagating(mode: string | undefined): boolean;
export function isPropagating(mode: string | undefined): boolean {
  const m = effectiveMode(mode);
  return m === PropagationMode.Propagate || m === PropagationMode.AllowPropagate;
}

/** Whether group/resource is one of the RBAC types HNC always propagates. */
export function isEnforcedType(group: string | undefined, resource: string): boolean {
  return ENFORCED_TYPES.some((t) => t.group === (group ?? '') && t.resource === resource);
}

/** What a missing HierarchyConfiguration means: a root with nothing to report. */
export function emptyHierarchyConfiguration(namespace: string): HierarchyConfiguration {
  return {
    apiVersion: API_VERSION,
    kind: 'HierarchyConfiguration',
    metadata: { name: Singleton.hierarchy, namespace },
    spec: {},
    status: {},
  };
}
