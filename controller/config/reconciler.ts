// The HNCConfiguration reconciler (docs/behaviour.md §6): keeps the singleton `config`, resolves its types
// through discovery, runs one propagator per type (started, re-moded and stopped without a
// restart), and reports status. Status is written only when it changes.
import { API_VERSION, GROUP, Kind, Plural, Singleton } from '../../core/api/constants.js';
import { hncConfigurationPath } from '../../core/api/paths.js';
import { isPropagating, type HNCConfiguration, type HNCConfigurationStatus } from '../../core/api/types.js';
import {
  configStatus,
  namespaceConditionSummary,
  resolveConfig,
  type ConfiguredType,
  type Resolve,
  type TypeCounts,
} from '../../core/config/plan.js';
import type { Hierarchy, NamespaceCondition } from '../../core/hierarchy/hierarchy.js';
import { jsonEqual } from '../../core/util/equal.js';
import type { PropagationOptions } from '../../core/propagation/decide.js';
import { isAlreadyExists, isNotFound, type KubeClient } from '../../kube/client.js';
import { Discovery } from '../../kube/discovery.js';
import type { CrdObject, HierarchyCache } from '../../kube/hierarchy-cache.js';
import type { Logger } from '../../kube/log.js';
import { Reflector } from '../../kube/watch/reflector.js';
import type { ReadonlyStore } from '../../kube/watch/store.js';
import { WorkQueue, type ReconcileResult } from '../../kube/watch/workqueue.js';
import { WriteExpectations } from '../../kube/expectations.js';
import type { Events, Writes } from '../../kube/writes.js';
import type { Metrics } from '../../kube/metrics.js';
import type { SingletonWait } from '../../core/hrq/hrq.js';
import { TypePropagator, typeKey } from '../objects/propagator.js';
import { missingAccessCondition, PROPAGATION_VERBS, type MissingAccess } from '../../core/config/access.js';

const KEY = Singleton.config;
/** Coalesces status updates (counts, namespace condition summaries) into one write. */
const STATUS_DELAY_MS = 1000;
/**
 * Counts are written once they have not changed for this long: longer than the moment between a
 * propagation's last write and the next change (a trial's delete comes within milliseconds), short
 * enough to keep the write within STATUS_DELAY_MS of the propagation's end.
 */
const COUNTS_STILL_MS = 250;
/**
 * Changed counts are written after this long even if propagation never settles (sources of a
 * propagated kind created and deleted more often than COUNTS_STILL_MS, all day): late, not never.
 */
const COUNTS_MAX_WAIT_MS = 10_000;
/** Types that did not resolve (a CRD not installed yet) are retried this often. */
const RESYNC_MS = 30_000;
/** While the manager may not access a configured kind, its access is checked again this often. */
const ACCESS_RECHECK_MS = 1000;
/** While a kind is denied, all its verbs are checked again this often (one of them every second). */
const ACCESS_FULL_RECHECK_MS = 30_000;
/** A kind the manager was found to have access to is checked again after this long. */
const ACCESS_TTL_MS = 60_000;
/**
 * The NamespaceCondition summary reads every namespace's conditions. It is kept while the model
 * stands still, and while the model changes (a cold start relabels every namespace) it is
 * computed again only after this many times its last cost, so that it never takes more than a
 * small share of the thread: at 20,000 namespaces, computed every second, it took a fifth of
 * HNC's CPU during a propagation (docs/benchmarks.md). A summary that costs less than
 * SUMMARY_CHEAP_MS is always current.
 */
const SUMMARY_COST_FACTOR = 20;
const SUMMARY_CHEAP_MS = 5;

export interface ConfigDeps {
  client: KubeClient;
  cache: HierarchyCache;
  writer: Writes;
  events: Events;
  log: Logger;
  workers: number;
  options?: PropagationOptions;
  /** Only the leader writes; other replicas keep the type caches their webhooks read. */
  isLeader: () => boolean;
  metrics?: Metrics;
  /** Whether copies must stay out of a namespace for now (controller/hrq/gate.ts); replan() brings it back. */
  holdCopies?: (ns: string) => SingletonWait;
}

/** The types the configuration resolves to, as the controller runs them. */
export interface PropagatedTypes {
  /** Starts, re-modes and stops the types' propagators to match (`rid`: the reconcile's, for its log lines). */
  sync(types: ConfiguredType[], rid?: string): Promise<void>;
  counts(type: ConfiguredType): TypeCounts;
  /** True when no propagator has work queued or running. */
  idle(): boolean;
  /** Milliseconds until the counts will have been still for COUNTS_STILL_MS (0: settled). */
  countsSettleInMs(): number;
}

