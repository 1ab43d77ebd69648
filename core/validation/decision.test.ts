import { describe, expect, it } from 'vitest';
import {
  aggregateText,
  allow,
  badRequest,
  conflict,
  fieldDuplicate,
  fieldErrorText,
  fieldInvalid,
  forbidden,
  goQuote,
  gvkText,
  internalError,
  invalid,
  jsonPointer,
  KindOf,
  Resource,
  serviceUnavailable,
  unauthorized,
} from './decision.js';

describe('denials worded as the apimachinery error helpers', () => {
  it('Forbidden: `<resource>[.<group>] "<name>" is forbidden: <msg>`, 403', () => {
    expect(forbidden(Resource.namespaces, 'a', 'no')).toEqual({
      allowed: false,
      code: 403,
      reason: 'Forbidden',
      message: 'namespaces "a" is forbidden: no',
    });
    expect(forbidden(Resource.hierarchyConfigurations, 'hierarchy', 'no').message).toBe(
      'hierarchyconfigurations.hnc.x-k8s.io "hierarchy" is forbidden: no',
    );
  });

  it('Forbidden without a name or resource drops them, as errors.NewForbidden does', () => {
    expect(forbidden(Resource.namespaces, '', 'no').message).toBe('namespaces is forbidden: no');
    expect(forbidden({ group: '', resource: '' }, '', 'no').message).toBe('forbidden: no');
  });

  it('Conflict: `Operation cannot be fulfilled on <resource>[.<group>] "<name>": <msg>`, 409', () => {
    expect(conflict(Resource.subnamespaceAnchors, 'b', 'taken')).toEqual({
      allowed: false,
      code: 409,
      reason: 'Conflict',
      message: 'Operation cannot be fulfilled on subnamespaceanchors.hnc.x-k8s.io "b": taken',
    });
  });

  it('Invalid: `<Kind>.<group> "<name>" is invalid: <field error>`, 422', () => {
    const d = invalid(KindOf.hierarchyConfiguration, 'hierarchy', [fieldInvalid('spec.labels', 'x', 'bad')]);
    expect(d).toEqual({
      allowed: false,
      code: 422,
      reason: 'Invalid',
      message: 'HierarchyConfiguration.hnc.x-k8s.io "hierarchy" is invalid: spec.labels: Invalid value: "x": bad',
    });
  });

  it('Invalid aggregates several field errors in brackets, dropping repeated texts', () => {
    const e1 = fieldInvalid('spec.labels', 'x', 'bad');
    const e2 = fieldInvalid('spec.labels[x]', 'y', 'worse');
    expect(invalid(KindOf.hncConfiguration, 'config', [e1, e2, e1]).message).toBe(
      'HNCConfiguration.hnc.x-k8s.io "config" is invalid: [spec.labels: Invalid value: "x": bad, spec.labels[x]: Invalid value: "y": worse]',
    );
    expect(invalid(KindOf.hncConfiguration, 'config', [e1, e1]).message).toBe(
      'HNCConfiguration.hnc.x-k8s.io "config" is invalid: spec.labels: Invalid value: "x": bad',
    );
    expect(invalid(KindOf.hncConfiguration, 'config', []).message).toBe('HNCConfiguration.hnc.x-k8s.io "config" is invalid');
  });

  it('BadRequest, ServiceUnavailable and Unauthorized carry the message as is; InternalError prefixes it', () => {
    expect(badRequest('bad')).toEqual({ allowed: false, code: 400, reason: 'BadRequest', message: 'bad' });
    expect(serviceUnavailable('later')).toEqual({ allowed: false, code: 503, reason: 'ServiceUnavailable', message: 'later' });
    expect(unauthorized('who?')).toEqual({ allowed: false, code: 401, reason: 'Unauthorized', message: 'who?' });
    expect(unauthorized('').message).toBe('not authorized');
    expect(internalError('boom')).toEqual({ allowed: false, code: 500, reason: 'InternalError', message: 'Internal error occurred: boom' });
  });

  it('quotes names as Go %q does', () => {
    expect(forbidden(Resource.namespaces, 'we"ird\n', 'no').message).toBe('namespaces "we\\"ird\\n" is forbidden: no');
  });
});

describe('field errors', () => {
  it('print strings quoted, numbers and booleans plainly, Stringers unquoted', () => {
    expect(fieldErrorText(fieldInvalid('f', 'v', 'd'))).toBe('f: Invalid value: "v": d');
    expect(fieldErrorText(fieldInvalid('f', 3, 'd'))).toBe('f: Invalid value: 3: d');
    expect(fieldErrorText(fieldInvalid('f', true, 'd'))).toBe('f: Invalid value: true: d');
    expect(fieldErrorText(fieldInvalid('f', { printed: 'deployments.apps' }, 'd'))).toBe('f: Invalid value: deployments.apps: d');
    expect(fieldErrorText(fieldInvalid('f', null, 'd'))).toBe('f: Invalid value: "null": d');
  });

  it('Duplicate has no detail; Required and Forbidden show no value', () => {
    expect(fieldErrorText(fieldDuplicate('spec.resources[1]', { printed: 'secrets' }))).toBe('spec.resources[1]: Duplicate value: secrets');
    expect(fieldErrorText({ type: 'Required value', field: 'f', value: 'x', detail: 'd' })).toBe('f: Required value: d');
    expect(fieldErrorText({ type: 'Forbidden', field: 'f' })).toBe('f: Forbidden');
  });

  it('aggregate as utilerrors does', () => {
    expect(aggregateText(['a'])).toBe('a');
    expect(aggregateText(['a', 'b'])).toBe('[a, b]');
    expect(aggregateText(['a', 'a'])).toBe('a');
  });
});

describe('goQuote (Go %q)', () => {
  it.each([
    ['plain', '"plain"'],
    ['', '""'],
    ['a"b\\c', '"a\\"b\\\\c"'],
    ['\t\n\r\x07\b\f\v', '"\\t\\n\\r\\a\\b\\f\\v"'],
    ['\x00\x1b\x7f', '"\\x00\\x1b\\x7f"'],
    ['héllo ✓ 日本', '"héllo ✓ 日本"'],
    ['\u0085\u2028\ufeff', '"\\u0085\\u2028\\ufeff"'],
    ['\u{e0001}', '"\\U000e0001"'],
  ])('%j → %s', (input, quoted) => {
    expect(goQuote(input)).toBe(quoted);
  });
});

describe('helpers', () => {
  it('allow() carries warnings and patch only when there are some', () => {
    expect(allow()).toEqual({ allowed: true });
    expect(allow({ warnings: [], patch: [] })).toEqual({ allowed: true });
    expect(allow({ warnings: ['w'] })).toEqual({ allowed: true, warnings: ['w'] });
  });

  it('escapes JSON pointer tokens (RFC 6901)', () => {
    expect(jsonPointer('metadata', 'labels', 'hnc.x-k8s.io/included-namespace')).toBe('/metadata/labels/hnc.x-k8s.io~1included-namespace');
    expect(jsonPointer('a~b/c')).toBe('/a~0b~1c');
  });

  it('prints a GroupVersionKind as Go does', () => {
    expect(gvkText({ group: '', version: 'v1', kind: 'Secret' })).toBe('/v1, Kind=Secret');
    expect(gvkText({ group: 'apps', version: 'v1', kind: 'Deployment' })).toBe('apps/v1, Kind=Deployment');
  });
});
