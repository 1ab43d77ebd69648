// `--dry-run` of `kubectl hns set`, `create` and `delete` (beyond HNC, docs/kubectl-hns.md): what the
// change would do, computed from the cluster as it is by core/preview (the controller's own model and
// propagation plans) and core/access, and whether admission would allow it (the very write, sent
// with `dryRun=All`, so the webhook's own message shows). Nothing is written.
//
// Reads: namespaces, HierarchyConfigurations, anchors, NetworkPolicies, ClusterRoles and every
// propagated type, each listed once across the cluster, concurrently. A caller who may not list
// something across the cluster gets it read namespace by namespace for the part of the forest the
// change concerns (the namespaces named, their ancestors, the subtree that moves), with a note for
// what could not be read: at most PER_NAMESPACE_CONCURRENCY requests in flight (each request's
// timeout runs from when it is sent, so a large subtree is slow, not failed), anchors only where a
// subnamespace can be (a namespace with children, or whose HierarchyConfiguration is unknown).
import { PER_NAMESPACE_CONCURRENCY, limiter } from '../concurrency.js';
import {
  API_VERSION,
  Annotation,
  DEFAULT_EXCLUDED_NAMESPACES,
  GROUP,
  Label,
  Plural,
  RBAC_GROUP,
  VERSION,
  isPropagating,
  type HierarchyConfiguration,
  type NamespaceObject,
  type SubnamespaceAnchor,
} from '../../core/api/index.js';
import { HierarchyPolicy } from '../../core/hierarchy/policy.js';
import {
  startPreview,
  type HierarchyChange,
  type NetworkPolicyObject,
  type StartedPreview,
  type TypeObjects,
} from '../../core/preview/index.js';
import type { PropagationMode } from '../../core/api/index.js';
import type { AnyObject, HncApi, ListOptions, ResourceType } from '../api.js';
import type { FlagSpec, FlagValues } from '../cli/flag-spec.js';
import { PREVIEW_DEBUG_LEVEL, globalFlags } from '../cli/global-flags.js';
import { CliError, ServerError, isForbidden, isNotFound } from '../errors.js';
import type { Io } from '../io.js';
import type { Admission, AdmissionCheck, PreviewReport } from '../model.js';
import { renderPreviewText } from '../render/preview-text.js';
import { stringify } from 'yaml';
import { loadHandledTypes, type HandledType } from './types.js';

// ---- the flag --------------------------------------------------------------------------------------

/** What `--dry-run` asks for: kubectl's three strategies. */
export type DryRun = 'none' | 'client' | 'server';

/** The value pflag gives `--dry-run` alone (kubectl's NoOptDefVal). */
const BARE = 'unchanged';

export const DRY_RUN_FLAG: FlagSpec = {
  name: 'dry-run',
  kind: 'string',
  value: 'string',
  noOptValue: BARE,
  defaultText: 'none',
  description:
    'Must be "none", "server", or "client". Print what the change would do (tree labels, NetworkPolicies, propagated copies, access) and write nothing. With "server" (or the flag alone) the write is also sent with dryRun=All, so admission answers; with "client" it is not.',
};

export const OUTPUT_FLAG: FlagSpec = {
  name: 'output',
  short: 'o',
  kind: 'string',
  value: 'string',
  choices: ['json', 'yaml'],
  description: 'With --dry-run: json or yaml instead of text',
};

/**
 * kubectl's reading of `--dry-run` (GetDryRunStrategy): none, client or server; the bare flag and
 * Go's boolean spellings as kubectl took them, except that the bare flag (kubectl: client, deprecated)
 * asks the server here too, since a preview is most useful with admission's answer.
 */
export function dryRunMode(value: string | undefined): DryRun {
  if (value === undefined || value === 'none') return 'none';
  if (value === BARE || value === 'server') return 'server';
  if (value === 'client') return 'client';
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return 'server';
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return 'none';
  throw new CliError(`error: Invalid dry-run value (${value}). Must be "none", "server", or "client".`);
}

export interface PreviewFlags {
  dryRun: DryRun;
  output: 'text' | 'json' | 'yaml';
  /** `-v 4` or more, or HNS_PREVIEW_DEBUG=1: say on stderr how the copies were had (read, or made from the sources) and why. */
  debug?: boolean;
}

