export { Forest } from './forest.js';
export type { NamespaceNode, ParentChange, Removal, TreeLabelOptions } from './forest.js';
export { forest, forestText } from './dsl.js';
