import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  GROUP,
  Kind,
  PROPAGATION_MODES,
  Plural,
  ShortName,
  Singleton,
  VERSION,
  effectiveMode,
  isEnforcedType,
  isPropagating,
  isPropagationMode,
  treeLabel,
  treeLabelNamespace,
} from './index.js';

// Only the fields this test reads; everything else in the manifest is left as unknown.
type Schema = Record<string, unknown> & {
  type?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
  anyOf?: Schema[];
  enum?: unknown[];
  required?: string[];
};

interface Crd {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: {
    group: string;
    scope: string;
    names: { kind: string; listKind: string; plural: string; singular: string; shortNames?: string[]; categories?: string[] };
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      subresources?: Record<string, unknown>;
      additionalPrinterColumns?: { name: string; type: string; jsonPath: string }[];
      schema: { openAPIV3Schema: Schema };
    }[];
  };
}

const crdDir = fileURLToPath(new URL('../../crds/', import.meta.url));

function loadYaml<T>(file: string): T {
  return parse(readFileSync(crdDir + file, 'utf8')) as T;
}

const fileOf = (kind: Kind): string => `${GROUP}_${Plural[kind]}.yaml`;
const loadCrd = (kind: Kind): Crd => loadYaml<Crd>(fileOf(kind));

/** Walks a schema and returns the JSON paths of nodes that break the structural rules we rely on. */
function structuralViolations(node: Schema, path: string): string[] {
  const out: string[] = [];
  const intOrString = node['x-kubernetes-int-or-string'] === true;
  if (node.properties !== undefined) {
    if (node.type !== 'object') out.push(`${path}: has properties but type is ${String(node.type)}`);
    for (const [name, child] of Object.entries(node.properties)) {
      out.push(...structuralViolations(child, `${path}.${name}`));
    }
  }
  if (node.items !== undefined) {
    if (node.type !== 'array') out.push(`${path}: has items but type is ${String(node.type)}`);
    out.push(...structuralViolations(node.items, `${path}[]`));
  }
  if (typeof node.additionalProperties === 'object') {
    if (node.type !== 'object') out.push(`${path}: has additionalProperties but type is ${String(node.type)}`);
    out.push(...structuralViolations(node.additionalProperties, `${path}{}`));
  }
  if (node.type === undefined && !intOrString) out.push(`${path}: no type`);
  if (node.anyOf !== undefined) {
    // Structural schemas only allow anyOf as the int-or-string idiom, with plain typed branches.
    if (!intOrString) out.push(`${path}: anyOf without x-kubernetes-int-or-string`);
    for (const branch of node.anyOf) {
      if (branch.properties !== undefined || branch.items !== undefined) out.push(`${path}: anyOf branch with structure`);
    }
  }
  return out;
}

function at(schema: Schema, ...path: string[]): Schema {
  let node = schema;
  for (const step of path) {
    const next = step === '[]' ? node.items : step === '{}' ? node.additionalProperties : node.properties?.[step];
    if (next === undefined || typeof next === 'boolean') throw new Error(`no schema at ${path.join('.')}`);
    node = next;
  }
  return node;
}

const expected: Record<Kind, { scope: string; shortNames?: string[]; singleton?: string }> = {
  HierarchyConfiguration: { scope: 'Namespaced', singleton: Singleton.hierarchy },
  SubnamespaceAnchor: { scope: 'Namespaced', shortNames: [ShortName.SubnamespaceAnchor] },
  HNCConfiguration: { scope: 'Cluster', singleton: Singleton.config },
  HierarchicalResourceQuota: { scope: 'Namespaced', shortNames: [ShortName.HierarchicalResourceQuota] },
};

describe.each(Object.values(Kind))('CRD %s', (kind) => {
  const crd = loadCrd(kind);
  const want = expected[kind];
  const version = crd.spec.versions[0];
  const schema = version?.schema.openAPIV3Schema ?? {};

  it('is a v1 CRD named <plural>.<group>', () => {
    expect(crd.apiVersion).toBe('apiextensions.k8s.io/v1');
    expect(crd.kind).toBe('CustomResourceDefinition');
    expect(crd.metadata.name).toBe(`${Plural[kind]}.${GROUP}`);
  });

  it('agrees with the constants on group, names and scope', () => {
    expect(crd.spec.group).toBe(GROUP);
    expect(crd.spec.names).toEqual({
      kind,
      listKind: `${kind}List`,
      plural: Plural[kind],
      singular: kind.toLowerCase(),
      ...(want.shortNames ? { shortNames: want.shortNames } : {}),
    });
    expect(crd.spec.scope).toBe(want.scope);
  });

  it('has exactly one version, v1alpha2, served and stored', () => {
    expect(crd.spec.versions).toHaveLength(1);
    expect(version).toMatchObject({ name: VERSION, served: true, storage: true });
  });

  it('declares no status subresource (HRQ keeps an empty subresources block)', () => {
    if (kind === 'HierarchicalResourceQuota') expect(version?.subresources).toEqual({});
    else expect(version?.subresources).toBeUndefined();
  });

  it('has a structural schema', () => {
    expect(schema.type).toBe('object');
    expect(structuralViolations(schema, '')).toEqual([]);
  });

  it('restricts metadata.name only for singletons', () => {
    const metadata = at(schema, 'metadata');
    if (want.singleton === undefined) expect(metadata).toEqual({ type: 'object' });
    else expect(metadata).toEqual({ type: 'object', properties: { name: { type: 'string', enum: [want.singleton] } } });
  });
});

