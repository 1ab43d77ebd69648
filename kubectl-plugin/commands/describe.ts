// `kubectl hns describe NAMESPACE`: loads what the describe text shows. The namespace itself must
// be readable; any other part the user may not read becomes a note.
import { EVENT_SOURCE_COMPONENT, type HierarchyConfiguration, type SubnamespaceAnchor } from '../../core/api/index.js';
import type { HncApi, KubeEvent } from '../api.js';
import { defineCommand } from '../cli/command.js';
import { stringFlag } from '../cli/flag-spec.js';
import { isForbidden, isNotFound } from '../errors.js';
import type { Io } from '../io.js';
import type { ChildView, DescribeView, EventView } from '../model.js';
import { renderDescribe } from '../render/describe-text.js';
import { parseObjectRef, runExplain } from './explain.js';
import { loadInheritedObjects } from './inherited.js';
import { loadDescribeQuotas } from './quotas.js';

type Outcome<T> = { ok: true; value: T } | { ok: false; forbidden: true };

async function unlessForbidden<T>(p: Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await p };
  } catch (err) {
    if (isForbidden(err)) return { ok: false, forbidden: true };
    throw err;
  }
}

async function listAnchorsOrNone(api: HncApi, ns: string): Promise<SubnamespaceAnchor[]> {
  try {
    return await api.listAnchors(ns);
  } catch (err) {
    // HNC's plugin ignores a 404 here (no anchor CRD).
    if (isNotFound(err)) return [];
    throw err;
  }
}

export function childViews(hc: HierarchyConfiguration, anchors: readonly SubnamespaceAnchor[]): ChildView[] {
  const views = new Map<string, ChildView>();
  for (const name of hc.status?.children ?? []) views.set(name, { name, isChild: true });
  for (const a of anchors) {
    const name = a.metadata.name ?? '';
    views.set(name, { name, isChild: views.get(name)?.isChild ?? false, anchorState: a.status?.status ?? '' });
  }
  return [...views.values()];
}

export function eventView(e: KubeEvent): EventView {
  const o = e.involvedObject ?? {};
  const lastSeen = e.lastTimestamp || e.eventTime || e.firstTimestamp || e.metadata.creationTimestamp || undefined;
  return {
    ...(lastSeen ? { lastSeen } : {}),
    reason: e.reason ?? '',
    object: `${o.kind ?? ''}:${o.namespace ?? ''}/${o.name ?? ''}`,
    message: e.message ?? '',
  };
}

export async function loadDescribe(api: HncApi, namespace: string): Promise<DescribeView> {
  const ns = await api.getNamespace(namespace);
  const [hc, anchors, inherited, events, quotas] = await Promise.all([
    unlessForbidden(api.getHierarchy(namespace)),
    unlessForbidden(listAnchorsOrNone(api, namespace)),
    loadInheritedObjects(api, namespace),
    unlessForbidden(api.listEvents(namespace)),
    loadDescribeQuotas(api, ns),
  ]);
  const view: DescribeView = { namespace, inherited, ...(quotas ? { quotas } : {}) };
  if (hc.ok) {
    const h = hc.value ?? { metadata: {} };
    view.hierarchy = {
      ...(h.spec?.parent ? { parent: h.spec.parent } : {}),
      children: childViews(h, anchors.ok ? anchors.value : []),
      allowCascadingDeletion: h.spec?.allowCascadingDeletion === true,
      conditions: (h.status?.conditions ?? []).map((c) => ({ type: c.type, reason: c.reason, message: c.message })),
    };
  } else {
    view.hierarchyNote = `no permission to read the hierarchy configuration of ${namespace}`;
  }
  if (!anchors.ok) view.childrenNote = `no permission to list the subnamespace anchors in ${namespace}`;
  if (events.ok) view.events = events.value.filter((e) => e.source?.component === EVENT_SOURCE_COMPONENT).map(eventView);
  else view.eventsNote = `no permission to list the events in ${namespace}`;
  return view;
}

export async function runDescribe(api: HncApi, io: Io, namespace: string, now: Date = new Date()): Promise<void> {
  io.out(renderDescribe(await loadDescribe(api, namespace), now));
}

export const describeCommand = defineCommand({
  name: 'describe',
  summary: 'Displays information about the hierarchy configuration',
  description:
    'Displays the hierarchy configuration of NAMESPACE, the hierarchical resource quotas over it (with their usage),\n' +
    'the objects it inherits, and recent HNC events.\n' +
    'With --object, explains instead why the named object is or is not propagated into NAMESPACE.',
  usage: 'NAMESPACE [--object TYPE/NAME]',
  examples: [
    "  # The hierarchy of 'dev', what it inherits and from where, and HNC's events there",
    '  kubectl hns describe dev',
    '',
    "  # Why the Role 'admin' is, or is not, in 'dev'",
    '  kubectl hns describe dev --object role/admin',
  ].join('\n'),
  args: { min: 1, max: 1, names: 'NAMESPACE' },
  flags: [
    {
      name: 'object',
      kind: 'string',
      value: 'TYPE/NAME',
      description: 'Explain why this object (e.g. role/admin, secrets/db-password) is or is not propagated into NAMESPACE',
    },
  ],
  async run({ args, flags, io, connect, now }) {
    const ns = args[0] ?? '';
    const object = stringFlag(flags, 'object');
    if (object !== undefined) {
      const ref = parseObjectRef(object);
      await runExplain((await connect()).api, io, ns, ref);
      return;
    }
    await runDescribe((await connect()).api, io, ns, now());
  },
});
