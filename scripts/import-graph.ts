// The graph of relative imports between the project's TypeScript files, as tsc reads them
// (ts.preProcessFile: static, type-only, re-exports and dynamic import()). Used by tests: what
// the image compiles (deploy/manifests.test.ts) and that production code has no import cycle
// (scripts/import-graph.test.ts).
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import ts from 'typescript';

/** The files `file` imports by a relative specifier (`./x.js` is read as `./x.ts`), relative to `root`, as written. */
export function relativeImports(root: string, file: string): string[] {
  const out: string[] = [];
  for (const ref of ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true).importedFiles)
    if (ref.fileName.startsWith('.'))
      out.push(
        relative(root, join(root, dirname(file), ref.fileName.replace(/\.js$/, '.ts')))
          .split('\\')
          .join(posix.sep),
      );
  return out;
}

/** Every file reached from `entries` through relative imports (the entries included). */
export function reachable(root: string, entries: readonly string[]): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const dep of relativeImports(root, file)) visit(dep);
  };
  for (const e of entries) visit(e);
  return seen;
}

/** The .ts files under `dirs` (relative to `root`), tests (`*.test.ts`) and declarations left out. */
export function sourceFiles(root: string, dirs: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(path);
      else if (e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.endsWith('.d.ts')) out.push(path);
    }
  };
  for (const d of dirs) walk(d);
  return out.sort();
}

/** Each file's imports among existing files. */
export function importGraph(root: string, files: readonly string[]): Map<string, string[]> {
  return new Map(files.map((f) => [f, relativeImports(root, f).filter((d) => existsSync(join(root, d)))]));
}

/**
 * The import cycles of a graph: one path per strongly connected component that has a cycle,
 * starting and ending at the same file (e.g. [a, b, a]), in a stable order.
 */
export function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  // Tarjan's strongly connected components.
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const connect = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) components.push(component);
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) connect(v);
  // A readable cycle in each component: from its first file, a shortest way back to it within the component.
  return components.map((component) => {
    const inside = new Set(component);
    const start = [...component].sort()[0]!;
    const from = new Map<string, string>();
    const queue = [start];
    for (let i = 0; i < queue.length; i++) {
      const v = queue[i]!;
      for (const w of graph.get(v) ?? []) {
        if (!inside.has(w)) continue;
        if (w === start) {
          const path = [v];
          for (let u = v; u !== start;) path.unshift((u = from.get(u)!));
          return [...path, start];
        }
        if (!from.has(w)) {
          from.set(w, v);
          queue.push(w);
        }
      }
    }
    return [start, start];
  });
}