export function previewFlags(flags: FlagValues): PreviewFlags {
  const dryRun = dryRunMode(typeof flags['dry-run'] === 'string' ? flags['dry-run'] : undefined);
  const output = flags.output === 'json' || flags.output === 'yaml' ? flags.output : 'text';
  if (dryRun === 'none' && output !== 'text') throw new CliError('Error: --output is only for --dry-run');
  const debug = process.env.HNS_PREVIEW_DEBUG === '1' || (globalFlags(flags).v ?? 0) >= PREVIEW_DEBUG_LEVEL;
  return { dryRun, output, ...(debug && { debug: true }) };
}

// ---- admission ------------------------------------------------------------------------------------

/** A write to try: its description and the call with dryRun=All. */
export interface DryWrite {
  readonly request: string;
  readonly send: () => Promise<unknown>;
}

export async function checkAdmission(dryRun: DryRun, writes: readonly DryWrite[]): Promise<Admission> {
  if (dryRun !== 'server') return { checked: false, allowed: true, checks: [] };
  const checks: AdmissionCheck[] = [];
  for (const w of writes) {
    try {
      await w.send();
      checks.push({ request: w.request, allowed: true });
    } catch (err) {
      if (!(err instanceof ServerError)) throw err;
      checks.push({ request: w.request, allowed: false, message: err.message, code: err.code });
    }
  }
  return { checked: true, allowed: checks.every((c) => c.allowed), checks };
}

// ---- reading the cluster --------------------------------------------------------------------------

const ANCHORS: ResourceType = { group: GROUP, version: VERSION, resource: Plural.SubnamespaceAnchor, kind: 'SubnamespaceAnchor' };
const NETWORK_POLICIES: ResourceType = { group: 'networking.k8s.io', version: 'v1', resource: 'networkpolicies', kind: 'NetworkPolicy' };
const CLUSTER_ROLES: ResourceType = { group: RBAC_GROUP, version: 'v1', resource: 'clusterroles', kind: 'ClusterRole' };

/** The namespaces a change names: where to start reading when the whole cluster cannot be listed. */
export interface Focus {
  /** Read these, their ancestors and their subtrees. */
  readonly subtrees: readonly string[];
  /** Read these and their ancestors. */
  readonly others: readonly string[];
}

export interface ClusterRead {
  readonly namespaces: NamespaceObject[];
  readonly hierarchies: HierarchyConfiguration[];
  readonly anchors: SubnamespaceAnchor[];
  readonly types: TypeObjects[];
  /** Whether the copies were read or made from the sources. */
  readonly copies: CopiesRead;
  readonly networkPolicies: NetworkPolicyObject[];
  readonly clusterRoles?: string[];
  /** Namespaces named in the hierarchy that could not be read (assumed to exist, with no labels). */
  readonly unreadable: string[];
  readonly notes: string[];
  /** API requests made. */
  readonly requests: number;
}

/** Lists across the cluster; undefined when that is forbidden. */
async function orForbidden<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (err) {
    if (isForbidden(err)) return undefined;
    throw err;
  }
}

const nsOf = (o: { metadata?: { namespace?: string } }): string => o.metadata?.namespace ?? '';

/**
 * The objects with their managedFields let go at once: nothing in a preview reads them, and they
 * are about half of what a listed RoleBinding holds, which the garbage collector would otherwise
 * walk again and again while the preview is computed. (Set to undefined rather than deleted, so
 * the objects keep their shape; JSON output leaves it out.)
 */
export function withoutManagedFields<T extends AnyObject>(items: T[]): T[] {
  for (const o of items) {
    const meta = o.metadata as { managedFields?: unknown } | undefined;
    if (meta?.managedFields !== undefined) meta.managedFields = undefined;
  }
  return items;
}

/** How the copies of the propagated types were had. */
export interface CopiesRead {
  /**
   * `synthesized`: from the sources alone, the cluster being in sync (StartedPreview.inSync);
   * `listed`: every object of each type was read.
   */
  readonly how: 'synthesized' | 'listed';
  /** Why they were listed, when a preview could have synthesized them. */
  readonly why?: string;
}

/** Where a copy may be read one namespace at a time at most this many times (types × namespaces) before every copy is listed. */
export const MAX_UNKEPT_LISTS = 64;

/** One type's sources across the cluster and how many objects of it there are, at the same resourceVersion. */
interface SourcesRead {
  readonly sources: AnyObject[];
  readonly total: number | undefined;
}

