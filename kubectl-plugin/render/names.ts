// How types are named in the plugin's texts, and which modes propagate.
import { RBAC_GROUP, isPropagating } from '../../core/api/index.js';

/** `roles`, `secrets`, or `crontabs.stable.example.com` for a type outside the core and RBAC groups. */
export function typeName(t: { group: string; resource: string }): string {
  return t.group === '' || t.group === RBAC_GROUP ? t.resource : `${t.resource}.${t.group}`;
}

/** Whether HNC copies objects of a type in this mode into descendants. */
/** Whether a type in this mode is propagated (core/api's isPropagating). */
export const propagates = (mode: string): boolean => isPropagating(mode);