export interface ConfigReconcilerDeps {
  /** The HNCConfiguration cache (the singleton, if it exists). */
  configs: ReadonlyStore<HNCConfiguration>;
  crds: ReadonlyStore<CrdObject>;
  hierarchy: Hierarchy;
  writes: Writes;
  log: Logger;
  isLeader: () => boolean;
  /** Discovery answers for the groups the configuration names. */
  resolve: (config: HNCConfiguration) => Promise<Resolve>;
  types: PropagatedTypes;
  /** The kinds HNC's manager may not fully access (none if not given). */
  missingAccess?: (types: readonly ConfiguredType[], rid?: string) => Promise<MissingAccess[]>;
  /** Conditions from outside the controller (an admission object an admin deleted: webhooks/kept-objects.ts). */
  extraConditions?: () => readonly NamespaceCondition[];
  expectations?: WriteExpectations;
  /** Milliseconds from a monotonic clock (performance.now; a test's own clock). */
  now?: () => number;
}

/**
 * One pass over the singleton: creates it if missing (the leader only), resolves and syncs its
 * types, and writes its status when it changed. Built from a store, the model and the writes, so
 * a unit test runs it from memory (reconciler.test.ts).
 */
export class ConfigReconciler {
  private readonly expectations: WriteExpectations;
  private summary?: { version: number; computedAt: number; costMs: number; conditions: NamespaceCondition[] };
  /** Since when (deps.now) the status has differed from the written one in its counts only. */
  private countsDifferSince?: number;

  constructor(private readonly deps: ConfigReconcilerDeps) {
    this.expectations = deps.expectations ?? new WriteExpectations();
  }

  private readonly clock = (): number => (this.deps.now ?? performance.now.bind(performance))();

