// `kubectl hns config describe | set-resource | delete-type`.
import { API_VERSION, PROPAGATION_MODES, PropagationMode, Singleton, isPropagating, type HNCConfiguration } from '../../core/api/index.js';
import { missingAccessText, PROPAGATION_VERBS } from '../../core/config/access.js';
import { MANAGER_GROUPS, MANAGER_USER } from '../../kube/install.js';
import type { HncApi } from '../api.js';
import { defineCommand } from '../cli/command.js';
import { boolFlag, stringFlag } from '../cli/flag-spec.js';
import { CliError, ServerError } from '../errors.js';
import type { Io } from '../io.js';
import type { ConfigView } from '../model.js';
import { renderConfig } from '../render/config-text.js';

export async function runConfigDescribe(api: HncApi, io: Io): Promise<void> {
  const config = await api.getHncConfiguration();
  const view: ConfigView = {
    resources: (config?.status?.resources ?? []).map((r) => ({
      group: r.group,
      version: r.version,
      resource: r.resource,
      ...(r.mode ? { mode: r.mode } : {}),
    })),
    conditions: (config?.status?.conditions ?? []).map((c) => ({ type: c.type, reason: c.reason, message: c.message })),
  };
  io.out(renderConfig(view));
}

/** `--mode` in any letter case ("propagate", "allowpropagate") to the API's spelling. */
export function parseMode(mode: string | undefined): PropagationMode {
  const choices = `${PropagationMode.Propagate}, ${PropagationMode.Remove}, ${PropagationMode.Ignore} or ${PropagationMode.AllowPropagate}`;
  if (!mode) throw new CliError(`Error: --mode is required: one of ${choices}`);
  const found = PROPAGATION_MODES.find((m) => m.toLowerCase() === mode.toLowerCase());
  if (!found) throw new CliError(`Error: invalid --mode "${mode}": must be one of ${choices}`);
  return found;
}

export interface SetResourceFlags {
  group?: string;
  mode?: string;
  force?: boolean;
}

export function ignoreToPropagateWarning(resource: string): string {
  return [
    `Switching directly from 'Ignore' to 'Propagate' mode or 'AllowPropagate' mode could cause existing ${JSON.stringify(resource)} objects in child namespaces to be overwritten by objects from ancestor namespaces.`,
    "If you are sure you want to proceed with this operation, use the '--force' flag.",
    "If you are not sure and would like to see what source objects would be overwritten, please switch to 'Remove' first. To see how to enable propagation safely, refer to https://github.com/kubernetes-sigs/hierarchical-namespaces/blob/master/docs/user-guide/how-to.md#admin-types",
  ].join('\n');
}

async function writeConfig(
  api: HncApi,
  existing: HNCConfiguration | undefined,
  resources: NonNullable<HNCConfiguration['spec']>['resources'],
): Promise<void> {
  if (existing) {
    await api.replaceHncConfiguration({ ...existing, spec: { ...existing.spec, resources } });
  } else {
    await api.createHncConfiguration({
      apiVersion: API_VERSION,
      kind: 'HNCConfiguration',
      metadata: { name: Singleton.config },
      spec: { resources },
    });
  }
}

/**
 * Success prints nothing, as in HNC, unless HNC's manager may not access the kind (hnc-ts's
 * manager is least-privilege): then a warning names what it lacks and the exact fix.
 */
export async function runConfigSetResource(api: HncApi, io: Io, resource: string, flags: SetResourceFlags): Promise<void> {
  const mode = parseMode(flags.mode);
  const group = flags.group ?? '';
  await retryOnConflict(() => setResource(api, resource, group, mode, flags));
  if (mode !== PropagationMode.Ignore) await warnOfMissingAccess(api, io, group, resource);
}

/**
 * Reruns a read-modify-write of `config` when the write lost a race (409 from a stale
 * resourceVersion: HNC writes the object's status as namespaces change), not when a webhook
 * refused it.
 */
async function retryOnConflict(write: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (err) {
      const lostRace = err instanceof ServerError && err.code === 409 && !err.message.includes('admission webhook');
      if (!lostRace || attempt >= 5) throw err;
    }
  }
}

async function setResource(api: HncApi, resource: string, group: string, mode: PropagationMode, flags: SetResourceFlags): Promise<void> {
  const config = await api.getHncConfiguration();
  const resources = [...(config?.spec?.resources ?? [])];
  const i = resources.findIndex((r) => (r.group ?? '') === group && r.resource === resource);
  const current = i >= 0 ? resources[i] : undefined;
  if (current) {
    if (current.mode === PropagationMode.Ignore && isPropagating(mode) && !flags.force)
      throw new CliError(ignoreToPropagateWarning(resource));
    resources[i] = { ...current, mode };
  } else {
    resources.push({ ...(group ? { group } : {}), resource, mode });
  }
  await writeConfig(api, config, resources);
}

