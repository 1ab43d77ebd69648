import { describe, expect, it } from 'vitest';
import { hierarchy } from '../hierarchy/testing.js';
import { mutateNamespace } from './namespace-mutator.js';
import { create, del, denied, empty, INCLUDED, namespace, update } from './testing.js';

const h = hierarchy('a', { policy: { includedNamespaceRegex: '[a-z].*' } });

describe('namespace mutator (docs/behaviour.md §7.2)', () => {
  it('gives a new managed namespace without labels the included label', () => {
    expect(mutateNamespace(h, create(namespace('team-a')))).toEqual({
      allowed: true,
      patch: [{ op: 'add', path: '/metadata/labels', value: { 'hnc.x-k8s.io/included-namespace': 'true' } }],
    });
  });

  it('adds the label next to existing ones, escaping the "/" of its key as ~1', () => {
    expect(mutateNamespace(h, create(namespace('team-a', { labels: { env: 'dev' } })))).toEqual({
      allowed: true,
      patch: [{ op: 'add', path: '/metadata/labels/hnc.x-k8s.io~1included-namespace', value: 'true' }],
    });
  });

  it('adds it on UPDATE too (e.g. after a user removed it)', () => {
    const d = mutateNamespace(h, update(namespace('a', { labels: INCLUDED }), namespace('a', { labels: {} })));
    expect(d).toEqual({ allowed: true, patch: [{ op: 'add', path: '/metadata/labels/hnc.x-k8s.io~1included-namespace', value: 'true' }] });
  });

  it('adds metadata itself if the object has none', () => {
    expect(mutateNamespace(h, create({}, { name: 'team-a' }))).toEqual({
      allowed: true,
      patch: [{ op: 'add', path: '/metadata', value: { labels: { 'hnc.x-k8s.io/included-namespace': 'true' } } }],
    });
  });

  it('never changes a value that is there, even a wrong one (the validator refuses those)', () => {
    expect(mutateNamespace(h, create(namespace('team-a', { labels: INCLUDED })))).toEqual({ allowed: true });
    expect(mutateNamespace(h, create(namespace('team-a', { labels: { 'hnc.x-k8s.io/included-namespace': 'false' } })))).toEqual({
      allowed: true,
    });
  });

  it('leaves excluded namespaces alone', () => {
    expect(mutateNamespace(h, create(namespace('kube-system')))).toEqual({ allowed: true });
    expect(mutateNamespace(h, create(namespace('hnc-system')))).toEqual({ allowed: true });
  });

  it('leaves namespaces outside the included regex alone', () => {
    expect(mutateNamespace(h, create(namespace('0-numbered')))).toEqual({ allowed: true });
  });

  it('mutates for everybody, HNC included', () => {
    expect(mutateNamespace(h, create(namespace('team-a'), { hncServiceAccount: true })).allowed).toBe(true);
    expect(mutateNamespace(h, create(namespace('team-a'), { hncServiceAccount: true }))).toHaveProperty('patch');
  });

  it('has nothing to do on DELETE', () => {
    expect(mutateNamespace(h, del(namespace('team-a')))).toEqual({ allowed: true });
  });

  it('answers 400 for a request without its object', () => {
    expect(mutateNamespace(h, empty('CREATE'))).toEqual(denied(400, 'BadRequest', 'there is no content to decode'));
  });
});

describe('namespace mutator: grafts (beyond HNC)', () => {
  const SUBNS_OF = 'hnc.x-k8s.io/subnamespace-of';
  it('records who set or changed subnamespace-of, but not for HNC creating a subnamespace', () => {
    const before = namespace('b', { labels: INCLUDED });
    const after = namespace('b', { labels: INCLUDED, annotations: { [SUBNS_OF]: 'a' } });
    expect(mutateNamespace(h, update(before, after))).toEqual({
      allowed: true,
      patch: [{ op: 'add', path: '/metadata/annotations/hnc.x-k8s.io~1grafted-by', value: 'alice' }],
    });
    expect(mutateNamespace(h, update(after, after))).toEqual({ allowed: true });
    expect(mutateNamespace(h, create(after, { hncServiceAccount: true }))).toEqual({ allowed: true });
  });
});
