// The checker's own model (soak/expected.ts): what it must say for the cases the soak creates.
import { describe, expect, it } from 'vitest';
import { ancestry, content, expectedCopies, propagatesInto, selectorMatches, treeLabels } from './expected.js';
import type { KubeObject } from './kinds.js';

const ns = (name: string, labels: Record<string, string> = {}): KubeObject => ({ metadata: { name, labels } });
const role = (namespace: string, name: string, annotations: Record<string, string> = {}): KubeObject => ({
  metadata: { name, namespace, annotations },
  rules: [{ verbs: ['get'] }],
});
const parentOf = new Map<string, string | undefined>([
  ['root', undefined],
  ['x', 'root'],
  ['s1', 'x'],
  ['y', 'root'],
]);

describe('the soak checker model', () => {
  it('walks up to the root, and refuses a cycle or a missing parent', () => {
    expect(ancestry('s1', parentOf)).toEqual(['s1', 'x', 'root']);
    expect(treeLabels(['s1', 'x', 'root'])).toEqual({
      's1.tree.hnc.x-k8s.io/depth': '0',
      'x.tree.hnc.x-k8s.io/depth': '1',
      'root.tree.hnc.x-k8s.io/depth': '2',
    });
    expect(() =>
      ancestry(
        'a',
        new Map([
          ['a', 'b'],
          ['b', 'a'],
        ]),
      ),
    ).toThrow(/cycle/);
    expect(() => ancestry('a', new Map([['a', 'gone']]))).toThrow(/does not exist/);
  });

  it('matches the selector forms the users write', () => {
    const labels = { 'x.tree.hnc.x-k8s.io/depth': '1', env: 'prod' };
    expect(selectorMatches('x.tree.hnc.x-k8s.io/depth', labels)).toBe(true);
    expect(selectorMatches('!x.tree.hnc.x-k8s.io/depth', labels)).toBe(false);
    expect(selectorMatches('env=prod,env!=dev', labels)).toBe(true);
    expect(selectorMatches('env==dev', labels)).toBe(false);
    expect(() => selectorMatches('env in (a)', labels)).toThrow(/does not understand/);
  });

  it('decides by mode, select, treeSelect, none and all', () => {
    const inX = { 'x.tree.hnc.x-k8s.io/depth': '1' };
    expect(propagatesInto(role('r', 'a'), 'Propagate', inX)).toBe(true);
    expect(propagatesInto(role('r', 'a'), 'AllowPropagate', inX)).toBe(false);
    expect(propagatesInto(role('r', 'a'), 'Remove', inX)).toBe(false);
    expect(propagatesInto(role('r', 'a', { 'propagate.hnc.x-k8s.io/treeSelect': '!x' }), 'Propagate', inX)).toBe(false);
    expect(propagatesInto(role('r', 'a', { 'propagate.hnc.x-k8s.io/treeSelect': 'x' }), 'AllowPropagate', inX)).toBe(true);
    expect(propagatesInto(role('r', 'a', { 'propagate.hnc.x-k8s.io/select': '!x.tree.hnc.x-k8s.io/depth' }), 'Propagate', inX)).toBe(false);
    expect(propagatesInto(role('r', 'a', { 'propagate.hnc.x-k8s.io/none': 'true' }), 'Propagate', inX)).toBe(false);
    expect(propagatesInto(role('r', 'a', { 'propagate.hnc.x-k8s.io/all': 'true' }), 'AllowPropagate', inX)).toBe(true);
  });

  it('takes the highest ancestor source and leaves a namespace its own source of the name', () => {
    const sources = [role('root', 'a'), role('x', 'a'), role('x', 'b'), role('s1', 'b'), role('y', 'c')];
    const chain = ancestry('s1', parentOf);
    expect(expectedCopies(ns('s1'), chain, sources, 'Propagate')).toEqual(new Map([['a', 'root']]));
    // Not into s1 (a subtree that does not hold x's label under the select), so the next one down is not there either.
    const narrowed = [role('root', 'a', { 'propagate.hnc.x-k8s.io/treeSelect': '!x' }), role('x', 'a')];
    expect(expectedCopies(ns('s1'), chain, narrowed, 'Propagate')).toEqual(new Map([['a', 'x']]));
  });

  it('compares content without HNC-managed metadata and server fields', () => {
    const source = { ...role('x', 'a', { 'propagate.hnc.x-k8s.io/none': 'false', note: 'n' }), status: {} };
    const copy: KubeObject = {
      metadata: {
        name: 'a',
        namespace: 's1',
        uid: 'u',
        resourceVersion: '9',
        labels: { 'hnc.x-k8s.io/inherited-from': 'x', 'app.kubernetes.io/managed-by': 'hnc.x-k8s.io' },
        annotations: { note: 'n' },
      },
      rules: [{ verbs: ['get'] }],
    };
    expect(content(copy)).toEqual(content(source));
    expect(content({ ...copy, rules: [] })).not.toEqual(content(source));
  });
});
