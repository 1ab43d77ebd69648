import { describe, expect, it, vi } from 'vitest';
import type { ResourceSpec } from '../api/types.js';
import { hierarchy } from '../hierarchy/testing.js';
import { validateHncConfiguration, type HncConfigurationOptions, type ResourceResolution } from './hnc-configuration.js';
import { create, del, denied, empty, hncConfig, refusal, update } from './testing.js';

const ALLOWED = { allowed: true };
const h = hierarchy('a');

/** A fake RESTMapper over a few well-known resources. */
const KNOWN: Record<string, ResourceResolution> = {
  '/secrets': { namespaced: true, kind: 'Secret', version: 'v1' },
  '/configmaps': { namespaced: true, kind: 'ConfigMap', version: 'v1' },
  '/namespaces': { namespaced: false, kind: 'Namespace', version: 'v1' },
  'apps/deployments': { namespaced: true, kind: 'Deployment', version: 'v1' },
  'rbac.authorization.k8s.io/roles': { namespaced: true, kind: 'Role', version: 'v1' },
  'rbac.authorization.k8s.io/rolebindings': { namespaced: true, kind: 'RoleBinding', version: 'v1' },
  'rbac.authorization.k8s.io/clusterroles': { namespaced: false, kind: 'ClusterRole', version: 'v1' },
  // The RESTMapper resolves an empty group to whatever group serves the resource.
  '/deployments': { namespaced: true, kind: 'Deployment', version: 'v1', group: 'apps' },
};
const resolve = (group: string, resource: string): ResourceResolution =>
  KNOWN[`${group}/${resource}`] ?? { error: `no matches for ${group}/, Resource=${resource}` };

const validate = (resources: ResourceSpec[], opts: Partial<HncConfigurationOptions> = {}) =>
  validateHncConfiguration(h, update(hncConfig(), hncConfig(resources)), { resolve, ...opts });
const invalid = (errors: string) => denied(422, 'Invalid', `HNCConfiguration.hnc.x-k8s.io "config" is invalid: ${errors}`);

describe('HNCConfiguration validator: DELETE (docs/behaviour.md §7.5)', () => {
  it('refuses deleting `config`', () => {
    expect(validateHncConfiguration(h, del(hncConfig()), { resolve })).toEqual(
      denied(403, 'Forbidden', 'hncconfigurations.hnc.x-k8s.io "config" is forbidden: deleting the \'config\' object is forbidden'),
    );
    expect(refusal(validateHncConfiguration(h, del(hncConfig(), { name: 'config' }), { resolve })).code).toBe(403);
  });

  it('allows deleting strays of other names', () => {
    expect(validateHncConfiguration(h, del(hncConfig([], 'old')), { resolve })).toEqual(ALLOWED);
  });

  it('exempts HNC', () => {
    expect(validateHncConfiguration(h, del(hncConfig(), { hncServiceAccount: true }), { resolve })).toEqual(ALLOWED);
  });
});

