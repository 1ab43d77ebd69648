// The HRQ phase's model (bench/hrq-phase.ts runs it): a tree of namespaces with
// HierarchicalResourceQuotas at several depths, the singletons and statuses HNC must reach
// (computed here with core/quantity's arithmetic), and the watches that see when it has.
import type { KubeClient } from '../kube/client.js';
import { Reflector } from '../kube/watch/reflector.js';
import type { KubeObject } from '../kube/watch/store.js';
import { canonicalQuantity, compareQuantities, parseQuantity } from '../core/quantity/quantity.js';

export const HRQ_API = '/apis/hnc.x-k8s.io/v1alpha2';
const SINGLETON = 'hrq.hnc.x-k8s.io';

/** The tree: `hq`, then fan-out f at each of three levels (f = ⌈∛size⌉), cut at `size` namespaces, breadth first. */
export function quotaTree(size: number): {
  root: string;
  parent: Map<string, string | undefined>;
  depth: Map<string, number>;
  fanOut: number;
} {
  const fanOut = Math.max(2, Math.ceil(Math.cbrt(size)));
  const root = 'hq';
  const parent = new Map<string, string | undefined>([[root, undefined]]);
  const depth = new Map<string, number>([[root, 0]]);
  let level = [root];
  for (let d = 1; parent.size < size; d++) {
    const next: string[] = [];
    for (const p of level)
      for (let i = 0; i < fanOut && parent.size < size; i++) {
        const ns = `${p}-${i}`;
        parent.set(ns, p);
        depth.set(ns, d);
        next.push(ns);
      }
    level = next;
  }
  return { root, parent, depth, fanOut };
}

type Limits = Record<string, string>;

/**
 * HRQs at every depth, looser higher up and on different resources, so that a namespace's
 * strictest limits mix several HRQs: the root, every namespace at depth 1, every other at depth 2,
 * every tenth deeper.
 */
export function placeHrqs(tree: ReturnType<typeof quotaTree>): Array<{ namespace: string; name: string; hard: Limits }> {
  const out: Array<{ namespace: string; name: string; hard: Limits }> = [];
  let i = 0;
  for (const [ns, d] of tree.depth) {
    const n = i++;
    if (d === 0) out.push({ namespace: ns, name: 'org', hard: { services: '5000', pods: '20000', 'requests.cpu': '1000' } });
    else if (d === 1) out.push({ namespace: ns, name: 'division', hard: { services: '500', secrets: '300', 'requests.memory': '64Gi' } });
    else if (d === 2 && n % 2 === 0) out.push({ namespace: ns, name: 'team', hard: { services: '20', 'requests.cpu': '8', pods: '100' } });
    else if (d >= 3 && n % 10 === 0) out.push({ namespace: ns, name: 'app', hard: { services: '2', 'requests.cpu': '1500m' } });
  }
  return out;
}

