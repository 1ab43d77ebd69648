// The objects validator (docs/behaviour.md §7.6): keeps sources' selector annotations valid, refuses a
// source that would overwrite same-named sources below it, and keeps propagated copies read-only
// for everyone but HNC.
import { Label } from '../api/constants.js';
import type { Hierarchy } from '../hierarchy/hierarchy.js';
import { canonical, inheritedFrom, type PropagatableObject } from '../propagation/copy.js';
import { validateSelectorAnnotations } from '../propagation/selectors.js';
import { jsonEqual } from '../util/equal.js';
import { allow, badRequest, conflict, forbidden, type AdmissionInput, type Decision, type GroupResource } from './decision.js';

export interface ObjectValidationOptions {
  /** The request's resource (for the messages' prefix). */
  readonly resource: GroupResource;
  /** Whether the type is being propagated now (Propagate or AllowPropagate). */
  readonly propagating: boolean;
  /** Descendant namespaces holding a same-named source this object would overwrite. */
  readonly overwrittenIn?: (namespace: string, name: string, obj: PropagatableObject) => readonly string[];
}

export function validateObject(h: Hierarchy, input: AdmissionInput<PropagatableObject>, opts: ObjectValidationOptions): Decision {
  const ns = input.namespace ?? '';
  if (!h.isManaged(ns) || !opts.propagating || input.isHncServiceAccount) return allow();
  const obj = input.object;
  const old = input.oldObject;
  const name = input.name ?? obj?.metadata?.name ?? old?.metadata?.name ?? '';
  const fromNew = obj ? inheritedFrom(obj) : undefined;
  const fromOld = old ? inheritedFrom(old) : undefined;

  if (fromNew === undefined && fromOld === undefined) {
    if (input.operation === 'DELETE' || !obj) return allow();
    const selectorError = validateSelectorAnnotations(obj.metadata?.annotations ?? {}, old?.metadata?.annotations);
    if (selectorError) return badRequest(selectorError);
    const overwritten = opts.overwrittenIn?.(ns, name, obj) ?? [];
    if (overwritten.length) {
      return conflict(
        opts.resource,
        `${ns}/${name}`,
        `would overwrite objects in the following descendant namespace(s): ${overwritten.join(',')}. To fix this, choose a different name for the object, or remove the conflicting objects from the listed namespaces`,
      );
    }
    return allow();
  }

  const source = fromOld ?? fromNew!;
  const deny = (msg: string) => forbidden(opts.resource, name, msg);
  switch (input.operation) {
    case 'CREATE':
      return deny(`cannot create objects with the label "${Label.inheritedFrom}"`);
    case 'DELETE': {
      // A terminating (or vanished) namespace takes its copies with it.
      const facts = h.namespace(ns);
      return !facts || facts.deleting ? allow() : deny(`cannot delete object propagated from namespace "${source}"`);
    }
    case 'UPDATE':
      if (fromOld !== fromNew) return deny(`cannot modify the label "${Label.inheritedFrom}"`);
      if (obj && old && !jsonEqual(canonical(obj), canonical(old)))
        return deny(`cannot modify object propagated from namespace "${source}"`);
      return allow();
    default:
      return allow();
  }
}