describe('HNCConfiguration validator: the types (docs/behaviour.md §7.5)', () => {
  it('allows namespaced types in any mode', () => {
    expect(
      validate([
        { resource: 'secrets' },
        { group: 'apps', resource: 'deployments', mode: 'Ignore' },
        { resource: 'configmaps', mode: 'AllowPropagate' },
      ]),
    ).toEqual(ALLOWED);
    expect(validateHncConfiguration(h, create(hncConfig([{ resource: 'secrets', mode: 'Remove' }])), { resolve })).toEqual(ALLOWED);
  });

  it('refuses a group or resource that is not a valid name, without asking discovery (both become URL segments)', () => {
    const asked = vi.fn(resolve);
    const check = (resources: ResourceSpec[]) => validateHncConfiguration(h, update(hncConfig(), hncConfig(resources)), { resolve: asked });
    expect(refusal(check([{ group: '../api/v1/namespaces/kube-system/secrets', resource: 'roles' }])).message).toContain(
      'spec.resources[0]: Invalid value: roles.../api/v1/namespaces/kube-system/secrets: group "../api/v1/namespaces/kube-system/secrets" is not a valid API group name',
    );
    expect(refusal(check([{ group: '..', resource: 'roles' }])).code).toBe(422);
    expect(refusal(check([{ resource: 'secrets/../x' }])).message).toContain('resource "secrets/../x" is not a valid resource name');
    expect(refusal(check([{ resource: '' }])).message).toContain('resource must be set');
    expect(asked).not.toHaveBeenCalled();
  });

  it("refuses a resource discovery does not know, with the mapper's error", () => {
    expect(validate([{ resource: 'foos' }])).toEqual(invalid('spec.resources[0]: Invalid value: foos: no matches for /, Resource=foos'));
    expect(validate([{ group: 'example.com', resource: 'foos' }])).toEqual(
      invalid('spec.resources[0]: Invalid value: foos.example.com: no matches for example.com/, Resource=foos'),
    );
  });

  it('lets an update keep an entry whose type is gone (its CRD uninstalled), while a new unknown entry is refused', () => {
    const gone = { group: 'example.com', resource: 'widgets', mode: 'Propagate' as const };
    const edit = (resources: ResourceSpec[]) => validateHncConfiguration(h, update(hncConfig([gone]), hncConfig(resources)), { resolve });
    expect(edit([gone, { resource: 'secrets', mode: 'Propagate' }])).toEqual(ALLOWED);
    expect(edit([{ ...gone, mode: 'Remove' }])).toEqual(ALLOWED);
    expect(edit([gone, { group: 'example.com', resource: 'gadgets' }])).toEqual(
      invalid('spec.resources[1]: Invalid value: gadgets.example.com: no matches for example.com/, Resource=gadgets'),
    );
    // Creating is not an edit of something already there.
    expect(validateHncConfiguration(h, create(hncConfig([gone])), { resolve })).toEqual(
      invalid('spec.resources[0]: Invalid value: widgets.example.com: no matches for example.com/, Resource=widgets'),
    );
  });

  it('refuses a cluster-scoped resource', () => {
    expect(validate([{ group: 'rbac.authorization.k8s.io', resource: 'clusterroles', mode: 'Propagate' }])).toEqual(
      invalid(
        'spec.resources[0]: Invalid value: clusterroles.rbac.authorization.k8s.io: resource "clusterroles.rbac.authorization.k8s.io" is not namespaced',
      ),
    );
  });

  it('refuses the enforced RBAC types, whatever the mode', () => {
    const msg = (i: number, r: string) =>
      `spec.resources[${i}]: Invalid value: ${r}.rbac.authorization.k8s.io: always uses the 'Propagate' mode and cannot be configured`;
    expect(validate([{ group: 'rbac.authorization.k8s.io', resource: 'roles', mode: 'Ignore' }])).toEqual(invalid(msg(0, 'roles')));
    expect(validate([{ group: 'rbac.authorization.k8s.io', resource: 'rolebindings', mode: 'Propagate' }])).toEqual(
      invalid(msg(0, 'rolebindings')),
    );
  });

  it('refuses a type configured twice, on the later entry', () => {
    expect(validate([{ resource: 'secrets' }, { resource: 'configmaps' }, { resource: 'secrets', mode: 'Ignore' }])).toEqual(
      invalid('spec.resources[2]: Duplicate value: secrets'),
    );
  });

  it('compares resolved types: an empty group may name the same type as its group', () => {
    expect(validate([{ group: 'apps', resource: 'deployments' }, { resource: 'deployments' }])).toEqual(
      invalid('spec.resources[1]: Duplicate value: deployments'),
    );
  });

  it('reports every problem at once, in spec order', () => {
    expect(
      validate([{ resource: 'foos' }, { resource: 'namespaces' }, { resource: 'secrets' }, { resource: 'secrets' }, { resource: 'bars' }]),
    ).toEqual(
      invalid(
        '[spec.resources[0]: Invalid value: foos: no matches for /, Resource=foos, ' +
          'spec.resources[1]: Invalid value: namespaces: resource "namespaces" is not namespaced, ' +
          'spec.resources[3]: Duplicate value: secrets, ' +
          'spec.resources[4]: Invalid value: bars: no matches for /, Resource=bars]',
      ),
    );
  });

  it('allows an empty spec', () => {
    expect(validateHncConfiguration(h, update(hncConfig(), { metadata: { name: 'config' } }), { resolve })).toEqual(ALLOWED);
  });

  it('exempts HNC', () => {
    expect(
      validateHncConfiguration(h, update(hncConfig(), hncConfig([{ resource: 'foos' }]), { hncServiceAccount: true }), { resolve }),
    ).toEqual(ALLOWED);
  });

  it('answers 400 without the object', () => {
    expect(validateHncConfiguration(h, empty('UPDATE'), { resolve })).toEqual(denied(400, 'BadRequest', 'there is no content to decode'));
  });
});

