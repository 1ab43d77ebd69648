// `kubectl hns describe NS` as text: HNC's block (parent, children, cascading deletion,
// conditions), then the inherited objects, then HNC's events in the namespace.
import type { ChildView, DescribeQuotas, DescribeView, EventView, InheritedObjects, HrqView } from '../model.js';
import { alignColumns } from './columns.js';
import { humanDuration } from './duration.js';

function childLabel(c: ChildView): string {
  if (c.anchorState === undefined) return c.name;
  if (c.isChild) return `${c.name} (subnamespace)`;
  return `${c.name} (${c.anchorState || 'Missing'} subnamespace)`;
}

function hierarchyText(view: DescribeView): string {
  let out = `Hierarchy configuration for namespace ${view.namespace}\n`;
  const h = view.hierarchy;
  if (!h) return out + `  (${view.hierarchyNote ?? `could not read the hierarchy configuration of ${view.namespace}`})\n`;
  out += h.parent ? `  Parent: ${h.parent}\n` : '  No parent\n';
  const children = [...h.children].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  out += children.length > 0 ? `  Children:\n${children.map((c) => `  - ${childLabel(c)}\n`).join('')}` : '  No children\n';
  if (view.childrenNote) out += `  (${view.childrenNote})\n`;
  out += `  Allows Cascading Deletion: ${h.allowCascadingDeletion}\n`;
  out +=
    h.conditions.length > 0
      ? `  Conditions:\n${h.conditions.map((c) => `  - ${c.type} (${c.reason}): ${c.message}\n`).join('')}`
      : '  No conditions\n';
  return out;
}

export function inheritedText(inh: InheritedObjects): string {
  const notes = inh.notes.map((n) => `  (${n})\n`).join('');
  if (inh.objects.length === 0) {
    return `\nNo inherited objects${inh.checked.length ? ` (looked at ${inh.checked.join(', ')})` : ''}\n${notes}`;
  }
  const objects = [...inh.objects].sort((a, b) => cmp(a.kind, b.kind) || cmp(a.name, b.name));
  return `\nInherited objects:\n${objects.map((o) => `  - ${o.kind}/${o.name} (from ${o.from})\n`).join('')}${notes}`;
}

/** Newest first; one row per reason and object (the newest), as HNC shows them. */
export function eventsText(namespace: string, events: readonly EventView[], now: Date): string {
  if (events.length === 0) return '\nNo recent HNC events for objects in this namespace\n';
  const time = (e: EventView): number => (e.lastSeen ? Date.parse(e.lastSeen) : Number.NEGATIVE_INFINITY);
  const sorted = [...events].sort((a, b) => time(b) - time(a));
  const seen = new Set<string>();
  const rows: string[][] = [['Last Seen', 'Reason', 'Object', 'Message']];
  for (const e of sorted) {
    const key = `${e.reason}\u0000${e.object}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const age = e.lastSeen ? humanDuration(now.getTime() - Date.parse(e.lastSeen)) : '<unknown>';
    rows.push([age, e.reason, e.object, e.message.trim()]);
  }
  return `\nEvents from the objects in namespace ${namespace}\n${alignColumns(rows)
    .map((l) => `${l}\n`)
    .join('')}`;
}

/** The HRQs over the namespace (beyond HNC's describe): printed only when some apply or could not be read. */
export function describeQuotasText(namespace: string, q: DescribeQuotas): string {
  let out = '\nHierarchical resource quotas (used in the subtree / limit):\n';
  const list = (views: HrqView[], qualified: boolean) =>
    views.map((v) => `  - ${qualified ? `${v.namespace}/` : ''}${v.name}: ${v.usage || '(no limits)'}\n`).join('');
  out += q.here.length ? `  In ${namespace}:\n${list(q.here, false)}` : `  None in ${namespace}\n`;
  if (q.above.length) out += `  Above ${namespace}:\n${list(q.above, true)}`;
  if (q.limits !== undefined) out += `  Strictest limits over ${namespace}: ${q.limits}\n`;
  if (q.used !== undefined) out += `  Used in ${namespace} itself: ${q.used}\n`;
  out += q.notes.map((n) => `  (${n})\n`).join('');
  return out;
}

export function renderDescribe(view: DescribeView, now: Date): string {
  let out = hierarchyText(view);
  if (view.quotas) out += describeQuotasText(view.namespace, view.quotas);
  out += inheritedText(view.inherited);
  if (view.events) out += eventsText(view.namespace, view.events, now);
  else out += `\n(${view.eventsNote ?? `could not list the events in ${view.namespace}`})\n`;
  return out;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