const signature = (l: Record<string, string> | undefined) =>
  Object.entries(l ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

/** What HNC must reach: each namespace's singleton limits (the strictest above it) and each HRQ's status. */
export function expectedQuotas(
  tree: ReturnType<typeof quotaTree>,
  hrqs: ReturnType<typeof placeHrqs>,
): { singletons: Map<string, string>; statuses: Map<string, string> } {
  const byNs = new Map<string, Limits[]>();
  for (const h of hrqs) byNs.set(h.namespace, [...(byNs.get(h.namespace) ?? []), h.hard]);
  const singletons = new Map<string, string>();
  for (const ns of tree.parent.keys()) {
    const strictest: Limits = {};
    for (let at: string | undefined = ns; at !== undefined; at = tree.parent.get(at))
      for (const hard of byNs.get(at) ?? [])
        for (const [r, v] of Object.entries(hard))
          if (strictest[r] === undefined || compareQuantities(parseQuantity(v), parseQuantity(strictest[r])) < 0) strictest[r] = v;
    if (Object.keys(strictest).length)
      singletons.set(ns, signature(Object.fromEntries(Object.entries(strictest).map(([r, v]) => [r, canonicalQuantity(v)]))));
  }
  // Nothing runs in these namespaces: every subtree's usage is zero.
  const statuses = new Map<string, string>();
  for (const h of hrqs) {
    const hard = Object.fromEntries(Object.entries(h.hard).map(([r, v]) => [r, canonicalQuantity(v)]));
    statuses.set(`${h.namespace}/${h.name}`, `${signature(hard)}|${signature(Object.fromEntries(Object.keys(hard).map((r) => [r, '0'])))}`);
  }
  return { singletons, statuses };
}

interface Slim extends KubeObject {
  metadata: { name: string; namespace?: string; resourceVersion?: string; uid?: string };
  spec?: { hard?: Record<string, string> };
  status?: { hard?: Record<string, string>; used?: Record<string, string> };
}

const silent = { debug() {}, info() {}, warn() {}, error() {} };

/** Watches the singletons and the HRQs and says the moment both match what is expected. */
export class QuotaTracker {
  readonly singletons: Reflector<Slim>;
  readonly hrqs: Reflector<Slim>;
  private okSingletons = new Set<string>();
  private okStatuses = new Set<string>();
  private waiters: Array<(t: number) => void> = [];

  constructor(
    client: KubeClient,
    private readonly expected: ReturnType<typeof expectedQuotas>,
  ) {
    const slim = (o: Slim): Slim => ({
      metadata: {
        name: o.metadata.name,
        namespace: o.metadata.namespace,
        resourceVersion: o.metadata.resourceVersion,
        uid: o.metadata.uid,
      },
      spec: { hard: o.spec?.hard },
      status: { hard: o.status?.hard, used: o.status?.used },
    });
    const opts = { client, transform: slim, freeze: false, pageSize: 2000, logger: silent };
    this.singletons = new Reflector<Slim>({ ...opts, path: '/api/v1/resourcequotas', fieldSelector: `metadata.name=${SINGLETON}` });
    this.hrqs = new Reflector<Slim>({ ...opts, path: `${HRQ_API}/hierarchicalresourcequotas` });
    this.singletons.addHandler((type, o) => {
      const ns = o.metadata.namespace!;
      if (type !== 'DELETED' && this.expected.singletons.get(ns) === signature(o.spec?.hard)) this.okSingletons.add(ns);
      else this.okSingletons.delete(ns);
      this.check();
    });
    this.hrqs.addHandler((type, o) => {
      const key = `${o.metadata.namespace}/${o.metadata.name}`;
      if (type !== 'DELETED' && this.expected.statuses.get(key) === `${signature(o.status?.hard)}|${signature(o.status?.used)}`)
        this.okStatuses.add(key);
      else this.okStatuses.delete(key);
      this.check();
    });
  }

  async start(): Promise<void> {
    this.singletons.start();
    this.hrqs.start();
    await Promise.all([this.singletons.synced, this.hrqs.synced]);
  }

  stop(): Promise<unknown> {
    return Promise.all([this.singletons.stop(), this.hrqs.stop()]);
  }

  get converged(): boolean {
    return this.okSingletons.size === this.expected.singletons.size && this.okStatuses.size === this.expected.statuses.size;
  }

  progress(): string {
    return `singletons ${this.okSingletons.size}/${this.expected.singletons.size}, HRQ statuses ${this.okStatuses.size}/${this.expected.statuses.size}`;
  }

  whenConverged(timeoutMs: number): Promise<number> {
    if (this.converged) return Promise.resolve(performance.now());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`HRQs not converged within ${timeoutMs} ms: ${this.progress()}`)), timeoutMs);
      this.waiters.push((t) => {
        clearTimeout(timer);
        resolve(t);
      });
    });
  }

  /** uid -> resourceVersion of every singleton and HRQ. */
  versions(): Map<string, string> {
    const out = new Map<string, string>();
    for (const r of [this.singletons, this.hrqs]) for (const o of r.store.list()) out.set(o.metadata.uid!, o.metadata.resourceVersion!);
    return out;
  }

  private check(): void {
    if (!this.waiters.length || !this.converged) return;
    const t = performance.now();
    const w = this.waiters;
    this.waiters = [];
    for (const done of w) done(t);
  }
}
