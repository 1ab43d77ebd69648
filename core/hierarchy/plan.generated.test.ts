// desiredNamespaceMetadata builds its answer in one pass (plan.ts): it, and the forest's walks it
// reads (core/forest/forest.ts), are checked here against the straightforward computation over
// many generated forests (seeded, so a failure is reproducible), with cycles, missing parents,
// long chains, external namespaces, subnamespaces, halts, unmanaged namespaces and managed metadata.
import { describe, expect, it } from 'vitest';
import { Annotation, Label, treeLabel, treeLabelNamespace } from '../api/constants.js';
import type { MetaKVP } from '../api/types.js';
import { destinationLabels } from '../propagation/decide.js';
import { Hierarchy } from './hierarchy.js';
import { desiredNamespaceMetadata, type Metadata } from './plan.js';
import { HierarchyPolicy } from './policy.js';
import { anchorFacts, hcFacts, nsFacts } from './testing.js';

/** The computation as it was written first: copy, delete what HNC manages, add what it wants. */
function straightforward(h: Hierarchy, ns: string, current: Metadata): Metadata {
  const labels = { ...current.labels };
  const annotations = { ...current.annotations };
  if (!h.isManaged(ns)) {
    delete labels[Label.includedNamespace];
    return { labels, annotations };
  }
  labels[Label.includedNamespace] = 'true';
  if (h.isExternal(ns)) {
    labels[treeLabel(ns)] = '0';
    return { labels, annotations };
  }
  for (const k of Object.keys(labels)) if (treeLabelNamespace(k) !== undefined || h.policy.isManagedLabel(k)) delete labels[k];
  for (const k of Object.keys(annotations)) if (h.policy.isManagedAnnotation(k)) delete annotations[k];
  Object.assign(labels, h.treeLabels(ns), h.inheritedManaged(ns, 'labels'));
  Object.assign(annotations, h.inheritedManaged(ns, 'annotations'));
  return { labels, annotations };
}

/** A seeded generator (a linear congruential one: enough to vary the cases, and reproducible). */
function random(seed: number) {
  let s = seed;
  const int = (n: number) => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return Math.floor((s / 2 ** 31) * n);
  };
  return {
    int,
    chance: (p: number) => int(1000) < p * 1000,
    pick: <T>(xs: readonly T[]): T => xs[int(xs.length)]!,
  };
}

// Names a plain object would trip on ("constructor", numeric names) are among them; "kube-system"
// is excluded by default and "skip-*" by the policy's regex.
const NAMES = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'constructor', '0', '12', 'kube-system', 'skip-1', 'team-x', 'sub-y'];
const policy = new HierarchyPolicy({
  includedNamespaceRegex: '(?!skip-).*',
  managedLabels: ['team', 'env\\..*'],
  managedAnnotations: ['note', 'owner'],
});

type Rand = ReturnType<typeof random>;

function kvps(r: Rand, keys: readonly string[]): MetaKVP[] {
  const out: MetaKVP[] = [];
  for (const key of keys) if (r.chance(0.3)) out.push({ key, value: r.pick(['1', '2', 'x']) });
  return out;
}

/** Labels a namespace may carry now: stale tree labels, managed and other keys, a numeric key. */
function currentLabels(r: Rand, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  const keys = ['other', 'team', 'env.prod', '123', Label.includedNamespace, 'kubernetes.io/metadata.name'];
  for (const k of keys) if (r.chance(0.4)) out[k] = r.pick(['true', 'a', '7']);
  for (const n of names) if (r.chance(0.2)) out[treeLabel(n)] = String(r.int(4));
  return out;
}

function currentAnnotations(r: Rand, parents: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of ['note', 'owner', 'free', '7']) if (r.chance(0.3)) out[k] = r.pick(['x', 'y']);
  if (r.chance(0.15)) out[Annotation.managedBy] = r.pick(['argo', '', 'hnc.x-k8s.io']);
  if (r.chance(0.2)) out[Annotation.subnamespaceOf] = r.pick(parents);
  return out;
}

