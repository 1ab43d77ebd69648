// HNCConfiguration (docs/behaviour.md §6, §2.3): which types to handle in which mode, the conditions about
// the spec, and the status to report. Pure: discovery is a function the caller supplies.
import { ClusterReason, ConditionType, ENFORCED_TYPES, NAMESPACE_CONDITION_SUMMARY, PropagationMode } from '../api/constants.js';
import {
  effectiveMode,
  isPropagating,
  type Condition,
  type HNCConfiguration,
  type HNCConfigurationStatus,
  type ResourceStatus,
} from '../api/types.js';
import type { Hierarchy, NamespaceCondition } from '../hierarchy/hierarchy.js';
import { namespaceConditions } from '../hierarchy/plan.js';

export interface TypeInfo {
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
}

export type Resolve = (group: string, resource: string) => TypeInfo | { error: string };

export interface ConfiguredType extends TypeInfo {
  mode: PropagationMode;
}

export interface ResolvedConfig {
  types: ConfiguredType[];
  conditions: NamespaceCondition[];
}

const gr = (group: string, resource: string) => (group ? `${resource}.${group}` : resource);

/** The types HNC handles: the enforced RBAC types first, then each valid spec entry (first wins). */
export function resolveConfig(config: HNCConfiguration | undefined, resolve: Resolve): ResolvedConfig {
  const types: ConfiguredType[] = [];
  const conditions: NamespaceCondition[] = [];
  const seen = new Set<string>();
  const bad = (reason: string, message: string) => conditions.push({ type: ConditionType.BadConfiguration, reason, message });
  for (const e of ENFORCED_TYPES) {
    const info = resolve(e.group, e.resource);
    if ('error' in info) bad(ClusterReason.ResourceNotFound, info.error);
    else types.push({ ...info, mode: PropagationMode.Propagate });
    seen.add(gr(e.group, e.resource));
  }
  for (const spec of config?.spec?.resources ?? []) {
    const group = spec.group ?? '';
    const key = gr(group, spec.resource);
    if (ENFORCED_TYPES.some((e) => e.group === group && e.resource === spec.resource)) {
      bad(
        ClusterReason.MultipleConfigurationsForType,
        `The sync mode for "${key}" is enforced by HNC as "Propagate" and cannot be overridden`,
      );
      continue;
    }
    if (seen.has(key)) {
      const first = types.find((t) => gr(t.group, t.resource) === key);
      bad(
        ClusterReason.MultipleConfigurationsForType,
        `Multiple sync mode settings found for "${key}"; all but one ("${first?.mode ?? ''}") will be ignored`,
      );
      continue;
    }
    seen.add(key);
    const info = resolve(group, spec.resource);
    if ('error' in info) {
      bad(ClusterReason.ResourceNotFound, info.error);
      continue;
    }
    if (!info.namespaced) {
      bad(ClusterReason.ResourceNotNamespaced, `resource "${key}" is not namespaced`);
      continue;
    }
    types.push({ ...info, mode: effectiveMode(spec.mode) });
  }
  return { types, conditions };
}

/** The NamespaceCondition summaries over every namespace (docs/behaviour.md §2.3), from HNC's fixed table. */
export function namespaceConditionSummary(h: Hierarchy): NamespaceCondition[] {
  const byReason = new Map<string, string[]>();
  for (const ns of h.namespaceNames()) {
    if (!h.isManaged(ns)) continue;
    for (const c of namespaceConditions(h, ns)) {
      const key = `${c.type}/${c.reason}`;
      const names = byReason.get(key);
      if (names) names.push(ns);
      else byReason.set(key, [ns]);
    }
  }
  const out: NamespaceCondition[] = [];
  for (const [type, reasons] of Object.entries(NAMESPACE_CONDITION_SUMMARY)) {
    for (const reason of reasons as readonly string[]) {
      const names = (byReason.get(`${type}/${reason}`) ?? []).sort();
      if (!names.length) continue;
      const quoted = names
        .slice(0, 3)
        .map((n) => `"${n}"`)
        .join(', ');
      const message =
        names.length === 1
          ? `Namespaces ${quoted} is affected by "${reason}"`
          : `${names.length} namespaces ${quoted}${names.length > 3 ? ' ...' : ''} are affected by "${reason}"`;
      out.push({ type: ConditionType.NamespaceCondition, reason: type, message });
    }
  }
  return out;
}

export interface TypeCounts {
  propagated: number;
  sources: number;
}

/**
 * The status to write. Conditions are keyed by type (one each, the last wins, as HNC), and keep
 * their lastTransitionTime when unchanged so that a steady state is never rewritten.
 */
export function configStatus(
  resolved: ResolvedConfig,
  counts: (t: ConfiguredType) => TypeCounts,
  summary: NamespaceCondition[],
  previous: HNCConfigurationStatus | undefined,
  now: string,
): HNCConfigurationStatus {
  const resources: ResourceStatus[] = resolved.types
    .map((t) => {
      const c = counts(t);
      const r: ResourceStatus = { group: t.group, version: t.version, resource: t.resource, mode: t.mode };
      if (t.mode !== PropagationMode.Ignore) r.numPropagatedObjects = c.propagated;
      if (isPropagating(t.mode)) r.numSourceObjects = c.sources;
      return r;
    })
    .sort((a, b) => (a.group === b.group ? (a.resource < b.resource ? -1 : 1) : a.group < b.group ? -1 : 1));
  const byType = new Map<string, NamespaceCondition>();
  for (const c of [...resolved.conditions, ...summary]) byType.set(c.type, c);
  const conditions: Condition[] = [...byType.values()].map((c) => {
    const same = previous?.conditions?.find((p) => p.type === c.type && p.reason === c.reason && p.message === c.message);
    return { type: c.type, status: 'True', reason: c.reason, message: c.message, lastTransitionTime: same?.lastTransitionTime ?? now };
  });
  return { resources, ...(conditions.length ? { conditions } : {}) };
}
