// Hierarchical resource quotas, pure: which limits apply to a namespace (its own HRQs' and its
// ancestors'), how much a subtree uses, an HRQ's status, and whether a usage increase is admitted.
//
// Nothing is accumulated: usage per namespace is the `status.used` of its ResourceQuota singleton
// (as the API server's quota system counts it), and every answer is computed from the forest and
// those facts when asked, so a move, a deletion or a missed event can never leave a stale sum.
import type { ResourceList } from '../api/types.js';
import {
  addQuantities,
  compareQuantities,
  formatQuantity,
  parseQuantity,
  QuantityError,
  ZERO,
  type Quantity,
} from '../quantity/quantity.js';

/** The part of the forest the quotas need. */
export interface QuotaForest {
  /** Proper ancestors, root first, then the namespace itself. */
  ancestry(ns: string): string[];
  /** The namespace and all its descendants. */
  subtree(ns: string): string[];
  /** Changes whenever a parent changes (subtree sums kept by the model are then recomputed). */
  readonly generation?: number;
}

export type Quantities = ReadonlyMap<string, Quantity>;

export interface ParsedResourceList {
  quantities: Map<string, Quantity>;
  /** One line per value that is not a quantity (the resource is left out). */
  errors: string[];
}

/** Parses a ResourceList (text or numbers, such as an unquoted `cpu: 1.5`). */
export function parseResourceList(list: ResourceList | undefined): ParsedResourceList {
  const quantities = new Map<string, Quantity>();
  const errors: string[] = [];
  for (const [resource, value] of Object.entries(list ?? {})) {
    try {
      quantities.set(resource, parseQuantity(value));
    } catch (e) {
      if (!(e instanceof QuantityError)) throw e;
      errors.push(`${resource}: ${e.message}`);
    }
  }
  return { quantities, errors };
}

/** A ResourceList in canonical text, keys sorted. */
export function resourceListText(q: Quantities): Record<string, string> {
  const out: Record<string, string> = {};
  for (const r of [...q.keys()].sort()) out[r] = formatQuantity(q.get(r)!);
  return out;
}

/** Whether two sets of quantities hold the same resources with the same values (whatever the text). */
export function sameQuantities(a: Quantities, b: Quantities): boolean {
  return a.size === b.size && [...a].every(([r, q]) => b.has(r) && compareQuantities(q, b.get(r)!) === 0);
}

export interface HrqStatusText {
  hard: Record<string, string>;
  used: Record<string, string>;
  requestsSummary: string;
  limitsSummary: string;
}

/**
 * The printer-column texts: `<resource>: <used>/<hard>` for each limited resource, sorted, joined
 * with ", "; `limits.*` resources go to limitsSummary, all others to requestsSummary.
 */
export function summaries(hard: Quantities, used: Quantities): { requestsSummary: string; limitsSummary: string } {
  const requests: string[] = [];
  const limits: string[] = [];
  for (const r of [...hard.keys()].sort()) {
    const text = `${r}: ${formatQuantity(used.get(r) ?? ZERO)}/${formatQuantity(hard.get(r)!)}`;
    (r.startsWith('limits.') ? limits : requests).push(text);
  }
  return { requestsSummary: requests.join(', '), limitsSummary: limits.join(', ') };
}

export interface HrqKey {
  namespace: string;
  name: string;
}

export interface Exceeded {
  namespace: string;
  hrq: string;
  /** Per exceeded resource: the increase asked for, the subtree's usage before it, the limit. */
  resources: Array<{ resource: string; requested: Quantity; used: Quantity; limited: Quantity }>;
}

export type QuotaDecision = { allowed: true; increases: Quantities } | { allowed: false; exceeded: Exceeded; message: string };

const list = (items: Exceeded['resources'], pick: (r: Exceeded['resources'][number]) => Quantity) =>
  items.map((r) => `${r.resource}=${formatQuantity(pick(r))}`).join(',');

