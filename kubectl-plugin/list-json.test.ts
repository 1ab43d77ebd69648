import { describe, expect, it } from 'vitest';
import { ListReader, type ListItem } from './list-json.js';

const managed = [
  { manager: 'kubectl', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { '.': {} } } } },
];

// Items as the API server writes them (metadata first; managedFields last in metadata) and as an
// unstructured object is written (keys sorted: managedFields before name and namespace), with the
// traps a structural reader could fall into: "namespace" as a label key, in a subject and inside
// strings, escaped quotes and backslashes, non-ASCII text, nested lists of objects.
const items = [
  {
    metadata: { name: 'a', namespace: 'team-a', labels: { namespace: 'not-this' }, managedFields: managed },
    subjects: [{ kind: 'ServiceAccount', name: 'sa', namespace: 'elsewhere' }],
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
  },
  {
    apiVersion: 'example.com/v1',
    kind: 'Thing',
    metadata: { annotations: { note: 'a "quoted" \\ text: {"namespace":"x"} ✓' }, managedFields: managed, name: 'b', namespace: 'team-b' },
    spec: { templates: [{ metadata: { namespace: 'inner', managedFields: managed } }, { items: [1, 2, { namespace: 'deep' }] }] },
  },
  { metadata: { managedFields: managed, name: 'cluster-wide' } },
  { metadata: { name: 'no-fields', namespace: 'ns-\u00e9' }, data: { k: 'v' } },
  { metadata: { managedFields: [], namespace: 'only-empty-fields' } },
];
const list = { kind: 'ThingList', apiVersion: 'v1', metadata: { resourceVersion: '42' }, items };
const withoutManagedFields = (o: { metadata: Record<string, unknown> }) => {
  const { managedFields: _, ...metadata } = o.metadata;
  return { ...o, metadata };
};

function read(text: string, chunk: number) {
  const found: ListItem[] = [];
  const reader = new ListReader((item) => found.push(item));
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += chunk) reader.push(bytes.subarray(i, i + chunk));
  return { header: reader.end(), found };
}

describe('ListReader', () => {
  for (const [name, text] of [
    ['compact', JSON.stringify(list)],
    ['indented', JSON.stringify(list, null, 2)],
    ['items before kind (sorted keys)', JSON.stringify({ apiVersion: 'v1', items, kind: 'ThingList', metadata: {} })],
  ] as const) {
    it(`${name}: every item with its namespace, parsed without managedFields, whatever the chunks`, () => {
      const whole = JSON.parse(text) as { items: typeof items };
      const { items: _, ...header } = whole;
      for (const chunk of [1, 2, 3, 7, 64, 1 << 20]) {
        const r = read(text, chunk);
        expect(r.header).toEqual({ ...header, items: [] });
        expect(r.found.map((i) => i.namespace)).toEqual(['team-a', 'team-b', undefined, 'ns-\u00e9', 'only-empty-fields']);
        expect(r.found.map((i) => i.parse())).toEqual(whole.items.map(withoutManagedFields));
      }
    });
  }

  it('keys written with escapes (valid JSON, the same keys to JSON.parse) are read as those keys', () => {
    const fields = JSON.stringify(managed);
    const text =
      `{"kind":"List","\\u0069tems":[{"m\\u0065tadata":{"name":"e","n\\u0061mespace":"team-\\u0065","m\\u0061nagedFields":${fields}}},` +
      `{"metadata":{"name":"f","namespace":"team-f","managedFields":${fields}}}]}`;
    for (const chunk of [1, 5, 1 << 20]) {
      const r = read(text, chunk);
      expect(r.header).toEqual({ kind: 'List', items: [] });
      expect(r.found.map((i) => i.namespace)).toEqual(['team-e', 'team-f']);
      expect(r.found.map((i) => i.parse())).toEqual([
        { metadata: { name: 'e', namespace: 'team-e' } },
        { metadata: { name: 'f', namespace: 'team-f' } },
      ]);
    }
  });

  it('an empty list, and a list without items', () => {
    expect(read('{"kind":"List","items":[]}', 5)).toEqual({ header: { kind: 'List', items: [] }, found: [] });
    expect(read('{"kind":"List","metadata":{}}', 5)).toEqual({ header: { kind: 'List', metadata: {} }, found: [] });
  });

  it('a list cut short is an error, not a shorter list', () => {
    const text = JSON.stringify(list);
    for (const cut of [text.length - 1, text.indexOf('"b"') + 1, 10]) {
      expect(() => read(text.slice(0, cut), 16)).toThrow(/ends before its last bracket/);
    }
  });
});
