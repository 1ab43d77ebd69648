import { describe, expect, it } from 'vitest';
import type { HncApi } from '../api.js';
import { ServerError } from '../errors.js';
import { captureIo } from '../io.js';
import { FakeApi } from '../testing/fake-api.js';
import { ignoreToPropagateWarning, parseMode, runConfigDeleteType, runConfigDescribe, runConfigSetResource } from './config.js';

const withConfig = (
  resources: { group?: string; resource: string; mode?: 'Propagate' | 'Ignore' | 'Remove' | 'AllowPropagate' }[],
): FakeApi => {
  const api = new FakeApi();
  api.config = { metadata: { name: 'config', resourceVersion: '7' }, spec: { resources } };
  return api;
};

describe('config describe', () => {
  it('treats a missing configuration as empty', async () => {
    const io = captureIo();
    await runConfigDescribe(new FakeApi(), io);
    expect(io.stdout).toBe('Synchronized resources:\n\nConditions:\n');
  });

  it('prints the status', async () => {
    const api = new FakeApi();
    api.config = {
      metadata: { name: 'config' },
      status: {
        resources: [
          {
            group: 'rbac.authorization.k8s.io',
            version: 'v1',
            resource: 'roles',
            mode: 'Propagate',
            numPropagatedObjects: 1,
            numSourceObjects: 1,
          },
        ],
        conditions: [{ type: 'OutOfSync', reason: 'Unknown', message: 'x', status: 'True', lastTransitionTime: '2025-01-01T00:00:00Z' }],
      },
    };
    const io = captureIo();
    await runConfigDescribe(api, io);
    expect(io.stdout).toBe(
      'Synchronized resources:\n* Propagating: roles (rbac.authorization.k8s.io/v1)\n\nConditions:\nOutOfSync (Unknown): x\n',
    );
  });
});

describe('config set-resource', () => {
  it('accepts the mode in any case', () => {
    expect(parseMode('propagate')).toBe('Propagate');
    expect(parseMode('allowpropagate')).toBe('AllowPropagate');
    expect(parseMode('REMOVE')).toBe('Remove');
    expect(() => parseMode('sync')).toThrow('Error: invalid --mode "sync": must be one of Propagate, Remove, Ignore or AllowPropagate');
    expect(() => parseMode(undefined)).toThrow('Error: --mode is required: one of Propagate, Remove, Ignore or AllowPropagate');
  });

  it('creates the configuration if there is none, and prints nothing', async () => {
    const api = new FakeApi();
    const io = captureIo();
    await runConfigSetResource(api, io, 'secrets', { mode: 'propagate' });
    expect(io.stdout + io.stderr).toBe('');
    expect(api.config).toEqual({
      apiVersion: 'hnc.x-k8s.io/v1alpha2',
      kind: 'HNCConfiguration',
      metadata: { name: 'config' },
      spec: { resources: [{ resource: 'secrets', mode: 'Propagate' }] },
    });
  });

  it('updates a matching entry in place and appends others', async () => {
    const api = withConfig([{ resource: 'secrets', mode: 'Propagate' }]);
    await runConfigSetResource(api, captureIo(), 'secrets', { mode: 'Remove' });
    await runConfigSetResource(api, captureIo(), 'crontabs', { group: 'stable.example.com', mode: 'Ignore' });
    expect(api.config?.spec?.resources).toEqual([
      { resource: 'secrets', mode: 'Remove' },
      { group: 'stable.example.com', resource: 'crontabs', mode: 'Ignore' },
    ]);
    expect(api.calls).toEqual(['get config', 'replace config', 'get config', 'replace config']);
  });

  it('refuses Ignore -> Propagate without --force, with HNC’s warning', async () => {
    const api = withConfig([{ resource: 'secrets', mode: 'Ignore' }]);
    await expect(runConfigSetResource(api, captureIo(), 'secrets', { mode: 'AllowPropagate' })).rejects.toThrow(
      ignoreToPropagateWarning('secrets'),
    );
    expect(ignoreToPropagateWarning('secrets').split('\n')[0]).toBe(
      `Switching directly from 'Ignore' to 'Propagate' mode or 'AllowPropagate' mode could cause existing "secrets" objects in child namespaces to be overwritten by objects from ancestor namespaces.`,
    );
    await runConfigSetResource(api, captureIo(), 'secrets', { mode: 'Propagate', force: true });
    expect(api.config?.spec?.resources).toEqual([{ resource: 'secrets', mode: 'Propagate' }]);
  });
});

