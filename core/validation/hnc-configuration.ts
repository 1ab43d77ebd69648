// The HNCConfiguration validator (`hncconfigurations.hnc.x-k8s.io`, docs/behaviour.md §7.5). HNC's service
// account is exempt. In order:
//   DELETE          of `config` → 403; of any other name → allowed.
//   CREATE/UPDATE   1. every spec.resources[i] must map to a namespaced type, must not be one of
//                      the enforced RBAC types, and must not repeat a type: all problems together
//                      as one 422 on `HNCConfiguration.hnc.x-k8s.io "config"`. On UPDATE an entry
//                      the old spec already had, whose type discovery no longer knows (its CRD was
//                      uninstalled), is let through: the controller's ResourceNotFound condition
//                      reports it, and it must not block every other edit (beyond HNC);
//                   2. for each type that becomes Propagate/AllowPropagate (in spec order), no
//                      source may be overwritten by a same-named ancestor source → 409.
//
// Mapping a resource to its kind needs discovery, and finding overwritten sources needs the
// objects HNC tracks: the caller supplies both (`resolve`, `overwriteConflicts`; the webhook server
// does not supply the latter yet, docs/behaviour.md §5.7); this file decides and words the answers.
import { ENFORCED_TYPES, Singleton, type PropagationMode } from '../api/constants.js';
import { effectiveMode, isPropagating, type HNCConfiguration } from '../api/types.js';
import type { Hierarchy } from '../hierarchy/hierarchy.js';
import { isDns1123Label, isDns1123Subdomain } from '../util/k8s-names.js';
import {
  allow,
  badRequest,
  conflict,
  fieldDuplicate,
  fieldInvalid,
  forbidden,
  goQuote,
  groupResourceText,
  gvkText,
  invalid,
  KindOf,
  NO_CONTENT,
  Resource,
  type AdmissionInput,
  type Decision,
  type FieldError,
  type GroupKind,
  type GroupVersionKind,
} from './decision.js';

/**
 * What discovery says about `group`/`resource` (the shell's RESTMapper): the kind and preferred
 * version, and whether it is namespaced; `group` if the mapper resolved an empty group to another
 * one. Or the mapper's error text (e.g. `no matches for /, Resource=foos`).
 */
export type ResourceResolution =
  { readonly namespaced: boolean; readonly kind: string; readonly version: string; readonly group?: string } | { readonly error: string };

export type ResourceResolver = (group: string, resource: string) => ResourceResolution;

/** A type the new configuration would start propagating. */
export interface NewlyPropagatedType extends GroupVersionKind {
  readonly resource: string;
  readonly mode: typeof PropagationMode.Propagate | typeof PropagationMode.AllowPropagate;
}

/** A source in `namespace` that the same-named source in its ancestor `ancestor` would overwrite. */
export interface TypeOverwriteConflict {
  readonly name: string;
  readonly ancestor: string;
  readonly namespace: string;
}

export interface HncConfigurationOptions {
  readonly resolve: ResourceResolver;
  /**
   * The types the running configuration already propagates (Propagate or AllowPropagate,
   * including the enforced RBAC types). Types not listed here that the new spec propagates are
   * checked for overwrites. Default: none.
   */
  readonly propagating?: readonly GroupKind[];
  /**
   * The overwrite check (docs/behaviour.md §7.5): walking every tree top-down, the sources that a
   * same-named source in an ancestor would overwrite once `type` propagates (honouring selectors).
   * Only sources HNC already tracks can be found. Without it the check is skipped.
   */
  readonly overwriteConflicts?: (type: NewlyPropagatedType) => readonly TypeOverwriteConflict[];
}

/** `_h` is unused today: every validator takes the hierarchy, so the shell can route uniformly. */
export function validateHncConfiguration(_h: Hierarchy, input: AdmissionInput<HNCConfiguration>, opts: HncConfigurationOptions): Decision {
  if (input.isHncServiceAccount || input.operation === 'CONNECT') return allow();
  if (input.operation === 'DELETE') {
    // Other names cannot be created past the CRD's enum; old strays may be deleted.
    const name = input.name ?? input.oldObject?.metadata?.name;
    if (name === Singleton.config)
      return forbidden(Resource.hncConfigurations, Singleton.config, "deleting the 'config' object is forbidden");
    return allow();
  }
  const config = input.object;
  if (!config) return badRequest(NO_CONTENT);

  const kept = new Set(
    input.operation === 'UPDATE' ? (input.oldObject?.spec?.resources ?? []).map((r) => grKey(r.group ?? '', r.resource)) : [],
  );
  const { errors, types } = resolveTypes(config, opts.resolve, kept);
  if (errors.length > 0) return invalid(KindOf.hncConfiguration, Singleton.config, errors);

  if (opts.overwriteConflicts) {
    const running = new Set((opts.propagating ?? []).map(gkKey));
    for (const type of types) {
      if (!isPropagating(type.mode)) continue;
      if (running.has(gkKey(type))) continue;
      const conflicts = opts.overwriteConflicts({ ...type, mode: type.mode });
      // HNC names the HC singleton ("hierarchy") in this message's prefix; kept as it is.
      if (conflicts.length > 0) return conflict(Resource.hncConfigurations, Singleton.hierarchy, typeOverwriteMessage(type, conflicts));
    }
  }
  return allow();
}

