// Production code has no import cycle, type-only ones included: a cycle means two modules that
// each need the other, and the types they share belong to the lower one.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importCycles, importGraph, sourceFiles } from './import-graph.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const PRODUCTION = ['core', 'kube', 'controller', 'webhooks', 'kubectl-plugin', 'cmd'];

describe('import cycles', () => {
  it('finds none among the production files', () => {
    const graph = importGraph(ROOT, sourceFiles(ROOT, PRODUCTION));
    // The walk did read the tree: the files and the imports it must see.
    expect(graph.size).toBeGreaterThan(150);
    expect(graph.get('kube/events.ts')).toContain('kube/writes.ts');
    expect(graph.get('kubectl-plugin/main.ts')).toContain('kubectl-plugin/connection.ts'); // a dynamic import()
    expect(importCycles(graph)).toEqual([]);
  });

  it('reports each cycle as a path back to its first file, type-only imports too', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts', 'd.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', []],
      ['self.ts', ['self.ts']],
      ['x.ts', ['y.ts']],
      ['y.ts', ['x.ts', 'd.ts']],
    ]);
    expect(importCycles(graph)).toEqual([
      ['a.ts', 'b.ts', 'c.ts', 'a.ts'],
      ['self.ts', 'self.ts'],
      ['x.ts', 'y.ts', 'x.ts'],
    ]);
  });
});
