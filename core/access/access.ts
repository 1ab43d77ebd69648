// Effective access (beyond HNC): which subjects hold which roles in which namespaces, and where
// each grant comes from (the namespace's own RoleBinding, or a copy HNC propagated from an
// ancestor). Pure: `kubectl hns access` feeds it the RoleBindings it read, and the impact preview
// (`--dry-run`) feeds it a hypothetical hierarchy to diff before and after.
//
// Two questions, one grant model:
// * what is true now: `grantsOf(bindings)`, from the RoleBindings as they are, copies included (a
//   copy names its source's namespace in `hnc.x-k8s.io/inherited-from`);
// * what would be true once the controller acts on a hierarchy: `expectedGrants(hierarchy, ...)`,
//   which applies the controller's own per-namespace plans (core/propagation planNamespace: the
//   highest ancestor wins, selectors, exclusions, user objects never overwritten, halted namespaces
//   left as they are) to the RoleBindings that exist, then reads the grants of the result.
// `diffAccess(before, after)` then says who gains and who loses which role where.
import { PropagationMode, RBAC_GROUP } from '../api/constants.js';
import type { Hierarchy } from '../hierarchy/hierarchy.js';
import { inheritedFrom, type PropagatableObject } from '../propagation/copy.js';
import { planNamespace, SourceSet, type NamespacePlan, type PropagationOptions, type PropagationType } from '../propagation/decide.js';

export type SubjectKind = 'User' | 'Group' | 'ServiceAccount';

/** A RoleBinding subject. `namespace` only for service accounts. */
export interface Subject {
  readonly kind: SubjectKind;
  readonly name: string;
  readonly namespace?: string;
}

/** What a RoleBinding grants: a ClusterRole, or a Role of the binding's namespace. */
export interface RoleRef {
  readonly kind: 'Role' | 'ClusterRole';
  readonly name: string;
}

/** The fields of a RoleBinding that access reads. */
export interface RoleBindingObject extends PropagatableObject {
  roleRef?: { apiGroup?: string; kind?: string; name?: string };
  subjects?: readonly { kind?: string; name?: string; namespace?: string; apiGroup?: string }[] | null;
}

/** One subject holding one role in one namespace through one RoleBinding. */
export interface Grant {
  readonly namespace: string;
  readonly subject: Subject;
  readonly role: RoleRef;
  /** The RoleBinding's name (a copy has its source's name). */
  readonly binding: string;
  /** 'own': made in this namespace; 'inherited': a copy HNC propagated from the ancestor `from`. */
  readonly origin: 'own' | 'inherited';
  /** For inherited grants: the namespace holding the source RoleBinding. */
  readonly from?: string;
  /**
   * Only when the roles were given (RoleCatalog) and the referenced Role or ClusterRole is not
   * among them: the binding then grants nothing until the role exists.
   */
  readonly roleMissing?: true;
}

/** The roles that exist, to tell bindings to missing roles apart. Each part is optional. */
export interface RoleCatalog {
  /** Roles (sources and copies) by namespace and name; when absent, Role references are not checked. */
  readonly roles?: Iterable<PropagatableObject>;
  /** ClusterRole names; when absent, ClusterRole references are not checked. */
  readonly clusterRoles?: Iterable<string>;
}

/** The RoleBinding type as HNC always propagates it. */
export const ROLEBINDING_TYPE: PropagationType = { group: RBAC_GROUP, kind: 'RoleBinding', mode: PropagationMode.Propagate };
/** The Role type as HNC always propagates it. */
export const ROLE_TYPE: PropagationType = { group: RBAC_GROUP, kind: 'Role', mode: PropagationMode.Propagate };

// ---- subjects -------------------------------------------------------------------------------------

const KIND_BY_PREFIX: Readonly<Record<string, SubjectKind>> = { user: 'User', group: 'Group', serviceaccount: 'ServiceAccount' };

/** Thrown by parseSubject: the message says what is wrong and what is expected. */
export class SubjectSyntaxError extends Error {}

/**
 * Reads `user:NAME`, `group:NAME` or `serviceaccount:NAMESPACE:NAME` (kind case-insensitive).
 * User and group names may contain colons (`user:system:admin`).
 */
