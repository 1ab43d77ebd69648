// The types HNC handles, as `describe` needs them: HNCConfiguration `config`'s status lists every
// type with its mode (the RBAC types included); the RBAC types are always there, even when the
// configuration cannot be read. Also: turning what a user types (`role`, `Role`, `roles`,
// `roles.rbac.authorization.k8s.io`, a short name) into one of those types.
import { ENFORCED_TYPES, PropagationMode, type ResourceStatus } from '../../core/api/index.js';
import type { ApiResource, HncApi, ResourceType } from '../api.js';
import { CliError, isForbidden, isNotFound } from '../errors.js';
import { typeName } from '../render/names.js';

/** A type HNCConfiguration's status lists, with its mode ("Ignore" when the status says none). */
export interface HandledType extends ResourceType {
  mode: string;
  /** Names that also denote the type (singular, short names), lower case, from discovery. */
  aliases?: string[];
  /** The copies the controller counts in place (the status's numPropagatedObjects), if it says. */
  numPropagatedObjects?: number;
}

export interface HandledTypes {
  types: HandledType[];
  /** Set when the configuration could not be read, so only the RBAC types are known. */
  note?: string;
}

const ENFORCED: readonly HandledType[] = ENFORCED_TYPES.map((t) => ({
  group: t.group,
  version: 'v1',
  resource: t.resource,
  kind: t.kind,
  mode: t.mode,
}));

const sameType = (a: { group: string; resource: string }, b: { group: string; resource: string }): boolean =>
  a.group === b.group && a.resource === b.resource;

/** The types of the status, the RBAC types first (with their kinds), each once. */
export function handledTypes(status: readonly ResourceStatus[]): HandledType[] {
  const out: HandledType[] = ENFORCED.map((t) => ({ ...t }));
  for (const r of status) {
    const type: HandledType = {
      group: r.group ?? '',
      version: r.version,
      resource: r.resource,
      mode: r.mode || PropagationMode.Ignore,
      ...(r.numPropagatedObjects !== undefined && { numPropagatedObjects: r.numPropagatedObjects }),
    };
    const known = out.find((t) => sameType(t, type));
    if (known)
      Object.assign(known, {
        version: type.version || known.version,
        mode: type.mode,
        ...(type.numPropagatedObjects !== undefined && { numPropagatedObjects: type.numPropagatedObjects }),
      });
    else out.push(type);
  }
  return out;
}

export async function loadHandledTypes(api: HncApi): Promise<HandledTypes> {
  try {
    const config = await api.getHncConfiguration();
    return { types: handledTypes(config?.status?.resources ?? []) };
  } catch (err) {
    if (!isForbidden(err)) throw err;
    return {
      types: handledTypes([]),
      note: `no permission to read HNCConfiguration config, so only ${ENFORCED.map((t) => t.resource).join(' and ')} were looked at`,
    };
  }
}

function matches(t: HandledType, wanted: string): boolean {
  const names = [t.resource, ...(t.kind ? [t.kind.toLowerCase()] : []), ...(t.aliases ?? [])];
  return names.some((n) => wanted === n || (t.group !== '' && wanted === `${n}.${t.group}`));
}

/** The type a user means, asking discovery for singular and short names only when needed. */
export async function resolveType(api: HncApi, handled: HandledTypes, typed: string): Promise<HandledType> {
  const wanted = typed.toLowerCase();
  const direct = handled.types.find((t) => matches(t, wanted));
  if (direct) return direct;
  await discover(api, handled.types);
  const found = handled.types.find((t) => matches(t, wanted));
  if (found) return found;
  const known = handled.types.map(typeName).join(', ');
  const hint = handled.note ? ` (${handled.note})` : '';
  throw new CliError(
    `Error: HNC does not handle a type named "${typed}"; the types it handles are ${known}${hint}. To propagate another type: kubectl hns config set-resource RESOURCE [--group GROUP] --mode Propagate`,
  );
}

/** Fills kinds and aliases from discovery, one request per group version; failures are ignored. */
async function discover(api: HncApi, types: HandledType[]): Promise<void> {
  const versions = new Map(types.map((t) => [`${t.group}/${t.version}`, { group: t.group, version: t.version }]));
  await Promise.all(
    [...versions.values()].map(async ({ group, version }) => {
      let resources: ApiResource[];
      try {
        resources = await api.listApiResources(group, version);
      } catch (err) {
        if (isForbidden(err) || isNotFound(err)) return;
        throw err;
      }
      for (const t of types) {
        if (t.group !== group || t.version !== version) continue;
        const r = resources.find((x) => x.name === t.resource);
        if (!r) continue;
        t.kind ??= r.kind;
        t.aliases = [...(r.singularName ? [r.singularName.toLowerCase()] : []), ...(r.shortNames ?? []).map((s) => s.toLowerCase())];
      }
    }),
  );
}
