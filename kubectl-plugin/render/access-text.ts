// `kubectl hns access` as text: one line per grant, columns three spaces apart as kubectl prints
// tables, namespaces in subtree order (the root first).
//
//   NAMESPACE   SUBJECT        ROLE    BINDING        ORIGIN
//   team-a      group team-b   admin   team-b-admin   own
//   dev         group team-b   admin   team-b-admin   inherited from team-a
import { roleText, subjectText, type Grant } from '../../core/access/index.js';
import type { AccessView } from '../model.js';

const HEADER = ['NAMESPACE', 'SUBJECT', 'ROLE', 'BINDING', 'ORIGIN'];

export function grantCells(g: Grant): string[] {
  return [
    g.namespace,
    subjectText(g.subject),
    `${roleText(g.role)}${g.roleMissing ? ' (missing)' : ''}`,
    g.binding,
    g.origin === 'own' ? 'own' : `inherited from ${g.from ?? '?'}`,
  ];
}

/** The table, or nothing when there is no grant (the command says so on stderr). */
export function renderAccessText(view: AccessView): string {
  if (view.grants.length === 0) return '';
  const rows = [HEADER, ...view.grants.map(grantCells)];
  const widths = HEADER.map((_, i) => Math.max(...rows.map((r) => r[i]?.length ?? 0)));
  return rows.map((r) => `${r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('   ')}\n`).join('');
}
