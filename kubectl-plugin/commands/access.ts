// `kubectl hns access [NAMESPACE...] [--subject KIND:NAME] [-o json|yaml]` (beyond HNC): who holds
// which role in each namespace of a subtree, and where each RoleBinding comes from: the
// namespace's own, or a copy HNC propagated from an ancestor (core/access reads both).
//
// Reads, as few as the question needs:
// * the subtree of each NAMESPACE as `get` reads it (one list of the namespaces carrying its tree
//   label; a user who may not list namespaces gets the readable part from the hierarchy, as `tree`
//   does, with a note for what is left out);
// * the RoleBindings: one cluster-wide list when the caller may, the subtree being large (or no
//   NAMESPACE given); otherwise one list per namespace (32 at a time), a namespace the caller may
//   not read being left out with a note;
// * the roles the bindings name, to mark a binding to a missing role: the Roles only if a binding
//   names one (same way as the bindings), the ClusterRoles in one list (a note if not allowed).
// With --subject and no NAMESPACE: every namespace the caller may read RoleBindings in.
import { stringify } from 'yaml';
import { RBAC_GROUP } from '../../core/api/index.js';
import {
  grantsFor,
  grantsOf,
  markMissingRoles,
  parseSubject,
  SubjectSyntaxError,
  subjectKey,
  type Grant,
  type RoleBindingObject,
  type RoleCatalog,
  type Subject,
} from '../../core/access/index.js';
import type { AnyObject, HncApi, ResourceType } from '../api.js';
import { defineCommand } from '../cli/command.js';
import { stringFlag } from '../cli/flag-spec.js';
import { CliError, isForbidden } from '../errors.js';
import type { Io } from '../io.js';
import type { AccessView } from '../model.js';
import { renderAccessText } from '../render/access-text.js';
import { CLUSTER_WIDE_SHARE, eachNamespace, loadSubtree } from './get.js';

export const ROLEBINDINGS: ResourceType = { group: RBAC_GROUP, version: 'v1', resource: 'rolebindings', kind: 'RoleBinding' };
export const ROLES: ResourceType = { group: RBAC_GROUP, version: 'v1', resource: 'roles', kind: 'Role' };
export const CLUSTERROLES: ResourceType = { group: RBAC_GROUP, version: 'v1', resource: 'clusterroles', kind: 'ClusterRole' };

/** Subtrees of more namespaces than this are read with cluster-wide lists whatever their share of the cluster. */
export const CLUSTER_WIDE_MIN = 100;

export const ACCESS_OUTPUTS = ['json', 'yaml'] as const;
export type AccessOutput = (typeof ACCESS_OUTPUTS)[number];

export interface AccessFlags {
  /** Subtree roots; none means every namespace the caller may read (with a subject only). */
  roots: readonly string[];
  subject?: Subject;
  output?: AccessOutput;
}

const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function plural(n: number, one: string, many: string): string {
  return n === 1 ? one : many;
}

function forbiddenNote(resource: string, namespaces: readonly string[]): string {
  return `no permission to list ${resource} in ${plural(namespaces.length, 'namespace', 'namespaces')} ${namespaces.join(', ')}: left out`;
}

interface Listed {
  items: AnyObject[];
  /** Namespaces it could not be listed in. */
  forbidden: string[];
}

/** Objects of a type in these namespaces: one cluster-wide list if `clusterWide` and allowed, else one per namespace. */
async function listIn(api: HncApi, type: ResourceType, namespaces: readonly string[] | undefined, clusterWide: boolean): Promise<Listed> {
  if (clusterWide || namespaces === undefined) {
    try {
      const list = await api.listAll(type, undefined);
      const only = namespaces && new Set(namespaces);
      return { items: only ? list.items.filter((o) => only.has(o.metadata.namespace ?? '')) : list.items, forbidden: [] };
    } catch (err) {
      if (!isForbidden(err) || namespaces === undefined) throw err;
    }
  }
  const lists = await eachNamespace(namespaces, (ns) => api.listAll(type, ns));
  return {
    items: lists.flatMap((l) => (l.value?.items ?? []).map((o) => ({ ...o, metadata: { namespace: l.namespace, ...o.metadata } }))),
    forbidden: lists.filter((l) => l.forbidden).map((l) => l.namespace),
  };
}

/** Every namespace the caller may list, or a clear error saying to name the subtrees. */
async function allNamespaces(api: HncApi): Promise<string[]> {
  try {
    return (await api.listNamespaces()).map((n) => n.metadata.name ?? '').sort(byName);
  } catch (err) {
    if (!isForbidden(err)) throw err;
    throw new CliError(
      'Error: no permission to list RoleBindings or namespaces cluster-wide; name the subtrees to look in: kubectl hns access NAMESPACE... --subject ...',
    );
  }
}

