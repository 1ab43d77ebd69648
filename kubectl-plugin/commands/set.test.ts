import { describe, expect, it } from 'vitest';
import { CliError, ServerError } from '../errors.js';
import { captureIo } from '../io.js';
import { FakeApi } from '../testing/fake-api.js';
import { runSet } from './set.js';

describe('set', () => {
  it('sets the parent of a namespace without an HC, creating the HC', async () => {
    const api = new FakeApi().addNamespace('bar').addNamespace('foo');
    const io = captureIo();
    await runSet(api, io, 'bar', { parent: 'foo' });
    expect(io.stdout).toBe('Setting the parent of bar to foo\nSuccesfully updated 1 property of the hierarchical configuration of bar\n');
    expect(api.calls).toEqual(['get ns bar', 'get hc bar', 'create hc bar']);
    expect(api.hierarchies.get('bar')?.spec).toEqual({ parent: 'foo' });
    expect(api.hierarchies.get('bar')?.metadata.name).toBe('hierarchy');
  });

  it('changes the parent and cascading deletion with one update', async () => {
    const api = new FakeApi().addNamespace('bar', { parent: 'old' });
    const io = captureIo();
    await runSet(api, io, 'bar', { parent: 'new', allowCascadingDeletion: true });
    expect(io.stdout).toBe(
      "Changing the parent of bar from old to new\nAllowing cascading deletion on 'bar'\nSuccesfully updated 2 properties of the hierarchical configuration of bar\n",
    );
    expect(api.calls.at(-1)).toBe('replace hc bar');
    expect(api.hierarchies.get('bar')?.spec).toEqual({ parent: 'new', allowCascadingDeletion: true });
  });

  it('makes a namespace a root', async () => {
    const api = new FakeApi().addNamespace('bar', { parent: 'foo', acd: true });
    const io = captureIo();
    await runSet(api, io, 'bar', { root: true, forbidCascadingDeletion: true });
    expect(io.stdout).toBe(
      "Unsetting the parent of bar (was previously foo)\nForbidding cascading deletion on 'bar'\nSuccesfully updated 2 properties of the hierarchical configuration of bar\n",
    );
    expect(api.hierarchies.get('bar')?.spec).toEqual({});
  });

  it('reports what is already so and writes nothing', async () => {
    const api = new FakeApi().addNamespace('bar', { parent: 'foo' }).addNamespace('root');
    const io = captureIo();
    await runSet(api, io, 'bar', { parent: 'foo', forbidCascadingDeletion: true });
    await runSet(api, io, 'root', { root: true });
    expect(io.stdout).toBe(
      [
        'Parent of bar is already foo; unchanged',
        "Cascading deletion for 'bar' is already set to false; unchanged",
        'No changes made',
        'root is already a root namespace; unchanged ',
        'No changes made',
        '',
      ].join('\n'),
    );
    expect(api.calls.filter((c) => !c.startsWith('get'))).toEqual([]);
  });

  it('refuses contradictory flags before reading anything', async () => {
    const api = new FakeApi();
    await expect(runSet(api, captureIo(), 'bar', { root: true, parent: 'foo' })).rejects.toThrow(
      new CliError('Cannot give the namespace a parent and make it a root at the same time'),
    );
    await expect(runSet(api, captureIo(), 'bar', { allowCascadingDeletion: true, forbidCascadingDeletion: true })).rejects.toThrow(
      'Cannot set both --allowCascadingDeletion and --forbidCascadingDeletion',
    );
    expect(api.calls).toEqual([]);
  });

  it('fails when the namespace does not exist', async () => {
    await expect(runSet(new FakeApi(), captureIo(), 'nope', { parent: 'x' })).rejects.toThrow('namespaces "nope" not found');
  });

  it('passes an admission refusal through after the progress lines', async () => {
    const api = new FakeApi().addNamespace('bar');
    api.failures.set(
      'create hc bar',
      new ServerError(403, 'admission webhook "hierarchyconfigurations.hnc.x-k8s.io" denied the request: cycle'),
    );
    const io = captureIo();
    await expect(runSet(api, io, 'bar', { parent: 'foo' })).rejects.toThrow(/denied the request: cycle/);
    expect(io.stdout).toBe('Setting the parent of bar to foo\n');
  });
});
