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
import type { Hierarchy } from '../../core/hierarchy/hierarchy.js';
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
import { TypePropagator, typeKey } from '../objects/propagator.js';

const KEY = Singleton.config;
/** Coalesces status updates (counts, namespace condition summaries) into one write. */
const STATUS_DELAY_MS = 1000;
/** Types that did not resolve (a CRD not installed yet) are retried this often. */
const RESYNC_MS = 30_000;

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
}

/** The types the configuration resolves to, as the controller runs them. */
export interface PropagatedTypes {
  /** Starts, re-modes and stops the types' propagators to match. */
  sync(types: ConfiguredType[]): Promise<void>;
  counts(type: ConfiguredType): TypeCounts;
  /** True when no propagator has work queued or running. */
  idle(): boolean;
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
  expectations?: WriteExpectations;
}

/**
 * One pass over the singleton: creates it if missing (the leader only), resolves and syncs its
 * types, and writes its status when it changed. Built from a store, the model and the writes, so
 * a unit test runs it from memory (reconciler.test.ts).
 */
export class ConfigReconciler {
  private readonly expectations: WriteExpectations;

  constructor(private readonly deps: ConfigReconcilerDeps) {
    this.expectations = deps.expectations ?? new WriteExpectations();
  }

  async reconcile(): Promise<ReconcileResult> {
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
        this.deps.log.info({ name: KEY }, 'created the HNCConfiguration');
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
        return; // the watch brings it
      }
    }
    const resolved = resolveConfig(config, await this.deps.resolve(config));
    await this.deps.types.sync(resolved.types);
    const status = configStatus(
      resolved,
      (t) => this.deps.types.counts(t),
      namespaceConditionSummary(this.deps.hierarchy),
      config.status,
      new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    );
    if (!leader || jsonEqual(status, config.status ?? {})) return;
    // Counts move on every copy written: while propagation is under way, wait for it to settle
    // rather than write the status again and again (and after a restart, rather than write
    // counts that are still being recomputed).
    const countsOnly = jsonEqual(withoutCounts(status), withoutCounts(config.status ?? {}));
    if (countsOnly && !this.deps.types.idle()) return { requeueAfter: STATUS_DELAY_MS };
    if (this.expectations.stale(KEY, config.metadata.resourceVersion)) return;
    try {
      await this.deps.writes.replace(hncConfigurationPath(KEY), { ...config, status });
      this.expectations.wrote(KEY, config.metadata.resourceVersion);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}

export class ConfigController {
  private readonly reflector: Reflector<HNCConfiguration>;
  private readonly queue = new WorkQueue({ name: 'hncconfiguration', itemBackoff: { initialMs: 100, maxMs: 30_000 } });
  private readonly discovery: Discovery;
  readonly propagators = new Map<string, TypePropagator>();
  private readonly typeListeners = new Set<(types: ConfiguredType[]) => void>();
  private lastTypes: ConfiguredType[] | undefined;
  private timer?: ReturnType<typeof setInterval>;
  /** Keeps the singleton and its status; the types it resolves are synced by this controller. */
  private readonly reconciler: ConfigReconciler;
  private readonly unsubscribe: () => void;
  private readonly unsubscribeCrds: () => void;

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
        sync: (types) => this.syncPropagators(types),
        counts: (t) => {
          const p = this.propagators.get(typeKey(t));
          return { propagated: p?.numPropagated ?? 0, sources: p?.numSources ?? 0 };
        },
        idle: () => [...this.propagators.values()].every((p) => p.isIdle()),
      },
    });
    // A CRD that appears (or changes) may be a type the configuration names: resolve again soon.
    this.unsubscribeCrds = deps.cache.crds.addHandler(() => this.queue.addAfter(KEY, STATUS_DELAY_MS));
    this.unsubscribe = deps.cache.onAffected((a) => {
      for (const p of this.propagators.values()) p.namespacesChanged(a.namespaces);
      if (a.namespaces.size) this.queue.addAfter(KEY, STATUS_DELAY_MS);
    });
  }

  /** Called with the configured types whenever they change (the objects webhook's rules). */
  onTypes(listener: (types: ConfiguredType[]) => void): void {
    this.typeListeners.add(listener);
    if (this.lastTypes) listener(this.lastTypes);
  }

  async start(): Promise<void> {
    this.reflector.start();
    await this.reflector.synced;
    this.queue.run(() => this.reconciler.reconcile(), 1);
    this.queue.add(KEY);
    this.timer = setInterval(() => this.queue.add(KEY), RESYNC_MS);
    this.timer.unref();
  }

  resyncAll(): void {
    this.queue.add(KEY);
    for (const p of this.propagators.values()) p.resyncAll();
  }

  async stop(): Promise<void> {
    this.unsubscribe();
    this.unsubscribeCrds();
    if (this.timer) clearInterval(this.timer);
    await this.queue.shutdown();
    await Promise.all([...this.propagators.values()].map((p) => p.stop()));
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

  private async syncPropagators(types: ConfiguredType[]): Promise<void> {
    const wanted = new Map(types.map((t) => [typeKey(t), t]));
    for (const [key, p] of this.propagators) {
      const t = wanted.get(key);
      // A type that left the configuration is no longer handled; its copies stay (as HNC's Ignore).
      if (!t || t.version !== p.type.version) {
        this.propagators.delete(key);
        await p.stop();
        this.deps.log.info({ type: key }, 'stopped propagating type');
      } else p.setMode(t.mode);
    }
    for (const [key, t] of wanted) {
      if (this.propagators.has(key)) continue;
      const p = new TypePropagator(t, {
        ...this.deps,
        log: this.deps.log.child({ type: key }),
        onCounts: () => this.queue.addAfter(KEY, STATUS_DELAY_MS),
      });
      this.propagators.set(key, p);
      await p.start();
      this.deps.log.info({ type: key, mode: t.mode }, 'propagating type');
    }
    if (!this.lastTypes || !jsonEqual(types, this.lastTypes)) {
      this.lastTypes = types;
      for (const l of this.typeListeners) l(types);
    }
  }
}

/** A status with the object counts left out, to tell a counts-only change from a real one. */
function withoutCounts(status: HNCConfigurationStatus): HNCConfigurationStatus {
  return { ...status, resources: status.resources?.map(({ numPropagatedObjects: _p, numSourceObjects: _s, ...r }) => r) };
}