  /** `rid` names this reconcile on its log lines (kube/log-context.ts). */
  async reconcile(rid?: string): Promise<ReconcileResult> {
    let config = this.deps.configs.get(KEY);
    const leader = this.deps.isLeader();
    if (!config && !leader) return;
    if (!config) {
      if (this.deps.crds.get(`${Plural.HNCConfiguration}.${GROUP}`)?.metadata.deletionTimestamp) return;
      try {
        config = await this.deps.writes.create<HNCConfiguration>(hncConfigurationPath(), {
          apiVersion: API_VERSION,
          kind: Kind.HNCConfiguration,
          metadata: { name: KEY },
          spec: {},
        });
        this.deps.log.info({ rid, name: KEY }, 'created the HNCConfiguration');
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
        return; // the watch brings it
      }
    }
    const resolved = resolveConfig(config, await this.deps.resolve(config));
    // A kind the manager may not access gets no propagator (it would only retry 403s) but a
    // condition with the fix, and is checked again every second so that a grant takes effect at once.
    const missing = (await this.deps.missingAccess?.(resolved.types, rid)) ?? [];
    const lacks = (t: ConfiguredType) => missing.some((m) => m.group === t.group && m.resource === t.resource);
    await this.deps.types.sync(
      resolved.types.filter((t) => !lacks(t)),
      rid,
    );
    const accessCondition = missingAccessCondition(missing);
    if (accessCondition) resolved.conditions.push(accessCondition);
    resolved.conditions.push(...(this.deps.extraConditions?.() ?? []));
    let recheck: ReconcileResult = missing.length ? { requeueAfter: ACCESS_RECHECK_MS } : undefined;
    const summary = this.namespaceSummary();
    // A summary kept although the model moved on is computed again when its time comes.
    if (summary.staleForMs !== undefined) recheck = earliest(recheck, { requeueAfter: summary.staleForMs });
    const status = configStatus(
      resolved,
      (t) => this.deps.types.counts(t),
      summary.conditions,
      config.status,
      new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    );
    if (!leader || jsonEqual(status, config.status ?? {})) {
      this.countsDifferSince = undefined;
      return recheck;
    }
    // Counts move on every copy written: while propagation is under way, wait for it to settle
    // rather than write the status again and again (and after a restart, rather than write
    // counts that are still being recomputed), but never longer than COUNTS_MAX_WAIT_MS.
    const countsOnly = jsonEqual(withoutCounts(status), withoutCounts(config.status ?? {}));
    const now = countsOnly ? this.clock() : 0;
    const since = countsOnly ? (this.countsDifferSince ??= now) : (this.countsDifferSince = undefined);
    if (since !== undefined && now - since < COUNTS_MAX_WAIT_MS) {
      const left = since + COUNTS_MAX_WAIT_MS - now;
      if (!this.deps.types.idle()) return earliest(recheck, { requeueAfter: Math.min(STATUS_DELAY_MS, left) });
      // Idle is not settled: between a propagation and the next change (a source created, then
      // deleted) the queues may be empty for a moment; counts written then would be written back.
      // Usually the count's last change is long past (this runs STATUS_DELAY_MS after its first).
      const settle = this.deps.types.countsSettleInMs();
      if (settle > 0) return earliest(recheck, { requeueAfter: Math.min(settle, left) });
    }
    if (this.expectations.stale(KEY, config.metadata.resourceVersion)) return recheck;
    try {
      await this.deps.writes.replace(hncConfigurationPath(KEY), { ...config, status });
      this.expectations.wrote(KEY, config.metadata.resourceVersion);
      this.countsDifferSince = undefined;
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    return recheck;
  }

  /**
   * The NamespaceCondition summary, kept while the model stands still; while it changes, computed
   * again only once SUMMARY_COST_FACTOR times the last computation's cost has passed
   * (`staleForMs`: how long the kept one still stands).
   */
  private namespaceSummary(): { conditions: NamespaceCondition[]; staleForMs?: number } {
    const h = this.deps.hierarchy;
    const kept = this.summary;
    const clock = this.clock;
    const now = clock();
    if (kept && kept.version === h.version) return { conditions: kept.conditions };
    if (kept && kept.costMs >= SUMMARY_CHEAP_MS) {
      const due = kept.computedAt + SUMMARY_COST_FACTOR * kept.costMs;
      if (now < due) return { conditions: kept.conditions, staleForMs: Math.ceil(due - now) };
    }
    const version = h.version;
    const conditions = namespaceConditionSummary(h);
    this.summary = { version, computedAt: now, costMs: clock() - now, conditions };
    return { conditions };
  }
}

/** The sooner of two requeues. */
function earliest(a: ReconcileResult, b: { requeueAfter: number }): { requeueAfter: number } {
  return a?.requeueAfter !== undefined && a.requeueAfter < b.requeueAfter ? { requeueAfter: a.requeueAfter } : b;
}

export class ConfigController {
  private readonly reflector: Reflector<HNCConfiguration>;
  private readonly queue = new WorkQueue({ name: 'hncconfiguration', itemBackoff: { initialMs: 100, maxMs: 30_000 } });
  private readonly discovery: Discovery;
  readonly propagators = new Map<string, TypePropagator>();
  /** When a propagator's count of copies in place last changed (performance.now()). */
  private lastCountChange = -Infinity;
  private readonly typeListeners = new Set<(types: ConfiguredType[]) => void>();
  private readonly sourceListeners = new Set<(change: SourceChange) => void>();
  private lastTypes: ConfiguredType[] | undefined;
  private timer?: ReturnType<typeof setInterval>;
  /** Keeps the singleton and its status; the types it resolves are synced by this controller. */
  private readonly reconciler: ConfigReconciler;
  private readonly unsubscribe: () => void;
  private readonly unsubscribeCrds: () => void;
  /** When each kind was last found accessible (its propagator may run). */
  private readonly accessible = new Map<string, number>();
  /** The verbs each kind lacked at its last full check. */
  private readonly lacking = new Map<string, { verbs: string[]; at: number }>();
  private stopping = false;
  /** Set by the webhooks when an admin deleted an admission object they keep (admissionDeleted). */
  private admissionCondition?: NamespaceCondition;

