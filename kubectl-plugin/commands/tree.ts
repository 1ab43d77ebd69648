// `kubectl hns tree [NS...] [-A] [-o json|yaml|dot]`: loads the trees, then renders them.
//
// Loading follows HNC: a namespace's children are its HierarchyConfiguration's status.children
// (the controller's view), `[s]` comes from the child Namespace's subnamespace-of annotation, and
// a cycle member's children that are in the cycle too are not followed. Beyond HNC:
// * a child that cannot be read (403) or no longer exists (404) is shown with a note instead of
//   failing the whole command; it is still marked `[s]` when its parent holds an anchor of its name
//   (users who may read a parent can usually list its anchors);
// * with -A, one list of namespaces and (if allowed) one list of HierarchyConfigurations replace
//   HNC's two requests per namespace, and namespaces that no printed tree reaches (orphans whose
//   parent is missing, or not yet in their parent's status) are printed as roots too.
import { AnchorState, Annotation, NamespaceReason, type HierarchyConfiguration } from '../../core/api/index.js';
import type { HncApi, Namespace } from '../api.js';
import { PER_NAMESPACE_CONCURRENCY, limiter } from '../concurrency.js';
import { defineCommand } from '../cli/command.js';
import { boolFlag, stringFlag } from '../cli/flag-spec.js';
import { CliError, ServerError, isForbidden, isNotFound } from '../errors.js';
import type { Io } from '../io.js';
import type { ConditionView, ReadProblem, TreeNode } from '../model.js';
import { renderTreeDot, renderTreeJson, renderTreeYaml } from '../render/tree-formats.js';
import { renderTreeText } from '../render/tree-text.js';
import { loadTreeQuotas } from './quotas.js';

type Limit = ReturnType<typeof limiter>;

/** What the tree needs to know about one namespace. */
export interface NamespaceInfo {
  name: string;
  subnamespace: boolean;
  parent?: string;
  children: string[];
  conditions: ConditionView[];
  inCycle: boolean;
  problem?: ReadProblem;
  /** The error behind `problem`, rethrown when the namespace was asked for by name. */
  error?: unknown;
  /** The Namespace itself could not be read, so `subnamespace` is a guess (false). */
  subnamespaceUnknown?: boolean;
}

export type InfoSource = (name: string) => Promise<NamespaceInfo>;

/** The names of a namespace's anchors that stand for a subnamespace (any state but Conflict and Forbidden). */
export type AnchorSource = (parent: string) => Promise<ReadonlySet<string>>;

const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export function namespaceInfo(name: string, ns: Namespace, hc: HierarchyConfiguration | undefined): NamespaceInfo {
  const conditions = (hc?.status?.conditions ?? []).map((c) => ({ type: c.type, reason: c.reason, message: c.message }));
  return {
    name,
    subnamespace: ns.metadata.annotations?.[Annotation.subnamespaceOf] !== undefined,
    ...(hc?.spec?.parent ? { parent: hc.spec.parent } : {}),
    children: [...new Set(hc?.status?.children ?? [])].sort(byName),
    conditions,
    inCycle: conditions.some((c) => c.reason === NamespaceReason.InCycle),
  };
}

function problemInfo(name: string, err: unknown): NamespaceInfo {
  const problem: ReadProblem | undefined = isForbidden(err) ? 'forbidden' : isNotFound(err) ? 'notFound' : undefined;
  if (!problem) throw err;
  return { name, subnamespace: false, children: [], conditions: [], inCycle: false, problem, error: err, subnamespaceUnknown: true };
}

/** Lists a parent's anchors on demand, once; none when they cannot be listed (403, 404). */
export function anchorSource(api: HncApi, limit: Limit = limiter(PER_NAMESPACE_CONCURRENCY)): AnchorSource {
  const cache = new Map<string, Promise<ReadonlySet<string>>>();
  const standsFor = (state: string | undefined) => state !== AnchorState.Conflict && state !== AnchorState.Forbidden;
  return (parent) => {
    let p = cache.get(parent);
    if (!p) {
      p = limit(() => api.listAnchors(parent)).then(
        (anchors) => new Set(anchors.filter((a) => standsFor(a.status?.status)).map((a) => a.metadata.name ?? '')),
        (err: unknown) => {
          if (isForbidden(err) || isNotFound(err)) return new Set<string>();
          throw err;
        },
      );
      cache.set(parent, p);
    }
    return p;
  };
}

