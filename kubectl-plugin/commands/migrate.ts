// `kubectl hns migrate --check [-o json|yaml]` (beyond HNC): a read-only preflight before swapping
// HNC v1.1.0 for hnc-ts. It reads HNCConfiguration, the ClusterRoles granted to hnc-ts's manager,
// HNC's manager Deployment, the HRQs and the copies' metadata; core/migration decides. A read the
// caller may not make becomes a note, and the check says it is incomplete.
import { stringify } from 'yaml';
import { ENFORCED_TYPES, GROUP, Label, Plural, VERSION, type HNCConfiguration } from '../../core/api/index.js';
import {
  checkMigration,
  exitCode,
  type ConfiguredKind,
  type Grant,
  type KindCopies,
  type ManagerDeployment,
  type MigrationInput,
  type MigrationReport,
} from '../../core/migration/index.js';
import type { AnyObject, HncApi, ResourceType } from '../api.js';
import { defineCommand } from '../cli/command.js';
import { boolFlag, stringFlag } from '../cli/flag-spec.js';
import { CliError, isForbidden, isNotFound } from '../errors.js';
import type { Io } from '../io.js';
import { renderMigrationCheck } from '../render/migrate-text.js';
import { CLUSTERROLES } from './access.js';

export const MIGRATE_OUTPUTS = ['json', 'yaml'] as const;
export type MigrateOutput = (typeof MIGRATE_OUTPUTS)[number];