/**
 * Reads what a preview needs. `start` is called once, as soon as the forest is known (and while
 * the objects are still being read): the preview's hierarchy part, whose scope says which
 * namespaces' objects of propagated types to keep (objects elsewhere are left out as they
 * arrive, unparsed).
 *
 * The copies (most of the objects: every source has one in each namespace below it) are not read
 * when the cluster is in sync: each type's sources are listed (`!hnc.x-k8s.io/inherited-from`,
 * which the API server filters), the copies the controller keeps are made from them by its own
 * planner (StartedPreview.inSync), and those where it keeps none (halted or unmanaged namespaces)
 * are read there. That stands only if, for every type, the API server counts as many copies
 * (all its objects, counted at the sources' resourceVersion, less the sources) and the controller
 * counts as many in place (HNCConfiguration's numPropagatedObjects) as were made; otherwise every
 * object is listed, as it is for a caller who may not list across the cluster.
 */
export async function readCluster(api: HncApi, focus: Focus, start?: (forest: ForestRead) => StartedPreview): Promise<ClusterRead> {
  let requests = 0;
  const count = <T>(p: Promise<T>): Promise<T> => {
    requests++;
    return p;
  };
  // Requests for one namespace each share one limit; the cluster-wide ones are few and go at once.
  const limit = limiter(PER_NAMESPACE_CONCURRENCY);
  const perNamespace = <T>(call: () => Promise<T>): Promise<T> => limit(() => count(call()));
  const notes: string[] = [];
  const listAll = (type: ResourceType, ns?: string, opts?: ListOptions) =>
    (ns === undefined ? count(api.listAll(type, ns, opts)) : perNamespace(() => api.listAll(type, ns, opts))).then((l) =>
      withoutManagedFields(l.items),
    );
  // The forest first; the scope it gives decides which objects of the lists below are kept.
  const forestNotes: string[] = [];
  let walked = false;
  const forestRead = (async (): Promise<ForestRead> => {
    const [namespaces, hierarchies, anchors] = await Promise.all([
      orForbidden(count(api.listNamespaces())),
      orForbidden(count(api.listHierarchies())),
      orForbidden(listAll(ANCHORS)),
    ]);
    if (namespaces && hierarchies && anchors) return { namespaces, hierarchies, anchors: anchors as SubnamespaceAnchor[], unreadable: [] };
    walked = true;
    const forest = await walkForest(api, focus, perNamespace, {
      namespaces,
      hierarchies,
      anchors: anchors as SubnamespaceAnchor[] | undefined,
    });
    forestNotes.push(
      `no permission to list every namespace, HierarchyConfiguration and anchor, so only the namespaces this change concerns were read (${forest.namespaces.length})`,
    );
    if (forest.unreadable.length)
      forestNotes.push(`could not read ${forest.unreadable.join(', ')}: assumed to exist, with no labels and no objects seen`);
    return forest;
  })();
  const started = forestRead.then((forest) => start?.(forest));
  const keep = started.then((s) => (s ? (ns: string | undefined) => ns !== undefined && s.scope.has(ns) : () => true));
  keep.catch(() => undefined); // awaited below, through forestRead
  /** A propagated type's objects across the cluster, those in the scope only. */
  const listScoped = (type: ResourceType) => count(api.listSome(type, undefined, keep)).then((l) => l.items);
  /** A type's sources and count (undefined when the caller may not list it across the cluster). */
  const sourcesOf = async (type: ResourceType): Promise<SourcesRead | undefined> => {
    const list = await orForbidden(count(api.listAll(type, undefined, { labelSelector: `!${Label.inheritedFrom}` })));
    if (!list) return undefined;
    let total: number | undefined;
    try {
      total = await count(api.countAll(type, list.resourceVersion));
    } catch (err) {
      if (!(err instanceof ServerError)) throw err; // e.g. that resourceVersion compacted already: every copy is listed
    }
    return { sources: withoutManagedFields(list.items), total };
  };
  // Everything that does not depend on HNCConfiguration, at once.
  const rbac = ['roles', 'rolebindings'];
  const [forest, netpols, clusterRoles, handled, ...rbacSources] = await Promise.all([
    forestRead,
    orForbidden(listAll(NETWORK_POLICIES)),
    orForbidden(listAll(CLUSTER_ROLES)),
    count(loadHandledTypes(api)),
    ...rbac.map((resource) => sourcesOf({ group: RBAC_GROUP, version: 'v1', resource })),
  ]);
  if (handled.note) notes.push(handled.note);
  notes.push(...forestNotes);
  const known = forest.namespaces.map((n) => n.metadata.name);

  /** A type's objects: the cluster-wide list, or else one list per known namespace. */
  const objectsOf = async (type: ResourceType, wide: AnyObject[] | undefined): Promise<AnyObject[]> => {
    if (wide) return wide;
    const lists = await Promise.all(known.map((ns) => orForbidden(listAll(type, ns)).then((items) => ({ ns, items }))));
    const denied = lists.filter((l) => !l.items).map((l) => l.ns);
    if (denied.length) notes.push(`no permission to list ${type.resource} in ${denied.join(', ')}: none seen there`);
    return lists.flatMap((l) => l.items ?? []);
  };

  const propagated = handled.types.filter((t) => isPropagating(t.mode) || t.mode === 'Remove');
  const typeOf = (t: HandledType, objects: readonly AnyObject[]): TypeObjects['type'] => ({
    group: t.group,
    kind: t.kind ?? objects[0]?.kind ?? t.resource,
    resource: t.resource,
    mode: t.mode as PropagationMode,
  });
  const sources = await Promise.all(
    propagated.map((t) => {
      const i = t.group === RBAC_GROUP ? rbac.indexOf(t.resource) : -1;
      return i >= 0 ? rbacSources[i] : sourcesOf(t);
    }),
  );
  const preview = await started;
  const synthesized =
    preview && !walked ? await copiesInSync(api, perNamespace, preview, propagated, sources, typeOf) : { why: 'no preview' };
  let types: TypeObjects[];
  let copies: CopiesRead;
  if ('types' in synthesized) {
    types = synthesized.types;
    copies = { how: 'synthesized' };
  } else {
    copies = { how: 'listed', why: walked ? 'the forest was read namespace by namespace' : synthesized.why };
    types = await Promise.all(
      propagated.map(async (t, i): Promise<TypeObjects> => {
        // A type whose sources could not be listed across the cluster cannot be listed whole either.
        const objects = await objectsOf(t, sources[i] ? await orForbidden(listScoped(t)) : undefined);
        return { type: typeOf(t, objects), objects };
      }),
    );
  }
  const networkPolicies = (await objectsOf(NETWORK_POLICIES, netpols)) as NetworkPolicyObject[];
  if (!clusterRoles)
    notes.push('no permission to list ClusterRoles: bindings to ClusterRoles that do not exist are counted as granting them');
  return {
    ...forest,
    types,
    copies,
    networkPolicies,
    ...(clusterRoles && { clusterRoles: clusterRoles.map((r) => r.metadata.name ?? '') }),
    notes,
    requests,
  };
}

