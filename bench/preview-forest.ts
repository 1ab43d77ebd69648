// The forest both preview benchmarks use (bench/preview.ts on a control plane, bench/preview-compute.ts
// in process): org ─┬─ team-a ── sub ── size-1 children (the subtree moved)
//                   └─ team-b ── size other namespaces (the move's destination)

export interface PreviewForest {
  /** Every namespace's parent, parents before children; org has none. */
  parents: Map<string, string | undefined>;
  /** sub and its children: the namespaces the move affects. */
  moved: string[];
  /** team-b's children. */
  others: string[];
  /** ns, its parent, ... up to org: index = depth below ns, as the tree labels count it. */
  ancestry(ns: string): string[];
}

export function previewForest(size: number): PreviewForest {
  const parents = new Map<string, string | undefined>([
    ['org', undefined],
    ['team-a', 'org'],
    ['team-b', 'org'],
    ['sub', 'team-a'],
  ]);
  const moved = ['sub', ...Array.from({ length: size - 1 }, (_, i) => `sub-${String(i).padStart(4, '0')}`)];
  for (const n of moved.slice(1)) parents.set(n, 'sub');
  const others = Array.from({ length: size }, (_, i) => `other-${String(i).padStart(4, '0')}`);
  for (const n of others) parents.set(n, 'team-b');
  const ancestry = (ns: string): string[] => {
    const out = [ns];
    for (let p = parents.get(ns); p !== undefined; p = parents.get(p)) out.push(p);
    return out;
  };
  return { parents, moved, others, ancestry };
}

/** What a preview of the move reports, counted (its JSON, or core/preview's Preview: the same fields). */
export interface PreviewCounts {
  affected: number;
  create: number;
  delete: number;
  access: number;
}

/**
 * Counts a preview of moving `sub` (SIZE namespaces) to team-b, and throws unless every copy of
 * team-a's goes and one of team-b's comes in each moved namespace: a benchmark of a wrong answer
 * measures nothing.
 */
export function checkedPreviewCounts(
  preview: {
    affectedNamespaces: readonly unknown[];
    copies: { create: readonly unknown[]; delete: readonly unknown[] };
    access: readonly unknown[];
  },
  size: number,
  perNamespace: number,
  what = 'preview',
): PreviewCounts {
  const c = {
    affected: preview.affectedNamespaces.length,
    create: preview.copies.create.length,
    delete: preview.copies.delete.length,
    access: preview.access.length,
  };
  if (c.affected !== size || c.create !== size * perNamespace || c.delete !== size * perNamespace)
    throw new Error(`${what}: unexpected preview ${JSON.stringify(c)}`);
  return c;
}
