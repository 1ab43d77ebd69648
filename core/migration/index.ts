// The preflight of a swap from HNC v1.1.0 to hnc-ts (`kubectl hns migrate --check`): pure.
export * from './model.js';
export * from './flags.js';
export * from './check.js';