describe('config delete-type', () => {
  it('removes the matching entry', async () => {
    const api = withConfig([{ resource: 'secrets' }, { group: 'g', resource: 'secrets' }]);
    const io = captureIo();
    await runConfigDeleteType(api, io, { resource: 'secrets' });
    expect(io.stdout).toBe('Configuration for type with group: , resource: secrets is deleted\n');
    expect(api.config?.spec?.resources).toEqual([{ group: 'g', resource: 'secrets' }]);
  });

  it('says when there is nothing to delete', async () => {
    const io = captureIo();
    await runConfigDeleteType(withConfig([]), io, { group: 'g', resource: 'x' });
    await runConfigDeleteType(new FakeApi(), io, { resource: 'y' });
    expect(io.stdout).toBe(
      'Nothing to delete; No configuration for type with group: g, resource: x\nNothing to delete; No configuration for type with group: , resource: y\n',
    );
  });
});

describe('config set-resource: the manager access check', () => {
  /** A FakeApi whose SubjectAccessReviews answer from `allowed` (undefined: cannot be checked). */
  const withAccess = (allowed: (verb: string, resource: string) => boolean | undefined) => {
    const asked: string[] = [];
    const api: FakeApi & Pick<HncApi, 'accessReview'> = withConfig([]);
    api.accessReview = (user, _groups, verb, _group, resource) => {
      asked.push(`${user} ${verb} ${resource}`);
      return Promise.resolve(allowed(verb, resource));
    };
    return { api, asked };
  };

  it('warns with the exact fix when HNC’s manager may not access the kind, and asks for its own identity', async () => {
    const { api, asked } = withAccess((verb) => verb === 'get');
    const io = captureIo();
    await runConfigSetResource(api, io, 'secrets', { mode: 'Propagate' });
    expect(api.config?.spec?.resources).toEqual([{ resource: 'secrets', mode: 'Propagate' }]);
    expect(io.stdout).toBe('');
    expect(io.stderr).toBe(
      "Warning: HNC's manager may not list, watch, create, update, patch, delete secrets cluster-wide, so they are not propagated; to fix: kubectl apply -k deploy/optional/propagate-secrets-configmaps\n",
    );
    expect(asked[0]).toBe('system:serviceaccount:hnc-system:hnc-controller-manager get secrets');
  });

  it('says nothing when it may, or for Ignore, and notes when it cannot check', async () => {
    const io = captureIo();
    await runConfigSetResource(withAccess(() => true).api, io, 'secrets', { mode: 'Propagate' });
    await runConfigSetResource(withAccess(() => false).api, io, 'secrets', { mode: 'Ignore' });
    expect(io.stderr).toBe('');
    await runConfigSetResource(withAccess(() => undefined).api, io, 'secrets', { mode: 'Propagate' });
    expect(io.stderr).toContain('Note: could not check whether');
  });
});

describe('config set-resource: a write that lost a race', () => {
  it('is read and written again (HNC writes the status meanwhile), but a webhook refusal is not retried', async () => {
    const api = withConfig([]);
    let fails = 2;
    const replace = api.replaceHncConfiguration.bind(api);
    api.replaceHncConfiguration = (config) =>
      fails-- > 0
        ? Promise.reject(new ServerError(409, 'the object has been modified; please apply your changes to the latest version'))
        : replace(config);
    await runConfigSetResource(api, captureIo(), 'secrets', { mode: 'Remove' });
    expect(api.config?.spec?.resources).toEqual([{ resource: 'secrets', mode: 'Remove' }]);

    const refused = withConfig([]);
    refused.failures.set(
      'replace config',
      new ServerError(409, 'admission webhook "hncconfigurations.hnc.x-k8s.io" denied the request: ...'),
    );
    await expect(runConfigSetResource(refused, captureIo(), 'secrets', { mode: 'Remove' })).rejects.toThrow('admission webhook');
  });
});
