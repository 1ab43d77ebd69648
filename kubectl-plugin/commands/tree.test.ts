import { describe, expect, it } from 'vitest';
import { captureIo } from '../io.js';
import { PER_NAMESPACE_CONCURRENCY } from '../concurrency.js';
import { FakeApi } from '../testing/fake-api.js';
import { runTree } from './tree.js';

const inCycle = (cycle: string) => [
  { type: 'ActivitiesHalted', reason: 'InCycle', message: `Namespace is a member of the cycle: ${cycle}` },
];

function org(): FakeApi {
  return new FakeApi()
    .addNamespace('team-a', { children: ['prod', 'dev'] })
    .addNamespace('dev', { parent: 'team-a', subnamespaceOf: 'team-a', children: ['dev-x'] })
    .addNamespace('dev-x', { parent: 'dev', subnamespaceOf: 'dev' })
    .addNamespace('prod', { parent: 'team-a' })
    .addNamespace('team-b');
}

async function tree(api: FakeApi, names: string[], flags: Parameters<typeof runTree>[3] = {}): Promise<string> {
  const io = captureIo();
  await runTree(api, io, names, flags);
  return io.stdout;
}

describe('tree', () => {
  it('prints the tree of a namespace, children sorted, subnamespaces marked', async () => {
    expect(await tree(org(), ['team-a'])).toBe('team-a\n├── [s] dev\n│   └── [s] dev-x\n└── prod\n\n[s] indicates subnamespaces\n');
  });

  it('prints each namespace asked for as a root, even a non-root', async () => {
    expect(await tree(org(), ['dev', 'team-b'])).toBe('dev\n└── [s] dev-x\nteam-b\n\n[s] indicates subnamespaces\n');
  });

  /** A parent with 300 children whose per-namespace reads take a turn each; `most()`: the most in flight at once. */
  function wide(): { api: FakeApi; most: () => number } {
    const children = Array.from({ length: 300 }, (_, i) => `child-${String(i).padStart(3, '0')}`);
    const api = new FakeApi().addNamespace('big', { children });
    for (const c of children) api.addNamespace(c, { parent: 'big' });
    let inFlight = 0;
    let most = 0;
    const slow =
      <A extends unknown[], T>(read: (...args: A) => Promise<T>) =>
      async (...args: A): Promise<T> => {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise<void>((resolve) => setImmediate(resolve));
        inFlight--;
        return read.apply(api, args);
      };
    api.getNamespace = slow(api.getNamespace);
    api.getHierarchy = slow(api.getHierarchy);
    api.listAnchors = slow(api.listAnchors);
    return { api, most: () => most };
  }

  it('reads a parent with hundreds of children a few requests at a time, and prints them all', async () => {
    const { api, most } = wide();
    const out = await tree(api, ['big']);
    expect(out.split('\n').filter((l) => l.includes('child-'))).toHaveLength(300);
    expect(most()).toBeLessThanOrEqual(PER_NAMESPACE_CONCURRENCY);
    expect(most()).toBeGreaterThan(1);
  });

  it('-A, when HCs cannot be listed, reads each namespace a few requests at a time in all', async () => {
    const { api, most } = wide();
    api.forbidden.add('list hc');
    const out = await tree(api, [], { allNamespaces: true });
    expect(out.split('\n').filter((l) => l.includes('child-'))).toHaveLength(300);
    expect(most()).toBeLessThanOrEqual(PER_NAMESPACE_CONCURRENCY);
  });

  it('needs a namespace or -A', async () => {
    await expect(tree(org(), [])).rejects.toThrow(
      'Error: Must specify the root of the tree(s) to display or else specify --all-namespaces',
    );
  });

  it('-A prints every root once, in name order, from two list requests', async () => {
    const api = org();
    expect(await tree(api, [], { allNamespaces: true })).toBe(
      'team-a\n├── [s] dev\n│   └── [s] dev-x\n└── prod\nteam-b\n\n[s] indicates subnamespaces\n',
    );
    expect(api.calls).toEqual(['list ns', 'list hc']);
  });

  it('-A falls back to reading each namespace when HCs cannot be listed cluster-wide', async () => {
    const api = org();
    api.forbidden.add('list hc');
    expect(await tree(api, [], { allNamespaces: true })).toBe(
      'team-a\n├── [s] dev\n│   └── [s] dev-x\n└── prod\nteam-b\n\n[s] indicates subnamespaces\n',
    );
    expect(api.calls).toContain('get hc dev-x');
  });

  it('-A also shows namespaces no tree reaches, such as orphans, with their conditions', async () => {
    const api = org().addNamespace('orphan', {
      parent: 'gone',
      conditions: [{ type: 'ActivitiesHalted', reason: 'ParentMissing', message: 'Parent "gone" does not exist' }],
    });
    expect(await tree(api, [], { allNamespaces: true })).toBe(
      'team-a\n├── [s] dev\n│   └── [s] dev-x\n└── prod\nteam-b\norphan (1)\n\n[s] indicates subnamespaces\n\nConditions:\n1) ActivitiesHalted (ParentMissing): Parent "gone" does not exist\n',
    );
  });

  it('shows each member of a cycle as a root and does not follow the cycle', async () => {
    const api = new FakeApi()
      .addNamespace('a', { parent: 'b', children: ['b', 'x'], conditions: inCycle('a <- b <- a') })
      .addNamespace('b', { parent: 'a', children: ['a'], conditions: inCycle('a <- b <- a') })
      .addNamespace('x', { parent: 'a' });
    expect(await tree(api, [], { allNamespaces: true })).toBe(
      'a (1)\n└── x\nb (1)\n\nConditions:\n1) ActivitiesHalted (InCycle): Namespace is a member of the cycle: a <- b <- a\n',
    );
  });

  it('shows a child the user may not read with a note, and carries on', async () => {
    const api = org();
    api.forbidden.add('get hc dev');
    api.forbidden.add('get ns prod');
    expect(await tree(api, ['team-a'])).toBe(
      'team-a\n├── [s] dev (no permission to read dev)\n└── prod (no permission to read prod)\n\n[s] indicates subnamespaces\n',
    );
  });

  it('marks a child it may not read [s] when the parent holds an anchor of its name', async () => {
    const api = org();
    api.anchors.set('team-a/dev', { metadata: { name: 'dev', namespace: 'team-a' }, status: { status: 'Ok' } });
    api.anchors.set('team-a/prod', { metadata: { name: 'prod', namespace: 'team-a' }, status: { status: 'Conflict' } });
    api.forbidden.add('get ns dev');
    api.forbidden.add('get ns prod');
    expect(await tree(api, ['team-a'])).toBe(
      'team-a\n├── [s] dev (no permission to read dev)\n└── prod (no permission to read prod)\n\n[s] indicates subnamespaces\n',
    );
    expect(api.calls.filter((c) => c.startsWith('list anchors'))).toEqual(['list anchors team-a']);
    // Without permission to list the anchors either, the child is shown without the mark.
    api.forbidden.add('list anchors team-a');
    expect(await tree(api, ['team-a'])).toBe('team-a\n├── dev (no permission to read dev)\n└── prod (no permission to read prod)\n');
  });

  it('lists no anchors when every child can be read', async () => {
    const api = org();
    await tree(api, ['team-a']);
    expect(api.calls.some((c) => c.startsWith('list anchors'))).toBe(false);
  });

  it('shows a child listed in the status but gone with a note', async () => {
    const api = org();
    api.namespaces.delete('prod');
    expect(await tree(api, ['team-a'])).toBe(
      'team-a\n├── [s] dev\n│   └── [s] dev-x\n└── prod (namespace prod not found)\n\n[s] indicates subnamespaces\n',
    );
  });

  it('fails when a namespace asked for cannot be read', async () => {
    const api = org();
    api.forbidden.add('get ns team-a');
    await expect(tree(api, ['team-a'])).rejects.toThrow('forbidden: get ns team-a');
    await expect(tree(org(), ['nope'])).rejects.toThrow('namespaces "nope" not found');
  });

  it('fails on errors other than 403/404', async () => {
    const api = org();
    api.failures.set('get hc prod', new Error('boom'));
    await expect(tree(api, ['team-a'])).rejects.toThrow('boom');
  });

  it('-o json prints the same trees as data', async () => {
    const out = JSON.parse(await tree(org(), ['dev'], { output: 'json' })) as unknown;
    expect(out).toEqual({
      trees: [
        {
          name: 'dev',
          subnamespace: true,
          conditions: [],
          children: [{ name: 'dev-x', subnamespace: true, conditions: [], children: [] }],
        },
      ],
    });
  });
});
