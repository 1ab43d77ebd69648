import { describe, expect, it } from 'vitest';
import type { PropagatableObject } from '../../core/propagation/copy.js';
import { observedByOnePropagator, type ObjectObserver } from './propagator.js';

/** An observer keeping a copy of the objects, as the webhooks' RBAC copy does: only a delete removes one. */
function copyKeeper() {
  const copy = new Map<string, string>();
  let synced = false;
  const observer: ObjectObserver<string> = {
    summarize: (obj) => obj.metadata?.name ?? '',
    changed: (ns, name, s) => (s === undefined ? copy.delete(`${ns}/${name}`) : copy.set(`${ns}/${name}`, s)),
    synced: (s) => {
      synced = s;
      if (!s) copy.clear();
    },
  };
  return { observer, copy, isSynced: () => synced };
}

describe('observedByOnePropagator', () => {
  it('hears nothing from a propagator once it is stopping: an object it saw then and the next propagator never lists is not kept', () => {
    const { observer, copy, isSynced } = copyKeeper();
    const old = observedByOnePropagator(observer);
    old.changed('a', 'kept', 'kept');
    old.synced(true);
    // The propagator stops (the type's version changed, say); its watch still delivers an event
    // until its reflector has stopped.
    old.synced(false);
    old.changed('a', 'late', 'late');
    // The object is deleted before the next propagator lists: that one never sees it, so no delete comes.
    const next = observedByOnePropagator(observer);
    next.changed('a', 'kept', 'kept');
    next.synced(true);
    expect(isSynced()).toBe(true);
    expect([...copy.keys()]).toEqual(['a/kept']);
  });

  it('passes everything through until then', () => {
    const { observer, copy } = copyKeeper();
    const o = observedByOnePropagator(observer);
    expect(o.summarize({ metadata: { name: 'x' } } as PropagatableObject)).toBe('x');
    o.changed('a', 'x', 'x');
    o.changed('a', 'y', 'y');
    o.changed('a', 'x', undefined);
    expect([...copy.keys()]).toEqual(['a/y']);
  });

  it("passes the watch's freshness through while open, and none of a stopping propagator's", () => {
    const seen: boolean[] = [];
    const o = observedByOnePropagator<string>({
      summarize: () => '',
      changed: () => undefined,
      synced: () => undefined,
      fresh: (f) => void seen.push(f),
    });
    o.fresh?.(false);
    o.fresh?.(true);
    o.synced(false);
    o.fresh?.(false);
    expect(seen).toEqual([false, true]);
  });
});
