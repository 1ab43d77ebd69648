// What `kubectl hns migrate --check` reports: findings about a cluster running HNC v1.1.0, each
// saying what swapping in hnc-ts changes and what to do first (docs/migrating-from-hnc.md).

/**
 * `ok`: carried over as it is. `change`: the swap changes it, and nothing needs doing first (a
 * documented difference, or a step every swap takes). `action`: do it before the swap, or a kind
 * stops propagating or a setting is lost.
 */
export type Severity = 'ok' | 'change' | 'action';

export type Area = 'propagation' | 'deployment' | 'flags' | 'hrq' | 'copies';

export interface Finding {
  area: Area;
  severity: Severity;
  /** What it is about: a kind (`configmaps`), a flag (`--managed-namespace-label`) ... */
  subject?: string;
  message: string;
  /** Commands to run, in order. */
  commands?: string[];
  /** Flags to add to hnc-ts's manager (its Deployment's args, deploy/manager/deployment.yaml). */
  args?: string[];
  /** The same with hnc-ts's Helm chart (charts/hnc): `--set` options or the value to set. */
  helm?: string[];
  /** Counts behind the message, e.g. copies per kind. */
  counts?: Record<string, number>;
}

/** One rule of a ClusterRole, as RBAC stores it. */
export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs?: string[];
}

/** A ClusterRole aggregated into hnc-ts's manager role (labelled hnc.x-k8s.io/aggregate-to-manager). */
export interface Grant {
  name: string;
  rules: PolicyRule[];
}

/** A kind named in HNCConfiguration's spec. */
export interface ConfiguredKind {
  group: string;
  resource: string;
  mode: string;
}

/** The labels and annotations of every copy of one kind (objects labelled hnc.x-k8s.io/inherited-from). */
export interface KindCopies {
  kind: string;
  copies: { labels?: Record<string, string>; annotations?: Record<string, string> }[];
}

/** HNC's manager Deployment, as much as the check reads. */
export interface ManagerDeployment {
  namespace: string;
  name: string;
  /** spec.selector.matchLabels */
  selector: Record<string, string>;
  serviceAccountName?: string;
  /** The manager container's command words after the program, then its args. */
  args: string[];
}

/**
 * What was read from the cluster. `undefined`: could not be read (the caller notes why), so
 * nothing is said about it; `null`: read, and not there.
 */
export interface MigrationInput {
  /** HNCConfiguration config's spec.resources. */
  kinds: ConfiguredKind[] | null | undefined;
  grants: Grant[] | undefined;
  deployment: ManagerDeployment | null | undefined;
  hrqCount: number | undefined;
  /** Per kind; kinds whose copies could not be listed are left out (and noted by the caller). */
  copies: KindCopies[];
}

export interface MigrationReport {
  findings: Finding[];
  /** Manager flags to add to hnc-ts's Deployment (its args). */
  args: string[];
  /** hnc-ts's Helm chart options that do every action at once (grants, HRQ, flags). */
  helm: string[];
  /** Reads that failed (no permission ...): the check is incomplete. */
  notes: string[];
}
