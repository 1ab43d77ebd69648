// Watches what HNC writes, from the benchmark's side, and says the moment the cluster matches an
// expected state: every namespace's tree labels, every HierarchyConfiguration's children and
// conditions, and every copy (no more, no fewer). Detection is by watch events, never by polling.
import type { KubeClient } from '../kube/client.js';
import { Reflector } from '../kube/watch/reflector.js';
import type { KubeObject } from '../kube/watch/store.js';
import {
  TREE_SUFFIX,
  INCLUDED_LABEL,
  hierarchySignature,
  labelSignature,
  SOURCE_KINDS,
  type Expected,
  type SourceKind,
} from './topology.js';
import { hncCollectionPath } from '../core/api/paths.js';

export const INHERITED_FROM = 'hnc.x-k8s.io/inherited-from';
/** The label of the objects a floor beside a propagation trial writes (bench/paired-floor.ts). */
export const FLOOR_SELECTOR = 'bench=floor';

export function collection(kind: SourceKind, ns?: string): string {
  const base = kind === 'networkpolicies' ? '/apis/networking.k8s.io/v1' : '/apis/rbac.authorization.k8s.io/v1';
  return ns ? `${base}/namespaces/${ns}/${kind}` : `${base}/${kind}`;
}

interface Slim extends KubeObject {
  metadata: { name: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string>; uid?: string };
  status?: { children?: string[]; conditions?: unknown[] };
  /** Of a copy or a floor object: the field an update trial changes (`contentMark`). */
  mark?: string;
}

/**
 * The one field of a source's content an update trial changes, as the watches read it back: a
 * Role's verbs, a RoleBinding's subjects, a NetworkPolicy's policy types (none of them defaulted
 * by the API server). An update has reached a copy when the copy's mark is the new source's.
 */
export function contentMark(kind: SourceKind, obj: unknown): string {
  const o = obj as { rules?: Array<{ verbs?: string[] }>; subjects?: Array<{ name?: string }>; spec?: { policyTypes?: string[] } };
  switch (kind) {
    case 'roles':
      return (o.rules ?? []).map((r) => (r.verbs ?? []).join(',')).join(';');
    case 'rolebindings':
      return (o.subjects ?? []).map((x) => x.name ?? '').join(',');
    case 'networkpolicies':
      return (o.spec?.policyTypes ?? []).join(',');
  }
}

const silent = { debug() {}, info() {}, warn() {}, error() {} };

/** Keeps only what the comparisons need, so that 50,000 copies cost little memory here. */
function slim(keepLabel: (k: string) => boolean, keepStatus: boolean, markOf?: (o: Slim) => string) {
  // Marks are few distinct strings across many objects: keep one of each.
  const marks = new Map<string, string>();
  return (o: Slim): Slim => {
    const labels: Record<string, string> = {};
    for (const [k, v] of Object.entries(o.metadata.labels ?? {})) if (keepLabel(k)) labels[k] = v;
    const out: Slim = {
      metadata: { name: o.metadata.name, namespace: o.metadata.namespace, resourceVersion: o.metadata.resourceVersion, labels },
    };
    if (keepStatus) out.status = { children: o.status?.children, conditions: o.status?.conditions };
    if (markOf) {
      const m = markOf(o);
      if (!marks.has(m)) marks.set(m, m);
      out.mark = marks.get(m);
    }
    return out;
  };
}

export interface Progress {
  namespaces: { ok: number; of: number };
  hierarchy: { ok: number; of: number };
  copies: { ok: number; of: number; unexpected: number };
}

/**
 * When each of a set of objects ("kind/namespace/name") reached a wanted state (present, with a
 * given content mark if one is wanted, or gone) as the watches saw it: a propagation's copies, one
 * by one, or a floor's objects.
 */
export class Arrivals {
  /** performance.now() of each object's arrival. */
  readonly at = new Map<string, number>();
  private readonly pending: Set<string>;
  private resolveDone!: (t: number) => void;
  /** Resolves with the time of the last arrival. */
  readonly done: Promise<number>;

  constructor(
    keys: Iterable<string>,
    readonly present: boolean,
    /** For an update: only an object with this content mark counts as arrived. */
    readonly mark?: string,
  ) {
    this.pending = new Set(keys);
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    if (!this.pending.size) this.resolveDone(performance.now());
  }

  get missing(): number {
    return this.pending.size;
  }

  see(key: string, present: boolean, t: number, mark?: string): void {
    if (present !== this.present || (present && this.mark !== undefined && mark !== this.mark) || !this.pending.delete(key)) return;
    this.at.set(key, t);
    if (!this.pending.size) this.resolveDone(t);
  }
}

