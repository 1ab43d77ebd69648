// The webhooks' copy of RBAC, for answering their `authorize` checks from memory when RBAC grants
// them (docs/webhooks.md, "Local authorization"): a parent change's SubjectAccessReview waits on the
// API server, which a propagation keeps busy, and was most of the webhooks' tail under load
// (docs/benchmarks.md). Only an allow is taken from here; anything else (nothing granted here, the
// copy not synced yet) is a SubjectAccessReview as before, so every denial is still the API
// server's, and an authorizer other than RBAC can still allow.
//
// It is kept in compact form only, from changes the main thread sends (webhooks/rbac-feed.ts): per
// binding its role and subject keys, per role only the rules that could allow one of the checks
// the validators make (AUTHORIZE_CHECKS). Strings and subject lists are shared: the copies of one
// RoleBinding in a thousand namespaces hold one list.
import { rbacAllows, type RbacBinding, type RbacCheck, type RbacRule, type RbacSource, type RbacUser } from '../core/access/rbac.js';

export type RbacKind = 'Role' | 'RoleBinding' | 'ClusterRole' | 'ClusterRoleBinding';

/**
 * One change to the copy (plain data: sent to the admission worker by structured clone):
 * - a Role or ClusterRole's relevant rules (absent or empty: it grants nothing the webhooks ask);
 * - a binding (absent: deleted, or it grants nothing); namespace '' for cluster-wide kinds;
 * - `synced`: the kind's objects are all known (true) or no longer (false: all of them forgotten);
 * - `fresh`: the kind's watch is following the server (true) or failing (false: its objects are
 *   kept, as the watch resumes from where it was, but nothing is answered from the copy until the
 *   watch delivers again or the kind is listed afresh).
 */
export type RbacChange =
  | { k: 'Role' | 'ClusterRole'; ns: string; name: string; rules?: RbacRule[] }
  | { k: 'RoleBinding' | 'ClusterRoleBinding'; ns: string; name: string; binding?: RbacBinding }
  | { k: RbacKind; synced: boolean }
  | { k: RbacKind; fresh: boolean };

const KINDS: readonly RbacKind[] = ['Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding'];

/** How an `authorize` check was answered: from the RBAC copy, or by a SubjectAccessReview. */
export type AuthorizationPath = 'rbac' | 'subjectaccessreview';

export class RbacIndex implements RbacSource {
  private readonly roles = new Map<string, Named<readonly RbacRule[]>>();
  private readonly clusterRoles = new Map<string, readonly RbacRule[]>();
  private readonly roleBindings = new Map<string, Named<RbacBinding>>();
  private readonly clusterRoleBindings = new Map<string, RbacBinding>();
  private readonly syncedKinds = new Set<RbacKind>();
  /** Kinds whose watch is failing: what is held of them may be out of date by any amount. */
  private readonly staleKinds = new Set<RbacKind>();
  /** Shared strings, and shared subject lists and rules (bounded: cleared when full; what is shared stays shared). */
  private strings = new Map<string, string>();
  private pool = new Map<string, unknown>();

  /** True once every kind has been listed, while every kind's watch is healthy: otherwise nothing is answered from here. */
  get synced(): boolean {
    return this.syncedKinds.size === KINDS.length && this.staleKinds.size === 0;
  }

  apply(changes: readonly RbacChange[]): void {
    for (const c of changes) {
      if ('fresh' in c) {
        if (c.fresh) this.staleKinds.delete(c.k);
        else this.staleKinds.add(c.k);
        continue;
      }
      if ('synced' in c) {
        // Either way the kind starts over: listed just now, or forgotten until the next list.
        this.staleKinds.delete(c.k);
        if (c.synced) this.syncedKinds.add(c.k);
        else {
          this.syncedKinds.delete(c.k);
          this.forget(c.k);
        }
        continue;
      }
      const ns = this.str(c.ns);
      const name = this.str(c.name);
      switch (c.k) {
        case 'Role':
          setIn(this.roles, ns, name, c.rules && c.rules.length ? c.rules.map((r) => this.rule(r)) : undefined);
          break;
        case 'ClusterRole':
          if (c.rules && c.rules.length)
            this.clusterRoles.set(
              name,
              c.rules.map((r) => this.rule(r)),
            );
          else this.clusterRoles.delete(name);
          break;
        case 'RoleBinding':
          setIn(this.roleBindings, ns, name, c.binding ? this.binding(c.binding) : undefined);
          break;
        case 'ClusterRoleBinding':
          if (c.binding) this.clusterRoleBindings.set(name, this.binding(c.binding));
          else this.clusterRoleBindings.delete(name);
          break;
      }
    }
  }

