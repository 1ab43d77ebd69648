// The admission webhooks' decisions as pure functions of the hierarchy model and a decoded
// request (docs/behaviour.md §7). The webhook server (webhooks/) decodes reviews, runs the server checks
// a Pending verdict asks for, and encodes the Decision.
export * from './decision.js';
export { isDns1123Label, isDns1123Subdomain, isQualifiedName, isValidLabelValue, managedMetadataErrors } from './names.js';
export { mutateNamespace, type NamespaceInput } from './namespace-mutator.js';
export { validateNamespace } from './namespace.js';
export * from './hierarchy-configuration.js';
export { validateAnchor } from './anchor.js';
export * from './hnc-configuration.js';
