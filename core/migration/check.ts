// `kubectl hns migrate --check`, pure: from what was read of a cluster running HNC v1.1.0, the
// findings of docs/migrating-from-hnc.md that apply to it, each with the commands it needs.
import { ENFORCED_TYPES, PropagationMode } from '../api/constants.js';
import { accessFix, PROPAGATION_VERBS } from '../config/access.js';
import { DEFAULT_COPY_POLICY, type CopyPolicy } from '../propagation/copy.js';
import { carryOver, flagFindings, hrqEnabled, shellQuote } from './flags.js';
import type {
  ConfiguredKind,
  Finding,
  Grant,
  KindCopies,
  ManagerDeployment,
  MigrationInput,
  MigrationReport,
  PolicyRule,
} from './model.js';

/** The kinds hnc-ts's default RBAC lets its manager propagate (deploy/rbac/manager.yaml; a test compares them). */
export const DEFAULT_GRANTED_KINDS: readonly { group: string; resource: string }[] = [
  ...ENFORCED_TYPES.map((t) => ({ group: t.group, resource: t.resource })),
  { group: 'networking.k8s.io', resource: 'networkpolicies' },
  { group: '', resource: 'resourcequotas' },
  { group: '', resource: 'limitranges' },
];

export const SECRETS_CONFIGMAPS_GRANT = 'deploy/optional/propagate-secrets-configmaps';
export const ANY_KIND_GRANT = 'deploy/optional/propagate-any-kind';
/** hnc-ts's Deployment: its selector and identity (deploy/manager/deployment.yaml). */
export const HNC_TS_SELECTOR = { 'app.kubernetes.io/name': 'hnc-ts', 'control-plane': 'controller-manager' } as const;
export const HNC_TS_SERVICE_ACCOUNT = 'hnc-controller-manager';

const groupResource = (k: { group: string; resource: string }) => (k.group ? `${k.resource}.${k.group}` : k.resource);
const matches = (list: readonly string[] | undefined, v: string) => (list ?? []).some((x) => x === '*' || x === v);

/** Whether a rule allows `verb` on every object of the kind (a rule limited to names does not). */
function allows(rule: PolicyRule, kind: { group: string; resource: string }, verb: string): boolean {
  return (
    !rule.resourceNames?.length &&
    matches(rule.apiGroups, kind.group) &&
    matches(rule.resources, kind.resource) &&
    matches(rule.verbs, verb)
  );
}

/** The grants that together give every verb propagation needs on the kind, or undefined if they do not. */
export function grantedBy(grants: readonly Grant[], kind: { group: string; resource: string }): string[] | undefined {
  const names = new Set<string>();
  for (const verb of PROPAGATION_VERBS) {
    const g = grants.find((x) => x.rules.some((r) => allows(r, kind, verb)));
    if (!g) return undefined;
    names.add(g.name);
  }
  return [...names];
}

const isDefault = (k: { group: string; resource: string }) =>
  DEFAULT_GRANTED_KINDS.some((d) => d.group === k.group && d.resource === k.resource);

/** Helm's extraPropagatedResources for these kinds, one entry per API group. */
function helmGrant(kinds: readonly ConfiguredKind[]): string {
  const groups = [...new Set(kinds.map((k) => k.group))].map((group) => ({
    apiGroup: group,
    resources: kinds.filter((k) => k.group === group).map((k) => k.resource),
  }));
  return `--set-json ${shellQuote(`extraPropagatedResources=${JSON.stringify(groups)}`)}`;
}