  /** True if RBAC, as copied here, allows the request; undefined if it cannot say (not synced, or nothing here grants it). */
  allows(user: RbacUser, check: RbacCheck): true | undefined {
    return this.synced && rbacAllows(this, user, check) ? true : undefined;
  }

  /** Objects held, by kind (for tests and the benchmark's memory accounting). */
  sizes(): Record<RbacKind, number> {
    let roles = 0;
    let bindings = 0;
    for (const m of this.roles.values()) roles += m.names.length;
    for (const m of this.roleBindings.values()) bindings += m.names.length;
    return { Role: roles, RoleBinding: bindings, ClusterRole: this.clusterRoles.size, ClusterRoleBinding: this.clusterRoleBindings.size };
  }

  clusterBindings(): Iterable<RbacBinding> {
    return this.clusterRoleBindings.values();
  }

  bindings(namespace: string): Iterable<RbacBinding> {
    return this.roleBindings.get(namespace)?.values ?? [];
  }

  clusterRoleRules(name: string): readonly RbacRule[] | undefined {
    return this.clusterRoles.get(name);
  }

  roleRules(namespace: string, name: string): readonly RbacRule[] | undefined {
    const named = this.roles.get(namespace);
    return named?.values[named.names.indexOf(name)];
  }

  private forget(kind: RbacKind): void {
    if (kind === 'Role') this.roles.clear();
    else if (kind === 'RoleBinding') this.roleBindings.clear();
    else if (kind === 'ClusterRole') this.clusterRoles.clear();
    else this.clusterRoleBindings.clear();
  }

  private shared<T>(key: string, make: () => T): T {
    const have = this.pool.get(key);
    if (have !== undefined) return have as T;
    if (this.pool.size >= 50_000) this.pool = new Map();
    const v = make();
    this.pool.set(key, v);
    return v;
  }

  private str(s: string): string {
    const have = this.strings.get(s);
    if (have !== undefined) return have;
    if (this.strings.size >= 50_000) this.strings = new Map();
    this.strings.set(s, s);
    return s;
  }

  private list(l: readonly string[]): readonly string[] {
    return this.shared(`l${JSON.stringify(l)}`, () => Object.freeze(l.map((s) => this.str(s))));
  }

  private rule(r: RbacRule): RbacRule {
    return {
      verbs: this.list(r.verbs),
      apiGroups: this.list(r.apiGroups),
      resources: this.list(r.resources),
      ...(r.resourceNames?.length ? { resourceNames: this.list(r.resourceNames) } : {}),
    };
  }

  private binding(b: RbacBinding): RbacBinding {
    return this.shared(`b${JSON.stringify([b.roleKind, b.roleName, b.subjects])}`, () => ({
      roleKind: b.roleKind,
      roleName: this.str(b.roleName),
      subjects: this.list(b.subjects),
    }));
  }
}

/** One namespace's objects of a kind: a handful at most, so two arrays rather than a Map (a thousand namespaces, a thousand Maps). */
interface Named<V> {
  names: string[];
  values: V[];
}

function setIn<V>(outer: Map<string, Named<V>>, ns: string, name: string, v: V | undefined): void {
  const inner = outer.get(ns);
  const at = inner ? inner.names.indexOf(name) : -1;
  if (v === undefined) {
    if (!inner || at < 0) return;
    inner.names.splice(at, 1);
    inner.values.splice(at, 1);
    if (inner.names.length === 0) outer.delete(ns);
  } else if (!inner) outer.set(ns, { names: [name], values: [v] });
  else if (at < 0) {
    inner.names.push(name);
    inner.values.push(v);
  } else inner.values[at] = v;
}

/** A SubjectAccessReview's resourceAttributes as a check of the RBAC copy. */
export function rbacCheck(a: { verb: string; group: string; resource: string; namespace?: string; name?: string }): RbacCheck {
  return {
    verb: a.verb,
    group: a.group,
    resource: a.resource,
    ...(a.namespace ? { namespace: a.namespace } : {}),
    ...(a.name ? { name: a.name } : {}),
  };
}
