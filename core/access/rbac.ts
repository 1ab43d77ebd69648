// Kubernetes RBAC, evaluated from memory: does some ClusterRoleBinding, or some RoleBinding in the
// request's namespace, bind this user to a role whose rules allow this request? The webhooks use it
// to answer their SubjectAccessReviews locally when RBAC grants them (docs/webhooks.md, "Local
// authorization"); only an allow is ever taken from it (RBAC is additive: what it allows, the usual
// `Node,RBAC` authorizer chain allows too), anything else goes to the API server.
//
// The matching rules are the RBAC authorizer's (https://kubernetes.io/docs/reference/access-authn-authz/rbac/):
// * a rule matches when its verbs, apiGroups and resources each hold the request's value or `*`;
//   resources are `resource` or `resource/subresource`, and `*/subresource` matches that
//   subresource of any resource; a rule with resourceNames matches only requests naming one of them;
// * ClusterRoleBindings apply everywhere; a RoleBinding only to requests in its namespace, whether
//   it refers to a Role (of its namespace) or to a ClusterRole; a request without a namespace
//   (a cluster-scoped resource) is matched by ClusterRoleBindings only;
// * a User subject matches the username; a Group subject a group the request carries (exactly as
//   given: the API server has already added system:authenticated and the like); a ServiceAccount
//   subject the username `system:serviceaccount:<namespace>:<name>` (in a RoleBinding the
//   namespace defaults to the binding's; in a ClusterRoleBinding a subject without one matches nobody);
// * an aggregated ClusterRole's rules are those the API server's aggregation controller wrote into it.
//
// Pure: the objects are reduced to a compact form (compactRules, compactBinding) that the caller
// keeps and feeds to an RbacSnapshot; the subject keys are those of core/access (subjectKey).
import { subjectKey } from './access.js';

/** One request to authorize: a SubjectAccessReview's resourceAttributes. */
export interface RbacCheck {
  readonly verb: string;
  /** The API group ('' for the core group). */
  readonly group: string;
  /** `pods`, or `pods/exec` (or give the subresource apart). */
  readonly resource: string;
  readonly subresource?: string;
  /** Absent: a cluster-scoped request (only ClusterRoleBindings apply). */
  readonly namespace?: string;
  readonly name?: string;
}

/** The requester, as the API server passed it in the admission request. */
export interface RbacUser {
  readonly username: string;
  readonly groups?: readonly string[];
}

/** A PolicyRule's resource part (non-resource URLs never match a resource request, so they are dropped). */
export interface RbacRule {
  readonly verbs: readonly string[];
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  /** Absent or empty: any name. */
  readonly resourceNames?: readonly string[];
}

/** A (Cluster)RoleBinding reduced to what authorization reads. */
export interface RbacBinding {
  readonly roleKind: 'Role' | 'ClusterRole';
  readonly roleName: string;
  /** subjectKey form: `user:NAME` or `group:NAME`; a service account as the user it authenticates as. */
  readonly subjects: readonly string[];
}

/** The fields of a Role or ClusterRole that authorization reads. */
export interface RoleObject {
  rules?: ReadonlyArray<{
    verbs?: readonly string[] | null;
    apiGroups?: readonly string[] | null;
    resources?: readonly string[] | null;
    resourceNames?: readonly string[] | null;
  } | null> | null;
}

/** The fields of a RoleBinding or ClusterRoleBinding that authorization reads. */
export interface BindingObject {
  roleRef?: { apiGroup?: string; kind?: string; name?: string } | null;
  subjects?: ReadonlyArray<{ kind?: string; name?: string; namespace?: string; apiGroup?: string } | null> | null;
}

const has = (list: readonly string[], v: string): boolean => list.includes('*') || list.includes(v);

function splitResource(check: RbacCheck): [resource: string, subresource: string] {
  if (check.subresource !== undefined && check.subresource !== '') return [check.resource, check.subresource];
  const slash = check.resource.indexOf('/');
  return slash < 0 ? [check.resource, ''] : [check.resource.slice(0, slash), check.resource.slice(slash + 1)];
}

function resourceMatches(rule: RbacRule, resource: string, subresource: string): boolean {
  const combined = subresource === '' ? resource : `${resource}/${subresource}`;
  for (const r of rule.resources) {
    if (r === '*' || r === combined) return true;
    if (subresource !== '' && r === `*/${subresource}`) return true;
  }
  return false;
}

/** Whether one rule allows the request. */
export function ruleAllows(rule: RbacRule, check: RbacCheck): boolean {
  if (!has(rule.verbs, check.verb) || !has(rule.apiGroups, check.group)) return false;
  const [resource, subresource] = splitResource(check);
  if (!resourceMatches(rule, resource, subresource)) return false;
  const names = rule.resourceNames;
  return names === undefined || names.length === 0 || (check.name !== undefined && check.name !== '' && names.includes(check.name));
}

