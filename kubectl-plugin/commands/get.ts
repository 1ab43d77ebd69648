// `kubectl hns get RESOURCE [NAME] [-n NS] [-A] [-w] [-o name|json|yaml|wide] [-l SELECTOR]`: a
// resource across NS's whole subtree, as kubectl prints it, with a NAMESPACE column.
//
// * The subtree: the namespaces carrying NS's tree label (`NS.tree.hnc.x-k8s.io/depth`), one
//   request; a user who may not list namespaces gets it from the HierarchyConfigurations instead,
//   as `tree` reads it, and a note for each part that could not be read.
// * The list: one request per namespace of the subtree, 32 at a time, each as the server's Table
//   (its own columns); a namespace where the user may not list RESOURCE is left out, with a note.
//   With -A, one cluster-wide request.
// * --watch: the list, then every event as it arrives, one line each, written at once (nothing is
//   buffered: the consumer may stop reading at any moment). A user who may list RESOURCE
//   cluster-wide gets one cluster-wide watch filtered to the subtree (the subtree is followed as it
//   grows); otherwise one watch per namespace of the subtree, and the subtree followed through
//   the tree label or the HierarchyConfigurations (namespaces join and leave as it changes).
import { PER_NAMESPACE_CONCURRENCY, mapLimit } from '../concurrency.js';
import { stringify } from 'yaml';
import { GROUP, Kind, Plural, Singleton, treeLabel, VERSION } from '../../core/api/index.js';
import type { AnyObject, HncApi, Table, TableRow, WatchEvent } from '../api.js';
import { defineCommand } from '../cli/command.js';
import { boolFlag, stringFlag } from '../cli/flag-spec.js';
import { CliError, ServerError, isForbidden, isNotFound } from '../errors.js';
import type { Io } from '../io.js';
import type { TreeNode } from '../model.js';
import { TablePrinter, type GetRow } from '../render/get-table.js';
import { resolveResource, type FoundResource } from './resources.js';
import { loadTrees } from './tree.js';

export const GET_OUTPUTS = ['name', 'json', 'yaml', 'wide'] as const;
export type GetOutput = (typeof GET_OUTPUTS)[number];

export interface GetFlags {
  resource: string;
  name?: string;
  /** The subtree's root; ignored with allNamespaces. */
  namespace: string;
  allNamespaces?: boolean;
  watch?: boolean;
  output?: GetOutput;
  selector?: string;
  cacheDir?: string;
}

export interface Subtree {
  namespaces: string[];
  notes: string[];
  /** How the subtree was read: the namespaces' tree labels, or the HierarchyConfigurations. */
  readBy?: 'labels' | 'hierarchy';
  /** How many namespaces the cluster has, when the user may list them. */
  clusterNamespaces?: number;
}

/**
 * A subtree holding at least this share of the cluster's namespaces is listed with one
 * cluster-wide request (filtered here) rather than one request per namespace: on the real control
 * plane, 1,000 per-namespace lists took about 6 times as long as one list of twice as many
 * objects (docs/benchmarks.md).
 */
export const CLUSTER_WIDE_SHARE = 0.1;

/** A namespace that joins a watched subtree is listed again this often while refused, this many times. */
const JOIN_RETRY_MS = 500;
const JOIN_ATTEMPTS = 10;
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The namespaces of root's subtree, root first, and notes for the parts that could not be read. */
export async function loadSubtree(api: HncApi, root: string): Promise<Subtree> {
  try {
    const labelled = (await api.listNamespaces(treeLabel(root))).map((ns) => ns.metadata.name ?? '').filter((n) => n !== root);
    // The root carries its own tree label only once HNC has seen it; it must exist all the same.
    await api.getNamespace(root);
    const clusterNamespaces = await api.countNamespaces();
    return {
      namespaces: [root, ...labelled.sort(byName)],
      notes: [],
      readBy: 'labels',
      ...(clusterNamespaces !== undefined ? { clusterNamespaces } : {}),
    };
  } catch (err) {
    if (!isForbidden(err)) throw err;
  }
  const [tree] = await loadTrees(api, [root]);
  const namespaces: string[] = [];
  const unreadable: string[] = [];
  const walk = (node: TreeNode): void => {
    if (node.problem === 'notFound') return;
    namespaces.push(node.name);
    if (node.problem === 'forbidden') unreadable.push(node.name);
    node.children.forEach(walk);
  };
  if (tree) walk(tree);
  const notes = unreadable.length
    ? [
        `no permission to read the hierarchy of ${unreadable.sort(byName).join(', ')}: namespaces below ${unreadable.length > 1 ? 'them' : 'it'} are left out`,
      ]
    : [];
  return { namespaces: [root, ...namespaces.filter((n) => n !== root).sort(byName)], notes, readBy: 'hierarchy' };
}