/** A model fed in a random order, some facts set twice, some removed again. */
function generated(seed: number): { h: Hierarchy; names: string[]; r: Rand } {
  const r = random(seed);
  const long = r.chance(0.15);
  // Now and then a chain of 40 or more namespaces (a cycle through all of it, or not).
  const names = long ? Array.from({ length: 40 + r.int(10) }, (_, i) => `n${i}`) : NAMES.filter(() => r.chance(0.7));
  const parents = [...names, 'gone', 'missing-1'];
  const h = new Hierarchy(policy);
  const steps: (() => void)[] = [];
  names.forEach((ns, i) => {
    const parent = long
      ? i > 0
        ? names[i - 1]
        : r.chance(0.5)
          ? names[names.length - 1]
          : undefined
      : r.chance(0.8)
        ? r.pick(parents)
        : undefined;
    steps.push(() =>
      h.setNamespace(
        ns,
        nsFacts({ labels: currentLabels(r, parents), annotations: currentAnnotations(r, parents), deleting: r.chance(0.05) }),
      ),
    );
    if (r.chance(0.9))
      steps.push(() =>
        h.setHierarchy(
          ns,
          hcFacts({
            parent,
            allowCascadingDeletion: r.chance(0.2),
            labels: kvps(r, ['team', 'env.dev', 'illegal']),
            annotations: kvps(r, ['note', 'bad']),
          }),
        ),
      );
    if (r.chance(0.2))
      steps.push(() => h.setAnchor(r.pick(parents), ns, anchorFacts({ labels: kvps(r, ['team']), annotations: kvps(r, ['owner']) })));
  });
  for (let i = steps.length - 1; i > 0; i--) {
    const j = r.int(i + 1);
    [steps[i], steps[j]] = [steps[j]!, steps[i]!];
  }
  for (const step of steps) {
    step();
    if (r.chance(0.05)) h.setCrdsDeleting({ hierarchy: r.chance(0.5), anchor: false });
  }
  for (const ns of names) {
    const gone = r.int(20);
    if (gone === 0) h.setNamespace(ns, undefined);
    else if (gone === 1) h.setHierarchy(ns, undefined);
  }
  return { h, names: [...names, 'gone', 'missing-1'], r };
}

const SEEDS = 300;

describe('desiredNamespaceMetadata over generated forests', () => {
  it('gives what copying, deleting and adding gives, key order included', { timeout: 60_000 }, () => {
    const wrong: string[] = [];
    let compared = 0;
    for (let seed = 1; seed <= SEEDS; seed++) {
      const { h, names, r } = generated(seed);
      for (const ns of names) {
        const facts = h.namespace(ns);
        const currents: Metadata[] = [
          { labels: { ...(facts?.labels ?? {}) }, annotations: { ...(facts?.annotations ?? {}) } },
          { labels: currentLabels(r, names), annotations: currentAnnotations(r, names) },
        ];
        for (const current of currents) {
          const before = JSON.stringify(current);
          // JSON text, not toEqual: the order of the keys is part of the answer (a patch, a rendering).
          const want = JSON.stringify(straightforward(h, ns, current));
          const got = JSON.stringify(desiredNamespaceMetadata(h, ns, current));
          if (got !== want) wrong.push(`seed ${seed}, ${ns}: ${got} instead of ${want}`);
          if (JSON.stringify(current) !== before) wrong.push(`seed ${seed}, ${ns}: the current metadata was changed`);
          compared++;
        }
        if (facts) {
          const want = JSON.stringify(
            straightforward(h, ns, { labels: { ...facts.labels }, annotations: { ...facts.annotations } }).labels,
          );
          const got = JSON.stringify(destinationLabels(h, ns));
          if (got !== want) wrong.push(`seed ${seed}, destination labels of ${ns}: ${got} instead of ${want}`);
        }
      }
    }
    expect(wrong.slice(0, 5)).toEqual([]);
    expect(compared).toBeGreaterThan(3000);
  });
});

describe('the forest over generated forests', () => {
  it('answers as walks over its parent relation do', { timeout: 60_000 }, () => {
    const wrong: string[] = [];
    const check = (where: string, got: unknown, want: unknown) => {
      if (JSON.stringify(got) !== JSON.stringify(want)) wrong.push(`${where}: ${JSON.stringify(got)} instead of ${JSON.stringify(want)}`);
    };
    let longs = 0;
    for (let seed = 1; seed <= SEEDS; seed++) {
      const { h } = generated(seed);
      const f = h.forest;
      const known = [...f.names(), ...f.missing()];
      if (known.length > 32) longs++;
      const parentOf = new Map(known.map((ns) => [ns, f.parent(ns)]));
      // Each name's way up, walked over the parent relation alone: parent first, each name once.
      const up = new Map<string, string[]>();
      for (const ns of known) {
        const names: string[] = [];
        for (let p = parentOf.get(ns); p !== undefined && p !== ns && !names.includes(p); p = parentOf.get(p)) names.push(p);
        up.set(ns, names);
      }
      for (const ns of known) {
        const where = `seed ${seed}, ${ns}`;
        if (!f.has(ns)) wrong.push(`${where}: not known`);
        // Only existing namespaces have a parent, and a missing one stays only while a child names it.
        if (f.isMissing(ns) && (parentOf.get(ns) !== undefined || f.children(ns).length === 0)) wrong.push(`${where}: a missing node kept`);
        check(`${where}, children`, f.children(ns), known.filter((c) => parentOf.get(c) === ns).sort());
        check(`${where}, ancestors`, f.ancestors(ns), [...up.get(ns)!].reverse());
        // In a cycle: its way up comes back to it (it may be its own parent).
        const top = up.get(ns)!.at(-1) ?? ns;
        check(`${where}, in a cycle`, f.inCycle(ns), parentOf.get(top) === ns);
        // Below it: whatever has it on its way up (a cycle member has the rest of its cycle).
        check(`${where}, descendants`, f.descendants(ns), known.filter((d) => d !== ns && up.get(d)!.includes(ns)).sort());
      }
    }
    expect(wrong.slice(0, 5)).toEqual([]);
    expect(longs, 'some forests have long chains').toBeGreaterThan(10);
  });
});
