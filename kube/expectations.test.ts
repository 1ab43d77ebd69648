import { describe, expect, it } from 'vitest';
import { WriteExpectations } from './expectations.js';

describe('WriteExpectations', () => {
  it('reports a cache that has not caught up with our write, and forgets once it has', () => {
    const e = new WriteExpectations();
    expect(e.stale('ns/a', '10')).toBe(false);
    e.wrote('ns/a', '10');
    expect(e.stale('ns/a', '10')).toBe(true);
    expect(e.stale('ns/a', '11')).toBe(false);
    expect(e.stale('ns/a', '10')).toBe(false); // forgotten
  });

  it('treats a create as pending until the object shows up', () => {
    const e = new WriteExpectations();
    e.wrote('ns/new', undefined);
    expect(e.stale('ns/new', undefined)).toBe(true);
    expect(e.stale('ns/new', '5')).toBe(false);
  });

  it('stops waiting after the bound, so a lost event cannot wedge a key', () => {
    const e = new WriteExpectations(0);
    e.wrote('k', '1');
    expect(e.stale('k', '1')).toBe(false);
  });
});
