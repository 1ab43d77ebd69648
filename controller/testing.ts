// What a reconciler sees, in memory, for unit tests: the watch caches (stores) of namespaces,
// HierarchyConfigurations and anchors, the hierarchy model they feed (as kube/hierarchy-cache.ts
// feeds it), and recorders of the writes and Events the reconciler asks for (kube/testing.ts).
// Nothing here answers a write: a test applies the watch event it wants the reconciler to see next.
// Test-only: nothing outside tests imports this file.
import pino from 'pino';
import { API_VERSION, Kind, Singleton } from '../core/api/constants.js';
import type { HierarchyConfiguration, SubnamespaceAnchor } from '../core/api/types.js';
import { Hierarchy } from '../core/hierarchy/hierarchy.js';
import { HierarchyPolicy, type PolicyOptions } from '../core/hierarchy/policy.js';
import { anchorFacts, hierarchyFacts, namespaceFacts } from '../kube/hierarchy-cache.js';
import type { NamespaceObject } from '../core/api/types.js';
import { RecordingEvents, RecordingWrites } from '../kube/testing.js';
import { Store } from '../kube/watch/store.js';

export const silentLog = pino({ level: 'silent' });

type Meta = { labels?: Record<string, string>; annotations?: Record<string, string>; deletionTimestamp?: string; finalizers?: string[] };

export class World {
  readonly hierarchy: Hierarchy;
  readonly namespaces = new Store<NamespaceObject>();
  readonly hierarchies = new Store<HierarchyConfiguration>();
  readonly anchors = new Store<SubnamespaceAnchor>();
  readonly writes = new RecordingWrites();
  readonly events = new RecordingEvents();
  private rv = 1;

  constructor(policy?: PolicyOptions) {
    this.hierarchy = new Hierarchy(new HierarchyPolicy(policy));
  }

  /** A namespace's watch event (added or modified): the cache and the model take it. */
  namespace(name: string, meta: Meta = {}): NamespaceObject {
    const obj: NamespaceObject = {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { ...structuredClone(meta), name, uid: `uid-${name}`, resourceVersion: this.nextVersion() },
    };
    this.namespaces.upsert(obj);
    this.hierarchy.setNamespace(name, namespaceFacts(obj));
    return obj;
  }

  /** A HierarchyConfiguration's watch event: `obj` as the whole object (a replace is whole). */
  hc(ns: string, obj: Partial<HierarchyConfiguration> & { metadata?: Meta } = {}): HierarchyConfiguration {
    const hc: HierarchyConfiguration = {
      apiVersion: API_VERSION,
      kind: Kind.HierarchyConfiguration,
      ...structuredClone(obj),
      metadata: {
        ...structuredClone(obj.metadata ?? {}),
        name: Singleton.hierarchy,
        namespace: ns,
        uid: `uid-${ns}-hc`,
        resourceVersion: this.nextVersion(),
      },
    };
    this.hierarchies.upsert(hc);
    this.hierarchy.setHierarchy(ns, hierarchyFacts(hc));
    return hc;
  }

  /** An anchor's watch event: `anchor` as the whole object. */
  anchor(parent: string, child: string, anchor: Partial<SubnamespaceAnchor> & { metadata?: Meta } = {}): SubnamespaceAnchor {
    const obj: SubnamespaceAnchor = {
      apiVersion: API_VERSION,
      kind: Kind.SubnamespaceAnchor,
      ...structuredClone(anchor),
      metadata: {
        ...structuredClone(anchor.metadata ?? {}),
        name: child,
        namespace: parent,
        uid: `uid-${parent}-${child}`,
        resourceVersion: this.nextVersion(),
      },
    };
    this.anchors.upsert(obj);
    this.hierarchy.setAnchor(parent, child, anchorFacts(obj));
    return obj;
  }

  /** An anchor's DELETED watch event. */
  anchorGone(parent: string, child: string): void {
    this.anchors.delete(`${parent}/${child}`);
    this.hierarchy.setAnchor(parent, child, undefined);
  }

  /** A namespace's DELETED watch event. */
  namespaceGone(name: string): void {
    this.namespaces.delete(name);
    this.hierarchy.setNamespace(name, undefined);
  }

  private nextVersion(): string {
    return String(this.rv++);
  }
}