export async function loadAccess(api: HncApi, flags: AccessFlags): Promise<AccessView> {
  const notes: string[] = [];
  let namespaces: string[] | undefined;
  let clusterWide = true;
  let bindingsList: Promise<Listed> | undefined;
  if (flags.roots.length === 0) {
    // The whole cluster: one list if allowed, else each namespace the caller may list.
    try {
      const items = (await api.listAll(ROLEBINDINGS, undefined)).items;
      bindingsList = Promise.resolve({ items, forbidden: [] });
      namespaces = [...new Set(items.map((o) => o.metadata.namespace ?? ''))].sort(byName);
    } catch (err) {
      if (!isForbidden(err)) throw err;
      namespaces = await allNamespaces(api);
      clusterWide = false;
    }
  } else {
    const subtrees = await Promise.all(flags.roots.map((root) => loadSubtree(api, root)));
    const seen = new Set<string>();
    namespaces = [];
    for (const s of subtrees) {
      notes.push(...s.notes);
      for (const ns of s.namespaces) {
        if (seen.has(ns)) continue;
        seen.add(ns);
        namespaces.push(ns);
      }
    }
    const cluster = subtrees[0]?.clusterNamespaces;
    clusterWide =
      namespaces.length > CLUSTER_WIDE_MIN ||
      (namespaces.length > 1 && cluster !== undefined && namespaces.length >= cluster * CLUSTER_WIDE_SHARE);
  }
  const bindings = await (bindingsList ?? listIn(api, ROLEBINDINGS, namespaces, clusterWide));
  if (bindings.forbidden.length) notes.push(forbiddenNote('rolebindings', bindings.forbidden));
  const readable = bindings.forbidden.length ? namespaces.filter((n) => !bindings.forbidden.includes(n)) : namespaces;

  const items = bindings.items as RoleBindingObject[];
  const select = (grants: Grant[]): Grant[] => (flags.subject ? grantsFor(grants, flags.subject) : grants);
  let grants = select(grantsOf(items, { namespaces: readable }));
  const catalog = await loadRoles(api, grants, clusterWide, notes);
  if (catalog) grants = markMissingRoles(grants, catalog);

  const rank = new Map(namespaces.map((n, i) => [n, i]));
  grants.sort((a, b) => (rank.get(a.namespace) ?? 0) - (rank.get(b.namespace) ?? 0)); // stable: keeps compareGrants within a namespace
  return { roots: [...flags.roots], ...(flags.subject ? { subject: flags.subject } : {}), namespaces, grants, notes };
}

/** The roles the grants name, so bindings to missing roles can be marked; undefined if none could be read. */
async function loadRoles(api: HncApi, grants: readonly Grant[], clusterWide: boolean, notes: string[]): Promise<RoleCatalog | undefined> {
  const roleNamespaces = [...new Set(grants.filter((g) => g.role.kind === 'Role').map((g) => g.namespace))].sort(byName);
  const needClusterRoles = grants.some((g) => g.role.kind === 'ClusterRole');
  const [roles, clusterRoles] = await Promise.all([
    roleNamespaces.length ? listIn(api, ROLES, roleNamespaces, clusterWide) : undefined,
    needClusterRoles
      ? api.listAll(CLUSTERROLES, undefined).then(
          (l) => l.items.map((o) => o.metadata.name ?? ''),
          (err: unknown) => {
            if (!isForbidden(err)) throw err;
            notes.push('no permission to list clusterroles: whether the ClusterRoles named exist was not checked');
            return undefined;
          },
        )
      : undefined,
  ]);
  if (roles?.forbidden.length) {
    notes.push(`no permission to list roles in ${roles.forbidden.join(', ')}: whether the Roles named there exist was not checked`);
  }
  if (!roles && !clusterRoles) return undefined;
  // Roles of namespaces where they could not be listed are not checked: only those listed count.
  const checked = new Set(roleNamespaces.filter((n) => !roles?.forbidden.includes(n)));
  const known = new Set((roles?.items ?? []).map((r) => `${r.metadata.namespace ?? ''}/${r.metadata.name ?? ''}`));
  return {
    ...(roles
      ? {
          roles: [
            ...roles.items,
            // Unchecked namespaces: pretend every named Role exists there, so none is marked missing.
            ...grants
              .filter((g) => g.role.kind === 'Role' && !checked.has(g.namespace) && !known.has(`${g.namespace}/${g.role.name}`))
              .map((g) => ({ metadata: { namespace: g.namespace, name: g.role.name } })),
          ],
        }
      : {}),
    ...(clusterRoles ? { clusterRoles } : {}),
  };
}