/**
 * The objects of each type as a full read of the scope would give them, made from the sources
 * (StartedPreview.inSync), if the cluster is in sync as far as the counts tell; else why not.
 */
async function copiesInSync(
  api: HncApi,
  perNamespace: <T>(call: () => Promise<T>) => Promise<T>,
  preview: StartedPreview,
  handled: readonly HandledType[],
  sources: readonly (SourcesRead | undefined)[],
  typeOf: (t: HandledType, objects: readonly AnyObject[]) => TypeObjects['type'],
): Promise<{ types: TypeObjects[] } | { why: string }> {
  for (const [i, t] of handled.entries()) {
    const read = sources[i];
    if (!read) return { why: `no permission to list ${t.resource} across the cluster` };
    if (read.total === undefined) return { why: `the API server did not count the ${t.resource}` };
    if (t.numPropagatedObjects === undefined) return { why: `HNCConfiguration's status has no count of ${t.resource} copies` };
  }
  if (preview.unkept.length * handled.length > MAX_UNKEPT_LISTS)
    return { why: `${preview.unkept.length} namespaces where the controller keeps no copy (halted or not managed)` };
  const selector = { labelSelector: Label.inheritedFrom };
  const unkeptCopies = await Promise.all(
    handled.map(async (t) => {
      const lists = await Promise.all(preview.unkept.map((ns) => orForbidden(perNamespace(() => api.listAll(t, ns, selector)))));
      return lists.some((l) => !l) ? undefined : lists.flatMap((l) => withoutManagedFields(l!.items));
    }),
  );
  if (unkeptCopies.some((l) => !l)) return { why: 'no permission to list the copies of a halted or unmanaged namespace' };
  const inSync = preview.inSync({
    sources: handled.map((t, i) => ({ type: typeOf(t, sources[i]!.sources), objects: sources[i]!.sources })),
    unkeptCopies: unkeptCopies as AnyObject[][],
  });
  for (const [i, t] of handled.entries()) {
    const inCluster = sources[i]!.total! - sources[i]!.sources.length;
    if (inCluster !== inSync.copies[i])
      return { why: `${inCluster} ${t.resource} copies in the cluster, ${inSync.copies[i]} made from the sources` };
    if (t.numPropagatedObjects !== inSync.counted[i])
      return {
        why: `the controller counts ${t.numPropagatedObjects} ${t.resource} copies in place, ${inSync.counted[i]} made from the sources`,
      };
  }
  return { types: inSync.types };
}