/** HNC's denial text, which the user sees when their Pod, Service or PVC is refused. */
export function exceededMessage(e: Exceeded): string {
  return (
    `exceeded hierarchical quota in namespace ${JSON.stringify(e.namespace)}: ${JSON.stringify(e.hrq)}, ` +
    `requested: ${list(e.resources, (r) => r.requested)}, used: ${list(e.resources, (r) => r.used)}, ` +
    `limited: ${list(e.resources, (r) => r.limited)}`
  );
}

/**
 * The HRQs and usages of a cluster, over a forest it does not own. Setters replace facts; every
 * answer is derived from the facts at the time of asking.
 */
export class QuotaModel {
  /** namespace → HRQ name → hard limits. */
  private readonly hrqs = new Map<string, Map<string, Quantities>>();
  /** namespace → usage of the namespace alone (its singleton's status.used). */
  private readonly usage = new Map<string, Quantities>();
  /** namespace → usage admitted but not yet seen in the singleton's status (see reserve()). */
  private readonly reserved = new Map<string, Quantities>();
  /**
   * namespace holding HRQs → the summed local usage of its subtree, in nano units: kept up to
   * date as usages change, so an admission costs O(depth), not O(subtree). Dropped whenever the
   * forest's generation moves (a namespace changed parent) and rebuilt on the next question.
   */
  private readonly totals = new Map<string, Map<string, bigint>>();
  private totalsGeneration: number | undefined;

  constructor(private readonly forest: QuotaForest) {}

  /** Records an HRQ's limits (undefined: the HRQ is gone). */
  setHrq(namespace: string, name: string, hard: Quantities | undefined): void {
    let inNs = this.hrqs.get(namespace);
    if (hard === undefined) {
      inNs?.delete(name);
      if (inNs?.size === 0) this.hrqs.delete(namespace);
      return;
    }
    if (!inNs) this.hrqs.set(namespace, (inNs = new Map()));
    inNs.set(name, hard);
  }

  hrqHard(namespace: string, name: string): Quantities | undefined {
    return this.hrqs.get(namespace)?.get(name);
  }

  /** HRQ names in a namespace, sorted. */
  hrqNames(namespace: string): string[] {
    return [...(this.hrqs.get(namespace)?.keys() ?? [])].sort();
  }

  /** Namespaces holding at least one HRQ. */
  namespacesWithHrqs(): string[] {
    return [...this.hrqs.keys()];
  }

  /** The HRQs limiting `ns`: those in it and in its ancestors, root first. */
  hrqsOver(ns: string): HrqKey[] {
    return this.forest.ancestry(ns).flatMap((a) => this.hrqNames(a).map((name) => ({ namespace: a, name })));
  }

  /** Records a namespace's own usage (undefined: none known, e.g. it has no singleton). */
  setUsage(ns: string, used: Quantities | undefined): void {
    this.changingLocalUsage(ns, () => {
      if (used === undefined || used.size === 0) this.usage.delete(ns);
      else this.usage.set(ns, used);
    });
  }

  /** A namespace's usage: what its singleton says, raised by what was admitted since. */
  localUsage(ns: string): Quantities {
    const observed = this.usage.get(ns) ?? new Map<string, Quantity>();
    const reserved = this.reserved.get(ns);
    if (!reserved) return observed;
    const out = new Map(observed);
    for (const [r, q] of reserved) if (compareQuantities(q, out.get(r) ?? ZERO) > 0) out.set(r, q);
    return out;
  }

  /**
   * Holds admitted usage until the singleton's status shows it: the next admission (in the same
   * instant) must count it, or two creations could each fit alone and overshoot together.
   * Only raises usage; decreases count once observed.
   */
  reserve(ns: string, used: Quantities): void {
    const out = new Map(this.reserved.get(ns) ?? []);
    for (const [r, q] of used) if (compareQuantities(q, out.get(r) ?? ZERO) > 0) out.set(r, q);
    this.changingLocalUsage(ns, () => this.reserved.set(ns, out));
  }

