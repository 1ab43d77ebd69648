// The independent checker: reads what users wrote and what HNC made from it, and lists every
// difference between the namespaces' tree labels, anchors and copies and what soak/expected.ts
// says they must be. An empty list means HNC has settled.
import { isDeepStrictEqual } from 'node:util';
import type { KubeClient } from '../kube/client.js';
import { CONFIGURED_KINDS, SOURCE_KINDS, type KubeObject } from './kinds.js';
import {
  INHERITED_FROM,
  TREE_SUFFIX,
  ancestry,
  content,
  expectedCopies,
  isCopy,
  parents,
  treeLabels,
  type ClusterView,
  type Mode,
} from './expected.js';

const HNC = '/apis/hnc.x-k8s.io/v1alpha2';
/** Made by the cluster in every namespace, never propagated (docs/behaviour.md §5.5). */
const CLUSTER_MADE = new Set(['kube-root-ca.crt']);

interface List {
  items: KubeObject[];
}

export class Checker {
  constructor(
    readonly client: KubeClient,
    /** Whether a namespace is one of the soak's. */
    private readonly inScope: (ns: string) => boolean,
  ) {}

  /** Every difference between the cluster and what it must be; [] when HNC has settled. */
  async divergences(): Promise<string[]> {
    const { view, terminating, anchors } = await this.read();
    const out = terminating.map((ns) => `namespace ${ns} is still being deleted`);
    const parentOf = parents(view);
    out.push(...anchorDivergences(view, anchors));
    for (const ns of view.namespaces) {
      let chain: string[];
      try {
        chain = ancestry(ns.metadata.name, parentOf);
      } catch (err) {
        out.push(`namespace ${ns.metadata.name}: ${(err as Error).message}`);
        continue;
      }
      out.push(...treeLabelDivergences(ns, chain));
      for (const kind of SOURCE_KINDS) out.push(...copyDivergences(ns, chain, view, kind.resource));
    }
    return out;
  }

  private async read(): Promise<{ view: ClusterView; terminating: string[]; anchors: KubeObject[] }> {
    const scoped = (l: List) => l.items.filter((o) => this.inScope(o.metadata.namespace ?? o.metadata.name));
    const [nsList, hcs, anchors, config] = await Promise.all([
      this.client.get<List>('/api/v1/namespaces').then(scoped),
      this.client.get<List>(`${HNC}/hierarchyconfigurations`).then(scoped),
      this.client.get<List>(`${HNC}/subnamespaceanchors`).then(scoped),
      this.client.get<{ spec?: { resources?: Array<{ group?: string; resource: string; mode?: string }> } }>(
        `${HNC}/hncconfigurations/config`,
      ),
    ]);
    const namespaces = nsList.filter((n) => !n.metadata.deletionTimestamp);
    const live = new Set(namespaces.map((n) => n.metadata.name));
    const objects = new Map<string, KubeObject[]>();
    for (const kind of SOURCE_KINDS) {
      const list = await this.client.get<List>(kind.collection());
      objects.set(
        kind.resource,
        scoped(list).filter((o) => live.has(o.metadata.namespace!) && !CLUSTER_MADE.has(o.metadata.name)),
      );
    }
    const modes = new Map<string, Mode>([
      ['roles', 'Propagate'],
      ['rolebindings', 'Propagate'],
    ]);
    for (const kind of CONFIGURED_KINDS) {
      const entry = config.spec?.resources?.find((r) => r.resource === kind.resource && (r.group ?? '') === kind.group);
      // A kind the configuration does not name is not handled: its copies stay as they are.
      modes.set(kind.resource, entry ? ((entry.mode || 'Propagate') as Mode) : 'Ignore');
    }
    const hcParents = new Map<string, string>();
    for (const hc of hcs) {
      const parent = (hc.spec as { parent?: string } | undefined)?.parent;
      if (hc.metadata.name === 'hierarchy' && parent) hcParents.set(hc.metadata.namespace!, parent);
    }
    const terminating = nsList.filter((n) => n.metadata.deletionTimestamp).map((n) => n.metadata.name);
    return {
      view: { namespaces, hcParents, objects, modes },
      terminating,
      anchors: anchors.filter((a) => live.has(a.metadata.namespace!)),
    };
  }
}

/** Each anchor has its namespace, and each subnamespace its anchor. */
function anchorDivergences(view: ClusterView, anchors: KubeObject[]): string[] {
  const out: string[] = [];
  const byName = new Map(view.namespaces.map((n) => [n.metadata.name, n]));
  for (const a of anchors) {
    const sub = byName.get(a.metadata.name);
    const of = sub?.metadata.annotations?.['hnc.x-k8s.io/subnamespace-of'];
    if (of !== a.metadata.namespace)
      out.push(`anchor ${a.metadata.namespace}/${a.metadata.name}: its namespace ${sub ? `is a subnamespace of ${of}` : 'is missing'}`);
  }
  const anchored = new Set(anchors.map((a) => `${a.metadata.namespace}/${a.metadata.name}`));
  for (const n of view.namespaces) {
    const of = n.metadata.annotations?.['hnc.x-k8s.io/subnamespace-of'];
    if (of && !anchored.has(`${of}/${n.metadata.name}`)) out.push(`subnamespace ${n.metadata.name} has no anchor in ${of}`);
  }
  return out;
}

function treeLabelDivergences(ns: KubeObject, chain: string[]): string[] {
  const actual = Object.fromEntries(Object.entries(ns.metadata.labels ?? {}).filter(([k]) => k.endsWith(TREE_SUFFIX)));
  const expected = treeLabels(chain);
  return isDeepStrictEqual(actual, expected)
    ? []
    : [`namespace ${ns.metadata.name}: tree labels ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`];
}

function copyDivergences(ns: KubeObject, chain: string[], view: ClusterView, resource: string): string[] {
  const name = ns.metadata.name;
  const mode = view.modes.get(resource)!;
  const all = view.objects.get(resource)!;
  const sources = all.filter((o) => !isCopy(o));
  const here = new Map(all.filter((o) => o.metadata.namespace === name).map((o) => [o.metadata.name, o]));
  const expected = expectedCopies(ns, chain, sources, mode);
  const out: string[] = [];
  const at = (n: string) => `${resource} ${name}/${n}`;
  for (const [n, from] of expected) {
    const copy = here.get(n);
    const source = sources.find((s) => s.metadata.namespace === from && s.metadata.name === n)!;
    if (!copy) out.push(`${at(n)}: missing copy of ${from}/${n}`);
    else if (copy.metadata.labels?.[INHERITED_FROM] !== from)
      out.push(`${at(n)}: a copy from ${copy.metadata.labels?.[INHERITED_FROM]}, expected from ${from}`);
    else if (!isDeepStrictEqual(content(copy), content(source)))
      out.push(`${at(n)}: content ${JSON.stringify(content(copy))} differs from its source's ${JSON.stringify(content(source))}`);
  }
  if (mode === 'Ignore') return out;
  for (const [n, o] of here)
    if (isCopy(o) && !expected.has(n)) out.push(`${at(n)}: an extra copy (from ${o.metadata.labels?.[INHERITED_FROM]})`);
  return out;
}
