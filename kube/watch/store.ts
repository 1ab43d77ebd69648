// An in-memory cache of one resource's objects, as raw JSON, filled by a Reflector.
//
// Immutability: cached objects are shared by every reader, so they must never be changed in
// place. The reflector deep-freezes them by default (see `deepFreeze`), which turns an accidental
// write into a TypeError instead of a silent cache corruption; callers that need a modified copy
// take `structuredClone(obj)` first.

/** The fields of any Kubernetes object the cache relies on. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    resourceVersion?: string;
    uid?: string;
  };
}

/** `namespace/name`, or `name` for a cluster-scoped object (client-go's MetaNamespaceKeyFunc). */
export function objectKey(obj: KubeObject): string {
  const name = obj.metadata?.name;
  if (!name) throw new Error(`object has no metadata.name: ${JSON.stringify(obj).slice(0, 200)}`);
  const ns = obj.metadata?.namespace;
  return ns ? `${ns}/${name}` : name;
}

/** Builds a key from its parts; `namespace` empty or absent for cluster-scoped objects. */
export function makeKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

/** Splits a key back into namespace ('' for cluster-scoped) and name. */
export function splitKey(key: string): { namespace: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { namespace: '', name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

export { deepFreeze } from '../../core/util/freeze.js';

/** Maps an object to the index values it is filed under (e.g. a label's value). */
export type IndexFunc<T> = (obj: T) => readonly string[];

/** The read side of a Store: what reconcilers and webhooks get. */
export interface ReadonlyStore<T extends KubeObject = KubeObject> {
  get(key: string): T | undefined;
  list(): T[];
  /** Objects in one namespace; '' gives the cluster-scoped ones. */
  byNamespace(namespace: string): T[];
  /** Objects filed under `value` by the indexer registered as `index`. */
  byIndex(index: string, value: string): T[];
  keys(): string[];
  readonly size: number;
  /** The collection's resourceVersion as of the last list, event or bookmark applied. */
  readonly resourceVersion: string;
}

/** One notification a `replace` produced: only real differences are reported. */
export interface StoreChange<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  obj: T;
  old?: T;
}

const NAMESPACE_INDEX = 'namespace';

/**
 * Objects by key, with secondary indexes kept up to date on every write. The namespace index is
 * always present; others are added with `addIndex` (before the store fills, ideally).
 */
export class Store<T extends KubeObject = KubeObject> implements ReadonlyStore<T> {
  private readonly items = new Map<string, T>();
  private readonly indexers = new Map<string, IndexFunc<T>>();
  // index name -> index value -> keys
  private readonly indices = new Map<string, Map<string, Set<string>>>();
  private rv = '';

  constructor() {
    this.addIndex(NAMESPACE_INDEX, (obj) => [obj.metadata?.namespace ?? '']);
  }

  /** Registers an index and files the objects already present under it. */
  addIndex(name: string, fn: IndexFunc<T>): void {
    if (this.indexers.has(name)) throw new Error(`index ${name} already exists`);
    this.indexers.set(name, fn);
    this.indices.set(name, new Map());
    for (const [key, obj] of this.items) this.fileUnder(name, fn, key, obj);
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  list(): T[] {
    return [...this.items.values()];
  }

  byNamespace(namespace: string): T[] {
    return this.byIndex(NAMESPACE_INDEX, namespace);
  }

  byIndex(index: string, value: string): T[] {
    const idx = this.indices.get(index);
    if (!idx) throw new Error(`no index named ${index}`);
    const out: T[] = [];
    for (const key of idx.get(value) ?? []) {
      const obj = this.items.get(key);
      if (obj) out.push(obj);
    }
    return out;
  }

  keys(): string[] {
    return [...this.items.keys()];
  }

  get size(): number {
    return this.items.size;
  }

  get resourceVersion(): string {
    return this.rv;
  }

  setResourceVersion(rv: string): void {
    this.rv = rv;
  }

  /** Adds or replaces an object; returns the previous one. */
  upsert(obj: T): T | undefined {
    const key = objectKey(obj);
    const old = this.items.get(key);
    if (old) this.unindex(key, old);
    this.items.set(key, obj);
    this.index(key, obj);
    return old;
  }

  /** Removes an object by key; returns what was there. */
  delete(key: string): T | undefined {
    const old = this.items.get(key);
    if (!old) return undefined;
    this.unindex(key, old);
    this.items.delete(key);
    return old;
  }

  /**
   * Swaps the whole contents for a fresh list and reports the differences: objects that vanished
   * (DELETED, carrying the last known state), new ones (ADDED) and ones whose resourceVersion
   * changed (MODIFIED). An object with the same resourceVersion is the same object: the cached
   * one is kept and nothing is reported, so a relist does not wake every handler.
   */
  replace(objs: readonly T[], resourceVersion: string): StoreChange<T>[] {
    const changes: StoreChange<T>[] = [];
    const fresh = new Map<string, T>();
    for (const obj of objs) fresh.set(objectKey(obj), obj);
    for (const [key, old] of [...this.items]) {
      if (!fresh.has(key)) {
        this.delete(key);
        changes.push({ type: 'DELETED', obj: old, old });
      }
    }
    for (const [key, obj] of fresh) {
      const old = this.items.get(key);
      if (!old) {
        this.upsert(obj);
        changes.push({ type: 'ADDED', obj });
      } else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion) {
        this.upsert(obj);
        changes.push({ type: 'MODIFIED', obj, old });
      }
    }
    this.rv = resourceVersion;
    return changes;
  }

  private index(key: string, obj: T): void {
    for (const [name, fn] of this.indexers) this.fileUnder(name, fn, key, obj);
  }

  private fileUnder(name: string, fn: IndexFunc<T>, key: string, obj: T): void {
    const idx = this.indices.get(name)!;
    for (const value of fn(obj)) {
      let keys = idx.get(value);
      if (!keys) idx.set(value, (keys = new Set()));
      keys.add(key);
    }
  }

  private unindex(key: string, obj: T): void {
    for (const [name, fn] of this.indexers) {
      const idx = this.indices.get(name)!;
      for (const value of fn(obj)) {
        const keys = idx.get(value);
        keys?.delete(key);
        if (keys?.size === 0) idx.delete(value);
      }
    }
  }
}