export type PerNamespace<T> = { namespace: string; value?: T; forbidden?: boolean };

/** The same request in every namespace: 403s are noted, 404s (a namespace just deleted) skipped. */
export async function eachNamespace<T>(namespaces: readonly string[], fn: (ns: string) => Promise<T>): Promise<PerNamespace<T>[]> {
  return mapLimit(namespaces, PER_NAMESPACE_CONCURRENCY, async (namespace) => {
    try {
      return { namespace, value: await fn(namespace) };
    } catch (err) {
      if (isForbidden(err)) return { namespace, forbidden: true };
      if (isNotFound(err)) return { namespace };
      throw err;
    }
  });
}

const rowNamespace = (row: TableRow, fallback: string): string => row.object?.metadata?.namespace ?? fallback;

/** `kind[.group]/name`, as `kubectl get -o name`. */
export const objectName = (type: FoundResource, name: string): string =>
  `${type.kind.toLowerCase()}${type.group ? `.${type.group}` : ''}/${name}`;

function forbiddenNote(type: FoundResource, namespaces: readonly string[]): string {
  return `no permission to list ${type.resource} in ${namespaces.length > 1 ? 'namespaces' : 'namespace'} ${namespaces.join(', ')}: left out`;
}

/** Prints objects as -o name|json|yaml; one at a time for watches. */
class ObjectPrinter {
  private first = true;
  constructor(
    private readonly io: Io,
    private readonly output: 'name' | 'json' | 'yaml',
    private readonly type: FoundResource,
  ) {}
  list(items: readonly AnyObject[]): void {
    if (this.output === 'name') {
      for (const o of items) this.one(o);
      return;
    }
    const list = { apiVersion: 'v1', kind: 'List', items, metadata: { resourceVersion: '' } };
    this.io.out(this.output === 'json' ? `${JSON.stringify(list, null, 4)}\n` : stringify(list));
  }
  one(o: AnyObject): void {
    if (this.output === 'name') this.io.out(`${objectName(this.type, o.metadata.name ?? '')}\n`);
    else if (this.output === 'json') this.io.out(`${JSON.stringify(o, null, 4)}\n`);
    else this.io.out(`${this.first ? '' : '---\n'}${stringify(o)}`);
    this.first = false;
  }
}

