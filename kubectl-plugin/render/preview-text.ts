// The text of a `--dry-run` preview (docs/kubectl-hns.md): one section per kind of consequence, and
// lines that repeat for many namespaces (a copy, a lost role) folded into one line listing them.
import { originText, roleText, subjectText, type AccessChange } from '../../core/access/index.js';
import type { CopyChange, CopyConflict } from '../../core/preview/index.js';
import type { PreviewReport } from '../model.js';

const list = (xs: readonly string[]): string => xs.join(', ');

/** Folds items that differ only by namespace: one entry per key, namespaces in first-seen order. */
function fold<T extends { namespace: string }>(items: readonly T[], key: (x: T) => string): { first: T; namespaces: string[] }[] {
  const groups = new Map<string, { first: T; namespaces: string[] }>();
  for (const x of items) {
    const k = key(x);
    const g = groups.get(k);
    if (g) g.namespaces.push(x.namespace);
    else groups.set(k, { first: x, namespaces: [x.namespace] });
  }
  return [...groups.values()];
}

const inNamespaces = (namespaces: readonly string[]): string =>
  namespaces.length === 1 ? `in ${namespaces[0]}` : `in ${namespaces.length} namespaces: ${list(namespaces)}`;

function copyLines(verb: string, items: readonly CopyChange[]): string[] {
  return fold(items, (c) => `${c.group}/${c.kind}/${c.name}/${c.source}/${c.recreate ?? ''}/${c.reason ?? ''}`).map(
    ({ first: c, namespaces }) => {
      const how = c.recreate
        ? ' (deleted and created again: an immutable field changes)'
        : c.reason === 'namespace-deleted'
          ? ' (with its namespace)'
          : '';
      return `  ${verb} ${c.kind} ${c.name} (from ${c.source}) ${inNamespaces(namespaces)}${how}`;
    },
  );
}

function conflictLines(items: readonly CopyConflict[]): string[] {
  return fold(items, (c) => `${c.group}/${c.kind}/${c.name}/${c.source}`).map(
    ({ first: c, namespaces }) => `  ${c.kind} ${c.name} ${inNamespaces(namespaces)} blocks the copy from ${c.source}`,
  );
}

// Most changes have one grant on a side (or none): no set to make for those.
const origins = (grants: AccessChange['before']): string =>
  grants.length < 2 ? (grants.length ? originText(grants[0]!) : '') : [...new Set(grants.map(originText))].join(', ');

function accessLines(changes: readonly AccessChange[]): string[] {
  const key = (c: AccessChange) => `${subjectText(c.subject)}\0${c.change}\0${roleText(c.role)}\0${origins(c.before)}\0${origins(c.after)}`;
  return fold(changes, key).map(({ first: c, namespaces }) => {
    const what = `${roleText(c.role)} ${inNamespaces(namespaces)}`;
    switch (c.change) {
      case 'gains':
        return `  ${subjectText(c.subject)}: gains ${what} (${origins(c.after)})`;
      case 'loses':
        return `  ${subjectText(c.subject)}: loses ${what} (was ${origins(c.before)})`;
      case 'moves':
        return `  ${subjectText(c.subject)}: keeps ${what}, now ${origins(c.after)} (was ${origins(c.before)})`;
    }
  });
}

function section(title: string, lines: readonly string[], none: string): string[] {
  return lines.length ? [`${title}:`, ...lines, ''] : [`${title}: ${none}`, ''];
}

export function renderPreviewText(r: PreviewReport): string {
  const out: string[] = [`Dry run (nothing was written): ${r.summary}`, ''];

  if (!r.admission.checked) out.push('Admission: not asked (--dry-run=client)', '');
  else {
    for (const c of r.admission.checks)
      out.push(c.allowed ? `Admission: allowed (${c.request})` : `Admission: REFUSED (${c.request}): ${c.message ?? ''}`);
    if (r.admission.note) out.push(`  ${r.admission.note}`);
    out.push('');
  }

  if (r.createdNamespaces.length) out.push(`Namespaces created: ${list(r.createdNamespaces)}`, '');
  if (r.deletedNamespaces.length) out.push(`Namespaces deleted: ${list(r.deletedNamespaces)}`, '');

  const labelLines = r.labels.map((l) => {
    const parts = l.treeLabels.map((t) =>
      t.before === undefined
        ? `+${t.key}=${t.after}`
        : t.after === undefined
          ? `-${t.key}=${t.before}`
          : `${t.key}: ${t.before} -> ${t.after}`,
    );
    return `  ${l.namespace}: ${parts.join(', ')}`;
  });
  out.push(...section('Tree labels', labelLines, 'no change'));

  const npLines = r.networkPolicies.flatMap((p) => [
    ...(p.startsMatching.length ? [`  ${p.namespace}/${p.name} starts matching ${list(p.startsMatching)}`] : []),
    ...(p.stopsMatching.length ? [`  ${p.namespace}/${p.name} stops matching ${list(p.stopsMatching)}`] : []),
  ]);
  out.push(...section('NetworkPolicies (namespaceSelector)', npLines, 'no change'));

  const copies = [
    ...copyLines('create', r.copies.create),
    ...copyLines('update', r.copies.update),
    ...copyLines('delete', r.copies.delete),
  ];
  const counts = `${r.copies.create.length} created, ${r.copies.update.length} updated, ${r.copies.delete.length} deleted`;
  out.push(...section(copies.length ? `Propagated copies (${counts})` : 'Propagated copies', copies, 'no change'));
  if (r.copies.conflicts.length) {
    out.push('Objects HNC did not create that would block a copy (never overwritten; the namespace gets an ObjectConflict condition):');
    out.push(...conflictLines(r.copies.conflicts), '');
  }
  if (r.halted.length) {
    out.push('Halted (nothing is propagated there; existing copies stay):');
    for (const { first, namespaces } of fold(r.halted, (h) => `${h.haltedAt}\0${h.message}`))
      out.push(
        `  ${list(namespaces)}: ${first.haltedAt === first.namespace && namespaces.length === 1 ? '' : `below ${first.haltedAt}: `}${first.message}`,
      );
    out.push('');
  }

  out.push(...section('Access (RoleBindings)', accessLines(r.access), 'no change'));
  if (r.notes.length) out.push('Notes:', ...r.notes.map((n) => `  ${n}`), '');
  return `${out.join('\n').replace(/\n+$/, '')}\n`;
}
