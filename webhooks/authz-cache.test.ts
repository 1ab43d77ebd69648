import { describe, expect, it } from 'vitest';
import type { UserInfo } from '../core/api/types.js';
import { ALLOW_TTL_MS, AllowCache, checkKey, type ResourceCheck } from './authz-cache.js';

const alice: UserInfo = { username: 'alice', uid: 'u1', groups: ['system:authenticated', 'team'], extra: { scopes: ['a', 'b'] } };
const check: ResourceCheck = { verb: 'update', group: 'hnc.x-k8s.io', resource: 'hierarchyconfigurations', namespace: 'mid' };

/** A cache on a clock the test moves, and an API server whose answers the test gives. */
function setup(opts: { maxEntries?: number } = {}) {
  let now = 1_000;
  const cache = new AllowCache({ now: () => now, ...opts });
  const asked: string[] = [];
  let answer: boolean | Error = true;
  const ask = (user: UserInfo, c: ResourceCheck) =>
    cache.userCan(user, c, () => {
      asked.push(`${user.username} ${c.verb} ${c.namespace ?? ''}`);
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    });
  return {
    cache,
    asked,
    ask,
    advance: (ms: number) => (now += ms),
    answer: (a: boolean | Error) => (answer = a),
  };
}

describe('AllowCache', () => {
  it('answers an allow from the cache within the TTL, and asks again once it has passed', async () => {
    const t = setup();
    expect(await t.ask(alice, check)).toBe(true);
    t.advance(ALLOW_TTL_MS - 1);
    t.answer(false); // revoked: not seen until the allow expires
    expect(await t.ask(alice, check)).toBe(true);
    expect(t.asked).toHaveLength(1);
    t.advance(1);
    expect(await t.ask(alice, check)).toBe(false);
    expect(t.asked).toHaveLength(2);
  });

  it('counts the TTL from when the review was asked, not from when it answered', async () => {
    let now = 0;
    const cache = new AllowCache({ now: () => now });
    let release!: (allowed: boolean) => void;
    const first = cache.userCan(alice, check, () => new Promise((resolve) => (release = resolve)));
    now = ALLOW_TTL_MS; // the answer takes the whole TTL to come
    release(true);
    expect(await first).toBe(true);
    let asked = 0;
    expect(await cache.userCan(alice, check, () => (asked++, Promise.resolve(true)))).toBe(true);
    expect(asked).toBe(1);
  });

  it('never keeps a denial: a permission granted after one counts at the next try', async () => {
    const t = setup();
    t.answer(false);
    expect(await t.ask(alice, check)).toBe(false);
    expect(await t.ask(alice, check)).toBe(false);
    t.answer(true);
    expect(await t.ask(alice, check)).toBe(true);
    expect(t.asked).toHaveLength(3);
    expect(t.cache.size).toBe(1);
  });

  it('never keeps an error: the same check asks again, and the error reaches the caller', async () => {
    const t = setup();
    t.answer(new Error('connection refused'));
    await expect(t.ask(alice, check)).rejects.toThrow('connection refused');
    t.answer(true);
    expect(await t.ask(alice, check)).toBe(true);
    expect(t.asked).toHaveLength(2);
  });

  it('asks once for identical checks in flight together, and again for a different one', async () => {
    const cache = new AllowCache({ now: () => 0 });
    const releases: Array<(allowed: boolean) => void> = [];
    const ask = () => new Promise<boolean>((resolve) => releases.push(resolve));
    const same = [cache.userCan(alice, check, ask), cache.userCan({ ...alice }, { ...check }, ask), cache.userCan(alice, check, ask)];
    const other = cache.userCan(alice, { ...check, namespace: 'other' }, ask);
    expect(releases).toHaveLength(2);
    releases[0]!(false);
    releases[1]!(true);
    expect(await Promise.all(same)).toEqual([false, false, false]);
    expect(await other).toBe(true);
    // The denial shared is not kept: the next check asks.
    void cache.userCan(alice, check, ask);
    expect(releases).toHaveLength(3);
  });

  it('shares an error among the checks in flight, and keeps nothing of it', async () => {
    const cache = new AllowCache({ now: () => 0 });
    let fail!: (err: Error) => void;
    const ask = () => new Promise<boolean>((_, reject) => (fail = reject));
    const both = [cache.userCan(alice, check, ask), cache.userCan(alice, check, ask)];
    fail(new Error('timeout'));
    for (const p of both) await expect(p).rejects.toThrow('timeout');
    let asked = 0;
    expect(await cache.userCan(alice, check, () => (asked++, Promise.resolve(true)))).toBe(true);
    expect(asked).toBe(1);
  });

  it('keeps at most maxEntries allows, the oldest evicted first', async () => {
    const t = setup({ maxEntries: 3 });
    for (const ns of ['a', 'b', 'c', 'd']) {
      await t.ask(alice, { ...check, namespace: ns });
      t.advance(1);
    }
    expect(t.cache.size).toBe(3);
    t.asked.length = 0;
    for (const ns of ['b', 'c', 'd']) await t.ask(alice, { ...check, namespace: ns });
    expect(t.asked).toEqual([]);
    await t.ask(alice, { ...check, namespace: 'a' });
    expect(t.asked).toEqual(['alice update a']);
    expect(t.cache.size).toBe(3);
  });

  it('drops expired allows as new ones come, whatever the bound', async () => {
    const t = setup();
    for (const ns of ['a', 'b', 'c']) await t.ask(alice, { ...check, namespace: ns });
    t.advance(ALLOW_TTL_MS);
    await t.ask(alice, { ...check, namespace: 'd' });
    expect(t.cache.size).toBe(1);
  });
});

