import { describe, expect, it } from 'vitest';
import { HierarchyPolicy, PolicyError } from './policy.js';

describe('HierarchyPolicy: managed namespaces (docs/behaviour.md §3.1)', () => {
  it('by default manages everything but the kube-* system namespaces and hnc-system', () => {
    const p = new HierarchyPolicy();
    for (const ns of ['default', 'a', 'team-kube-system']) expect(p.isManaged(ns)).toBe(true);
    for (const ns of ['kube-system', 'kube-public', 'kube-node-lease', 'hnc-system']) expect(p.isManaged(ns)).toBe(false);
    expect([...p.excluded].sort()).toEqual(['hnc-system', 'kube-node-lease', 'kube-public', 'kube-system']);
  });

  it('counts the empty name (no parent) as managed, even when the regex would not match it', () => {
    expect(new HierarchyPolicy().isManaged('')).toBe(true);
    expect(new HierarchyPolicy({ includedNamespaceRegex: 'team-.+' }).isManaged('')).toBe(true);
    expect(new HierarchyPolicy({ includedNamespaceRegex: 'team-.+' }).whyUnmanaged('')).toBeUndefined();
  });

  it('replaces the default exclusions with the given list, but always excludes its own namespace', () => {
    const p = new HierarchyPolicy({ excludedNamespaces: ['secret'], hncNamespace: 'hnc' });
    expect(p.isManaged('kube-system')).toBe(true);
    expect(p.isManaged('secret')).toBe(false);
    expect(p.isManaged('hnc')).toBe(false);
    expect(p.isManaged('hnc-system')).toBe(true);
  });

  it('anchors the included-namespace regex at both ends', () => {
    const p = new HierarchyPolicy({ includedNamespaceRegex: 'team-[a-z]+' });
    expect(p.isManaged('team-a')).toBe(true);
    expect(p.isManaged('xteam-a')).toBe(false);
    expect(p.isManaged('team-a1')).toBe(false);
    expect(p.isManaged('team-')).toBe(false);
  });

  it('anchors an alternation as a whole, not just its first and last branch', () => {
    const p = new HierarchyPolicy({ includedNamespaceRegex: 'a|b' });
    expect(p.isManaged('a')).toBe(true);
    expect(p.isManaged('b')).toBe(true);
    expect(p.isManaged('ab')).toBe(false);
    expect(p.isManaged('xb')).toBe(false);
    expect(p.isManaged('ax')).toBe(false);
  });

  it('excludes a listed namespace even if the regex matches it', () => {
    const p = new HierarchyPolicy({ includedNamespaceRegex: 'kube-.*' });
    expect(p.isManaged('kube-system')).toBe(false);
    expect(p.isManaged('kube-foo')).toBe(true);
  });

  it('explains in HNC words why a namespace is unmanaged', () => {
    const p = new HierarchyPolicy({ includedNamespaceRegex: 'team-.*' });
    expect(p.whyUnmanaged('team-a')).toBeUndefined();
    expect(p.whyUnmanaged('kube-system')).toBe('excluded by the HNC administrator');
    expect(p.whyUnmanaged('hnc-system')).toBe('excluded by the HNC administrator');
    expect(p.whyUnmanaged('other')).toBe('does not match the regex set by the HNC administrator: `^team-.*$`');
  });

  it('rejects an invalid included-namespace regex with a PolicyError naming the flag', () => {
    expect(() => new HierarchyPolicy({ includedNamespaceRegex: 'team-(' })).toThrow(PolicyError);
    expect(() => new HierarchyPolicy({ includedNamespaceRegex: 'team-(' })).toThrow(
      /^--included-namespace-regex "team-\(" is not a valid regular expression: /,
    );
  });
});

describe('HierarchyPolicy: managed labels and annotations (docs/behaviour.md §3.5)', () => {
  it('manages no label or annotation by default', () => {
    const p = new HierarchyPolicy();
    expect(p.isManagedLabel('team')).toBe(false);
    expect(p.isManagedAnnotation('team')).toBe(false);
  });

  it('matches keys against any of the regexes, each anchored at both ends', () => {
    const p = new HierarchyPolicy({ managedLabels: ['team', 'env\\.example\\.com/.*'], managedAnnotations: ['note'] });
    expect(p.isManagedLabel('team')).toBe(true);
    expect(p.isManagedLabel('env.example.com/tier')).toBe(true);
    expect(p.isManagedLabel('teams')).toBe(false);
    expect(p.isManagedLabel('my-team')).toBe(false);
    expect(p.isManagedLabel('x.env.example.com/tier')).toBe(false);
    expect(p.isManagedLabel('note')).toBe(false);
    expect(p.isManagedAnnotation('note')).toBe(true);
    expect(p.isManagedAnnotation('team')).toBe(false);
    expect(p.isManagedAnnotation('notes')).toBe(false);
  });

  it.each([
    ['--managed-namespace-label', { managedLabels: ['.*'] }, '.*'],
    ['--managed-namespace-label', { managedLabels: ['team', 'hnc\\.x-k8s\\.io'] }, 'hnc\\.x-k8s\\.io'],
    ['--managed-namespace-annotation', { managedAnnotations: ['hnc.x-k8s.(io|com)'] }, 'hnc.x-k8s.(io|com)'],
  ])('rejects a %s regex that matches "hnc.x-k8s.io"', (flag, opts, re) => {
    expect(() => new HierarchyPolicy(opts)).toThrow(PolicyError);
    expect(() => new HierarchyPolicy(opts)).toThrow(`${flag} "${re}" may not match "hnc.x-k8s.io", which HNC itself manages`);
  });

  it('rejects a regex that matches keys HNC itself manages (beyond HNC, which checks only the bare group)', () => {
    expect(() => new HierarchyPolicy({ managedLabels: ['hnc\\.x-k8s\\.io/.*'] })).toThrow(
      '--managed-namespace-label "hnc\\.x-k8s\\.io/.*" may not match "hnc.x-k8s.io/included-namespace", which HNC itself manages',
    );
    expect(() => new HierarchyPolicy({ managedLabels: ['.*\\.tree\\.hnc\\.x-k8s\\.io/depth'] })).toThrow(
      /may not match "default\.tree\.hnc\.x-k8s\.io\/depth"/,
    );
    expect(() => new HierarchyPolicy({ managedAnnotations: ['example\\.com/.*'] })).not.toThrow();
  });

  it('rejects an invalid managed label or annotation regex', () => {
    expect(() => new HierarchyPolicy({ managedLabels: ['team['] })).toThrow(
      /^--managed-namespace-label "team\[" is not a valid regular expression: /,
    );
    expect(() => new HierarchyPolicy({ managedAnnotations: ['*'] })).toThrow(
      /^--managed-namespace-annotation "\*" is not a valid regular expression: /,
    );
    try {
      new HierarchyPolicy({ managedLabels: ['('] });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(PolicyError);
      expect((err as Error).name).toBe('PolicyError');
    }
  });
});