export async function runGet(api: HncApi, io: Io, flags: GetFlags): Promise<void> {
  const type = await resolveResource(api, flags.resource, flags.cacheDir);
  if (!type.namespaced) {
    throw new CliError(
      `Error: ${type.resource} are not namespaced; kubectl hns get lists namespaced resources (use kubectl get ${flags.resource})`,
    );
  }
  const opts = {
    ...(flags.selector ? { labelSelector: flags.selector } : {}),
    ...(flags.name ? { fieldSelector: `metadata.name=${flags.name}` } : {}),
  };
  const subtree = flags.allNamespaces ? undefined : await loadSubtree(api, flags.namespace);
  const notes = [...(subtree?.notes ?? [])];
  const where = subtree ? `in the subtree of ${flags.namespace}` : '';
  const asTable = flags.output === undefined || flags.output === 'wide';
  const objects = asTable ? undefined : new ObjectPrinter(io, flags.output as 'name' | 'json' | 'yaml', type);

  // A watch of a subtree, or a subtree that is a good share of the cluster, uses one cluster-wide
  // list (and watch) when the user may list cluster-wide.
  const large =
    subtree !== undefined &&
    subtree.namespaces.length > 1 &&
    subtree.clusterNamespaces !== undefined &&
    subtree.namespaces.length >= subtree.clusterNamespaces * CLUSTER_WIDE_SHARE;
  let clusterWide: { table?: Table; items?: AnyObject[]; resourceVersion?: string } | undefined;
  if (subtree && (flags.watch || large)) {
    try {
      clusterWide = await listOnce(api, type, undefined, opts, asTable);
    } catch (err) {
      if (!isForbidden(err)) throw err;
    }
  }

  let printer: TablePrinter | undefined;
  const resourceVersions = new Map<string | undefined, string | undefined>();
  const inSubtree = new Set(subtree?.namespaces ?? []);
  const wanted = (ns: string | undefined): boolean => !subtree || (ns !== undefined && inSubtree.has(ns));

  // The list.
  let count = 0;
  if (asTable) {
    let columns: Table['columnDefinitions'];
    const rows: GetRow[] = [];
    if (!subtree || clusterWide) {
      const table = clusterWide?.table ?? (await api.listTable(type, undefined, opts));
      columns = table.columnDefinitions;
      for (const r of table.rows ?? []) {
        const ns = rowNamespace(r, '');
        if (wanted(ns)) rows.push({ namespace: ns, cells: r.cells });
      }
      if (subtree) {
        const rank = new Map(subtree.namespaces.map((n, i) => [n, i]));
        rows.sort((a, b) => (rank.get(a.namespace) ?? 0) - (rank.get(b.namespace) ?? 0));
      }
      resourceVersions.set(undefined, table.metadata?.resourceVersion);
    } else {
      const lists = await eachNamespace(subtree.namespaces, (ns) => api.listTable(type, ns, opts));
      const forbidden = lists.filter((l) => l.forbidden).map((l) => l.namespace);
      if (forbidden.length) notes.push(forbiddenNote(type, forbidden));
      for (const l of lists) {
        if (!l.value) continue;
        columns ??= l.value.columnDefinitions;
        for (const r of l.value.rows ?? []) rows.push({ namespace: rowNamespace(r, l.namespace), cells: r.cells });
        resourceVersions.set(l.namespace, l.value.metadata?.resourceVersion);
      }
    }
    printer = new TablePrinter(columns ?? [{ name: 'Name', type: 'string' }], flags.output === 'wide');
    count = rows.length;
    if (rows.length) for (const line of printer.lines(rows)) io.out(`${line}\n`);
  } else {
    const items: AnyObject[] = [];
    if (!subtree || clusterWide) {
      const list = clusterWide ?? (await api.listAll(type, undefined, opts));
      items.push(...(list.items ?? []).filter((o) => wanted(o.metadata.namespace)));
      if (subtree) {
        // The subtree's order (root first), as the per-namespace lists give it; sort is stable.
        const rank = new Map(subtree.namespaces.map((n, i) => [n, i]));
        items.sort((a, b) => (rank.get(a.metadata.namespace ?? '') ?? 0) - (rank.get(b.metadata.namespace ?? '') ?? 0));
      }
      resourceVersions.set(undefined, list.resourceVersion);
    } else {
      const lists = await eachNamespace(subtree.namespaces, (ns) => api.listAll(type, ns, opts));
      const forbidden = lists.filter((l) => l.forbidden).map((l) => l.namespace);
      if (forbidden.length) notes.push(forbiddenNote(type, forbidden));
      for (const l of lists) {
        if (!l.value) continue;
        items.push(...l.value.items);
        resourceVersions.set(l.namespace, l.value.resourceVersion);
      }
    }
    count = items.length;
    if (flags.watch) for (const o of items) objects?.one(o);
    else if (items.length || flags.output !== 'name') objects?.list(items);
  }
  if (count === 0 && !flags.watch && (asTable || flags.output === 'name')) {
    io.err(subtree ? `No resources found ${where}.\n` : 'No resources found\n');
  }
  for (const note of notes) io.err(`Note: ${note}\n`);
  if (!flags.watch) return;

  // The watch: every event printed as it arrives.
  let headerPrinted = count > 0;
  const membership = subtree && clusterWide ? new Membership(api, flags.namespace, inSubtree) : undefined;
  const isMember = async (ns: string | undefined): Promise<boolean> => (membership ? membership.has(ns) : wanted(ns));
  const printEvent = async (event: WatchEvent, fallbackNs: string | undefined): Promise<void> => {
    if (asTable && printer) {
      for (const r of (event.object as Table).rows ?? []) {
        const ns = rowNamespace(r, fallbackNs ?? '');
        if (!(await isMember(ns))) continue;
        if (!headerPrinted) {
          io.out(`${printer.header()}\n`);
          headerPrinted = true;
        }
        io.out(`${printer.line({ namespace: ns, cells: r.cells })}\n`);
      }
    } else {
      const o = event.object as AnyObject;
      if (await isMember(o.metadata?.namespace ?? fallbackNs))
        objects?.one({ apiVersion: type.group ? `${type.group}/${type.version}` : type.version, kind: type.kind, ...o });
    }
  };
  // Events are printed one after the other, in the order they came, even when deciding whether
  // one belongs to the subtree needs a request.
  let printing = Promise.resolve();
  let failure: unknown;
  const onEvent = (fallbackNs: string | undefined) => (event: WatchEvent) => {
    if (failure !== undefined) throw failure;
    if (event.type === 'BOOKMARK') return;
    if (event.type === 'ERROR') {
      const status = event.object as { code?: number; message?: string; reason?: string };
      throw new ServerError(status.code ?? 500, status.message ?? 'the watch failed', status.reason);
    }
    printing = printing.then(() => printEvent(event, fallbackNs)).catch((err: unknown) => void (failure ??= err));
  };
  const follow = async (ns: string | undefined): Promise<void> => {
    // The server ends a watch after a while: watch again from the last version seen (a namespace
    // that left the subtree is not watched again).
    while (ns === undefined || inSubtree.has(ns)) {
      const handle = onEvent(ns);
      await api.watch(type, ns, { ...opts, resourceVersion: resourceVersions.get(ns), table: asTable }, (event) => {
        const rv = resourceVersionOf(event.object);
        if (rv) resourceVersions.set(ns, rv);
        handle(event);
      });
      await printing;
      if (failure !== undefined) throw failure;
    }
  };
  // Watches run until one fails (or the user stops the command); more start as the subtree grows.
  let fail: (err: unknown) => void = () => undefined;
  const failed = new Promise<never>((_, reject) => (fail = reject));
  const run = (p: Promise<void>): void => void p.catch(fail);
  if (!subtree || clusterWide) {
    run(follow(undefined));
    if (membership) run(membership.follow());
  } else {
    // One watch per namespace; a namespace that joins is listed (its objects printed as they are)
    // and watched from there, one that leaves is no longer printed.
    const watching = new Set<string>();
    const watchNamespace = (ns: string): void => {
      if (watching.has(ns)) return;
      watching.add(ns);
      run(follow(ns).finally(() => watching.delete(ns)));
    };
    const join = async (ns: string): Promise<void> => {
      // A namespace that has just joined may not hold the RoleBindings HNC propagates into it yet:
      // a refusal is tried again for a few seconds before it is noted.
      for (let attempt = 1; ; attempt++) {
        try {
          const listed = asTable ? await api.listTable(type, ns, opts) : await api.listAll(type, ns, opts);
          resourceVersions.set(ns, 'items' in listed ? listed.resourceVersion : listed.metadata?.resourceVersion);
          if (!inSubtree.has(ns)) return;
          if ('items' in listed) for (const object of listed.items) onEvent(ns)({ type: 'ADDED', object });
          else onEvent(ns)({ type: 'ADDED', object: listed });
          break;
        } catch (err) {
          if (isNotFound(err)) return;
          if (!isForbidden(err)) throw err;
          if (attempt === JOIN_ATTEMPTS) return io.err(`Note: ${forbiddenNote(type, [ns])}\n`);
          await delay(JOIN_RETRY_MS);
        }
      }
      watchNamespace(ns);
    };
    const changes: SubtreeChanges = {
      join: (ns) => {
        inSubtree.add(ns);
        run(join(ns));
      },
      leave: (ns) => void inSubtree.delete(ns),
      note: (text) => io.err(`Note: ${text}\n`),
    };
    for (const ns of resourceVersions.keys()) if (ns !== undefined) watchNamespace(ns);
    if (subtree.readBy === 'labels') run(new Membership(api, flags.namespace, inSubtree, changes).follow());
    else {
      const hierarchy = new HierarchyFollower(api, flags.namespace, inSubtree, changes);
      for (const ns of subtree.namespaces) run(hierarchy.follow(ns));
    }
  }
  await failed;
}

