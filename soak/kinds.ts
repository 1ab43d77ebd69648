// The kinds of sources the soak's users write, and what the checker compares of them: each is
// made from a small pool of names (so that names clash across a tree, as in real teams) and
// changed by a field of its own.

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [k: string]: unknown;
  };
  [k: string]: unknown;
}

export interface SourceKind {
  /** The resource's plural, as HNCConfiguration names it. */
  resource: string;
  group: string;
  names: readonly string[];
  collection(ns?: string): string;
  /** A new source; `rev` makes its content differ from the last one. */
  make(name: string, rev: number, annotations: Record<string, string>): KubeObject;
  /** The same object with different content. */
  change(obj: KubeObject, rev: number): KubeObject;
}

const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const at = (base: string, ns: string | undefined, plural: string) => (ns ? `${base}/namespaces/${ns}/${plural}` : `${base}/${plural}`);
const meta = (name: string, annotations: Record<string, string>) => (Object.keys(annotations).length ? { name, annotations } : { name });

const roles: SourceKind = {
  resource: 'roles',
  group: 'rbac.authorization.k8s.io',
  names: ['reader', 'deployer', 'auditor'],
  collection: (ns) => at(RBAC, ns, 'roles'),
  make: (name, rev, annotations) => ({ metadata: meta(name, annotations), rules: roleRules(rev) }),
  change: (obj, rev) => ({ ...obj, rules: roleRules(rev) }),
};

function roleRules(rev: number) {
  const resources = ['configmaps', 'pods', 'services', 'endpoints'].slice(0, 1 + (rev % 4));
  return [{ apiGroups: [''], resources, verbs: ['get', 'list'] }];
}

const roleBindings: SourceKind = {
  resource: 'rolebindings',
  group: 'rbac.authorization.k8s.io',
  names: ['viewers', 'oncall', 'guests'],
  collection: (ns) => at(RBAC, ns, 'rolebindings'),
  make: (name, rev, annotations) => ({
    metadata: meta(name, annotations),
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
    subjects: bindingSubjects(rev),
  }),
  change: (obj, rev) => ({ ...obj, subjects: bindingSubjects(rev) }),
};

function bindingSubjects(rev: number) {
  return [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: `soak-viewer-${rev % 5}` }];
}

const networkPolicies: SourceKind = {
  resource: 'networkpolicies',
  group: 'networking.k8s.io',
  names: ['deny-ingress', 'allow-web', 'allow-db'],
  collection: (ns) => at('/apis/networking.k8s.io/v1', ns, 'networkpolicies'),
  make: (name, rev, annotations) => ({ metadata: meta(name, annotations), spec: policySpec(rev) }),
  change: (obj, rev) => ({ ...obj, spec: policySpec(rev) }),
};

function policySpec(rev: number) {
  return { podSelector: { matchLabels: { app: `app-${rev % 7}` } }, policyTypes: ['Ingress'] };
}

const configMaps: SourceKind = {
  resource: 'configmaps',
  group: '',
  names: ['settings', 'features', 'limits'],
  collection: (ns) => at('/api/v1', ns, 'configmaps'),
  make: (name, rev, annotations) => ({ metadata: meta(name, annotations), data: { rev: String(rev) } }),
  change: (obj, rev) => ({ ...obj, data: { rev: String(rev) } }),
};

export const SOURCE_KINDS: readonly SourceKind[] = [roles, roleBindings, networkPolicies, configMaps];

/** The kinds HNCConfiguration must name (Roles and RoleBindings are always propagated). */
export const CONFIGURED_KINDS = SOURCE_KINDS.filter((k) => k.group !== 'rbac.authorization.k8s.io');

export const serviceCollection = (ns?: string) => at('/api/v1', ns, 'services');

/** An object of one of HNC's kinds (the API server wants apiVersion and kind on a custom resource). */
export const hncObject = (kind: string, name: string, spec?: object): KubeObject => ({
  apiVersion: 'hnc.x-k8s.io/v1alpha2',
  kind,
  metadata: { name },
  ...(spec ? { spec } : {}),
});