describe('checkKey', () => {
  const key = (u: Partial<UserInfo>, c: Partial<ResourceCheck> = {}) => checkKey({ ...alice, ...u }, { ...check, ...c });

  it('is the same for the same user and check, groups in any order and extra keys in any order', () => {
    expect(key({ groups: ['team', 'system:authenticated'] })).toBe(key({}));
    expect(key({ extra: { x: ['1'], scopes: ['a', 'b'] } })).toBe(key({ extra: { scopes: ['a', 'b'], x: ['1'] } }));
    expect(key({}, { version: '*' })).toBe(key({}));
  });

  it('differs in every field of the user and of the check', () => {
    const variants = [
      key({}),
      key({ username: 'bob' }),
      key({ uid: 'u2' }),
      key({ uid: undefined }),
      key({ groups: ['system:authenticated'] }),
      key({ groups: ['system:authenticated', 'team', 'admins'] }),
      key({ extra: undefined }),
      key({ extra: { scopes: ['a'] } }),
      key({ extra: { scopes: ['b', 'a'] } }),
      key({ extra: { other: ['a', 'b'] } }),
      key({}, { verb: 'delete' }),
      key({}, { group: '' }),
      key({}, { version: 'v1alpha2' }),
      key({}, { resource: 'namespaces' }),
      key({}, { subresource: 'status' }),
      key({}, { namespace: 'other' }),
      key({}, { namespace: undefined }),
      key({}, { name: 'hierarchy' }),
    ];
    expect(new Set(variants).size).toBe(variants.length);
  });

  it('keeps strings apart that a joined key would run together', () => {
    expect(key({ username: 'a,b', groups: [] })).not.toBe(key({ username: 'a', groups: ['b'] }));
    expect(key({ groups: ['a,b'] })).not.toBe(key({ groups: ['a', 'b'] }));
    expect(key({ extra: { 'k","v': [] } })).not.toBe(key({ extra: { k: ['v'] } }));
  });

  it('gives two users, or one user with other groups or extra, no shared allow', async () => {
    const t = setup();
    expect(await t.ask(alice, check)).toBe(true);
    t.answer(false);
    expect(await t.ask({ ...alice, username: 'mallory' }, check)).toBe(false);
    expect(await t.ask({ ...alice, groups: ['system:authenticated'] }, check)).toBe(false);
    expect(await t.ask({ ...alice, extra: {} }, check)).toBe(false);
    expect(await t.ask(alice, { ...check, verb: 'delete' })).toBe(false);
    expect(t.asked).toHaveLength(5);
  });
});