/** What a follower of root's subtree reports: a namespace joined or left, or a part it cannot read. */
interface SubtreeChanges {
  join(ns: string): void;
  leave(ns: string): void;
  note(text: string): void;
}

const HIERARCHY_TYPE: FoundResource = {
  group: GROUP,
  version: VERSION,
  resource: Plural.HierarchyConfiguration,
  kind: Kind.HierarchyConfiguration,
  namespaced: true,
  singular: 'hierarchyconfiguration',
  shortNames: [],
};

/**
 * Follows root's subtree for a user who may not list namespaces, as `tree` reads it: a watch of
 * each member's HierarchyConfiguration. A child that appears joins (and is followed in turn); a
 * namespace no member names as its child any more leaves, with its descendants. Members are kept
 * in the set given, which the caller's event filter reads.
 */
class HierarchyFollower {
  private readonly childrenOf = new Map<string, readonly string[]>();

  constructor(
    private readonly api: HncApi,
    private readonly root: string,
    private readonly members: Set<string>,
    private readonly changes: SubtreeChanges,
  ) {}

  /** Follows ns's children; `joined`: ns came after the start (whose notes are already printed). */
  async follow(ns: string, joined = false): Promise<void> {
    let resourceVersion: string | undefined;
    const options = { fieldSelector: `metadata.name=${Singleton.hierarchy}`, table: false };
    let refusals = 0;
    while (this.members.has(ns)) {
      try {
        // No version at first: the server sends the object as it is (an ADDED event), then changes.
        await this.api.watch(HIERARCHY_TYPE, ns, { ...options, resourceVersion }, (event) => {
          const hc = event.object as AnyObject & { status?: { children?: string[] } };
          if (hc.metadata?.resourceVersion) resourceVersion = hc.metadata.resourceVersion;
          if (event.type === 'ADDED' || event.type === 'MODIFIED') this.setChildren(ns, hc.status?.children ?? []);
          else if (event.type === 'DELETED') this.setChildren(ns, []);
        });
      } catch (err) {
        if (!isForbidden(err)) throw err;
        // As for its objects: the RoleBindings HNC propagates into a namespace that joined may lag.
        if (joined && ++refusals < JOIN_ATTEMPTS) {
          await delay(JOIN_RETRY_MS);
          continue;
        }
        if (joined) this.changes.note(`no permission to read the hierarchy of ${ns}: namespaces below it are left out`);
        return;
      }
    }
  }