describe('structural check', () => {
  it('flags what the API server would reject', () => {
    const bad: Schema = {
      type: 'object',
      properties: {
        untyped: {},
        nested: { properties: { x: { type: 'string' } } },
        list: { type: 'array', items: { properties: {} } },
        union: { anyOf: [{ type: 'string' }] },
        quantity: { anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true },
      },
    };
    expect(structuralViolations(bad, '')).toEqual([
      '.untyped: no type',
      '.nested: has properties but type is undefined',
      '.nested: no type',
      '.list[]: has properties but type is undefined',
      '.list[]: no type',
      '.union: no type',
      '.union: anyOf without x-kubernetes-int-or-string',
    ]);
  });
});

describe('CRD details', () => {
  it('HNCConfiguration mode enum is the four propagation modes', () => {
    const schema = loadCrd('HNCConfiguration').spec.versions[0]?.schema.openAPIV3Schema ?? {};
    const mode = at(schema, 'spec', 'resources', '[]', 'mode');
    expect(mode.enum).toEqual([...PROPAGATION_MODES]);
    expect(at(schema, 'spec', 'resources', '[]').required).toEqual(['resource']);
    expect(at(schema, 'status', 'resources', '[]').required).toEqual(['group', 'resource', 'version']);
  });

  it('MetaKVP entries require key and value', () => {
    for (const kind of ['HierarchyConfiguration', 'SubnamespaceAnchor'] as const) {
      const schema = loadCrd(kind).spec.versions[0]?.schema.openAPIV3Schema ?? {};
      for (const field of ['labels', 'annotations']) {
        expect(at(schema, 'spec', field, '[]').required).toEqual(['key', 'value']);
      }
    }
  });

  it('conditions use the metav1.Condition schema', () => {
    for (const kind of ['HierarchyConfiguration', 'HNCConfiguration'] as const) {
      const schema = loadCrd(kind).spec.versions[0]?.schema.openAPIV3Schema ?? {};
      const cond = at(schema, 'status', 'conditions', '[]');
      expect(Object.keys(cond.properties ?? {}).sort()).toEqual([
        'lastTransitionTime',
        'message',
        'observedGeneration',
        'reason',
        'status',
        'type',
      ]);
      expect([...(cond.required ?? [])].sort()).toEqual(['lastTransitionTime', 'message', 'reason', 'status', 'type']);
      expect(at(cond, 'lastTransitionTime')).toMatchObject({ type: 'string', format: 'date-time' });
      expect(at(cond, 'status').enum).toEqual(['True', 'False', 'Unknown']);
    }
  });

  it('HRQ has the Request/Limit printer columns and int-or-string quantities', () => {
    const crd = loadCrd('HierarchicalResourceQuota');
    const version = crd.spec.versions[0];
    expect(version?.additionalPrinterColumns).toEqual([
      { name: 'Request', type: 'string', jsonPath: '.status.requestsSummary' },
      { name: 'Limit', type: 'string', jsonPath: '.status.limitsSummary' },
    ]);
    const schema = version?.schema.openAPIV3Schema ?? {};
    for (const path of [
      ['spec', 'hard'],
      ['status', 'hard'],
      ['status', 'used'],
    ]) {
      const quantity = at(schema, ...path, '{}');
      expect(quantity['x-kubernetes-int-or-string']).toBe(true);
      const pattern = new RegExp(String(quantity['pattern']));
      for (const ok of ['1', '500m', '1.5', '2Gi', '1e3']) expect(pattern.test(ok)).toBe(true);
      for (const bad of ['1.5.1', 'ten', '2GB']) expect(pattern.test(bad)).toBe(false);
    }
  });

  it('no CRD uses categories, like HNC', () => {
    for (const kind of Object.values(Kind)) expect(loadCrd(kind).spec.names.categories).toBeUndefined();
  });

  it('kustomization lists the four CRDs', () => {
    const k = loadYaml<{ resources: string[] }>('kustomization.yaml');
    expect([...k.resources].sort()).toEqual(Object.values(Kind).map(fileOf).sort());
  });
});

describe('API helpers', () => {
  it('treeLabel round-trips', () => {
    expect(treeLabel('team-a')).toBe('team-a.tree.hnc.x-k8s.io/depth');
    expect(treeLabelNamespace(treeLabel('team-a'))).toBe('team-a');
    expect(treeLabelNamespace('hnc.x-k8s.io/included-namespace')).toBeUndefined();
    expect(treeLabelNamespace('.tree.hnc.x-k8s.io/depth')).toBeUndefined();
  });

  it('modes: empty is Propagate, unknown is Ignore', () => {
    expect(isPropagationMode('AllowPropagate')).toBe(true);
    expect(isPropagationMode('propagate')).toBe(false);
    expect(effectiveMode(undefined)).toBe('Propagate');
    expect(effectiveMode('')).toBe('Propagate');
    expect(effectiveMode('Remove')).toBe('Remove');
    expect(effectiveMode('Bogus')).toBe('Ignore');
  });

  it('a type propagates in Propagate (or an empty mode) and AllowPropagate only', () => {
    expect([undefined, '', 'Propagate', 'AllowPropagate', 'Remove', 'Ignore', 'Bogus'].map(isPropagating)).toEqual([
      true,
      true,
      true,
      true,
      false,
      false,
      false,
    ]);
  });

  it('only RBAC roles and rolebindings are enforced', () => {
    expect(isEnforcedType('rbac.authorization.k8s.io', 'roles')).toBe(true);
    expect(isEnforcedType('rbac.authorization.k8s.io', 'rolebindings')).toBe(true);
    expect(isEnforcedType('', 'roles')).toBe(false);
    expect(isEnforcedType(undefined, 'secrets')).toBe(false);
  });
});