/** The kinds named in HNCConfiguration: those hnc-ts's manager may not propagate until granted. */
export function propagationFindings(kinds: readonly ConfiguredKind[] | null, grants: readonly Grant[] | undefined): Finding[] {
  const active = (kinds ?? []).filter((k) => k.mode !== PropagationMode.Ignore);
  const builtIn = ['roles', 'rolebindings', ...active.filter(isDefault).map(groupResource)];
  const granted = grants ? active.filter((k) => !isDefault(k) && grantedBy(grants, k)) : [];
  const missing = active.filter((k) => !isDefault(k) && !granted.includes(k));
  const out: Finding[] = [
    { area: 'propagation', severity: 'ok', subject: builtIn.join(' '), message: `${builtIn.join(', ')}: in hnc-ts's default RBAC` },
    ...granted.map((k): Finding => ({
      area: 'propagation',
      severity: 'ok',
      subject: groupResource(k),
      message: `${groupResource(k)} (${k.mode}): granted to hnc-ts's manager by ClusterRole ${grantedBy(grants ?? [], k)!.join(', ')}`,
    })),
  ];
  if (missing.length) out.push(missingKinds(missing, grants === undefined));
  return out;
}

function missingKinds(missing: readonly ConfiguredKind[], unchecked: boolean): Finding {
  const names = missing.map((k) => `${groupResource(k)} (${k.mode})`).join(', ');
  const fixes = [...new Set(missing.map((k) => accessFix({ ...k, verbs: PROPAGATION_VERBS })))];
  const them = missing.length === 1 ? 'it' : 'them';
  return {
    area: 'propagation',
    severity: 'action',
    subject: missing.map(groupResource).join(' '),
    message:
      `${names}: stops propagating until hnc-ts's manager is granted ${them} (HNC's was cluster-admin; existing copies are kept)` +
      `${unchecked ? '; the grants already made could not be read' : ''}. To grant every kind at once instead, close to HNC's ` +
      `cluster-admin (docs/deploy.md#propagating-any-kind): kubectl apply -k ${ANY_KIND_GRANT} (Helm: --set propagateAnyKind=true)`,
    commands: fixes,
    helm: [helmGrant(missing)],
  };
}

/** HNC's Deployment: it goes before hnc-ts's is applied, and its flags say what hnc-ts must be given. */
export function deploymentFindings(d: ManagerDeployment | null): Finding[] {
  if (!d)
    return [
      {
        area: 'deployment',
        severity: 'ok',
        message: "no Deployment of HNC's manager found: no manager flags to carry over",
      },
    ];
  const isHncTs = Object.entries(HNC_TS_SELECTOR).every(([k, v]) => d.selector[k] === v);
  const where = `${d.namespace}/${d.name}`;
  if (isHncTs) return [{ area: 'deployment', severity: 'ok', subject: where, message: `${where} is hnc-ts's already` }];
  const identity = d.serviceAccountName ?? 'default';
  return [
    {
      area: 'deployment',
      severity: 'change',
      subject: where,
      message:
        `HNC's Deployment ${where}: its selector differs from hnc-ts's and cannot be changed in place, so the swap deletes it ` +
        "first, after HNC's webhook configurations (left behind, they refuse install.yaml's own Namespace)",
      commands: [
        'kubectl delete validatingwebhookconfiguration hnc-validating-webhook-configuration',
        'kubectl delete mutatingwebhookconfiguration hnc-mutating-webhook-configuration',
        `kubectl -n ${d.namespace} delete deployment ${d.name} --cascade=foreground --wait`,
      ],
    },
    ...(identity === HNC_TS_SERVICE_ACCOUNT
      ? []
      : [
          {
            area: 'deployment',
            severity: 'change',
            subject: 'serviceAccountName',
            message:
              `the manager's identity changes from system:serviceaccount:${d.namespace}:${identity} to ` +
              `system:serviceaccount:${d.namespace}:${HNC_TS_SERVICE_ACCOUNT} (audit logs, managedFields)`,
          } satisfies Finding,
        ]),
    ...flagFindings(d.args),
  ];
}