  private setChildren(ns: string, children: readonly string[]): void {
    if (!this.members.has(ns)) return;
    const before = this.childrenOf.get(ns) ?? [];
    this.childrenOf.set(ns, children);
    for (const c of children) {
      if (this.members.has(c)) continue;
      this.changes.join(c);
      void this.follow(c, true).catch((err: unknown) =>
        this.changes.note(`could not follow the hierarchy of ${c}: ${(err as Error).message}`),
      );
    }
    for (const c of before) if (!children.includes(c)) this.leaveUnlessNamed(c);
  }

  /** ns leaves, with its descendants, unless another member still names it as a child. */
  private leaveUnlessNamed(ns: string): void {
    if (ns === this.root || !this.members.has(ns)) return;
    for (const [parent, children] of this.childrenOf) if (parent !== ns && this.members.has(parent) && children.includes(ns)) return;
    this.members.delete(ns);
    this.changes.leave(ns);
    for (const c of this.childrenOf.get(ns) ?? []) this.leaveUnlessNamed(c);
  }
}

/**
 * Which namespaces are in root's subtree while a cluster-wide watch runs: those listed at the
 * start, kept up to date by a watch of the namespaces carrying root's tree label. A namespace
 * known neither way (its object's event may come before its namespace's) is looked up once.
 */
class Membership {
  private readonly known = new Map<string, boolean>();
  private readonly label: string;

  constructor(
    private readonly api: HncApi,
    root: string,
    members: Iterable<string>,
    private readonly changes?: SubtreeChanges,
  ) {
    this.label = treeLabel(root);
    for (const m of members) this.known.set(m, true);
  }

  async has(ns: string | undefined): Promise<boolean> {
    if (!ns) return false;
    const known = this.known.get(ns);
    if (known !== undefined) return known;
    let inside = false;
    try {
      inside = (await this.api.getNamespace(ns)).metadata.labels?.[this.label] !== undefined;
    } catch (err) {
      if (!isForbidden(err) && !isNotFound(err)) throw err;
    }
    if (!this.known.has(ns)) this.known.set(ns, inside);
    return this.known.get(ns) ?? inside;
  }

