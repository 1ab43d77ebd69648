// Immutability for shared values: the watch cache's objects, and what copies of one source share.

/** Freezes an object and everything it holds. Returns it, for chaining. */
export function deepFreeze<T>(obj: T): T {
  if (obj !== null && typeof obj === 'object' && !Object.isFrozen(obj)) {
    Object.freeze(obj);
    for (const v of Object.values(obj)) deepFreeze(v);
  }
  return obj;
}
