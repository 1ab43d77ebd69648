import { describe, expect, it } from 'vitest';
import { forest } from '../forest/dsl.js';
import {
  copiesWaitForSingleton,
  parseResourceList,
  QuotaModel,
  resourceListText,
  sameQuantities,
  summaries,
  UNCOUNTED_WAIT_MS,
  type Quantities,
  type SingletonFacts,
} from './hrq.js';

const q = (list: Record<string, string | number>): Quantities => {
  const parsed = parseResourceList(list);
  expect(parsed.errors).toEqual([]);
  return parsed.quantities;
};
const text = (x: Quantities) => resourceListText(x);

/** A model over `tree` with HRQs `{ns: {name: hard}}` and usages `{ns: used}`. */
function model(
  tree: string,
  hrqs: Record<string, Record<string, Record<string, string | number>>>,
  usage: Record<string, Record<string, string>> = {},
) {
  const m = new QuotaModel(forest(tree));
  for (const [ns, byName] of Object.entries(hrqs)) for (const [name, hard] of Object.entries(byName)) m.setHrq(ns, name, q(hard));
  for (const [ns, used] of Object.entries(usage)) m.setUsage(ns, q(used));
  return m;
}

describe('parseResourceList', () => {
  it('accepts text and numbers (an unquoted cpu: 1.5) and reports what is not a quantity', () => {
    const parsed = parseResourceList({ cpu: 1.5, memory: '1Gi', pods: 'lots' });
    expect(resourceListText(parsed.quantities)).toEqual({ cpu: '1500m', memory: '1Gi' });
    expect(parsed.errors).toEqual(['pods: "lots" is not a quantity (a number with an optional suffix, such as 500m, 2Gi or 1e3)']);
  });

  it('compares by value, not text', () => {
    expect(sameQuantities(q({ cpu: '1.5' }), q({ cpu: '1500m' }))).toBe(true);
    expect(sameQuantities(q({ cpu: '1' }), q({ cpu: '1', pods: '1' }))).toBe(false);
    expect(sameQuantities(q({ cpu: '1' }), q({ memory: '1' }))).toBe(false);
  });
});

describe('limits', () => {
  it('take the strictest value per resource over the namespace and its ancestors', () => {
    const m = model('a -> b -> c, a -> d, e', {
      a: { big: { services: '10', cpu: '4' } },
      b: { small: { services: '2' }, other: { memory: '1Gi', cpu: '6' } },
    });
    expect(text(m.limits('a'))).toEqual({ cpu: '4', services: '10' });
    expect(text(m.limits('b'))).toEqual({ cpu: '4', memory: '1Gi', services: '2' });
    expect(text(m.limits('c'))).toEqual({ cpu: '4', memory: '1Gi', services: '2' });
    expect(text(m.limits('d'))).toEqual({ cpu: '4', services: '10' });
    expect(m.limits('e').size).toBe(0);
    expect(m.hrqsOver('c')).toEqual([
      { namespace: 'a', name: 'big' },
      { namespace: 'b', name: 'other' },
      { namespace: 'b', name: 'small' },
    ]);
  });

  it('say which namespaces an HRQ limits (those HNC keeps a singleton in)', () => {
    const m = model('a -> b -> c, x -> y', { b: { q: { pods: '3' } }, x: { empty: {} } });
    expect(['a', 'b', 'c', 'x', 'y'].map((ns) => m.limited(ns))).toEqual([false, true, true, false, false]);
  });

  it('follow the tree and the HRQs as they change', () => {
    const f = forest('a -> b, x');
    const m = new QuotaModel(f);
    m.setHrq('a', 'q', q({ pods: '3' }));
    expect(text(m.limits('b'))).toEqual({ pods: '3' });
    f.setParent('b', 'x');
    expect(m.limits('b').size).toBe(0);
    m.setHrq('x', 'q', q({ pods: '1' }));
    expect(text(m.limits('b'))).toEqual({ pods: '1' });
    m.setHrq('x', 'q', undefined);
    expect(m.limits('b').size).toBe(0);
    expect(m.namespacesWithHrqs()).toEqual(['a']);
  });
});