  /** Follows namespaces gaining or losing the tree label; without permission, the start's set stays. */
  async follow(): Promise<void> {
    const namespaces: FoundResource = {
      group: '',
      version: 'v1',
      resource: 'namespaces',
      kind: 'Namespace',
      namespaced: false,
      singular: 'namespace',
      shortNames: [],
    };
    let resourceVersion: string | undefined;
    try {
      resourceVersion = (await this.api.listAll(namespaces, undefined, { labelSelector: this.label })).resourceVersion;
    } catch (err) {
      if (isForbidden(err)) return;
      throw err;
    }
    for (;;) {
      await this.api.watch(namespaces, undefined, { labelSelector: this.label, resourceVersion, table: false }, (event) => {
        const ns = event.object as AnyObject;
        if (ns.metadata?.resourceVersion) resourceVersion = ns.metadata.resourceVersion;
        const name = ns.metadata?.name;
        if (!name || event.type === 'BOOKMARK' || event.type === 'ERROR') return;
        // DELETED: the namespace is gone, or no longer carries the label.
        const inside = event.type !== 'DELETED';
        if (this.known.get(name) !== inside) {
          if (inside) this.changes?.join(name);
          else this.changes?.leave(name);
        }
        this.known.set(name, inside);
      });
    }
  }
}

function resourceVersionOf(object: unknown): string | undefined {
  const o = object as { metadata?: { resourceVersion?: string }; rows?: TableRow[] } | undefined;
  const fromRow = o?.rows?.[o.rows.length - 1]?.object?.metadata?.resourceVersion;
  return fromRow ?? o?.metadata?.resourceVersion;
}

async function listOnce(
  api: HncApi,
  type: FoundResource,
  namespace: string | undefined,
  opts: { labelSelector?: string; fieldSelector?: string },
  asTable: boolean,
): Promise<{ table?: Table; items?: AnyObject[]; resourceVersion?: string }> {
  if (asTable) {
    const table = await api.listTable(type, namespace, opts);
    return { table, resourceVersion: table.metadata?.resourceVersion };
  }
  return api.listAll(type, namespace, opts);
}

export const getCommand = defineCommand({
  name: 'get',
  summary: "Lists a resource across a namespace's subtree",
  description:
    'Lists (and with --watch, watches) RESOURCE in NAMESPACE and every namespace below it, as kubectl get prints it, with a NAMESPACE column.\n' +
    'With -A, in every namespace.',
  usage: 'RESOURCE [NAME] [-n NAMESPACE] [-A] [-w] [-o name|json|yaml|wide] [-l SELECTOR]',
  examples: [
    "  # The secrets of 'team-a' and of every namespace below it",
    '  kubectl hns get secrets -n team-a',
    '',
    '  # Watch the pods of the subtree, each change as it happens',
    '  kubectl hns get pods -n team-a --watch',
    '',
    "  # The Role 'admin' wherever it is in the subtree, as YAML",
    '  kubectl hns get role admin -n team-a -o yaml',
  ].join('\n'),
  flags: [
    { name: 'all-namespaces', short: 'A', kind: 'bool', description: 'List the resource in every namespace, not only the subtree' },
    { name: 'watch', short: 'w', kind: 'bool', description: 'After listing, watch for changes and print each as it arrives' },
    {
      name: 'output',
      short: 'o',
      kind: 'string',
      value: 'format',
      description: "Output format: name, json, yaml or wide (all the server's columns)",
      choices: GET_OUTPUTS,
    },
    {
      name: 'selector',
      short: 'l',
      kind: 'string',
      value: 'string',
      description: 'Label selector to filter on, e.g. -l key1=value1,key2=value2',
    },
  ],
  async run({ args, flags, global, io, connect }) {
    if (args.length < 1) throw new CliError("Error: not enough arguments to 'get'");
    if (args.length > 2) throw new CliError("Error: too many arguments to 'get'");
    const session = await connect();
    await runGet(session.api, io, {
      resource: args[0] ?? '',
      ...(args[1] !== undefined ? { name: args[1] } : {}),
      namespace: global.namespace ?? session.namespace,
      allNamespaces: boolFlag(flags, 'all-namespaces'),
      watch: boolFlag(flags, 'watch'),
      ...(stringFlag(flags, 'output') ? { output: stringFlag(flags, 'output') as GetOutput } : {}),
      ...(stringFlag(flags, 'selector') ? { selector: stringFlag(flags, 'selector') } : {}),
      ...(session.cacheDir ? { cacheDir: session.cacheDir } : {}),
    });
  },
});
