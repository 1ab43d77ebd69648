// Propagation decisions (docs/behaviour.md §5): selector annotations, the canonical form of copies, and
// per-namespace plans. Pure: the object reconcilers and the objects webhook execute these.
export * from './selectors.js';
export * from './copy.js';
export * from './decide.js';
