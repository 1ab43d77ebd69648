import { describe, expect, it } from 'vitest';
import { hierarchy } from '../hierarchy/testing.js';
import { validateObject } from './objects.js';
import type { AdmissionInput } from './decision.js';
import type { PropagatableObject } from '../propagation/copy.js';

const resource = { group: 'rbac.authorization.k8s.io', resource: 'roles' };
const role = (
  name: string,
  labels: Record<string, string> = {},
  annotations: Record<string, string> = {},
  rules: unknown[] = [],
): PropagatableObject =>
  ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name, labels, annotations }, rules }) as PropagatableObject;
const req = (
  operation: AdmissionInput<PropagatableObject>['operation'],
  namespace: string,
  object?: PropagatableObject,
  oldObject?: PropagatableObject,
  sa = false,
): AdmissionInput<PropagatableObject> => ({
  operation,
  namespace,
  name: (object ?? oldObject)?.metadata?.name,
  object,
  oldObject,
  userInfo: { username: 'alice' },
  isHncServiceAccount: sa,
});
const copyOf = (name: string, from: string) => role(name, { 'hnc.x-k8s.io/inherited-from': from });

describe('validateObject', () => {
  const h = hierarchy('a -> b -> c');
  const opts = { resource, propagating: true };

  it('lets anything through for types not propagated, unmanaged namespaces and HNC itself', () => {
    expect(validateObject(h, req('CREATE', 'b', copyOf('r', 'a')), { ...opts, propagating: false }).allowed).toBe(true);
    expect(validateObject(h, req('CREATE', 'kube-system', copyOf('r', 'a')), opts).allowed).toBe(true);
    expect(validateObject(h, req('DELETE', 'b', undefined, copyOf('r', 'a'), true), opts).allowed).toBe(true);
  });

  it('refuses creating, editing, relabelling or deleting a copy', () => {
    expect(validateObject(h, req('CREATE', 'b', copyOf('r', 'a')), opts)).toEqual({
      allowed: false,
      code: 403,
      reason: 'Forbidden',
      message: 'roles.rbac.authorization.k8s.io "r" is forbidden: cannot create objects with the label "hnc.x-k8s.io/inherited-from"',
    });
    const edited = role('r', { 'hnc.x-k8s.io/inherited-from': 'a' }, {}, [{ verbs: ['*'] }]);
    expect(validateObject(h, req('UPDATE', 'b', edited, copyOf('r', 'a')), opts)).toMatchObject({
      code: 403,
      message: 'roles.rbac.authorization.k8s.io "r" is forbidden: cannot modify object propagated from namespace "a"',
    });
    expect(validateObject(h, req('UPDATE', 'b', role('r'), copyOf('r', 'a')), opts)).toMatchObject({
      message: 'roles.rbac.authorization.k8s.io "r" is forbidden: cannot modify the label "hnc.x-k8s.io/inherited-from"',
    });
    expect(validateObject(h, req('DELETE', 'b', undefined, copyOf('r', 'a')), opts)).toMatchObject({
      message: 'roles.rbac.authorization.k8s.io "r" is forbidden: cannot delete object propagated from namespace "a"',
    });
  });

  it('allows changes to a copy that are not its content (status, finalizers) and deletion in a terminating namespace', () => {
    const withFinalizer = { ...copyOf('r', 'a'), metadata: { ...copyOf('r', 'a').metadata, finalizers: ['x'] } };
    expect(validateObject(h, req('UPDATE', 'b', withFinalizer, copyOf('r', 'a')), opts).allowed).toBe(true);
    const going = hierarchy('a -> b');
    going.setNamespace('b', { labels: {}, annotations: {}, deleting: true });
    expect(validateObject(going, req('DELETE', 'b', undefined, copyOf('r', 'a')), opts).allowed).toBe(true);
  });

  it('refuses bad selector annotations and two selectors at once on a source', () => {
    expect(validateObject(h, req('CREATE', 'a', role('r', {}, { 'propagate.hnc.x-k8s.io/none': 'maybe' })), opts)).toMatchObject({
      code: 400,
      message: 'invalid propagate.hnc.x-k8s.io/none value: strconv.ParseBool: parsing "maybe": invalid syntax',
    });
    expect(
      validateObject(
        h,
        req('CREATE', 'a', role('r', {}, { 'propagate.hnc.x-k8s.io/none': 'true', 'propagate.hnc.x-k8s.io/all': 'true' })),
        opts,
      ),
    ).toMatchObject({
      code: 400,
      message: expect.stringMatching(/^cannot have more than one selector at the same time, but got multiple: /),
    });
  });

  it('refuses a source that would overwrite same-named sources below it', () => {
    const d = validateObject(h, req('CREATE', 'a', role('r')), { ...opts, overwrittenIn: () => ['b', 'c'] });
    expect(d).toEqual({
      allowed: false,
      code: 409,
      reason: 'Conflict',
      message:
        'Operation cannot be fulfilled on roles.rbac.authorization.k8s.io "a/r": would overwrite objects in the following descendant namespace(s): b,c. To fix this, choose a different name for the object, or remove the conflicting objects from the listed namespaces',
    });
  });
});