describe('usage and status', () => {
  const m = model(
    'a -> b -> c, a -> d',
    { a: { q: { services: '5', 'limits.cpu': '2', 'requests.memory': '1Gi' } }, b: { q: { services: '1' } } },
    {
      a: { services: '1' },
      b: { services: '1', 'requests.memory': '512Mi' },
      c: { services: '1', 'limits.cpu': '1500m' },
      d: { 'requests.memory': '512Mi' },
    },
  );

  it('sums the subtree, exactly', () => {
    expect(text(m.subtreeUsage('a'))).toEqual({ 'limits.cpu': '1500m', 'requests.memory': '1Gi', services: '3' });
    expect(text(m.subtreeUsage('b', ['services']))).toEqual({ services: '2' });
  });

  it('writes hard, used (0 when nothing is used) and HNC’s summary columns', () => {
    expect(m.status('a', 'q')).toEqual({
      hard: { 'limits.cpu': '2', 'requests.memory': '1Gi', services: '5' },
      used: { 'limits.cpu': '1500m', 'requests.memory': '1Gi', services: '3' },
      requestsSummary: 'requests.memory: 1Gi/1Gi, services: 3/5',
      limitsSummary: 'limits.cpu: 1500m/2',
    });
    expect(m.status('b', 'q')).toEqual({
      hard: { services: '1' },
      used: { services: '2' },
      requestsSummary: 'services: 2/1',
      limitsSummary: '',
    });
    expect(m.status('d', 'q')).toBeUndefined();
    expect(summaries(q({ pods: '2' }), new Map())).toEqual({ requestsSummary: 'pods: 0/2', limitsSummary: '' });
  });

  it('moves usage with a namespace when it is re-parented or deleted', () => {
    const f = forest('a -> b, a -> c, x');
    const mm = new QuotaModel(f);
    mm.setHrq('a', 'q', q({ pods: '10' }));
    mm.setHrq('x', 'q', q({ pods: '10' }));
    mm.setUsage('b', q({ pods: '2' }));
    mm.setUsage('c', q({ pods: '3' }));
    expect(mm.status('a', 'q')?.used).toEqual({ pods: '5' });
    f.setParent('c', 'x');
    expect(mm.status('a', 'q')?.used).toEqual({ pods: '2' });
    expect(mm.status('x', 'q')?.used).toEqual({ pods: '3' });
    f.remove('b');
    mm.setUsage('b', undefined);
    expect(mm.status('a', 'q')?.used).toEqual({ pods: '0' });
  });
});

describe('admission', () => {
  const m = () =>
    model(
      'a -> b -> c, a -> d',
      { a: { team: { services: '3', 'requests.cpu': '1' } }, b: { sub: { services: '2' } } },
      { b: { services: '1' }, d: { services: '1' } },
    );

  it('admits an increase that fits every HRQ above', () => {
    const d = m().admit('c', q({ services: '1' }));
    expect(d.allowed).toBe(true);
    if (d.allowed) expect(text(d.increases)).toEqual({ services: '1' });
  });

  it('refuses an increase over an ancestor’s HRQ with HNC’s message', () => {
    const mm = m();
    mm.setHrq('a', 'team', q({ services: '10' }));
    mm.setUsage('c', q({ services: '1' }));
    // b's subtree uses 2 of its 2 services.
    expect(mm.admit('c', q({ services: '2' }))).toMatchObject({
      allowed: false,
      message: 'exceeded hierarchical quota in namespace "b": "sub", requested: services=1, used: services=2, limited: services=2',
    });
    // d is under a only: a's subtree uses 3 of 3.
    const under = m();
    under.setUsage('c', q({ services: '1' }));
    expect(under.admit('d', q({ services: '2' }))).toMatchObject({
      allowed: false,
      message: 'exceeded hierarchical quota in namespace "a": "team", requested: services=1, used: services=3, limited: services=3',
    });
  });

  it('lists every exceeded resource of the HRQ, and compares exactly', () => {
    const mm = model(
      'a -> b',
      { a: { q: { 'requests.cpu': '1', 'requests.memory': '1Gi', pods: '10' } } },
      { a: { 'requests.cpu': '900m' } },
    );
    expect(mm.admit('b', q({ 'requests.cpu': '100m', pods: '1' })).allowed).toBe(true);
    expect(mm.admit('b', q({ 'requests.cpu': '0.1000000001', 'requests.memory': '1025Mi', pods: '1' }))).toMatchObject({
      allowed: false,
      message:
        'exceeded hierarchical quota in namespace "a": "q", requested: requests.cpu=100000001n,requests.memory=1025Mi, used: requests.cpu=900m,requests.memory=0, limited: requests.cpu=1,requests.memory=1Gi',
    });
  });

  it('always admits decreases, and leaves usage that was over before the HRQ alone', () => {
    // b uses 5 services where 2 are allowed: that stays, less is fine, the same is fine, more is not.
    const mm = model('a -> b', { a: { q: { services: '2', pods: '5' } } }, { b: { services: '5' } });
    expect(mm.admit('b', q({ services: '4' })).allowed).toBe(true);
    expect(mm.admit('b', q({ services: '5', pods: '1' })).allowed).toBe(true);
    expect(mm.admit('b', q({ services: '6' })).allowed).toBe(false);
  });

  it('admits usage of resources no HRQ limits, and namespaces under no HRQ', () => {
    expect(m().admit('c', q({ secrets: '100' })).allowed).toBe(true);
    expect(model('x', {}).admit('x', q({ services: '100' })).allowed).toBe(true);
  });
});

