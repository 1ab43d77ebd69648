// The admission worker's copy of what the objects webhook reads of the controller: the same
// conflict answers as the controller's own sources give, kept by the changes the main thread sends.
import { describe, expect, it } from 'vitest';
import { PropagationMode } from '../core/api/constants.js';
import { hierarchy } from '../core/hierarchy/testing.js';
import { conflictingDescendants, SourceSet } from '../core/propagation/decide.js';
import type { PropagatableObject } from '../core/propagation/copy.js';
import { PropagationIndex, type SourceChange } from './propagation-index.js';

const roles = { group: 'rbac.authorization.k8s.io', resource: 'roles', kind: 'Role', mode: PropagationMode.Propagate };
const secrets = { group: '', resource: 'secrets', kind: 'Secret', mode: PropagationMode.AllowPropagate };
const role = (name: string, annotations: Record<string, string> = {}): PropagatableObject => ({ metadata: { name, annotations } });
const added = (namespace: string, name: string, present = true): SourceChange => ({ ...roles, namespace, name, present });

describe('PropagationIndex', () => {
  const h = hierarchy('root -> team -> dev, team -> prod, other');

  it('answers the conflict check as the controller sources would, after the same changes', () => {
    const index = new PropagationIndex(() => h);
    index.setTypes([roles]);
    index.apply([added('dev', 'admins'), added('prod', 'admins'), added('other', 'admins'), added('root', 'admins')]);
    const ctx = index.view.context(roles.group, roles.resource)!;
    const controller = new SourceSet(
      ['dev', 'prod', 'other', 'root'].map((namespace) => ({ namespace, name: 'admins', object: role('admins') })),
    );
    const expected = conflictingDescendants({ hierarchy: h, type: roles, sources: controller }, 'team', 'admins', role('admins'));
    expect(expected).toEqual(['dev', 'prod']);
    expect(conflictingDescendants(ctx, 'team', 'admins', role('admins'))).toEqual(expected);
    // The object under review decides where it would go: its selector is read, not the sources'.
    expect(conflictingDescendants(ctx, 'team', 'admins', role('admins', { 'propagate.hnc.x-k8s.io/treeSelect': '!prod' }))).toEqual([
      'dev',
    ]);
  });

  it('forgets a source that went, and every source of a type whose propagator stopped', () => {
    const index = new PropagationIndex(() => h);
    index.setTypes([roles]);
    index.apply([added('dev', 'admins'), added('prod', 'admins'), added('dev', 'admins', false)]);
    expect(conflictingDescendants(index.view.context(roles.group, roles.resource)!, 'team', 'admins', role('admins'))).toEqual(['prod']);
    index.apply([{ group: roles.group, resource: roles.resource, reset: true }]);
    expect(conflictingDescendants(index.view.context(roles.group, roles.resource)!, 'team', 'admins', role('admins'))).toEqual([]);
  });

  it('knows only the configured types, with their modes', () => {
    const index = new PropagationIndex(() => h, { noPropagationLabels: [] });
    expect(index.view.context('', 'secrets')).toBeUndefined();
    expect(index.view.propagatingKinds()).toEqual([]);
    index.setTypes([roles, secrets, { group: '', resource: 'configmaps', kind: 'ConfigMap', mode: PropagationMode.Ignore }]);
    expect(index.view.context('', 'secrets')?.type.mode).toBe(PropagationMode.AllowPropagate);
    expect(index.view.context('', 'configmaps')?.type.mode).toBe(PropagationMode.Ignore);
    expect(index.view.context('', 'secrets')?.options).toEqual({ noPropagationLabels: [] });
    expect(index.view.propagatingKinds()).toEqual([
      { group: roles.group, kind: 'Role' },
      { group: '', kind: 'Secret' },
    ]);
    index.setTypes([secrets]);
    expect(index.view.context(roles.group, roles.resource)).toBeUndefined();
  });
});
