import { describe, expect, it } from 'vitest';
import { HierarchyPolicy } from '../hierarchy/policy.js';
import { fieldErrorText } from './decision.js';
import { isDns1123Label, isDns1123Subdomain, isQualifiedName, isValidLabelValue, managedMetadataErrors } from './names.js';

const LABEL_REGEX =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const SUBDOMAIN_REGEX =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const QNAME_REGEX =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const VALUE_REGEX =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

describe('DNS-1123 labels (namespace names)', () => {
  it('accepts lower-case alphanumerics and inner dashes', () => {
    expect(isDns1123Label('team-a1')).toEqual([]);
    expect(isDns1123Label('a'.repeat(63))).toEqual([]);
  });

  it.each(['Foo', '-a', 'a-', 'a.b', '', 'a_b'])('refuses %j with the regex message', (name) => {
    expect(isDns1123Label(name)).toEqual([LABEL_REGEX]);
  });

  it('reports length and syntax separately', () => {
    expect(isDns1123Label('a'.repeat(64))).toEqual(['must be no more than 63 characters']);
    expect(isDns1123Label('A'.repeat(64))).toEqual(['must be no more than 63 characters', LABEL_REGEX]);
  });

  it('subdomains allow dots and 253 bytes', () => {
    expect(isDns1123Subdomain('example.com')).toEqual([]);
    expect(isDns1123Subdomain('Example.com')).toEqual([SUBDOMAIN_REGEX]);
    expect(isDns1123Subdomain('a'.repeat(254))).toEqual(['must be no more than 253 characters']);
  });
});

describe('qualified names (label and annotation keys)', () => {
  it('accepts a name with an optional subdomain prefix', () => {
    expect(isQualifiedName('team')).toEqual([]);
    expect(isQualifiedName('My_Name.x')).toEqual([]);
    expect(isQualifiedName('example.com/team')).toEqual([]);
  });

  it('checks the name part', () => {
    expect(isQualifiedName('-team')).toEqual([`name part ${QNAME_REGEX}`]);
    expect(isQualifiedName('x/')).toEqual(['name part must be non-empty', `name part ${QNAME_REGEX}`]);
    expect(isQualifiedName('a'.repeat(64))).toEqual(['name part must be no more than 63 characters']);
  });

  it('checks the prefix part', () => {
    expect(isQualifiedName('/team')).toEqual(['prefix part must be non-empty']);
    expect(isQualifiedName('Example.com/team')).toEqual([`prefix part ${SUBDOMAIN_REGEX}`]);
  });

  it('refuses more than one slash at once', () => {
    expect(isQualifiedName('a/b/c')).toEqual([
      `a qualified name ${QNAME_REGEX} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ]);
  });

  it('counts length in UTF-8 bytes, as Go does', () => {
    expect(isQualifiedName('é'.repeat(32))).toEqual(['name part must be no more than 63 characters', `name part ${QNAME_REGEX}`]);
  });
});

describe('label values', () => {
  it('accepts empty and qualified-name-like values', () => {
    expect(isValidLabelValue('')).toEqual([]);
    expect(isValidLabelValue('My_value-1.2')).toEqual([]);
  });

  it('refuses others', () => {
    expect(isValidLabelValue('a b')).toEqual([VALUE_REGEX]);
    expect(isValidLabelValue('a'.repeat(64))).toEqual(['must be no more than 63 characters']);
  });
});

describe('managed metadata of HC and anchor specs', () => {
  const policy = new HierarchyPolicy({ managedLabels: ['team', '.*\\.example\\.com/.*'], managedAnnotations: ['owner'] });
  const texts = (labels: { key: string; value: string }[], annotations: { key: string; value: string }[] = []) =>
    managedMetadataErrors(policy, labels, annotations).map(fieldErrorText);

  it('accepts managed keys with valid values', () => {
    expect(
      texts(
        [
          { key: 'team', value: 'a' },
          { key: 'x.example.com/tier', value: '' },
        ],
        [{ key: 'owner', value: 'any value at all!' }],
      ),
    ).toEqual([]);
  });

  it('refuses a key that is not a qualified name (and does not also call it unmanaged)', () => {
    expect(texts([{ key: 'a/b/c', value: 'v' }])).toEqual([
      `spec.labels: Invalid value: "a/b/c": a qualified name ${QNAME_REGEX} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ]);
  });

  it('joins several key problems with "; "', () => {
    expect(texts([{ key: 'Bad.com/', value: 'v' }])).toEqual([
      `spec.labels: Invalid value: "Bad.com/": prefix part ${SUBDOMAIN_REGEX}; name part must be non-empty; name part ${QNAME_REGEX}`,
    ]);
  });

  it('refuses keys no managed regex allows', () => {
    expect(texts([{ key: 'color', value: 'v' }], [{ key: 'team', value: 'v' }])).toEqual([
      'spec.labels: Invalid value: "color": not a managed label and cannot be configured',
      'spec.annotations: Invalid value: "team": not a managed annotation and cannot be configured',
    ]);
  });

  it('checks label values on spec.labels[<key>], annotation values not at all', () => {
    expect(texts([{ key: 'team', value: 'a b' }], [{ key: 'owner', value: 'a b' }])).toEqual([
      `spec.labels[team]: Invalid value: "a b": ${VALUE_REGEX}`,
    ]);
  });

  it('reports per entry: key then value, labels before annotations', () => {
    expect(
      texts(
        [
          { key: 'color', value: '-' },
          { key: 'team', value: 'ok' },
        ],
        [{ key: 'x', value: '' }],
      ),
    ).toEqual([
      'spec.labels: Invalid value: "color": not a managed label and cannot be configured',
      `spec.labels[color]: Invalid value: "-": ${VALUE_REGEX}`,
      'spec.annotations: Invalid value: "x": not a managed annotation and cannot be configured',
    ]);
  });
});