  constructor(private readonly deps: ConfigDeps) {
    this.discovery = new Discovery(deps.client);
    this.reflector = new Reflector<HNCConfiguration>({
      client: deps.client,
      path: hncConfigurationPath(),
      name: 'hncconfigurations',
      logger: deps.log,
    });
    this.reflector.addHandler(() => this.queue.add(KEY));
    this.reconciler = new ConfigReconciler({
      configs: this.reflector.store,
      crds: deps.cache.crds.store,
      hierarchy: deps.cache.hierarchy,
      writes: deps.writer,
      log: deps.log,
      isLeader: deps.isLeader,
      resolve: (config) =>
        this.discovery.resolver(['rbac.authorization.k8s.io', ...(config.spec?.resources ?? []).map((r) => r.group ?? '')]),
      types: {
        sync: (types, rid) => this.syncPropagators(types, rid),
        counts: (t) => {
          const p = this.propagators.get(typeKey(t));
          return { propagated: p?.numPropagated ?? 0, sources: p?.numSources ?? 0 };
        },
        idle: () => [...this.propagators.values()].every((p) => p.isIdle()),
        countsSettleInMs: () => Math.max(0, Math.ceil(this.lastCountChange + COUNTS_STILL_MS - performance.now())),
      },
      missingAccess: (types, rid) => this.missingAccess(types, rid),
      extraConditions: () => (this.admissionCondition ? [this.admissionCondition] : []),
    });
    // A CRD that appears (or changes) may be a type the configuration names: resolve again soon.
    this.unsubscribeCrds = deps.cache.crds.addHandler(() => this.queue.addAfter(KEY, STATUS_DELAY_MS));
    this.unsubscribe = deps.cache.onAffected((a) => {
      this.replan(a.namespaces);
      if (a.namespaces.size) this.queue.addAfter(KEY, STATUS_DELAY_MS);
    });
  }

  /** Every type plans these namespaces again. */
  replan(namespaces: Iterable<string>): void {
    for (const p of this.propagators.values()) p.namespacesChanged(namespaces);
  }

  /** Called with the configured types whenever they change (the objects webhook's rules). */
  onTypes(listener: (types: ConfiguredType[]) => void): void {
    this.typeListeners.add(listener);
    if (this.lastTypes) listener(this.lastTypes);
  }

  /**
   * Called for every source that appears or goes, per type, and with `reset` when a type's
   * propagator stops (its sources are no longer known): the admission worker's index of source
   * names for the objects webhook's conflict check. A new listener first gets every known source.
   */
  onSources(listener: (change: SourceChange) => void): () => void {
    this.sourceListeners.add(listener);
    for (const p of this.propagators.values())
      for (const s of p.sourceNames()) listener({ group: p.type.group, resource: p.type.resource, ...s, present: true });
    return () => this.sourceListeners.delete(listener);
  }

  async start(): Promise<void> {
    this.reflector.start();
    await this.reflector.synced;
    this.queue.run((_key, rid) => this.reconciler.reconcile(rid), 1);
    this.queue.add(KEY);
    this.timer = setInterval(() => this.queue.add(KEY), RESYNC_MS);
    this.timer.unref();
  }

  /**
   * An admin deleted admission objects the webhooks keep (they stay deleted until a restart): a
   * BadConfiguration condition on `config` while this run lasts, and a Warning Event on it.
   */
  admissionDeleted(condition: NamespaceCondition): void {
    this.admissionCondition = condition;
    this.queue.add(KEY);
    const config = this.reflector.store.get(KEY);
    if (config && this.deps.isLeader())
      void this.deps.events.warn(
        { apiVersion: API_VERSION, kind: Kind.HNCConfiguration, name: KEY, uid: config.metadata.uid },
        condition.reason,
        condition.message,
      );
  }

  resyncAll(): void {
    this.queue.add(KEY);
    for (const p of this.propagators.values()) p.resyncAll();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.unsubscribe();
    this.unsubscribeCrds();
    if (this.timer) clearInterval(this.timer);
    // Propagators first: one still starting (its list refused, say with a 403, and retried) holds
    // the reconcile that started it, and so the queue's shutdown; stopping it ends that wait.
    const stopPropagators = () => Promise.all([...this.propagators.values()].map((p) => p.stop()));
    await stopPropagators();
    await this.queue.shutdown();
    await stopPropagators();
    await this.reflector.stop();
  }

  /** The propagation context of a handled type, for the objects webhook. */
  context(group: string, resource: string) {
    return this.propagators.get(typeKey({ group, resource }))?.context();
  }

  /** Sources and copies per type, for metrics. */
  objectCounts(): Array<{ type: string; sources: number; copies: number }> {
    return [...this.propagators].map(([type, p]) => ({ type, sources: p.numSources, copies: p.numPropagated }));
  }

  /** The kinds propagated now (Propagate or AllowPropagate). */
  propagatingKinds(): Array<{ group: string; kind: string }> {
    return [...this.propagators.values()]
      .filter((p) => isPropagating(p.currentMode))
      .map((p) => ({ group: p.type.group, kind: p.type.kind }));
  }