export function parseSubject(text: string): Subject {
  const colon = text.indexOf(':');
  const prefix = colon < 0 ? '' : text.slice(0, colon).toLowerCase();
  const kind = KIND_BY_PREFIX[prefix];
  const rest = colon < 0 ? '' : text.slice(colon + 1);
  const expected = 'expected user:NAME, group:NAME or serviceaccount:NAMESPACE:NAME';
  if (!kind) throw new SubjectSyntaxError(`"${text}" is not a subject: ${expected}`);
  if (kind !== 'ServiceAccount') {
    if (rest === '') throw new SubjectSyntaxError(`"${text}" names no ${prefix}: ${expected}`);
    return { kind, name: rest };
  }
  const sep = rest.indexOf(':');
  const namespace = sep < 0 ? '' : rest.slice(0, sep);
  const name = sep < 0 ? '' : rest.slice(sep + 1);
  if (namespace === '' || name === '' || name.includes(':')) {
    throw new SubjectSyntaxError(`"${text}" is not a service account: expected serviceaccount:NAMESPACE:NAME`);
  }
  return { kind, namespace, name };
}

/** The subject as parseSubject reads it: `user:alice`, `serviceaccount:team-a:deployer`. A stable key. */
export function subjectKey(s: Subject): string {
  // A switch, not toLowerCase: a preview keys tens of thousands of grants.
  switch (s.kind) {
    case 'User':
      return `user:${s.name}`;
    case 'Group':
      return `group:${s.name}`;
    case 'ServiceAccount':
      return `serviceaccount:${s.namespace ?? ''}:${s.name}`;
    default: {
      const other: { kind: string; name: string } = s;
      return `${other.kind.toLowerCase()}:${other.name}`;
    }
  }
}

/** For messages: `user alice`, `group team-b`, `serviceaccount team-a:deployer`. */
export function subjectText(s: Subject): string {
  return s.kind === 'ServiceAccount' ? `serviceaccount ${s.namespace ?? ''}:${s.name}` : `${s.kind.toLowerCase()} ${s.name}`;
}

/** For messages and tables: a ClusterRole by its name (`admin`), a Role as `Role/NAME`. */
export function roleText(r: RoleRef): string {
  return r.kind === 'ClusterRole' ? r.name : `Role/${r.name}`;
}

/**
 * The groups Kubernetes puts every such subject in, whose bindings therefore reach it too: every
 * authenticated user is in `system:authenticated`; a service account also in
 * `system:serviceaccounts` and `system:serviceaccounts:NAMESPACE`.
 */
export function implicitGroups(s: Subject): string[] {
  if (s.kind === 'Group') return [];
  if (s.kind === 'User') return ['system:authenticated'];
  return ['system:serviceaccounts', `system:serviceaccounts:${s.namespace ?? ''}`, 'system:authenticated'];
}

const sameSubject = (a: Subject, b: Subject): boolean => subjectKey(a) === subjectKey(b);

/**
 * The grants that reach `subject`: those naming it, and those naming one of `groups` (by default
 * its implicit groups; pass the groups a user is in to include theirs).
 */
export function grantsFor(grants: Iterable<Grant>, subject: Subject, groups: readonly string[] = implicitGroups(subject)): Grant[] {
  const inGroup = new Set(groups);
  const out: Grant[] = [];
  for (const g of grants) {
    if (sameSubject(g.subject, subject) || (g.subject.kind === 'Group' && inGroup.has(g.subject.name))) out.push(g);
  }
  return out;
}

// ---- grants of RoleBindings as they are --------------------------------------------------------------

function readSubject(raw: { kind?: string; name?: string; namespace?: string }, bindingNamespace: string): Subject | undefined {
  if (!raw.name) return undefined;
  switch (raw.kind) {
    case 'User':
    case 'Group':
      return { kind: raw.kind, name: raw.name };
    case 'ServiceAccount':
      return { kind: 'ServiceAccount', name: raw.name, namespace: raw.namespace || bindingNamespace };
    default:
      return undefined;
  }
}

