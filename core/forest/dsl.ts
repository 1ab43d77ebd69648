// A tiny text notation for forests, so tests read like their descriptions:
//
//   forest('a -> b -> c')        a is the parent of b, b of c
//   forest('a -> b, a -> c, d')  chains separated by commas or newlines; a lone name is a root
//   forest('a -> b -> a')        cycles are allowed (HNC must hold them)
//   forest('gone? -> b')         a trailing "?" names a missing namespace (referenced, not existing)
//   # comments run to the end of the line
//
// Strict on purpose: a namespace given two different parents, a missing namespace with a parent,
// or a name that is not a DNS label is a typo in a test, so it throws.

import { Forest } from './forest.js';

const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

interface Parsed {
  /** Names in order of first appearance, with whether they exist. */
  readonly names: Map<string, boolean>;
  /** child -> parent, in order of appearance. */
  readonly parents: Map<string, string>;
}

function parse(text: string): Parsed {
  const names = new Map<string, boolean>();
  const parents = new Map<string, string>();
  const chains = text
    .split('\n')
    .map((line) => line.replace(/#.*/, ''))
    .join(',')
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '');

  for (const chain of chains) {
    const tokens = chain.split('->').map((t) => t.trim());
    const chainNames = tokens.map((token) => {
      const missing = token.endsWith('?');
      const name = missing ? token.slice(0, -1) : token;
      if (!NAME.test(name)) throw new Error(`forest DSL: bad namespace name ${JSON.stringify(token)} in "${chain}"`);
      const known = names.get(name);
      if (known !== undefined && known === missing) {
        throw new Error(`forest DSL: "${name}" is written both with and without "?"`);
      }
      names.set(name, !missing);
      return name;
    });
    for (let i = 1; i < chainNames.length; i++) {
      const parent = chainNames[i - 1]!;
      const child = chainNames[i]!;
      const previous = parents.get(child);
      if (previous !== undefined && previous !== parent) {
        throw new Error(`forest DSL: "${child}" has two parents, "${previous}" and "${parent}"`);
      }
      parents.set(child, parent);
    }
  }

  for (const [name, exists] of names) {
    if (exists) continue;
    if (parents.has(name)) throw new Error(`forest DSL: missing namespace "${name}" cannot have a parent`);
    if (![...parents.values()].includes(name)) {
      throw new Error(`forest DSL: missing namespace "${name}" must be somebody's parent`);
    }
  }
  return { names, parents };
}

/** Builds a Forest from the notation above. */
export function forest(text: string): Forest {
  const { names, parents } = parse(text);
  const f = new Forest();
  for (const [name, exists] of names) if (exists) f.ensure(name);
  for (const [child, parent] of parents) f.setParent(child, parent);
  return f;
}

/**
 * Writes a forest back in the notation, canonically: one "parent -> child" per edge and each
 * childless root alone, sorted by child, missing namespaces marked "?". `forest(forestText(f))`
 * rebuilds the same structure, which makes whole-forest assertions one line.
 */
export function forestText(f: Forest): string {
  const mark = (ns: string): string => (f.exists(ns) ? ns : `${ns}?`);
  const parts: string[] = [];
  for (const ns of f.names()) {
    const p = f.parent(ns);
    if (p !== undefined) parts.push(`${mark(p)} -> ${ns}`);
    else if (f.children(ns).length === 0) parts.push(ns);
  }
  return parts.join(', ');
}
