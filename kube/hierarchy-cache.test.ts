import { describe, expect, it } from 'vitest';
import { anchorFacts, factsOnly, hierarchyFacts, namespaceFacts } from './hierarchy-cache.js';
import type { HierarchyConfiguration, NamespaceObject, SubnamespaceAnchor } from '../core/api/types.js';

const meta = { resourceVersion: '42', uid: 'u-1', creationTimestamp: '2026-12-01T00:00:00Z', generation: 3 };

describe('factsOnly (the admission thread caches only what the model reads)', () => {
  it('keeps what the namespace facts read, and the key and version, and nothing else', () => {
    const ns: NamespaceObject = {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        ...meta,
        name: 'team-a',
        labels: { 'team-a.tree.hnc.x-k8s.io/depth': '0', env: 'prod' },
        annotations: { 'hnc.x-k8s.io/subnamespace-of': 'org' },
        deletionTimestamp: '2026-12-02T00:00:00Z',
        finalizers: ['kubernetes'],
      },
      status: { phase: 'Terminating' },
    };
    const slim = factsOnly.namespace(ns);
    expect(namespaceFacts(slim)).toEqual(namespaceFacts(ns));
    expect(slim).toEqual({
      metadata: {
        name: 'team-a',
        resourceVersion: '42',
        deletionTimestamp: '2026-12-02T00:00:00Z',
        labels: ns.metadata.labels,
        annotations: ns.metadata.annotations,
      },
    });
    // A namespace without labels or deletion has facts all the same.
    const bare: NamespaceObject = { metadata: { name: 'b', resourceVersion: '1' } };
    expect(namespaceFacts(factsOnly.namespace(bare))).toEqual(namespaceFacts(bare));
  });

  it('drops a HierarchyConfiguration status (children, conditions) and keeps its spec', () => {
    const hc: HierarchyConfiguration = {
      apiVersion: 'hnc.x-k8s.io/v1alpha2',
      kind: 'HierarchyConfiguration',
      metadata: { ...meta, name: 'hierarchy', namespace: 'team-a' },
      spec: { parent: 'org', allowCascadingDeletion: true, labels: [{ key: 'k', value: 'v' }], annotations: [] },
      status: {
        children: ['x', 'y'],
        conditions: [
          { type: 'ActivitiesHalted', status: 'True', reason: 'ParentMissing', message: 'm', lastTransitionTime: '2026-12-01T00:00:00Z' },
        ],
      },
    };
    const slim = factsOnly.hierarchy(hc);
    expect(hierarchyFacts(slim)).toEqual(hierarchyFacts(hc));
    expect(slim).toEqual({ metadata: { name: 'hierarchy', namespace: 'team-a', resourceVersion: '42' }, spec: hc.spec });
  });

  it("keeps an anchor's spec, state and finalizers", () => {
    const anchor: SubnamespaceAnchor = {
      apiVersion: 'hnc.x-k8s.io/v1alpha2',
      kind: 'SubnamespaceAnchor',
      metadata: { ...meta, name: 'child', namespace: 'team-a', finalizers: ['hnc.x-k8s.io'], deletionTimestamp: '2026-12-02T00:00:00Z' },
      spec: { labels: [{ key: 'a', value: 'b' }] },
      status: { status: 'Ok' },
    };
    const slim = factsOnly.anchor(anchor);
    expect(anchorFacts(slim)).toEqual(anchorFacts(anchor));
    const fresh: SubnamespaceAnchor = { metadata: { name: 'new', namespace: 'team-a', resourceVersion: '7' } };
    expect(anchorFacts(factsOnly.anchor(fresh))).toEqual(anchorFacts(fresh));
    expect(factsOnly.anchor(fresh)).not.toHaveProperty('status');
  });
});
