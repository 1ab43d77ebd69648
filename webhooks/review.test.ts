import { describe, expect, it } from 'vitest';
import { BadReview, decodeReview } from './review.js';
import { HIERARCHY_CONFIGURATION, HNC_CONFIGURATION, SUBNAMESPACE_ANCHOR, type Shape } from './shapes.js';

const base = () => ({
  uid: 'u-1',
  kind: { group: 'hnc.x-k8s.io', version: 'v1alpha2', kind: 'HierarchyConfiguration' },
  resource: { group: 'hnc.x-k8s.io', version: 'v1alpha2', resource: 'hierarchyconfigurations' },
  name: 'hierarchy',
  namespace: 'team-a',
  operation: 'UPDATE',
  userInfo: { username: 'alice', uid: '1', groups: ['system:authenticated'], extra: { scopes: ['a'] } },
  object: {
    apiVersion: 'hnc.x-k8s.io/v1alpha2',
    kind: 'HierarchyConfiguration',
    metadata: { name: 'hierarchy', namespace: 'team-a', labels: { a: 'b' }, annotations: {}, creationTimestamp: null },
    spec: { parent: 'org', allowCascadingDeletion: false, labels: [{ key: 'k', value: 'v' }] },
    status: { children: ['x'], conditions: [{ type: 'ActivitiesHalted' }] },
  },
  oldObject: null,
  dryRun: false,
});

type Request = ReturnType<typeof base>;
const encode = (request: unknown) => JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request });

function decode(change: (r: Request) => void, shape: Shape = HIERARCHY_CONFIGURATION) {
  const r = base();
  change(r);
  return decodeReview(encode(r), shape);
}

const set = (path: string, value: unknown) => (r: Request) => {
  const keys = path.split('.');
  let o = r as unknown as Record<string, unknown>;
  for (const k of keys.slice(0, -1)) o = o[k] as Record<string, unknown>;
  o[keys[keys.length - 1]!] = value;
};

describe('decodeReview: wrong-typed fields are a BadReview with a plain message', () => {
  it('accepts a well-formed review (null meaning absent)', () => {
    expect(decode(() => undefined).name).toBe('hierarchy');
  });

  it.each([
    ['userInfo.groups', 'system:masters', 'request.userInfo.groups must be an array, not a string'],
    ['userInfo.groups', [1], 'request.userInfo.groups[0] must be a string, not a number'],
    ['userInfo.username', 7, 'request.userInfo.username must be a string, not a number'],
    ['userInfo', 'alice', 'request.userInfo must be an object, not a string'],
    ['userInfo.extra', { scopes: 'a' }, 'request.userInfo.extra["scopes"] must be an array, not a string'],
    ['kind', 'Namespace', 'request.kind must be an object, not a string'],
    ['kind.kind', ['x'], 'request.kind.kind must be a string, not an array'],
    ['resource.group', {}, 'request.resource.group must be a string, not an object'],
    ['name', 1, 'request.name must be a string, not a number'],
    ['namespace', ['a'], 'request.namespace must be a string, not an array'],
    ['operation', 'PATCH', 'unknown operation "PATCH"'],
    ['operation', 3, 'request.operation must be a string, not a number'],
    ['dryRun', 'yes', 'request.dryRun must be a boolean, not a string'],
    ['object', 'x', 'request.object is not an object'],
    ['object', [], 'request.object is not an object'],
    ['object.metadata', 'x', 'request.object.metadata must be an object, not a string'],
    ['object.metadata.name', 5, 'request.object.metadata.name must be a string, not a number'],
    ['object.metadata.labels', ['a'], 'request.object.metadata.labels must be an object, not an array'],
    ['object.metadata.labels', { a: 1 }, 'request.object.metadata.labels["a"] must be a string, not a number'],
    ['object.metadata.annotations', { a: null }, 'request.object.metadata.annotations["a"] must be a string, not null'],
    ['object.metadata.finalizers', 'x', 'request.object.metadata.finalizers must be an array, not a string'],
    ['object.spec', [], 'request.object.spec must be an object, not an array'],
    ['object.spec.parent', { name: 'x' }, 'request.object.spec.parent must be a string, not an object'],
    ['object.spec.allowCascadingDeletion', 'true', 'request.object.spec.allowCascadingDeletion must be a boolean, not a string'],
    ['object.spec.labels', 's', 'request.object.spec.labels must be an array, not a string'],
    ['object.spec.labels', [{ key: 1, value: 'v' }], 'request.object.spec.labels[0].key must be a string, not a number'],
    ['object.spec.labels', [null], 'request.object.spec.labels[0] must be an object, not null'],
    ['object.status.children', 'x', 'request.object.status.children must be an array, not a string'],
  ])('%s = %j', (path, value, message) => {
    expect(() => decode(set(path, value))).toThrow(new BadReview(message));
  });

  it.each([
    ['uid', undefined, 'the request has no uid'],
    ['userInfo', undefined, 'request.userInfo is missing'],
    ['userInfo.username', undefined, 'request.userInfo.username is missing'],
    ['kind', undefined, 'request.kind is missing'],
    ['resource.resource', undefined, 'request.resource.resource is missing'],
  ])('missing %s', (path, value, message) => {
    expect(() => decode(set(path, value))).toThrow(new BadReview(message));
  });

  it('checks oldObject like object', () => {
    expect(() => decode((r) => (r.oldObject = { ...r.object, spec: { parent: 3 } } as never))).toThrow(
      new BadReview('request.oldObject.spec.parent must be a string, not a number'),
    );
  });

  it('checks each kind by its own shape', () => {
    const anchor = (spec: unknown) => (r: Request) => (r.object = { metadata: { name: 'a' }, spec } as never);
    expect(() => decode(anchor({ annotations: 'x' }), SUBNAMESPACE_ANCHOR)).toThrow('request.object.spec.annotations must be an array');
    const config = (resources: unknown) => (r: Request) => (r.object = { metadata: { name: 'config' }, spec: { resources } } as never);
    expect(() => decode(config({ group: 'x' }), HNC_CONFIGURATION)).toThrow(
      'request.object.spec.resources must be an array, not an object',
    );
    expect(() => decode(config([{ resource: ['roles'] }]), HNC_CONFIGURATION)).toThrow(
      'request.object.spec.resources[0].resource must be a string, not an array',
    );
    // Another kind's fields are not checked by the generic shape.
    expect(decode(set('object.spec.parent', 3), { object: {} }).name).toBe('hierarchy');
  });
});
