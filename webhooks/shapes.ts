// The shapes an AdmissionReview may carry. Through the API server every object has passed its
// schema already, but anyone who reaches the webhook port can send anything: a field of the wrong
// type must be a 400 with a plain message, never a handler crashing on it (docs/webhooks.md).
//
// Only the fields HNC reads are described; any other field may hold anything. null counts as
// absent (Go encodes an unset pointer or time as null, and the validators treat both alike).

export type Shape =
  | 'string'
  | 'boolean'
  | 'number'
  | 'any'
  | { readonly object: Readonly<Record<string, Shape>>; readonly required?: readonly string[] }
  | { readonly array: Shape }
  | { readonly map: Shape };

const str = 'string' as const;
const strings: Shape = { array: str };
const stringMap: Shape = { map: str };
const keyValues: Shape = { array: { object: { key: str, value: str } } };

export const METADATA: Shape = {
  object: {
    name: str,
    generateName: str,
    namespace: str,
    uid: str,
    resourceVersion: str,
    deletionTimestamp: str,
    labels: stringMap,
    annotations: stringMap,
    finalizers: strings,
    ownerReferences: { array: { object: { apiVersion: str, kind: str, name: str, uid: str, controller: 'boolean' } } },
  },
};

/** An object of any kind: only its metadata is read generically. */
export const ANY_OBJECT: Shape = { object: { apiVersion: str, kind: str, metadata: METADATA } };

export const HIERARCHY_CONFIGURATION: Shape = {
  object: {
    apiVersion: str,
    kind: str,
    metadata: METADATA,
    spec: { object: { parent: str, allowCascadingDeletion: 'boolean', labels: keyValues, annotations: keyValues } },
    status: { object: { children: strings, conditions: { array: { object: {} } } } },
  },
};

export const SUBNAMESPACE_ANCHOR: Shape = {
  object: {
    apiVersion: str,
    kind: str,
    metadata: METADATA,
    spec: { object: { labels: keyValues, annotations: keyValues } },
    status: { object: { status: str } },
  },
};

export const HNC_CONFIGURATION: Shape = {
  object: {
    apiVersion: str,
    kind: str,
    metadata: METADATA,
    spec: { object: { resources: { array: { object: { group: str, resource: str, mode: str } } } } },
  },
};

export const REQUEST: Shape = {
  object: {
    uid: str,
    kind: { object: { group: str, version: str, kind: str }, required: ['kind'] },
    resource: { object: { group: str, version: str, resource: str }, required: ['resource'] },
    subResource: str,
    name: str,
    namespace: str,
    operation: str,
    userInfo: { object: { username: str, uid: str, groups: strings, extra: { map: strings } }, required: ['username'] },
    dryRun: 'boolean',
  },
  required: ['uid', 'kind', 'resource', 'operation', 'userInfo'],
};

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

const expected = (shape: Shape): string =>
  typeof shape === 'string' ? `a ${shape}` : 'object' in shape || 'map' in shape ? 'an object' : 'an array';

/** The first place `value` does not fit `shape`, as `<path> must be <type>, not <type>`; undefined when it fits. */
export function shapeError(value: unknown, shape: Shape, path: string): string | undefined {
  // Every ordinary review fits: check without building paths, and word the problem only if not.
  return fits(value, shape) ? undefined : describe(value, shape, path);
}

function fits(value: unknown, shape: Shape): boolean {
  if (value === undefined || value === null || shape === 'any') return true;
  if (typeof shape === 'string') return typeof value === shape;
  if ('array' in shape) {
    if (!Array.isArray(value)) return false;
    for (const e of value) if (e === null || !fits(e, shape.array)) return false;
    return true;
  }
  if (typeof value !== 'object' || Array.isArray(value)) return false;
  const o = value as Record<string, unknown>;
  if ('map' in shape) {
    for (const k in o) if (Object.hasOwn(o, k) && (o[k] === null || !fits(o[k], shape.map))) return false;
    return true;
  }
  if (shape.required) for (const k of shape.required) if (o[k] === undefined || o[k] === null) return false;
  for (const k in shape.object) if (!fits(Object.hasOwn(o, k) ? o[k] : undefined, shape.object[k]!)) return false;
  return true;
}

function describe(value: unknown, shape: Shape, path: string): string | undefined {
  if (value === undefined || value === null || shape === 'any') return undefined;
  if (typeof shape === 'string') return typeof value === shape ? undefined : `${path} must be ${expected(shape)}, not ${typeOf(value)}`;
  if ('array' in shape) {
    if (!Array.isArray(value)) return `${path} must be an array, not ${typeOf(value)}`;
    for (let i = 0; i < value.length; i++) {
      // An element may not be null: nothing HNC reads has a nullable list entry.
      if (value[i] === null) return `${path}[${i}] must be ${expected(shape.array)}, not null`;
      const e = describe(value[i], shape.array, `${path}[${i}]`);
      if (e) return e;
    }
    return undefined;
  }
  if (typeof value !== 'object' || Array.isArray(value)) return `${path} must be an object, not ${typeOf(value)}`;
  const o = value as Record<string, unknown>;
  if ('map' in shape) {
    for (const [k, v] of Object.entries(o)) {
      if (v === null) return `${path}[${JSON.stringify(k)}] must be ${expected(shape.map)}, not null`;
      const e = describe(v, shape.map, `${path}[${JSON.stringify(k)}]`);
      if (e) return e;
    }
    return undefined;
  }
  for (const k of shape.required ?? []) if (o[k] === undefined || o[k] === null) return `${path}.${k} is missing`;
  for (const [k, s] of Object.entries(shape.object)) {
    const e = describe(o[k], s, `${path}.${k}`);
    if (e) return e;
  }
  return undefined;
}