export class Tracker {
  private readonly namespaces: Reflector<Slim>;
  private readonly hierarchies: Reflector<Slim>;
  private readonly copies: Reflector<Slim>[];
  /** The floor's objects (no copies: HNC never writes them), by the same kind of watch as the copies. */
  private readonly floorObjects: Reflector<Slim>[];
  private readonly copyArrivals = new Set<Arrivals>();
  private readonly floorArrivals = new Set<Arrivals>();
  private expected: Expected = { labels: new Map(), hierarchy: new Map(), copies: new Map() };
  private nsOk = new Set<string>();
  private hcOk = new Set<string>();
  /** Copies seen: key -> inherited-from. */
  private readonly seen = new Map<string, string>();
  private copyOk = 0;
  private copyBad = 0;
  private waiters: Array<(t: number) => void> = [];
  /** Time (performance.now) of the last event that changed anything we track. */
  lastEventAt = 0;

  constructor(client: KubeClient) {
    const reflector = (name: string, path: string, transform: (o: Slim) => Slim, labelSelector?: string) =>
      new Reflector<Slim>({ client, path, name, transform, labelSelector, freeze: false, pageSize: 2000, logger: silent });
    this.namespaces = reflector(
      'namespaces',
      '/api/v1/namespaces',
      slim((k) => k.endsWith(TREE_SUFFIX) || k === INCLUDED_LABEL, false),
    );
    this.hierarchies = reflector(
      'hierarchyconfigurations',
      hncCollectionPath('hierarchyconfigurations'),
      slim(() => false, true),
    );
    this.copies = SOURCE_KINDS.map((kind) =>
      reflector(
        kind,
        collection(kind),
        slim(
          (k) => k === INHERITED_FROM,
          false,
          (o) => contentMark(kind, o),
        ),
        INHERITED_FROM,
      ),
    );
    this.floorObjects = SOURCE_KINDS.map((kind) =>
      reflector(
        `floor-${kind}`,
        collection(kind),
        slim(
          () => false,
          false,
          (o) => contentMark(kind, o),
        ),
        FLOOR_SELECTOR,
      ),
    );
    this.floorObjects.forEach((r, i) =>
      r.addHandler((type, obj) => {
        const t = performance.now();
        const key = `${SOURCE_KINDS[i]}/${obj.metadata.namespace}/${obj.metadata.name}`;
        for (const a of this.floorArrivals) a.see(key, type !== 'DELETED', t, obj.mark);
      }),
    );
    this.namespaces.addHandler((type, obj) => this.onNamespace(obj.metadata.name, type === 'DELETED' ? undefined : obj));
    this.hierarchies.addHandler((type, obj) => this.onHierarchy(obj.metadata.namespace!, type === 'DELETED' ? undefined : obj));
    this.copies.forEach((r, i) =>
      r.addHandler((type, obj) =>
        this.onCopy(
          `${SOURCE_KINDS[i]}/${obj.metadata.namespace}/${obj.metadata.name}`,
          type === 'DELETED' ? undefined : obj.metadata.labels?.[INHERITED_FROM],
          obj.mark,
        ),
      ),
    );
  }

  async start(): Promise<void> {
    const all = [this.namespaces, this.hierarchies, ...this.copies, ...this.floorObjects];
    for (const r of all) r.start();
    await Promise.all(all.map((r) => r.synced));
  }

  async stop(): Promise<void> {
    await Promise.all([this.namespaces, this.hierarchies, ...this.copies, ...this.floorObjects].map((r) => r.stop()));
  }

  /**
   * Records, from now on, when each of these copies ("kind/namespace/name") appears (present; with
   * `mark`, with that content) or goes; `floor` for the floor's objects instead. Call `release`
   * when done with it.
   */
  arrivals(keys: Iterable<string>, present: boolean, floor = false, mark?: string): Arrivals & { release: () => void } {
    const set = floor ? this.floorArrivals : this.copyArrivals;
    const a = new Arrivals(keys, present, mark);
    set.add(a);
    return Object.assign(a, { release: () => set.delete(a) });
  }

  /** The floor's objects still in the cluster, as the watches see them. */
  get floorObjectsLeft(): number {
    return this.floorObjects.reduce((n, r) => n + r.store.size, 0);
  }

  /** Sets what "converged" means from now on and recounts from the caches. */
  expect(expected: Expected): void {
    this.expected = expected;
    this.nsOk.clear();
    this.hcOk.clear();
    for (const ns of expected.labels.keys()) if (this.nsMatches(ns)) this.nsOk.add(ns);
    for (const ns of expected.hierarchy.keys()) if (this.hcMatches(ns)) this.hcOk.add(ns);
    this.copyOk = 0;
    this.copyBad = 0;
    for (const [key, from] of this.seen) {
      if (!this.mine(key)) continue;
      if (expected.copies.get(key) === from) this.copyOk++;
      else this.copyBad++;
    }
    this.check();
  }