/** Whether some rule allows the request. */
export function rulesAllow(rules: readonly RbacRule[] | undefined, check: RbacCheck): boolean {
  if (!rules) return false;
  for (const r of rules) if (ruleAllows(r, check)) return true;
  return false;
}

/**
 * A role's rules as authorization reads them; with `keep`, only those that could allow one of
 * the checks it accepts (names aside): a cache of the rules the webhooks ask about stays small.
 */
export function compactRules(role: RoleObject, keep?: (rule: RbacRule) => boolean): RbacRule[] {
  const out: RbacRule[] = [];
  for (const raw of role.rules ?? []) {
    if (!raw) continue;
    const rule: RbacRule = {
      verbs: [...(raw.verbs ?? [])],
      apiGroups: [...(raw.apiGroups ?? [])],
      resources: [...(raw.resources ?? [])],
      ...(raw.resourceNames && raw.resourceNames.length > 0 ? { resourceNames: [...raw.resourceNames] } : {}),
    };
    if (rule.verbs.length === 0 || rule.resources.length === 0 || rule.apiGroups.length === 0) continue;
    if (keep && !keep(rule)) continue;
    out.push(rule);
  }
  return out;
}

/** The checks a cache of rules is kept for (names aside): a rule is kept if it could allow one. */
export function couldAllowAny(checks: readonly RbacCheck[]): (rule: RbacRule) => boolean {
  const unnamed = checks.map((c) => ({ ...c, name: undefined }));
  // Names are left out of the question: a rule limited to names may allow the check for one of them.
  return (rule) => unnamed.some((c) => ruleAllows({ ...rule, resourceNames: undefined }, c));
}

/**
 * A binding as authorization reads it, in `namespace` (a RoleBinding's; '' or absent for a
 * ClusterRoleBinding); undefined if it can grant nothing (no role it may refer to, no subject).
 */
export function compactBinding(binding: BindingObject, namespace?: string): RbacBinding | undefined {
  const ref = binding.roleRef;
  const clusterWide = namespace === undefined || namespace === '';
  if (!ref?.name || (ref.kind !== 'ClusterRole' && (ref.kind !== 'Role' || clusterWide))) return undefined;
  const subjects = new Set<string>();
  for (const s of binding.subjects ?? []) {
    if (!s?.name) continue;
    switch (s.kind) {
      case 'User':
      case 'Group':
        subjects.add(subjectKey({ kind: s.kind, name: s.name }));
        break;
      case 'ServiceAccount': {
        const ns = s.namespace || (clusterWide ? '' : namespace);
        if (ns) subjects.add(subjectKey({ kind: 'User', name: `system:serviceaccount:${ns}:${s.name}` }));
        break;
      }
    }
  }
  if (subjects.size === 0) return undefined;
  return { roleKind: ref.kind, roleName: ref.name, subjects: [...subjects].sort() };
}

/** The subject keys a user answers to: theirs and their groups'. */
export function userKeys(user: RbacUser): Set<string> {
  const keys = new Set<string>([subjectKey({ kind: 'User', name: user.username })]);
  for (const g of user.groups ?? []) keys.add(subjectKey({ kind: 'Group', name: g }));
  return keys;
}

/** What an RbacSnapshot reads: the compact objects, looked up by name. */
export interface RbacSource {
  clusterBindings(): Iterable<RbacBinding>;
  /** The RoleBindings of one namespace. */
  bindings(namespace: string): Iterable<RbacBinding>;
  clusterRoleRules(name: string): readonly RbacRule[] | undefined;
  roleRules(namespace: string, name: string): readonly RbacRule[] | undefined;
}

/**
 * Whether RBAC allows `user` the request `check`: some ClusterRoleBinding, or (for a namespaced
 * request) some RoleBinding in its namespace, binds one of the user's keys to a role with a rule
 * that allows it. False says only that these objects grant nothing: never a denial.
 */
export function rbacAllows(source: RbacSource, user: RbacUser, check: RbacCheck): boolean {
  const keys = userKeys(user);
  const applies = (b: RbacBinding) => b.subjects.some((s) => keys.has(s));
  for (const b of source.clusterBindings()) {
    if (b.roleKind === 'ClusterRole' && applies(b) && rulesAllow(source.clusterRoleRules(b.roleName), check)) return true;
  }
  const ns = check.namespace;
  if (ns === undefined || ns === '') return false;
  for (const b of source.bindings(ns)) {
    if (!applies(b)) continue;
    const rules = b.roleKind === 'ClusterRole' ? source.clusterRoleRules(b.roleName) : source.roleRules(ns, b.roleName);
    if (rulesAllow(rules, check)) return true;
  }
  return false;
}
