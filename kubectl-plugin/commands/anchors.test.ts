import { describe, expect, it } from 'vitest';
import { ServerError } from '../errors.js';
import { captureIo } from '../io.js';
import { FakeApi } from '../testing/fake-api.js';
import { runCreate, runDelete } from './anchors.js';

describe('create', () => {
  it('creates an anchor named after the child in the parent', async () => {
    const api = new FakeApi();
    const io = captureIo();
    await runCreate(api, io, 'dev', 'team-a');
    expect(io.stdout).toBe('Successfully created "dev" subnamespace anchor in "team-a" namespace\n');
    expect(api.anchors.get('team-a/dev')).toEqual({
      apiVersion: 'hnc.x-k8s.io/v1alpha2',
      kind: 'SubnamespaceAnchor',
      metadata: { name: 'dev', namespace: 'team-a' },
    });
  });

  it('puts managed labels and annotations in the anchor spec', async () => {
    const api = new FakeApi();
    await runCreate(api, captureIo(), 'dev', 'team-a', { labels: [{ key: 'env', value: 'dev' }], annotations: [] });
    expect(api.anchors.get('team-a/dev')?.spec).toEqual({ labels: [{ key: 'env', value: 'dev' }] });
  });

  it('needs a parent', async () => {
    await expect(runCreate(new FakeApi(), captureIo(), 'dev', undefined)).rejects.toThrow(
      'Error: parent must be set via --namespace or -n',
    );
  });

  it('passes a refusal through and prints no success line', async () => {
    const api = new FakeApi();
    api.forbidden.add('create anchor team-b/dev');
    const io = captureIo();
    await expect(runCreate(api, io, 'dev', 'team-b')).rejects.toBeInstanceOf(ServerError);
    expect(io.stdout).toBe('');
  });
});

describe('delete', () => {
  it('deletes the anchor', async () => {
    const api = new FakeApi();
    await runCreate(api, captureIo(), 'dev', 'team-a');
    const io = captureIo();
    await runDelete(api, io, 'dev', 'team-a');
    expect(io.stdout).toBe('Successfully deleted "dev" subnamespace anchor in "team-a" namespace\n');
    expect(api.anchors.size).toBe(0);
  });

  it('with -a, first allows cascading deletion on the child', async () => {
    const api = new FakeApi().addNamespace('dev', { parent: 'team-a' });
    await runCreate(api, captureIo(), 'dev', 'team-a');
    const io = captureIo();
    await runDelete(api, io, 'dev', 'team-a', true);
    expect(io.stdout).toBe(
      'Allowing cascading deletion on \'dev\'\nSuccessfully deleted "dev" subnamespace anchor in "team-a" namespace\n',
    );
    expect(api.hierarchies.get('dev')?.spec).toEqual({ parent: 'team-a', allowCascadingDeletion: true });
  });

  it('with -a, says when cascading deletion is already allowed', async () => {
    const api = new FakeApi().addNamespace('dev', { acd: true });
    await runCreate(api, captureIo(), 'dev', 'team-a');
    const io = captureIo();
    await runDelete(api, io, 'dev', 'team-a', true);
    expect(io.stdout).toBe(
      'Cascading deletion for \'dev\' is already set to \'true\'; unchanged\nSuccessfully deleted "dev" subnamespace anchor in "team-a" namespace\n',
    );
  });

  it('fails on a missing anchor', async () => {
    await expect(runDelete(new FakeApi(), captureIo(), 'dev', 'team-a')).rejects.toThrow(
      'subnamespaceanchors.hnc.x-k8s.io "dev" not found',
    );
  });
});