  /** Drops a namespace's reservation (its singleton's status has moved on, or it expired). */
  release(ns: string): void {
    if (this.reserved.has(ns)) this.changingLocalUsage(ns, () => this.reserved.delete(ns));
  }

  /** Applies `change` to ns's local usage, and its difference to the sums kept above ns. */
  private changingLocalUsage(ns: string, change: () => void): void {
    if (this.totals.size === 0 || this.totalsGeneration !== this.forest.generation) {
      change();
      return;
    }
    const above = this.forest.ancestry(ns).filter((a) => this.totals.has(a));
    if (above.length === 0) {
      change();
      return;
    }
    const before = this.localUsage(ns);
    change();
    const after = this.localUsage(ns);
    const delta = new Map<string, bigint>();
    for (const [r, q] of after) delta.set(r, q.nano);
    for (const [r, q] of before) delta.set(r, (delta.get(r) ?? 0n) - q.nano);
    for (const a of above) {
      const total = this.totals.get(a)!;
      for (const [r, d] of delta) if (d !== 0n) total.set(r, (total.get(r) ?? 0n) + d);
    }
  }

  /** The summed usage of ns's subtree per resource, in nano units (kept, see `totals`). */
  private subtreeTotal(ns: string): ReadonlyMap<string, bigint> {
    if (this.totalsGeneration !== this.forest.generation || this.forest.generation === undefined) {
      this.totals.clear();
      this.totalsGeneration = this.forest.generation;
    }
    let total = this.totals.get(ns);
    if (!total) {
      total = new Map();
      for (const [r, q] of this.subtreeUsage(ns)) total.set(r, q.nano);
      // Only a forest that says when it changes can have its sums kept.
      if (this.forest.generation !== undefined) this.totals.set(ns, total);
    }
    return total;
  }

  /** Whether some HRQ in `ns` or above it limits anything: HNC keeps a singleton in `ns` then. */
  limited(ns: string): boolean {
    return this.hrqsOver(ns).some(({ namespace, name }) => this.hrqHard(namespace, name)!.size > 0);
  }

