// What the manager must be allowed to do with a propagated kind, and the condition and fix to show
// when it is not (hnc-ts keeps its manager least-privilege, so a kind named in HNCConfiguration
// may be one it cannot read or write; see docs/hnc-differences.md).
import { ConditionType } from '../api/constants.js';
import type { NamespaceCondition } from '../hierarchy/hierarchy.js';

/** The verbs a propagator uses, cluster-wide: it watches every object and writes copies. */
export const PROPAGATION_VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] as const;

/** The reason of the OutOfSync condition naming kinds the manager may not access (new in hnc-ts). */
export const MISSING_PERMISSION = 'MissingPermission';

/** The optional kustomization that grants the manager Secrets and ConfigMaps (HNC's quickstart kinds). */
export const SECRETS_CONFIGMAPS_GRANT = 'deploy/optional/propagate-secrets-configmaps';

export interface MissingAccess {
  readonly group: string;
  readonly resource: string;
  readonly verbs: readonly string[];
}

const groupResource = (group: string, resource: string) => (group ? `${resource}.${group}` : resource);

/** The exact commands that give the manager what it lacks: an aggregated ClusterRole of its own. */
export function accessFix(m: MissingAccess): string {
  if (m.group === '' && (m.resource === 'secrets' || m.resource === 'configmaps')) return `kubectl apply -k ${SECRETS_CONFIGMAPS_GRANT}`;
  const role = `hnc-manager-${groupResource(m.group, m.resource)}`.replace(/[^a-z0-9.-]/g, '-').slice(0, 253);
  return (
    `kubectl create clusterrole ${role} --verb=${PROPAGATION_VERBS.join(',')} --resource=${groupResource(m.group, m.resource)}` +
    ` && kubectl label clusterrole ${role} hnc.x-k8s.io/aggregate-to-manager=true`
  );
}

/** One line per kind: what the manager may not do, and the fix. */
export function missingAccessText(m: MissingAccess): string {
  return `HNC's manager may not ${m.verbs.join(', ')} ${groupResource(m.group, m.resource)} cluster-wide, so they are not propagated; to fix: ${accessFix(m)}`;
}

/** The HNCConfiguration condition for the kinds the manager cannot access, if any. */
export function missingAccessCondition(missing: readonly MissingAccess[]): NamespaceCondition | undefined {
  if (!missing.length) return undefined;
  return {
    type: ConditionType.OutOfSync,
    reason: MISSING_PERMISSION,
    message: missing.map(missingAccessText).join('; '),
  };
}