export interface ForestRead {
  namespaces: NamespaceObject[];
  hierarchies: HierarchyConfiguration[];
  anchors: SubnamespaceAnchor[];
  /** Namespaces a get was refused for. */
  unreadable: string[];
}

/** What the cluster-wide lists the caller was allowed gave (the walk asks only for the rest). */
interface Listed {
  readonly namespaces: readonly NamespaceObject[] | undefined;
  readonly hierarchies: readonly HierarchyConfiguration[] | undefined;
  readonly anchors: readonly SubnamespaceAnchor[] | undefined;
}

/**
 * Reads the part of the forest a change concerns, one namespace at a time: the focus namespaces,
 * their ancestors (HC parent or subnamespace-of), and the subtrees (HC status.children and anchors).
 * Level by level; anchors are listed only where a subnamespace can be (see the file's comment).
 * What a cluster-wide list already gave (e.g. every namespace, for a caller who may list them but
 * not the HierarchyConfigurations) is not asked for again.
 */
async function walkForest(
  api: HncApi,
  focus: Focus,
  perNamespace: <T>(call: () => Promise<T>) => Promise<T>,
  listed: Listed,
): Promise<ForestRead> {
  const listedNamespaces = listed.namespaces && new Map(listed.namespaces.map((n) => [n.metadata.name, n]));
  const listedHierarchies = listed.hierarchies && new Map(listed.hierarchies.map((h) => [h.metadata.namespace ?? '', h]));
  const namespaces = new Map<string, NamespaceObject>();
  const hierarchies: HierarchyConfiguration[] = [];
  const anchors: SubnamespaceAnchor[] = [];
  const unreadable: string[] = [];
  const withHierarchy = new Set<string>();
  const seen = new Set<string>();
  let wave = [...focus.subtrees.map((name) => ({ name, down: true })), ...focus.others.map((name) => ({ name, down: false }))];
  while (wave.length) {
    const next: { name: string; down: boolean }[] = [];
    await Promise.all(
      wave.map(async ({ name, down }) => {
        const key = `${name}/${down}`;
        if (seen.has(key) || name === '') return;
        seen.add(key);
        const settle = <T>(call: () => Promise<T>) =>
          perNamespace(call).then(
            (value) => ({ ok: true as const, value }),
            (reason: unknown) => ({ ok: false as const, reason }),
          );
        const [ns, hc] = await Promise.all([
          listedNamespaces
            ? listedNamespaces.has(name)
              ? { ok: true as const, value: listedNamespaces.get(name)! }
              : { ok: false as const, reason: new ServerError(404, `namespaces "${name}" not found`, 'NotFound') }
            : settle(() => api.getNamespace(name)),
          listedHierarchies ? { ok: true as const, value: listedHierarchies.get(name) } : settle(() => api.getHierarchy(name)),
        ]);
        // The anchors below the subtrees, and those in the focus namespaces (a deleted subnamespace's is in its parent).
        const children = hc.ok ? (hc.value?.status?.children ?? []) : undefined;
        const wantAnchors = focus.others.includes(name) || (down && (children === undefined || children.length > 0 || !hc.ok || !hc.value));
        const inNs = !wantAnchors
          ? { ok: true as const, value: [] }
          : listed.anchors
            ? { ok: true as const, value: listed.anchors.filter((a) => nsOf(a) === name) }
            : await settle(() => api.listAnchors(name));
        if (!hc.ok && !isForbidden(hc.reason)) throw hc.reason;
        if (!inNs.ok && !isForbidden(inNs.reason)) throw inNs.reason;
        let object: NamespaceObject | undefined;
        if (ns.ok) object = ns.value;
        else {
          if (!isForbidden(ns.reason) && !isNotFound(ns.reason)) throw ns.reason;
          if (isNotFound(ns.reason)) return;
          if (!unreadable.includes(name)) unreadable.push(name);
        }
        if (object && !namespaces.has(name)) namespaces.set(name, object);
        if (hc.ok && hc.value && !withHierarchy.has(name)) {
          withHierarchy.add(name);
          hierarchies.push(hc.value);
        }
        if (inNs.ok) anchors.push(...inNs.value);
        const parent = object?.metadata.annotations?.[Annotation.subnamespaceOf] || (hc.ok ? hc.value?.spec?.parent : undefined);
        if (parent) next.push({ name: parent, down: false });
        if (down) for (const child of children ?? []) next.push({ name: child, down: true });
        if (down && inNs.ok) for (const a of inNs.value) next.push({ name: a.metadata.name ?? '', down: true });
      }),
    );
    wave = next;
  }
  // A namespace named as a parent that could not be read: assumed to exist (else the model would halt its children).
  for (const name of unreadable)
    if (!namespaces.has(name)) namespaces.set(name, { metadata: { name, labels: { [Label.includedNamespace]: 'true' } } });
  const uniqueAnchors = new Map(anchors.map((a) => [`${nsOf(a)}/${a.metadata.name ?? ''}`, a]));
  return {
    namespaces: [...namespaces.values()],
    hierarchies,
    anchors: [...uniqueAnchors.values()],
    unreadable,
  };
}