/** The grants of one RoleBinding in its namespace (metadata.namespace, or `namespace` if given). */
export function bindingGrants(binding: RoleBindingObject, namespace = binding.metadata?.namespace ?? ''): Grant[] {
  const ref = binding.roleRef;
  const name = binding.metadata?.name;
  if (!name || !ref?.name || (ref.kind !== 'Role' && ref.kind !== 'ClusterRole')) return [];
  const role: RoleRef = { kind: ref.kind, name: ref.name };
  const from = inheritedFrom(binding);
  const out: Grant[] = [];
  const subjects = binding.subjects ?? [];
  // Most bindings name one subject: no duplicate to look for.
  const seen = subjects.length > 1 ? new Set<string>() : undefined;
  for (const raw of subjects) {
    const subject = readSubject(raw, namespace);
    if (!subject) continue;
    if (seen) {
      const key = subjectKey(subject);
      if (seen.has(key)) continue;
      seen.add(key);
    }
    out.push(
      from === undefined
        ? { namespace, subject, role, binding: name, origin: 'own' }
        : { namespace, subject, role, binding: name, origin: 'inherited', from },
    );
  }
  return out;
}

export interface GrantsOptions {
  /** Only bindings in these namespaces (default: all given). */
  readonly namespaces?: Iterable<string>;
  /** Marks grants of roles that do not exist (roleMissing). */
  readonly roles?: RoleCatalog;
  /** False: in the bindings' order (for diffAccess, which orders its answer itself). Default true. */
  readonly sorted?: boolean;
}

/** Every grant of the RoleBindings given, as they are: "who has what where now". Sorted (compareGrants) unless told not to. */
export function grantsOf(bindings: Iterable<RoleBindingObject>, opts: GrantsOptions = {}): Grant[] {
  const only = opts.namespaces ? new Set(opts.namespaces) : undefined;
  const out: Grant[] = [];
  for (const b of bindings) {
    if (b.metadata?.deletionTimestamp !== undefined) continue; // going away
    const ns = b.metadata?.namespace ?? '';
    if (only && !only.has(ns)) continue;
    for (const g of bindingGrants(b, ns)) out.push(g);
  }
  const marked = opts.roles ? markMissingRoles(out, opts.roles) : out;
  return opts.sorted === false ? marked : sortGrants(marked);
}

/** The grants with `roleMissing` set on those whose role the catalog does not hold (see RoleCatalog). Same order. */
export function markMissingRoles(grants: readonly Grant[], catalog: RoleCatalog): Grant[] {
  const roles = roleIndex(catalog);
  return grants.map((g) => (roles.missing(g) ? { ...g, roleMissing: true } : g));
}

const sortKey = (g: Grant): string => `${g.namespace}\0${subjectKey(g.subject)}\0${g.role.kind}\0${g.role.name}\0${g.binding}`;

/** Sorts grants in place in compareGrants order (each key computed once), and returns them. */
export function sortGrants(grants: Grant[]): Grant[] {
  const keyed = grants.map((g) => ({ g, k: sortKey(g) }));
  keyed.sort((a, b) => cmp(a.k, b.k));
  keyed.forEach((x, i) => (grants[i] = x.g));
  return grants;
}

interface RoleIndex {
  missing(g: Grant): boolean;
}

