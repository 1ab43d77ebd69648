// `kubectl hns config describe | set-resource | delete-type`.
import { API_VERSION, PROPAGATION_MODES, PropagationMode, Singleton, type HNCConfiguration } from '../../core/api/index.js';
import type { HncApi } from '../api.js';
import { CliError } from '../errors.js';
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

/** Success prints nothing, as in HNC. */
export async function runConfigSetResource(api: HncApi, _io: Io, resource: string, flags: SetResourceFlags): Promise<void> {
  const mode = parseMode(flags.mode);
  const group = flags.group ?? '';
  const config = await api.getHncConfiguration();
  const resources = [...(config?.spec?.resources ?? [])];
  const i = resources.findIndex((r) => (r.group ?? '') === group && r.resource === resource);
  const current = i >= 0 ? resources[i] : undefined;
  if (current) {
    const toPropagating = mode === PropagationMode.Propagate || mode === PropagationMode.AllowPropagate;
    if (current.mode === PropagationMode.Ignore && toPropagating && !flags.force) throw new CliError(ignoreToPropagateWarning(resource));
    resources[i] = { ...current, mode };
  } else {
    resources.push({ ...(group ? { group } : {}), resource, mode });
  }
  await writeConfig(api, config, resources);
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