/** HRQs are enforced by hnc-ts only in its HRQ variant. */
export function hrqFindings(count: number | undefined, deployment: ManagerDeployment | null | undefined): Finding[] {
  const flag = deployment ? hrqEnabled(deployment.args) : false;
  if (!flag && !count) {
    if (count === undefined) return [];
    return [{ area: 'hrq', severity: 'ok', message: 'no HierarchicalResourceQuotas: the default install will do' }];
  }
  const why = [
    ...(flag ? ['HNC ran with --enable-hrq'] : []),
    ...(count ? [`${count} HierarchicalResourceQuota${count === 1 ? ' exists' : 's exist'}`] : []),
  ];
  return [
    {
      area: 'hrq',
      severity: 'action',
      subject: '--enable-hrq',
      message: `${why.join(' and ')}: install hnc-ts's HRQ variant (--enable-hrq), or nothing enforces or updates them (docs/hrq.md)`,
      commands: ['kubectl apply --server-side --force-conflicts -f dist/install-hrq.yaml   # instead of dist/install.yaml'],
      helm: ['--set hrq.enabled=true'],
      ...(count !== undefined ? { counts: { HierarchicalResourceQuota: count } } : {}),
    },
  ];
}

/** The keys of a copy hnc-ts does not copy (so it rewrites the copy once, without them). */
function droppedKeys(copy: KindCopies['copies'][number], policy: CopyPolicy): string[] {
  return [
    ...Object.keys(copy.labels ?? {}).filter((k) => policy.labels.has(k)),
    ...Object.keys(copy.annotations ?? {}).filter((k) => policy.annotations.has(k)),
  ];
}

/** Copies carrying deployment tools' keys, per kind: each is rewritten once (docs/hnc-differences.md). */
export function copyFindings(kinds: readonly KindCopies[], policy: CopyPolicy = DEFAULT_COPY_POLICY): Finding[] {
  const counts: Record<string, number> = {};
  const keys = new Set<string>();
  for (const { kind, copies } of kinds)
    for (const c of copies) {
      const dropped = droppedKeys(c, policy);
      if (!dropped.length) continue;
      counts[kind] = (counts[kind] ?? 0) + 1;
      for (const k of dropped) keys.add(k);
    }
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  if (!total) return kinds.length ? [{ area: 'copies', severity: 'ok', message: 'no copy carries a key hnc-ts does not copy' }] : [];
  const perKind = Object.entries(counts)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, n]) => `${n} ${k}`)
    .join(', ');
  return [
    {
      area: 'copies',
      severity: 'change',
      message:
        `${perKind} cop${total === 1 ? 'y carries' : 'ies carry'} ${[...keys].sort().join(', ')}, which hnc-ts never copies: ` +
        `it rewrites each once, without ${keys.size === 1 ? 'it' : 'them'} (docs/hnc-differences.md, GitOps-friendly copies)`,
      counts,
    },
  ];
}

/** Every finding, the flags to carry over, and the notes of what could not be read. */
export function checkMigration(input: MigrationInput, notes: readonly string[] = []): MigrationReport {
  const findings = [
    ...(input.kinds !== undefined ? propagationFindings(input.kinds, input.grants) : []),
    ...(input.deployment !== undefined ? deploymentFindings(input.deployment) : []),
    ...hrqFindings(input.hrqCount, input.deployment),
    ...copyFindings(input.copies),
  ];
  const flags = carryOver(findings);
  const otherHelm = findings.filter((f) => f.severity === 'action' && f.area !== 'flags').flatMap((f) => f.helm ?? []);
  return { findings, args: flags.args, helm: [...otherHelm, ...flags.helm], notes: [...notes] };
}

/** Exit codes: 0 nothing to do first; 2 an action first; 3 nothing found, but some reads failed. */
export const ExitCode = { Ready: 0, ActionNeeded: 2, Incomplete: 3 } as const;

export function exitCode(report: MigrationReport): number {
  if (report.findings.some((f) => f.severity === 'action')) return ExitCode.ActionNeeded;
  return report.notes.length ? ExitCode.Incomplete : ExitCode.Ready;
}