function roleIndex(catalog: RoleCatalog): RoleIndex {
  const roles = catalog.roles
    ? new Set([...catalog.roles].map((r) => `${r.metadata?.namespace ?? ''}/${r.metadata?.name ?? ''}`))
    : undefined;
  const clusterRoles = catalog.clusterRoles
    ? catalog.clusterRoles instanceof Set
      ? (catalog.clusterRoles as ReadonlySet<string>)
      : new Set(catalog.clusterRoles)
    : undefined;
  return {
    missing: (g) =>
      g.role.kind === 'Role'
        ? roles !== undefined && !roles.has(`${g.namespace}/${g.role.name}`)
        : clusterRoles !== undefined && !clusterRoles.has(g.role.name),
  };
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Orders grants by namespace, subject, role, binding. */
export function compareGrants(a: Grant, b: Grant): number {
  return (
    cmp(a.namespace, b.namespace) ||
    cmp(subjectKey(a.subject), subjectKey(b.subject)) ||
    cmp(a.role.kind, b.role.kind) ||
    cmp(a.role.name, b.role.name) ||
    cmp(a.binding, b.binding)
  );
}

// ---- grants once the controller has acted -----------------------------------------------------------

export interface ExpectedOptions {
  /** The controller's propagation options (never-copied keys, --nopropagation-label). */
  readonly propagation?: PropagationOptions;
}

/**
 * The objects of one propagated type that each namespace will hold once the controller has acted
 * on `hierarchy`: its per-namespace plan (planNamespace, the controller's own decision) applied to
 * the objects there now. Copies are created, updated (a recreate too) or deleted as planned; user
 * objects stay, conflicts included; a namespace the controller skips (halted, unmanaged, not in
 * the forest) keeps what it has. `objects` are the type's objects as they are (sources and copies,
 * each with metadata.namespace); the sources among them are those in any namespace, so pass all
 * of them, not only those of `namespaces`.
 */
export function expectedObjects<T extends PropagatableObject>(
  hierarchy: Hierarchy,
  type: PropagationType,
  objects: Iterable<T>,
  namespaces: Iterable<string>,
  opts: ExpectedOptions = {},
): Map<string, T[]> {
  const byNs = new Map<string, T[]>();
  const sources = new SourceSet();
  for (const o of objects) {
    const ns = o.metadata?.namespace ?? '';
    const name = o.metadata?.name;
    let list = byNs.get(ns);
    if (!list) byNs.set(ns, (list = []));
    list.push(o);
    if (name !== undefined) sources.set({ namespace: ns, name, object: o }); // copies are refused by SourceSet
  }
  const ctx = { hierarchy, type, sources, ...(opts.propagation ? { options: opts.propagation } : {}) };
  const out = new Map<string, T[]>();
  for (const ns of namespaces) {
    const existing = byNs.get(ns) ?? [];
    out.set(ns, applyPlan(existing, planNamespace(ctx, ns, existing)));
  }
  return out;
}

/**
 * What a namespace holds once its plan is carried out: `existing` with the planned copies
 * created, updated (a recreate too) and deleted; user objects, conflicts included, stay.
 */
export function applyPlan<T extends PropagatableObject>(existing: readonly T[], plan: NamespacePlan): T[] {
  const replaced = new Map<string, T | undefined>();
  for (const d of plan.delete) replaced.set(d.name, undefined);
  for (const u of plan.update) replaced.set(u.name, u.object as T);
  const result: T[] = [];
  for (const o of existing) {
    const name = o.metadata?.name ?? '';
    if (!replaced.has(name)) result.push(o);
    else if (replaced.get(name) !== undefined) result.push(replaced.get(name)!);
  }
  for (const c of plan.create) result.push(c.object as T);
  return result;
}

export interface ExpectedGrantsOptions extends ExpectedOptions {
  /**
   * Roles as they are (sources and copies, each with metadata.namespace) and ClusterRole names:
   * Role references are checked against the Roles each namespace will hold (propagated the same
   * way), ClusterRole references against the names.
   */
  readonly roles?: RoleCatalog;
}

/**
 * The grants each namespace of `namespaces` will hold once the controller has acted on
 * `hierarchy` (e.g. a hypothetical one, after a move): "who will have what where". `bindings` are
 * the RoleBindings as they are, in every namespace (sources anywhere above count). Sorted.
 */
export function expectedGrants(
  hierarchy: Hierarchy,
  bindings: Iterable<RoleBindingObject>,
  namespaces: Iterable<string>,
  opts: ExpectedGrantsOptions = {},
): Grant[] {
  const scope = [...new Set(namespaces)];
  const expected = expectedObjects(hierarchy, ROLEBINDING_TYPE, bindings, scope, opts);
  let roles: RoleCatalog | undefined;
  if (opts.roles) {
    const { roles: roleObjects, clusterRoles } = opts.roles;
    const expectedRoles = roleObjects ? [...expectedObjects(hierarchy, ROLE_TYPE, roleObjects, scope, opts).values()].flat() : undefined;
    roles = { ...(expectedRoles ? { roles: expectedRoles } : {}), ...(clusterRoles ? { clusterRoles } : {}) };
  }
  return grantsOf([...expected.values()].flat(), roles ? { roles } : {});
}

// ---- differences ---------------------------------------------------------------------------------------

/** How one subject's hold on one role in one namespace changes. */
export interface AccessChange {
  readonly namespace: string;
  readonly subject: Subject;
  readonly role: RoleRef;
  /** gains: held only after; loses: held only before; moves: held both, through other bindings. */
  readonly change: 'gains' | 'loses' | 'moves';
  /** The grants before and after (empty on the side where the role is not held). */
  readonly before: readonly Grant[];
  readonly after: readonly Grant[];
}

const holdKey = (g: Grant): string => `${g.namespace}\0${subjectKey(g.subject)}\0${g.role.kind}\0${g.role.name}`;
const originKey = (g: Grant): string => `${g.binding}\0${g.origin}\0${g.from ?? ''}`;

/**
 * Who gains and who loses which role where, between two sets of grants (e.g. now and after a
 * move). A role held both before and after but through different bindings or origins is a
 * `moves`. A grant to a missing role (roleMissing) grants nothing, so it counts as not held.
 * Sorted by namespace, subject, role.
 */
export function diffAccess(before: Iterable<Grant>, after: Iterable<Grant>): AccessChange[] {
  // Keys are built once per grant (a move of 1,000 namespaces diffs tens of thousands of grants):
  // holdKey orders as namespace, subject, role kind, role name do (its parts never hold "\0").
  const group = (grants: Iterable<Grant>) => {
    const m = new Map<string, Grant[]>();
    for (const g of grants) {
      if (g.roleMissing) continue;
      const k = holdKey(g);
      const list = m.get(k);
      if (list) list.push(g);
      else m.set(k, [g]);
    }
    return m;
  };
  const b = group(before);
  const a = group(after);
  const keys = [...b.keys()];
  for (const k of a.keys()) if (!b.has(k)) keys.push(k);
  keys.sort(cmp);
  const out: AccessChange[] = [];
  for (const key of keys) {
    const was = sortGrantsOfHold(b.get(key) ?? []);
    const will = sortGrantsOfHold(a.get(key) ?? []);
    const change = was.length === 0 ? 'gains' : will.length === 0 ? 'loses' : sameOrigins(was, will) ? undefined : 'moves';
    if (change === undefined) continue;
    const any = (was[0] ?? will[0])!;
    out.push({ namespace: any.namespace, subject: any.subject, role: any.role, before: was, after: will, change });
  }
  return out;
}

/** Grants of one hold (same namespace, subject and role) in compareGrants order: by binding. */
const sortGrantsOfHold = (grants: Grant[]): Grant[] => (grants.length > 1 ? grants.sort((x, y) => cmp(x.binding, y.binding)) : grants);

function sameOrigins(x: readonly Grant[], y: readonly Grant[]): boolean {
  return x.length === y.length && x.every((g, i) => originKey(g) === originKey(y[i]!));
}

/** Where a grant comes from, in words: `inherited from team-a`, `its own RoleBinding x`. */
export function originText(g: Grant): string {
  return g.origin === 'inherited' ? `inherited from ${g.from ?? '?'}` : `its own RoleBinding ${g.binding}`;
}

const originsText = (grants: readonly Grant[]): string => [...new Set(grants.map(originText))].join(', ');

/**
 * One line per change, e.g. `group team-b: loses admin in service-1 (was inherited from team-a)`,
 * `user alice: gains Role/deployer in dev (inherited from team-a)`,
 * `group ops: keeps view in dev, now inherited from team-c (was inherited from team-a)`.
 */
export function describeAccessChange(c: AccessChange): string {
  const who = `${subjectText(c.subject)}: `;
  const what = `${roleText(c.role)} in ${c.namespace}`;
  switch (c.change) {
    case 'gains':
      return `${who}gains ${what} (${originsText(c.after)})`;
    case 'loses':
      return `${who}loses ${what} (was ${originsText(c.before)})`;
    case 'moves':
      return `${who}keeps ${what}, now ${originsText(c.after)} (was ${originsText(c.before)})`;
  }
}