/**
 * Which namespaces HNC manages, as far as the plugin can tell without the manager's flags: the
 * controller labels every namespace it manages `hnc.x-k8s.io/included-namespace=true`, so one
 * without the label is taken as excluded (a new namespace, never seen, as managed).
 */
export function policyFromLabels(namespaces: readonly NamespaceObject[]): HierarchyPolicy {
  const unlabelled = namespaces.filter((n) => n.metadata.labels?.[Label.includedNamespace] !== 'true').map((n) => n.metadata.name);
  return new HierarchyPolicy({ excludedNamespaces: [...DEFAULT_EXCLUDED_NAMESPACES, ...unlabelled] });
}

// ---- the whole preview ------------------------------------------------------------------------------

export interface PreviewRequest {
  readonly change: HierarchyChange;
  readonly summary: string;
  readonly writes: readonly DryWrite[];
  readonly focus: Focus;
  /** Reads an admission answer differently (e.g. delete -a); returns it unchanged by default. */
  readonly adjust?: (a: Admission) => Admission;
}

/** Reads, checks admission, computes, prints; throws (exit 1) when admission refuses. */
export async function runPreview(api: HncApi, io: Io, flags: PreviewFlags, req: PreviewRequest): Promise<void> {
  if (flags.dryRun === 'none') throw new Error('runPreview needs --dry-run');
  const dryRun = flags.dryRun;
  // The hierarchy's part of the preview is computed as soon as the forest is read, while the
  // objects still arrive; only the objects in its scope are kept.
  let started: StartedPreview | undefined;
  const start = (forest: ForestRead) => (started = startPreview({ policy: policyFromLabels(forest.namespaces), ...forest }, req.change));
  const [read, admission0] = await Promise.all([readCluster(api, req.focus, start), checkAdmission(dryRun, req.writes)]);
  if (flags.debug)
    io.err(`preview: copies ${read.copies.how}${read.copies.why ? ` (${read.copies.why})` : ''}; ${read.requests} requests\n`);
  const admission = req.adjust ? req.adjust(admission0) : admission0;
  if (!started) throw new Error('readCluster returned before the forest was read');
  const preview = started.finish({
    types: read.types,
    networkPolicies: read.networkPolicies,
    ...(read.clusterRoles && { clusterRoles: read.clusterRoles }),
  });
  const report: PreviewReport = {
    kind: 'HierarchyChangePreview',
    apiVersion: API_VERSION,
    summary: req.summary,
    dryRun,
    admission,
    ...preview,
    notes: read.notes,
  };
  if (flags.output === 'json') io.out(`${JSON.stringify(report, null, 2)}\n`);
  else if (flags.output === 'yaml') io.out(stringify(report));
  else io.out(renderPreviewText(report));
  if (!admission.allowed) {
    const refused = admission.checks.find((c) => !c.allowed);
    throw new CliError(`Error: admission would refuse this change: ${refused?.message ?? 'refused'}`);
  }
}