const DEPLOYMENTS: ResourceType = { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment' };
const HRQS: ResourceType = {
  group: GROUP,
  version: VERSION,
  resource: Plural.HierarchicalResourceQuota,
  kind: 'HierarchicalResourceQuota',
};
export const MANAGER_DEPLOYMENT = 'hnc-controller-manager';
const AGGREGATE_TO_MANAGER = `${GROUP}/aggregate-to-manager`;

const groupResource = (t: { group: string; resource: string }) => (t.group ? `${t.resource}.${t.group}` : t.resource);

/** Runs one read: its value (`missing` for a 404), or undefined when refused (noted). */
async function tolerant<T, M>(notes: string[], what: string, read: () => Promise<T>, missing: M): Promise<{ value: T | M } | undefined> {
  try {
    return { value: await read() };
  } catch (err) {
    if (isNotFound(err)) return { value: missing };
    if (!isForbidden(err)) throw err;
    notes.push(`no permission to ${what}: not checked`);
    return undefined;
  }
}

function configuredKinds(config: HNCConfiguration | undefined): ConfiguredKind[] | null {
  if (!config) return null;
  return (config.spec?.resources ?? []).map((r) => ({ group: r.group ?? '', resource: r.resource, mode: r.mode ?? 'Propagate' }));
}

async function readGrants(api: HncApi): Promise<Grant[]> {
  const list = await api.listAll(CLUSTERROLES, undefined, { labelSelector: AGGREGATE_TO_MANAGER });
  return list.items
    .filter((r) => r.metadata.labels?.[AGGREGATE_TO_MANAGER] === 'true')
    .map((r) => ({ name: r.metadata.name ?? '', rules: (r.rules as Grant['rules'] | undefined) ?? [] }));
}

interface DeploymentObject {
  spec?: {
    selector?: { matchLabels?: Record<string, string> };
    template?: { spec?: { serviceAccountName?: string; containers?: { name?: string; command?: string[]; args?: string[] }[] } };
  };
}

/** HNC's Deployment as the check needs it: its manager container's flags (HNC's is named "manager"). */
export function managerDeployment(namespace: string, obj: AnyObject): ManagerDeployment {
  const spec = (obj as DeploymentObject).spec;
  const containers = spec?.template?.spec?.containers ?? [];
  const c = containers.find((x) => x.name === 'manager') ?? containers[0];
  const sa = spec?.template?.spec?.serviceAccountName;
  return {
    namespace,
    name: obj.metadata.name ?? MANAGER_DEPLOYMENT,
    selector: spec?.selector?.matchLabels ?? {},
    ...(sa ? { serviceAccountName: sa } : {}),
    args: [...(c?.command ?? []).slice(1), ...(c?.args ?? [])],
  };
}

/** The propagated types whose copies to read: the RBAC types and every kind HNCConfiguration names. */
async function copyTypes(api: HncApi, config: HNCConfiguration | undefined): Promise<ResourceType[]> {
  const rbac = ENFORCED_TYPES.map((t) => ({ group: t.group, version: 'v1', resource: t.resource, kind: t.kind }));
  const kinds = (config?.spec?.resources ?? []).map((r) => ({ group: r.group ?? '', resource: r.resource }));
  const status = config?.status?.resources ?? [];
  let preferred: Map<string, string> | undefined;
  const out: ResourceType[] = [...rbac];
  for (const k of kinds) {
    let version = status.find((s) => (s.group ?? '') === k.group && s.resource === k.resource)?.version;
    if (!version && k.group === '') version = 'v1';
    if (!version) {
      preferred ??= new Map((await api.listApiGroups().catch(() => [])).map((g) => [g.group, g.version]));
      version = preferred.get(k.group);
    }
    if (version) out.push({ ...k, version });
  }
  return out;
}

/** The kind's name for messages, from discovery; the resource's if discovery does not say. */
async function kindName(api: HncApi, t: ResourceType): Promise<string> {
  if (t.kind) return t.kind;
  const found = (await api.listApiResources(t.group, t.version).catch(() => [])).find((r) => r.name === t.resource);
  return found?.kind ?? groupResource(t);
}

/** The copies' labels and annotations, as the server's Table rows carry their metadata (no Secret data read). */
async function readCopies(api: HncApi, notes: string[], t: ResourceType): Promise<KindCopies | undefined> {
  const what = `list ${groupResource(t)} cluster-wide (their copies)`;
  const table = (await tolerant(notes, what, () => api.listTable(t, undefined, { labelSelector: Label.inheritedFrom }), null))?.value;
  if (!table) return undefined;
  const copies = (table.rows ?? []).map((r) => ({ labels: r.object?.metadata?.labels, annotations: r.object?.metadata?.annotations }));
  return { kind: await kindName(api, t), copies };
}

export async function loadMigrationInput(api: HncApi, hncNamespace: string): Promise<{ input: MigrationInput; notes: string[] }> {
  const notes: string[] = [];
  const config = await tolerant(notes, 'read HNCConfiguration config', () => api.getHncConfiguration(), undefined);
  const where = `${hncNamespace}/${MANAGER_DEPLOYMENT}`;
  const [grants, deployment, hrqs, types] = await Promise.all([
    tolerant(notes, "list ClusterRoles (the grants to hnc-ts's manager)", () => readGrants(api), []),
    tolerant(notes, `read Deployment ${where}`, () => api.getObject(hncNamespace, DEPLOYMENTS, MANAGER_DEPLOYMENT), undefined),
    // No HRQ CRD (404): no HRQs.
    tolerant(notes, 'list HierarchicalResourceQuotas', () => api.listAll(HRQS, undefined), { items: [] }),
    copyTypes(api, config?.value),
  ]);
  const copies = await Promise.all(types.map((t) => readCopies(api, notes, t)));
  const input: MigrationInput = {
    kinds: config && configuredKinds(config.value),
    grants: grants?.value,
    deployment: deployment && (deployment.value ? managerDeployment(hncNamespace, deployment.value) : null),
    hrqCount: hrqs?.value.items.length,
    copies: copies.filter((c): c is KindCopies => c !== undefined),
  };
  return { input, notes };
}

export function renderMigration(report: MigrationReport, output: MigrateOutput | undefined): string {
  const doc = { actionNeeded: exitCode(report) === 2, exitCode: exitCode(report), ...report };
  if (output === 'json') return `${JSON.stringify(doc, null, 2)}\n`;
  if (output === 'yaml') return stringify(doc);
  return renderMigrationCheck(report);
}

/** Prints the check; resolves to its exit code (0 ready, 2 action needed, 3 incomplete). */
export async function runMigrateCheck(api: HncApi, io: Io, opts: { namespace: string; output?: MigrateOutput }): Promise<number> {
  const { input, notes } = await loadMigrationInput(api, opts.namespace);
  const report = checkMigration(input, notes);
  io.out(renderMigration(report, opts.output));
  if (!opts.output) for (const note of notes) io.err(`Note: ${note}\n`);
  return exitCode(report);
}

export const migrateCommand = defineCommand({
  name: 'migrate',
  summary: 'Checks a cluster running HNC v1.1.0 before swapping in hnc-ts',
  description:
    'With --check, reads the cluster (nothing is written) and says what swapping HNC v1.1.0 for hnc-ts will change: kinds that stop\n' +
    "propagating until hnc-ts's least-privilege manager is granted them, HNC's manager flags hnc-ts's install must be given, HRQs,\n" +
    "copies hnc-ts rewrites once, HNC's Deployment; each with the commands to run. Exit code 0: nothing to do first; 2: an action is\n" +
    "needed before the swap; 3: nothing found, but some reads were refused; 1: an error. -n names HNC's namespace (default hnc-system).",
  usage: '--check [-o json|yaml]',
  examples: [
    '  # What the swap will change, and what to do first',
    '  kubectl hns migrate --check',
    '',
    '  # The same for a script: exit code 2 when something must be done first',
    '  kubectl hns migrate --check -o json',
  ].join('\n'),
  args: { min: 0, max: 0, names: '' },
  flags: [
    { name: 'check', kind: 'bool', description: 'Check the cluster before the swap (read-only; required)' },
    {
      name: 'output',
      short: 'o',
      kind: 'string',
      value: 'format',
      description: 'Output format instead of text: json or yaml',
      choices: MIGRATE_OUTPUTS,
    },
  ],
  async run({ flags, global, io, connect }) {
    if (!boolFlag(flags, 'check'))
      throw new CliError(
        "Error: migrate only checks a cluster before the swap: run it with --check (the swap's steps: docs/migrating-from-hnc.md)",
      );
    const output = stringFlag(flags, 'output') as MigrateOutput | undefined;
    const session = await connect();
    return runMigrateCheck(session.api, io, { namespace: global.namespace ?? 'hnc-system', ...(output ? { output } : {}) });
  },
});
