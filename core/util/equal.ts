// Structural equality of JSON values, ignoring key order: how reconcilers decide that an object
// already is as desired (and so is not rewritten).
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  // Loops rather than keys arrays: reconcilers and previews compare tens of thousands of objects.
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    if (a.length !== bb.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], bb[i])) return false;
    return true;
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  let defined = 0;
  for (const k in ao) {
    if (!Object.hasOwn(ao, k) || ao[k] === undefined) continue;
    defined++;
    if (!Object.hasOwn(bo, k) || !jsonEqual(ao[k], bo[k])) return false;
  }
  for (const k in bo) if (Object.hasOwn(bo, k) && bo[k] !== undefined) defined--;
  return defined === 0;
}

/**
 * JSON text that is the same for values jsonEqual calls equal: keys sorted, undefined-valued keys
 * dropped. Comparing two such texts is comparing the values.
 */
export function stableJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  const o = value as Record<string, unknown>;
  const keys = Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${stableJson(o[k])}`).join(',')}}`;
}