  /** The strictest limit per resource over every HRQ in `ns` and its ancestors (keys sorted). */
  limits(ns: string): Quantities {
    const out = new Map<string, Quantity>();
    for (const { namespace, name } of this.hrqsOver(ns)) {
      for (const [r, q] of this.hrqHard(namespace, name)!) {
        const cur = out.get(r);
        if (cur === undefined || compareQuantities(q, cur) < 0) out.set(r, q);
      }
    }
    return new Map([...out].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  /** Summed usage of `ns` and all its descendants, for the given resources (all if omitted). */
  subtreeUsage(ns: string, resources?: Iterable<string>): Map<string, Quantity> {
    const wanted = resources ? new Set(resources) : undefined;
    const out = new Map<string, Quantity>();
    for (const n of this.forest.subtree(ns)) {
      for (const [r, q] of this.usage.has(n) || this.reserved.has(n) ? this.localUsage(n) : []) {
        if (wanted && !wanted.has(r)) continue;
        out.set(r, addQuantities(out.get(r) ?? ZERO, q));
      }
    }
    return out;
  }

  /** What an HRQ's status should say (undefined if the model does not hold it). */
  status(namespace: string, name: string): HrqStatusText | undefined {
    const hard = this.hrqHard(namespace, name);
    if (!hard) return undefined;
    const used = this.subtreeUsage(namespace, hard.keys());
    for (const r of hard.keys()) if (!used.has(r)) used.set(r, ZERO);
    return { hard: resourceListText(hard), used: resourceListText(used), ...summaries(hard, used) };
  }

  /**
   * Whether `ns` may go from its current usage to `proposed`. Only increases are checked, each
   * against every HRQ over `ns` that limits it: usage that was already over a limit is left
   * alone as long as it does not grow, and decreases always pass.
   */
  admit(ns: string, proposed: Quantities): QuotaDecision {
    const current = this.localUsage(ns);
    const increases = new Map<string, Quantity>();
    for (const [r, q] of proposed) {
      const delta = { nano: q.nano - (current.get(r)?.nano ?? 0n), format: q.format };
      if (delta.nano > 0n) increases.set(r, delta);
    }
    if (increases.size === 0) return { allowed: true, increases };
    for (const { namespace, name } of this.hrqsOver(ns)) {
      const hard = this.hrqHard(namespace, name)!;
      const limited = [...increases.keys()].filter((r) => hard.has(r)).sort();
      if (limited.length === 0) continue;
      const total = this.subtreeTotal(namespace);
      if (limited.every((r) => (total.get(r) ?? 0n) + increases.get(r)!.nano <= hard.get(r)!.nano)) continue;
      // Refused: the message shows usage as a fresh sum prints it.
      const used = this.subtreeUsage(namespace, limited);
      const over = limited
        .map((resource) => ({
          resource,
          requested: increases.get(resource)!,
          used: used.get(resource) ?? ZERO,
          limited: hard.get(resource)!,
        }))
        .filter((r) => r.used.nano + r.requested.nano > r.limited.nano);
      if (over.length > 0) {
        const exceeded = { namespace, hrq: name, resources: over };
        return { allowed: false, exceeded, message: exceededMessage(exceeded) };
      }
    }
    return { allowed: true, increases };
  }
}

/**
 * How long copies wait, at most, for the API server's quota system to count a singleton HNC made:
 * it normally does within a fraction of a second; a cluster whose quota controller does not run
 * never does, and propagation must not stop for that.
 */
export const UNCOUNTED_WAIT_MS = 10_000;

/** What decides whether copies may be written into a namespace yet (copiesWaitForSingleton). */
export interface SingletonFacts {
  /** The quota caches have listed (before that, nothing is known about HRQs). */
  synced: boolean;
  /** Some HRQ in the namespace or above it limits anything (QuotaModel.limited). */
  limited: boolean;
  /** The namespace is being deleted: no singleton is made there. */
  deleting: boolean;
  /** HNC's last attempt to write the namespace's singleton failed (other than a race it retries at once). */
  writeFailed: boolean;
  /**
   * The ResourceQuota named like the singleton, if the cache holds one: whether the quota system
   * has counted it (its status.used is set; always true for a user's, which HNC leaves alone),
   * and for how long copies have waited since it was seen uncounted.
   */
  singleton?: { counted: boolean; uncountedForMs: number };
}

/** Go, or wait: until woken by a change of the facts, or at most `recheckInMs`. */
export type SingletonWait = { wait: false } | { wait: true; recheckInMs?: number };

/**
 * Whether the copies of propagated objects must wait for the namespace's singleton. The API
 * server's quota admission sends a raise to HNC only once its own cache holds a ResourceQuota in
 * the namespace: a RoleBinding copied into a new subnamespace before that would let its users
 * create objects no HRQ counts (docs/hrq.md, "New namespaces"). HNC's cache holding the singleton
 * is not enough (the soak and test/integration/hrq.test.ts saw the API server's cache 20 ms
 * behind it); the quota system's first count of it, a round trip through the controller manager
 * later, is. Nothing waits where no HRQ applies, nor for an HRQ feature that does not work
 * (caches never listed, writes failing, a singleton never counted): propagation is worth more
 * than the quota, as with the quota webhook's own `Ignore`.
 */
export function copiesWaitForSingleton(f: SingletonFacts): SingletonWait {
  if (!f.synced || !f.limited || f.deleting || f.writeFailed) return { wait: false };
  if (!f.singleton) return { wait: true };
  if (f.singleton.counted) return { wait: false };
  const left = UNCOUNTED_WAIT_MS - f.singleton.uncountedForMs;
  return left > 0 ? { wait: true, recheckInMs: left } : { wait: false };
}