/** The overwrite denial's text: one `  Object "<n>" in namespace "<anc>" would overwrite the one in "<ns>"` line each. */
export function typeOverwriteMessage(gvk: GroupVersionKind, conflicts: readonly TypeOverwriteConflict[]): string {
  const lines = conflicts.map(
    (c) => `  Object ${goQuote(c.name)} in namespace ${goQuote(c.ancestor)} would overwrite the one in ${goQuote(c.namespace)}`,
  );
  return (
    `Cannot update configuration because setting type ${goQuote(gvkText(gvk))} to 'Propagate' mode or 'AllowPropagate' mode would overwrite user-created object(s):\n` +
    `${lines.join('\n')}\nTo fix this, please rename or remove the conflicting objects first.`
  );
}

/** Whether `group` can name an API group (a DNS subdomain); the empty core group is checked apart. */
export const isGroupName = (group: string): boolean => isDns1123Subdomain(group).length === 0;

/**
 * Why a spec entry's group or resource cannot name an API type, or undefined. Checked before
 * discovery is asked: both become segments of a URL (`/apis/<group>`), and no real group or
 * resource name holds a `/` or is `..`. Beyond HNC, which passed them to its RESTMapper as they were.
 */
export function groupResourceNameError(group: string, resource: unknown): string | undefined {
  if (group !== '' && !isGroupName(group))
    return `group ${goQuote(group)} is not a valid API group name: ${isDns1123Subdomain(group).join('; ')}`;
  if (typeof resource !== 'string' || resource === '') return 'resource must be set';
  const errs = isDns1123Label(resource);
  if (errs.length) return `resource ${goQuote(resource)} is not a valid resource name: ${errs.join('; ')}`;
  return undefined;
}

const gkKey = (gk: GroupKind): string => `${gk.group}/${gk.kind}`;
const grKey = (group: string, resource: string): string => `${group}/${resource}`;

interface ResolvedType extends GroupVersionKind {
  readonly resource: string;
  /** The effective mode: empty is Propagate, unknown is Ignore. */
  readonly mode: PropagationMode;
}

/**
 * Step 1: maps every spec entry, collecting field errors on `spec.resources[i]` (the value shown
 * is the group-resource, printed unquoted as Go prints a GroupResource). Unlike HNC, an entry that
 * could not be mapped is not also compared for duplicates (HNC compared the zero GVK, so a second
 * unmappable entry was reported twice).
 */
function resolveTypes(
  config: HNCConfiguration,
  resolve: ResourceResolver,
  kept: ReadonlySet<string>,
): { errors: FieldError[]; types: ResolvedType[] } {
  const errors: FieldError[] = [];
  const types: ResolvedType[] = [];
  const seen = new Set<string>();
  (config.spec?.resources ?? []).forEach((spec, i) => {
    const group = spec.group ?? '';
    const path = `spec.resources[${i}]`;
    const grText = groupResourceText({ group, resource: spec.resource });
    const shown = { printed: grText };
    const badName = groupResourceNameError(group, spec.resource);
    if (badName) {
      errors.push(fieldInvalid(path, shown, badName));
      return;
    }
    const res = resolve(group, spec.resource);
    if ('error' in res) {
      if (!kept.has(grKey(group, spec.resource))) errors.push(fieldInvalid(path, shown, res.error));
      return;
    }
    if (!res.namespaced) {
      errors.push(fieldInvalid(path, shown, `resource ${goQuote(grText)} is not namespaced`));
      return;
    }
    const gvk = { group: res.group ?? group, version: res.version, kind: res.kind };
    if (ENFORCED_TYPES.some((t) => t.group === gvk.group && t.kind === gvk.kind)) {
      errors.push(fieldInvalid(path, shown, "always uses the 'Propagate' mode and cannot be configured"));
    }
    const key = `${gvk.group}/${gvk.version}/${gvk.kind}`;
    if (seen.has(key)) errors.push(fieldDuplicate(path, shown));
    seen.add(key);
    types.push({ ...gvk, resource: spec.resource, mode: effectiveMode(spec.mode) });
  });
  return { errors, types };
}