/**
 * Reads each namespace and its HC on demand (two requests each), once; at most `limit` at a time,
 * since a parent with a thousand children asks for all of them at once.
 */
export function liveSource(api: HncApi, limit: Limit = limiter(PER_NAMESPACE_CONCURRENCY)): InfoSource {
  const cache = new Map<string, Promise<NamespaceInfo>>();
  return (name) => {
    let p = cache.get(name);
    if (!p) {
      p = Promise.allSettled([limit(() => api.getNamespace(name)), limit(() => api.getHierarchy(name))]).then(([ns, hc]) => {
        if (ns.status === 'rejected') return problemInfo(name, ns.reason);
        if (hc.status === 'rejected')
          return {
            ...problemInfo(name, hc.reason),
            subnamespace: namespaceInfo(name, ns.value, undefined).subnamespace,
            subnamespaceUnknown: false,
          };
        return namespaceInfo(name, ns.value, hc.value);
      });
      cache.set(name, p);
    }
    return p;
  };
}

/** Lists every namespace and, if allowed, every HC; falls back to per-namespace reads of HCs. */
export async function snapshotSource(
  api: HncApi,
  limit: Limit = limiter(PER_NAMESPACE_CONCURRENCY),
): Promise<{ names: string[]; source: InfoSource }> {
  const namespaces = await api.listNamespaces();
  let hcs: Map<string, HierarchyConfiguration> | undefined;
  try {
    hcs = new Map((await api.listHierarchies()).map((hc) => [hc.metadata.namespace ?? '', hc]));
  } catch (err) {
    if (!isForbidden(err)) throw err;
  }
  const byNs = new Map(namespaces.map((ns) => [ns.metadata.name ?? '', ns]));
  const live = liveSource(api, limit);
  const source: InfoSource = async (name) => {
    const ns = byNs.get(name);
    if (!ns) return problemInfo(name, new ServerError(404, `namespaces "${name}" not found`));
    if (!hcs) return live(name);
    return namespaceInfo(name, ns, hcs.get(name));
  };
  return { names: [...byNs.keys()].sort(byName), source };
}

/**
 * Builds the tree below `info`, recording every namespace placed in `placed`. A child whose
 * Namespace could not be read is marked as a subnamespace if `info` holds an anchor of its name.
 */
export async function buildTree(
  info: NamespaceInfo,
  source: InfoSource,
  anchors?: AnchorSource,
  placed: Set<string> = new Set(),
  path: ReadonlySet<string> = new Set(),
): Promise<TreeNode> {
  placed.add(info.name);
  const here = new Set(path).add(info.name);
  const infos = await Promise.all(info.children.map(source));
  const anchored = anchors && infos.some((c) => c.subnamespaceUnknown) ? await anchors(info.name) : undefined;
  const children: TreeNode[] = [];
  for (const read of infos) {
    const child = anchored && read.subnamespaceUnknown ? { ...read, subnamespace: anchored.has(read.name) } : read;
    if (info.inCycle && child.inCycle) continue;
    if (here.has(child.name)) continue;
    children.push(await buildTree(child, source, anchors, placed, here));
  }
  return {
    name: info.name,
    subnamespace: info.subnamespace,
    conditions: info.conditions,
    children,
    ...(info.problem ? { problem: info.problem } : {}),
  };
}

/** The trees rooted at the named namespaces; a root that cannot be read fails the command. */
export async function loadTrees(api: HncApi, roots: readonly string[]): Promise<TreeNode[]> {
  const limit = limiter(PER_NAMESPACE_CONCURRENCY);
  const source = liveSource(api, limit);
  const anchors = anchorSource(api, limit);
  const trees: TreeNode[] = [];
  for (const name of roots) {
    const info = await source(name);
    if (info.error) throw info.error;
    trees.push(await buildTree(info, source, anchors));
  }
  return trees;
}

