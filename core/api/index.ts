// Public surface of the hnc.x-k8s.io/v1alpha2 API: constants and wire types.
export * from './constants.js';
export * from './types.js';
export * from './paths.js';
