// `kubectl hns describe NAMESPACE --object TYPE/NAME`: loads what the explanation weighs (see
// render/explain-text.ts). NAMESPACE must be readable; anything else the user may not read
// becomes a note, or a line saying so.
//
// The ancestors come from the HierarchyConfigurations' spec.parent chain, starting at NAMESPACE.
// When an HC on the way cannot be read, the rest of the chain comes from NAMESPACE's tree labels
// (`<ancestor>.tree.hnc.x-k8s.io/depth`), which the controller keeps in step with that chain.
import { Annotation, ConditionType, treeLabelNamespace, type HierarchyConfiguration } from '../../core/api/index.js';
import type { HncApi, Namespace, ResourceType } from '../api.js';
import { CliError, isForbidden } from '../errors.js';
import type { Io } from '../io.js';
import type { ConditionView, ExplainView, FoundObject } from '../model.js';
import { explainObject } from '../render/explain-text.js';
import { loadHandledTypes, resolveType } from './types.js';

export interface ObjectRef {
  /** As typed: a resource (`roles`), singular or kind (`role`, `Role`), short name, or `resource.group`. */
  type: string;
  name: string;
}

export function parseObjectRef(ref: string): ObjectRef {
  const slash = ref.indexOf('/');
  const type = ref.slice(0, slash);
  const name = ref.slice(slash + 1);
  if (slash < 0 || type === '' || name === '' || name.includes('/')) {
    throw new CliError(`Error: --object must be TYPE/NAME, e.g. role/admin or secrets/db-password; got "${ref}"`);
  }
  return { type, name };
}

type Read<T> = { ok: true; value: T } | { ok: false };

async function unlessForbidden<T>(p: Promise<T>): Promise<Read<T>> {
  try {
    return { ok: true, value: await p };
  } catch (err) {
    if (isForbidden(err)) return { ok: false };
    throw err;
  }
}

/** NAMESPACE's ancestors, the root first, and a note when part of the chain came from tree labels. */
export async function loadAncestors(
  api: HncApi,
  ns: Namespace,
  hc: Read<HierarchyConfiguration | undefined>,
): Promise<{ ancestors: string[]; note?: string }> {
  const name = ns.metadata.name ?? '';
  // Tree labels: ancestors farther than `depth`, nearest first.
  const fromLabels = (depth: number, skip: ReadonlySet<string>): string[] =>
    Object.entries(ns.metadata.labels ?? {})
      .map(([key, value]) => ({ ns: treeLabelNamespace(key), depth: Number(value) }))
      .filter(
        (e): e is { ns: string; depth: number } => e.ns !== undefined && !skip.has(e.ns) && Number.isInteger(e.depth) && e.depth > depth,
      )
      .sort((a, b) => a.depth - b.depth)
      .map((e) => e.ns);
  if (!hc.ok) {
    return {
      ancestors: fromLabels(0, new Set([name])).reverse(),
      note: `no permission to read the hierarchy configuration of ${name}: its ancestors come from its tree labels, and whether it is halted is unknown`,
    };
  }
  const chain: string[] = []; // nearest first
  const seen = new Set([name]);
  let note: string | undefined;
  let parent = hc.value?.spec?.parent || ns.metadata.annotations?.[Annotation.subnamespaceOf] || undefined;
  while (parent !== undefined && !seen.has(parent)) {
    chain.push(parent);
    seen.add(parent);
    const up = await unlessForbidden(api.getHierarchy(parent));
    if (!up.ok) {
      chain.push(...fromLabels(chain.length, seen));
      note = `no permission to read the hierarchy configuration of ${parent}: the ancestors above it come from the tree labels of ${name}`;
      break;
    }
    parent = up.value?.spec?.parent || undefined;
  }
  return { ancestors: chain.reverse(), ...(note ? { note } : {}) };
}

async function find(api: HncApi, namespace: string, type: ResourceType, name: string): Promise<FoundObject> {
  const got = await unlessForbidden(api.getObject(namespace, type, name));
  if (!got.ok) return { namespace, forbidden: true };
  return { namespace, ...(got.value ? { object: got.value } : {}) };
}

export async function loadExplain(api: HncApi, namespace: string, ref: ObjectRef): Promise<ExplainView> {
  const ns = await api.getNamespace(namespace);
  const handled = await loadHandledTypes(api);
  const type = await resolveType(api, handled, ref.type);
  const hc = await unlessForbidden(api.getHierarchy(namespace));
  const { ancestors, note } = await loadAncestors(api, ns, hc);
  const [local, ...found] = await Promise.all([namespace, ...ancestors].map((n) => find(api, n, type, ref.name)));
  const halted = hc.ok ? hc.value?.status?.conditions?.find((c) => c.type === ConditionType.ActivitiesHalted) : undefined;
  const kind = type.kind || [local, ...found].find((f) => f?.object?.kind)?.object?.kind || type.resource;
  return {
    namespace,
    labels: ns.metadata.labels ?? {},
    name: ref.name,
    type: { group: type.group, resource: type.resource, kind, mode: type.mode },
    ancestors: found,
    ...(halted ? { halted: { type: halted.type, reason: halted.reason, message: halted.message } satisfies ConditionView } : {}),
    local: local ?? { namespace },
    notes: note ? [note] : [],
  };
}

export async function runExplain(api: HncApi, io: Io, namespace: string, ref: ObjectRef): Promise<void> {
  io.out(explainObject(await loadExplain(api, namespace, ref)));
}