  isIdle(): boolean {
    const s = this.queue.stats();
    return s.depth + s.processing + s.delayed === 0 && [...this.propagators.values()].every((p) => p.isIdle());
  }

  /** The kinds the manager may not fully use, by SelfSubjectAccessReviews (found access is kept a minute). */
  private async missingAccess(types: readonly ConfiguredType[], rid?: string): Promise<MissingAccess[]> {
    const now = Date.now();
    const missing: MissingAccess[] = [];
    await Promise.all(
      types.map(async (t) => {
        const key = typeKey(t);
        if ((this.accessible.get(key) ?? -Infinity) > now - ACCESS_TTL_MS) return;
        // While a kind stays denied, one review a second (of a verb it lacked) tells whether a
        // grant came; only then (or every ACCESS_FULL_RECHECK_MS) are all its verbs checked again.
        const lacked = this.lacking.get(key);
        if (lacked && lacked.at > now - ACCESS_FULL_RECHECK_MS && !(await this.selfCan(lacked.verbs[0]!, t, rid))) {
          missing.push({ group: t.group, resource: t.resource, verbs: lacked.verbs });
          return;
        }
        const allowed = await Promise.all(PROPAGATION_VERBS.map((verb) => this.selfCan(verb, t, rid)));
        const verbs = PROPAGATION_VERBS.filter((_, i) => !allowed[i]);
        if (verbs.length) {
          missing.push({ group: t.group, resource: t.resource, verbs });
          this.lacking.set(key, { verbs, at: now });
        } else {
          this.accessible.set(key, now);
          this.lacking.delete(key);
        }
      }),
    );
    return missing.sort((a, b) => (typeKey(a) < typeKey(b) ? -1 : 1));
  }

  private async selfCan(verb: string, t: ConfiguredType, rid?: string): Promise<boolean> {
    try {
      const review = await this.deps.client.create<{ status?: { allowed?: boolean } }>(
        '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
        {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: { resourceAttributes: { verb, group: t.group, version: t.version, resource: t.resource } },
        },
      );
      return review.status?.allowed === true;
    } catch (err) {
      // A check that cannot be made blocks nothing: the propagator reports what really fails.
      this.deps.log.warn({ rid, type: typeKey(t), verb, err: (err as Error).message }, 'could not check the manager access');
      return true;
    }
  }

  private async syncPropagators(types: ConfiguredType[], rid?: string): Promise<void> {
    if (this.stopping) return;
    const wanted = new Map(types.map((t) => [typeKey(t), t]));
    for (const [key, p] of this.propagators) {
      const t = wanted.get(key);
      // A type that left the configuration is no longer handled; its copies stay (as HNC's Ignore).
      if (!t || t.version !== p.type.version) {
        this.propagators.delete(key);
        for (const l of this.sourceListeners) l({ group: p.type.group, resource: p.type.resource, reset: true });
        await p.stop();
        this.deps.log.info({ rid, type: key }, 'stopped propagating type');
      } else p.setMode(t.mode);
    }
    for (const [key, t] of wanted) {
      if (this.propagators.has(key) || this.stopping) continue;
      const p = new TypePropagator(t, {
        ...this.deps,
        log: this.deps.log.child({ type: key }),
        onCounts: () => {
          this.lastCountChange = performance.now();
          this.queue.addAfter(KEY, STATUS_DELAY_MS);
        },
        onSource: (namespace, name, present) => {
          for (const l of this.sourceListeners) l({ group: t.group, resource: t.resource, namespace, name, present });
        },
      });
      this.propagators.set(key, p);
      await p.start();
      this.deps.log.info({ rid, type: key, mode: t.mode }, 'propagating type');
    }
    if (!this.lastTypes || !jsonEqual(types, this.lastTypes)) {
      this.lastTypes = types;
      for (const l of this.typeListeners) l(types);
    }
  }
}

/** A source of a type that appeared or went; or, with `reset`, every source of the type forgotten. */
export type SourceChange =
  | { group: string; resource: string; namespace: string; name: string; present: boolean; reset?: undefined }
  | { group: string; resource: string; reset: true };

/** A status with the object counts left out, to tell a counts-only change from a real one. */
function withoutCounts(status: HNCConfigurationStatus): HNCConfigurationStatus {
  return { ...status, resources: status.resources?.map(({ numPropagatedObjects: _p, numSourceObjects: _s, ...r }) => r) };
}