describe('HNCConfiguration validator: objects a newly propagated type would overwrite (docs/behaviour.md §7.5)', () => {
  const overwrite = denied(
    409,
    'Conflict',
    'Operation cannot be fulfilled on hncconfigurations.hnc.x-k8s.io "hierarchy": ' +
      "Cannot update configuration because setting type \"/v1, Kind=Secret\" to 'Propagate' mode or 'AllowPropagate' mode would overwrite user-created object(s):\n" +
      '  Object "creds" in namespace "a" would overwrite the one in "b"\n' +
      '  Object "creds" in namespace "a" would overwrite the one in "c"\n' +
      'To fix this, please rename or remove the conflicting objects first.',
  );
  const creds = [
    { name: 'creds', ancestor: 'a', namespace: 'b' },
    { name: 'creds', ancestor: 'a', namespace: 'c' },
  ];

  it('refuses, listing each overwritten object (Conflict)', () => {
    const overwriteConflicts = vi.fn(() => creds);
    expect(validate([{ resource: 'secrets', mode: 'Propagate' }], { overwriteConflicts })).toEqual(overwrite);
    expect(overwriteConflicts).toHaveBeenCalledWith({ group: '', version: 'v1', kind: 'Secret', resource: 'secrets', mode: 'Propagate' });
  });

  it('treats an empty mode as Propagate, and checks AllowPropagate too', () => {
    expect(validate([{ resource: 'secrets' }], { overwriteConflicts: () => creds })).toEqual(overwrite);
    const allowProp = vi.fn(() => []);
    expect(validate([{ resource: 'secrets', mode: 'AllowPropagate' }], { overwriteConflicts: allowProp })).toEqual(ALLOWED);
    expect(allowProp).toHaveBeenCalledWith(expect.objectContaining({ kind: 'Secret', mode: 'AllowPropagate' }));
  });

  it('only checks types that are not propagated already', () => {
    const overwriteConflicts = vi.fn(() => creds);
    const propagating = [{ group: '', kind: 'Secret' }];
    expect(validate([{ resource: 'secrets' }], { overwriteConflicts, propagating })).toEqual(ALLOWED);
    expect(overwriteConflicts).not.toHaveBeenCalled();
  });

  it('does not check types that do not propagate', () => {
    const overwriteConflicts = vi.fn(() => creds);
    expect(
      validate(
        [
          { resource: 'secrets', mode: 'Remove' },
          { resource: 'configmaps', mode: 'Ignore' },
        ],
        { overwriteConflicts },
      ),
    ).toEqual(ALLOWED);
    expect(overwriteConflicts).not.toHaveBeenCalled();
  });

  it('answers for the first type with conflicts, in spec order', () => {
    const overwriteConflicts = vi.fn((t: { kind: string }) =>
      t.kind === 'Deployment' ? [{ name: 'web', ancestor: 'a', namespace: 'b' }] : [],
    );
    const d = refusal(
      validate([{ resource: 'configmaps' }, { group: 'apps', resource: 'deployments' }, { resource: 'secrets' }], { overwriteConflicts }),
    );
    expect(d).toMatchObject({ code: 409 });
    expect(d.message).toContain('setting type "apps/v1, Kind=Deployment"');
    expect(overwriteConflicts).toHaveBeenCalledTimes(2);
  });

  it('is not asked when the types are invalid', () => {
    const overwriteConflicts = vi.fn(() => creds);
    expect(refusal(validate([{ resource: 'secrets' }, { resource: 'foos' }], { overwriteConflicts })).code).toBe(422);
    expect(overwriteConflicts).not.toHaveBeenCalled();
  });
});