/** The document `-o json|yaml` prints. */
export function accessDocument(view: AccessView): object {
  return {
    ...(view.subject ? { subject: subjectKey(view.subject) } : {}),
    namespaces: view.namespaces,
    grants: view.grants.map((g) => ({
      namespace: g.namespace,
      subject: {
        kind: g.subject.kind,
        name: g.subject.name,
        ...(g.subject.namespace !== undefined ? { namespace: g.subject.namespace } : {}),
      },
      role: { kind: g.role.kind, name: g.role.name },
      binding: g.binding,
      origin: g.origin,
      ...(g.from !== undefined ? { from: g.from } : {}),
      ...(g.roleMissing ? { roleMissing: true } : {}),
    })),
    notes: view.notes,
  };
}

export function renderAccess(view: AccessView, output: AccessOutput | undefined): string {
  if (output === 'json') return `${JSON.stringify(accessDocument(view), null, 2)}\n`;
  if (output === 'yaml') return stringify(accessDocument(view));
  return renderAccessText(view);
}

export async function runAccess(api: HncApi, io: Io, flags: AccessFlags): Promise<void> {
  if (flags.roots.length === 0 && !flags.subject) {
    throw new CliError('Error: Must specify the namespace whose subtree to show, or a --subject to look for everywhere');
  }
  const view = await loadAccess(api, flags);
  io.out(renderAccess(view, flags.output));
  if (!flags.output && view.grants.length === 0) {
    const who = flags.subject ? `for ${subjectKey(flags.subject)} ` : '';
    const where = flags.roots.length ? `in the subtree of ${flags.roots.join(', ')}` : 'in the namespaces you may read';
    io.err(`No RoleBindings found ${who}${where}.\n`);
  }
  for (const note of view.notes) io.err(`Note: ${note}\n`);
}

export const accessCommand = defineCommand({
  name: 'access',
  summary: 'Shows who holds which role in a subtree, and through which RoleBinding',
  description:
    'Shows, for NAMESPACE and every namespace below it, each subject (user, group or service account) with the roles it holds in each\n' +
    "namespace, the RoleBinding that grants it and where that binding comes from: the namespace's own, or inherited from an ancestor\n" +
    'through HNC. With --subject, only that subject (and the groups every such subject is in, e.g. system:authenticated); without\n' +
    'NAMESPACE, every namespace you may read. A binding to a Role or ClusterRole that does not exist is marked (missing).',
  usage: '[NAMESPACE...] [--subject KIND:NAME] [-o json|yaml]',
  examples: [
    "  # Who can do what in 'team-a' and below",
    '  kubectl hns access team-a',
    '',
    '  # Where alice has access, in every namespace you may read',
    '  kubectl hns access --subject user:alice',
    '',
    "  # Where the group team-b has access in team-a's subtree, as JSON",
    '  kubectl hns access team-a --subject group:team-b -o json',
    '',
    '  # A service account',
    '  kubectl hns access --subject serviceaccount:team-a:deployer',
  ].join('\n'),
  flags: [
    {
      name: 'subject',
      kind: 'string',
      value: 'KIND:NAME',
      description: 'Only this subject: user:NAME, group:NAME or serviceaccount:NAMESPACE:NAME',
    },
    {
      name: 'output',
      short: 'o',
      kind: 'string',
      value: 'format',
      description: 'Output format instead of text: json or yaml',
      choices: ACCESS_OUTPUTS,
    },
  ],
  async run({ args, flags, io, connect }) {
    const subjectText = stringFlag(flags, 'subject');
    let subject: Subject | undefined;
    try {
      subject = subjectText !== undefined ? parseSubject(subjectText) : undefined;
    } catch (err) {
      if (err instanceof SubjectSyntaxError) throw new CliError(`Error: invalid --subject: ${err.message}`);
      throw err;
    }
    const output = stringFlag(flags, 'output') as AccessOutput | undefined;
    const access: AccessFlags = { roots: args, ...(subject ? { subject } : {}), ...(output ? { output } : {}) };
    if (access.roots.length === 0 && !subject) {
      throw new CliError('Error: Must specify the namespace whose subtree to show, or a --subject to look for everywhere');
    }
    const session = await connect();
    await runAccess(session.api, io, access);
  },
});