  get converged(): boolean {
    const e = this.expected;
    return this.nsOk.size === e.labels.size && this.hcOk.size === e.hierarchy.size && this.copyOk === e.copies.size && this.copyBad === 0;
  }

  progress(): Progress {
    const e = this.expected;
    return {
      namespaces: { ok: this.nsOk.size, of: e.labels.size },
      hierarchy: { ok: this.hcOk.size, of: e.hierarchy.size },
      copies: { ok: this.copyOk, of: e.copies.size, unexpected: this.copyBad },
    };
  }

  /** Resolves with the time (performance.now) at which the cluster first matched what is expected. */
  whenConverged(timeoutMs: number): Promise<number> {
    if (this.converged) return Promise.resolve(performance.now());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== done);
        reject(new Error(`not converged within ${timeoutMs} ms: ${JSON.stringify(this.progress())}`));
      }, timeoutMs);
      const done = (t: number) => {
        clearTimeout(timer);
        resolve(t);
      };
      this.waiters.push(done);
    });
  }

  /** The namespaces whose labels or HierarchyConfiguration do not match yet (for error reports). */
  mismatches(limit = 5): string[] {
    const out: string[] = [];
    for (const ns of this.expected.labels.keys())
      if (!this.nsOk.has(ns) && out.length < limit)
        out.push(
          `labels of ${ns}: want ${this.expected.labels.get(ns)}, have ${labelSignature(this.namespaces.store.get(ns)?.metadata.labels)}`,
        );
    for (const ns of this.expected.hierarchy.keys())
      if (!this.hcOk.has(ns) && out.length < limit * 2)
        out.push(
          `hierarchy of ${ns}: want ${this.expected.hierarchy.get(ns)}, have ${hierarchySignature(this.hierarchies.store.get(`${ns}/hierarchy`))}`,
        );
    return out;
  }

  /** What the cluster holds now, for the namespaces expected: the "from" of a minimum-writes count. */
  observed(): Expected {
    const labels = new Map<string, string>();
    const hierarchy = new Map<string, string>();
    for (const ns of this.expected.labels.keys()) {
      labels.set(ns, labelSignature(this.namespaces.store.get(ns)?.metadata.labels));
      hierarchy.set(ns, hierarchySignature(this.hierarchies.store.get(`${ns}/hierarchy`)));
    }
    const copies = new Map<string, string>();
    for (const [key, from] of this.seen) if (this.mine(key)) copies.set(key, from);
    return { labels, hierarchy, copies };
  }

  /** A namespace's HNC labels as last seen (tree labels and the included-namespace label). */
  labelsOf(ns: string): Record<string, string> {
    return { ...(this.namespaces.store.get(ns)?.metadata.labels ?? {}) };
  }

  private nsMatches(ns: string): boolean {
    return labelSignature(this.namespaces.store.get(ns)?.metadata.labels) === this.expected.labels.get(ns);
  }

  private hcMatches(ns: string): boolean {
    return hierarchySignature(this.hierarchies.store.get(`${ns}/hierarchy`)) === this.expected.hierarchy.get(ns);
  }

  private onNamespace(ns: string, _obj: Slim | undefined): void {
    if (!this.expected.labels.has(ns)) return;
    this.lastEventAt = performance.now();
    if (this.nsMatches(ns)) this.nsOk.add(ns);
    else this.nsOk.delete(ns);
    this.check();
  }

  private onHierarchy(ns: string, _obj: Slim | undefined): void {
    if (!this.expected.hierarchy.has(ns)) return;
    this.lastEventAt = performance.now();
    if (this.hcMatches(ns)) this.hcOk.add(ns);
    else this.hcOk.delete(ns);
    this.check();
  }

  /** Copies in namespaces outside the expected set (another topology on a shared plane) are not ours. */
  private mine(key: string): boolean {
    const a = key.indexOf('/');
    return this.expected.labels.has(key.slice(a + 1, key.indexOf('/', a + 1)));
  }

  private onCopy(key: string, from: string | undefined, mark: string | undefined): void {
    if (this.copyArrivals.size) {
      const t = performance.now();
      for (const a of this.copyArrivals) a.see(key, from !== undefined, t, mark);
    }
    const before = this.seen.get(key);
    if (from === undefined) this.seen.delete(key);
    else this.seen.set(key, from);
    if (!this.mine(key)) return;
    this.lastEventAt = performance.now();
    if (before !== undefined) {
      if (this.expected.copies.get(key) === before) this.copyOk--;
      else this.copyBad--;
    }
    if (from !== undefined) {
      if (this.expected.copies.get(key) === from) this.copyOk++;
      else this.copyBad++;
    }
    this.check();
  }

  private check(): void {
    if (!this.waiters.length || !this.converged) return;
    const t = performance.now();
    const w = this.waiters;
    this.waiters = [];
    for (const done of w) done(t);
  }
}

export { INCLUDED_LABEL };