/** Every tree: the roots and cycle members (as HNC), then whatever they did not reach. */
export async function loadAllTrees(api: HncApi): Promise<TreeNode[]> {
  const limit = limiter(PER_NAMESPACE_CONCURRENCY);
  const { names, source } = await snapshotSource(api, limit);
  const anchors = anchorSource(api, limit);
  const placed = new Set<string>();
  const trees: TreeNode[] = [];
  for (const name of names) {
    const info = await source(name);
    if (info.parent && !info.inCycle) continue;
    trees.push(await buildTree(info, source, anchors, placed));
  }
  for (const name of names) {
    if (!placed.has(name)) trees.push(await buildTree(await source(name), source, anchors, placed));
  }
  return trees;
}

export const OUTPUT_FORMATS = ['json', 'yaml', 'dot'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export interface TreeFlags {
  allNamespaces?: boolean;
  output?: OutputFormat;
  /** (hnc-ts) Each namespace's hierarchical quota usage against its limits. */
  quota?: boolean;
}

export function validateTree(names: readonly string[], flags: TreeFlags): void {
  if (names.length === 0 && !flags.allNamespaces) {
    throw new CliError('Error: Must specify the root of the tree(s) to display or else specify --all-namespaces');
  }
  if (flags.quota && flags.output) throw new CliError(`Error: --quota is shown in the text output only, not with -o ${flags.output}`);
}

export function renderTrees(trees: readonly TreeNode[], output: OutputFormat | undefined, suffixes?: ReadonlyMap<string, string>): string {
  switch (output) {
    case 'json':
      return renderTreeJson(trees);
    case 'yaml':
      return renderTreeYaml(trees);
    case 'dot':
      return renderTreeDot(trees);
    default:
      return renderTreeText(trees, suffixes);
  }
}

export async function runTree(api: HncApi, io: Io, names: readonly string[], flags: TreeFlags): Promise<void> {
  validateTree(names, flags);
  const trees = flags.allNamespaces ? await loadAllTrees(api) : await loadTrees(api, names);
  const suffixes = flags.quota ? await loadTreeQuotas(api, trees) : undefined;
  let text = renderTrees(trees, flags.output, suffixes);
  if (flags.quota)
    text += suffixes
      ? '\n[name: resource used/hard] is a HierarchicalResourceQuota in that namespace (usage of its whole subtree);\n(resource used) is the usage of a subtree without one, for the resources limited above it\n'
      : '\nThis cluster serves no HierarchicalResourceQuotas\n';
  io.out(text);
}

export const treeCommand = defineCommand({
  name: 'tree',
  summary: 'Display one or more hierarchy trees',
  usage: '[NAMESPACE...] [flags]',
  examples:
    '  kubectl hns tree team-a\n  kubectl hns tree -A\n  kubectl hns tree team-a -o dot | dot -Tsvg > team-a.svg\n' +
    "  # Each subtree's hierarchical quota usage against its limits\n  kubectl hns tree team-a --quota",
  flags: [
    { name: 'all-namespaces', short: 'A', kind: 'bool', description: 'Displays all trees on the cluster' },
    {
      name: 'output',
      short: 'o',
      kind: 'string',
      value: 'format',
      description: 'Output format instead of text: json, yaml or dot',
      choices: OUTPUT_FORMATS,
    },
    {
      name: 'quota',
      kind: 'bool',
      description:
        "Show each namespace's HierarchicalResourceQuotas (used/hard over its subtree), or its subtree's usage of what is limited above it",
    },
  ],
  async run({ args, flags, io, connect }) {
    const output = stringFlag(flags, 'output') as OutputFormat | undefined;
    const tree: TreeFlags = {
      allNamespaces: boolFlag(flags, 'all-namespaces'),
      ...(output ? { output } : {}),
      ...(boolFlag(flags, 'quota') ? { quota: true } : {}),
    };
    validateTree(args, tree);
    const session = await connect();
    await runTree(session.api, io, args, tree);
  },
});
