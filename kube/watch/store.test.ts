import { describe, expect, it } from 'vitest';
import { deepFreeze, makeKey, objectKey, splitKey, Store } from './store.js';

interface Obj {
  metadata: { name: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string> };
}

const obj = (ns: string | undefined, name: string, rv: string, labels?: Record<string, string>): Obj => ({
  metadata: { name, resourceVersion: rv, ...(ns ? { namespace: ns } : {}), ...(labels ? { labels } : {}) },
});

describe('keys', () => {
  it('are namespace/name, or name when cluster-scoped', () => {
    expect(objectKey(obj('ns', 'a', '1'))).toBe('ns/a');
    expect(objectKey(obj(undefined, 'a', '1'))).toBe('a');
    expect(makeKey('ns', 'a')).toBe('ns/a');
    expect(makeKey('', 'a')).toBe('a');
    expect(splitKey('ns/a')).toEqual({ namespace: 'ns', name: 'a' });
    expect(splitKey('a')).toEqual({ namespace: '', name: 'a' });
    expect(() => objectKey({ metadata: {} })).toThrow(/no metadata.name/);
  });
});

describe('Store', () => {
  it('gets, lists and indexes by namespace', () => {
    const s = new Store<Obj>();
    s.upsert(obj('x', 'a', '1'));
    s.upsert(obj('x', 'b', '2'));
    s.upsert(obj('y', 'a', '3'));
    s.upsert(obj(undefined, 'x', '4'));
    expect(s.get('x/a')?.metadata.resourceVersion).toBe('1');
    expect(s.keys().sort()).toEqual(['x', 'x/a', 'x/b', 'y/a']);
    expect(s.size).toBe(4);
    expect(s.byNamespace('x').map(objectKey).sort()).toEqual(['x/a', 'x/b']);
    expect(s.byNamespace('').map(objectKey)).toEqual(['x']);
    expect(s.byNamespace('none')).toEqual([]);
    expect(s.delete('x/a')?.metadata.resourceVersion).toBe('1');
    expect(s.delete('x/a')).toBeUndefined();
    expect(s.byNamespace('x').map(objectKey)).toEqual(['x/b']);
  });

  it('keeps custom indexes current across updates, including for objects already present', () => {
    const s = new Store<Obj>();
    s.upsert(obj('x', 'a', '1', { from: 'p' }));
    s.addIndex('from', (o) => (o.metadata.labels?.from ? [o.metadata.labels.from] : []));
    s.upsert(obj('y', 'b', '2', { from: 'p' }));
    expect(s.byIndex('from', 'p').map(objectKey).sort()).toEqual(['x/a', 'y/b']);
    s.upsert(obj('x', 'a', '3', { from: 'q' }));
    expect(s.byIndex('from', 'p').map(objectKey)).toEqual(['y/b']);
    expect(s.byIndex('from', 'q').map(objectKey)).toEqual(['x/a']);
    s.delete('y/b');
    expect(s.byIndex('from', 'p')).toEqual([]);
    expect(() => s.byIndex('nope', 'p')).toThrow(/no index/);
    expect(() => s.addIndex('from', () => [])).toThrow(/already exists/);
  });

  it('replace() reports only real differences and keeps unchanged objects', () => {
    const s = new Store<Obj>();
    const same = obj('x', 'same', '1');
    s.upsert(same);
    s.upsert(obj('x', 'changed', '2'));
    s.upsert(obj('x', 'gone', '3'));
    const changes = s.replace([obj('x', 'same', '1'), obj('x', 'changed', '5'), obj('x', 'new', '6')], '9');
    expect(changes.map((c) => [c.type, objectKey(c.obj), c.old?.metadata.resourceVersion])).toEqual([
      ['DELETED', 'x/gone', '3'],
      ['MODIFIED', 'x/changed', '2'],
      ['ADDED', 'x/new', undefined],
    ]);
    expect(s.get('x/same')).toBe(same);
    expect(s.keys().sort()).toEqual(['x/changed', 'x/new', 'x/same']);
    expect(s.resourceVersion).toBe('9');
    expect(s.byNamespace('x')).toHaveLength(3);
  });

  it('deepFreeze freezes nested values', () => {
    const o = deepFreeze({ metadata: { name: 'a', labels: { k: 'v' } }, list: [{ x: 1 }] });
    expect(Object.isFrozen(o.metadata.labels)).toBe(true);
    expect(Object.isFrozen(o.list[0])).toBe(true);
    expect(() => {
      (o.metadata.labels as Record<string, string>).k = 'w';
    }).toThrow(TypeError);
  });
});