describe('reservations', () => {
  it('count admitted usage until the singleton shows it, so back-to-back admissions cannot overshoot', () => {
    const mm = model('a -> b, a -> c', { a: { q: { services: '2' } } }, { b: { services: '1' } });
    const first = mm.admit('c', q({ services: '1' }));
    expect(first.allowed).toBe(true);
    mm.reserve('c', q({ services: '1' }));
    expect(mm.admit('b', q({ services: '2' })).allowed).toBe(false);
    expect(text(mm.subtreeUsage('a'))).toEqual({ services: '2' });
    // The status update failed: once released, the room is back.
    mm.release('c');
    expect(mm.admit('b', q({ services: '2' })).allowed).toBe(true);
  });

  it('only ever raise usage', () => {
    const mm = model('a', { a: { q: { services: '5' } } }, { a: { services: '3' } });
    mm.reserve('a', q({ services: '1', secrets: '2' }));
    expect(text(mm.localUsage('a'))).toEqual({ secrets: '2', services: '3' });
  });
});

describe('admission over kept subtree sums', () => {
  it('decides exactly as fresh sums do, through usage changes, reservations and moves (seeded random trials)', () => {
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const names = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    const f = forest('a -> b -> c, a -> d, e -> f, g');
    const kept = new QuotaModel(f);
    // The same model over a forest that does not report its generation sums afresh every time.
    const fresh = new QuotaModel({ ancestry: (ns) => f.ancestry(ns), subtree: (ns) => f.subtree(ns) });
    const both = (fn: (m: QuotaModel) => void) => [kept, fresh].forEach(fn);
    both((m) => m.setHrq('a', 'q', q({ pods: '12', 'requests.cpu': '3' })));
    both((m) => m.setHrq('b', 'q', q({ pods: '5' })));
    both((m) => m.setHrq('e', 'q', q({ pods: '6', 'requests.cpu': '1500m' })));
    let refusals = 0;
    for (let i = 0; i < 3000; i++) {
      const ns = names[rand(names.length)]!;
      const usage = q({ pods: String(rand(5)), 'requests.cpu': `${rand(2000)}m` });
      switch (rand(6)) {
        case 0: {
          const set = rand(4) === 0 ? undefined : usage;
          both((m) => m.setUsage(ns, set));
          break;
        }
        case 1:
          both((m) => m.reserve(ns, usage));
          break;
        case 2:
          both((m) => m.release(ns));
          break;
        case 3: {
          const parent = names[rand(names.length)]!;
          if (parent !== ns && !f.isAncestor(ns, parent)) f.setParent(ns, rand(5) === 0 ? undefined : parent);
          break;
        }
        default: {
          const decision = kept.admit(ns, usage);
          expect(decision).toEqual(fresh.admit(ns, usage));
          if (!decision.allowed) refusals++;
        }
      }
    }
    // Both outcomes were exercised.
    expect(refusals).toBeGreaterThan(50);
    expect(refusals).toBeLessThan(1000);
  });
});

describe('copies wait for the singleton', () => {
  const facts = (over: Partial<SingletonFacts> = {}): SingletonFacts => ({
    synced: true,
    limited: true,
    deleting: false,
    writeFailed: false,
    ...over,
  });

  it('until it is there, in a namespace an HRQ limits', () => {
    expect(copiesWaitForSingleton(facts())).toEqual({ wait: true });
  });

  it('until the quota system has counted it, for UNCOUNTED_WAIT_MS at most', () => {
    const uncounted = (ms: number) => copiesWaitForSingleton(facts({ singleton: { counted: false, uncountedForMs: ms } }));
    expect(uncounted(0)).toEqual({ wait: true, recheckInMs: UNCOUNTED_WAIT_MS });
    expect(uncounted(UNCOUNTED_WAIT_MS - 1)).toEqual({ wait: true, recheckInMs: 1 });
    expect(uncounted(UNCOUNTED_WAIT_MS)).toEqual({ wait: false });
    expect(copiesWaitForSingleton(facts({ singleton: { counted: true, uncountedForMs: 0 } }))).toEqual({ wait: false });
  });

  it('never where no HRQ applies, nor for an HRQ feature that does not work, nor in a namespace going away', () => {
    for (const over of [{ limited: false }, { synced: false }, { writeFailed: true }, { deleting: true }])
      expect(copiesWaitForSingleton(facts(over)), JSON.stringify(over)).toEqual({ wait: false });
  });
});