/** Checks the manager's own access to the kind (SubjectAccessReviews for its identity). */
async function warnOfMissingAccess(api: HncApi, io: Io, group: string, resource: string): Promise<void> {
  if (!api.accessReview) return;
  const answers = await Promise.all(
    PROPAGATION_VERBS.map((verb) => api.accessReview!(MANAGER_USER, MANAGER_GROUPS, verb, group, resource)),
  );
  if (answers.some((a) => a === undefined)) {
    io.err(`Note: could not check whether HNC's manager (${MANAGER_USER}) may access ${resource}; see kubectl hns config describe\n`);
    return;
  }
  const verbs = PROPAGATION_VERBS.filter((_, i) => answers[i] === false);
  if (verbs.length) io.err(`Warning: ${missingAccessText({ group, resource, verbs })}\n`);
}

export interface DeleteTypeFlags {
  group?: string;
  resource?: string;
}

export async function runConfigDeleteType(api: HncApi, io: Io, flags: DeleteTypeFlags): Promise<void> {
  const group = flags.group ?? '';
  const resource = flags.resource ?? '';
  const config = await api.getHncConfiguration();
  const resources = config?.spec?.resources ?? [];
  const kept = resources.filter((r) => !((r.group ?? '') === group && r.resource === resource));
  if (!config || kept.length === resources.length) {
    io.out(`Nothing to delete; No configuration for type with group: ${group}, resource: ${resource}\n`);
    return;
  }
  await writeConfig(api, config, kept);
  io.out(`Configuration for type with group: ${group}, resource: ${resource} is deleted\n`);
}

const configDescribe = defineCommand({
  name: 'describe',
  summary: 'Displays information about the HNC configuration',
  args: { min: 0, max: 0, names: '' },
  async run({ io, connect }) {
    await runConfigDescribe((await connect()).api, io);
  },
});

const configSetResource = defineCommand({
  name: 'set-resource',
  summary: 'Sets the HNC configuration of a specific resource',
  usage: 'RESOURCE [--group GROUP] [--force] --mode <Propagate|Remove|Ignore|AllowPropagate>',
  examples: [
    '  # Set configuration of a core type',
    '  kubectl hns config set-resource secrets --mode Ignore',
    '',
    '  # Set configuration of a custom type',
    '  kubectl hns config set-resource crontabs --group stable.example.com --mode Propagate',
  ].join('\n'),
  args: { min: 1, max: 1, names: 'RESOURCE' },
  flags: [
    { name: 'group', kind: 'string', value: 'string', description: 'The group of the resource; may be omitted for core resources' },
    {
      name: 'mode',
      kind: 'string',
      value: 'string',
      description: 'The synchronization mode: one of Propagate, Remove, Ignore or AllowPropagate',
    },
    {
      name: 'force',
      short: 'f',
      kind: 'bool',
      description: 'Allow the synchronization mode to be changed directly from Ignore to Propagate despite the dangers of doing so',
    },
  ],
  async run({ args, flags, io, connect }) {
    const opts: SetResourceFlags = {
      group: stringFlag(flags, 'group') ?? '',
      mode: stringFlag(flags, 'mode'),
      force: boolFlag(flags, 'force'),
    };
    parseMode(opts.mode);
    await runConfigSetResource((await connect()).api, io, args[0] ?? '', opts);
  },
});

const configDeleteType = defineCommand({
  name: 'delete-type',
  summary: 'Delete the HNC configuration of a specific type',
  usage: '--group X --resource Y',
  examples: [
    '  # Delete configuration of a core type',
    '  kubectl hns config delete-type --resource secrets',
    '',
    '  # Delete configuration of a custom type',
    '  kubectl hns config delete-type --group stable.example.com --resource crontabs',
  ].join('\n'),
  args: { min: 0, max: 0, names: '' },
  flags: [
    { name: 'group', kind: 'string', value: 'string', description: 'group of the resource' },
    { name: 'resource', kind: 'string', value: 'string', description: 'resource to be configured' },
  ],
  async run({ flags, io, connect }) {
    const opts: DeleteTypeFlags = { group: stringFlag(flags, 'group') ?? '', resource: stringFlag(flags, 'resource') ?? '' };
    await runConfigDeleteType((await connect()).api, io, opts);
  },
});

export const configCommand = defineCommand({
  name: 'config',
  summary: 'Manipulates the HNC configuration',
  subcommands: [configDescribe, configSetResource, configDeleteType],
});
