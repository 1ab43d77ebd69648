// The REST paths of the hnc.x-k8s.io kinds: the one place they are built (the controller, the
// caches, the kubectl plugin and the tests all use these). Names go in as path segments: a name
// typed by a user (the plugin's arguments) can never reach another path.
import { GROUP, Plural, VERSION } from './constants.js';

/**
 * One path segment made from data (a name, a namespace, a group): percent-encoded, so that a `/`,
 * `?` or `#` in it stays inside the segment. `.` and `..` are refused: a URL resolves them (also
 * as `%2e`), so `/apis/..` would climb out of the path meant.
 */
export function segment(value: string): string {
  if (value === '' || value === '.' || value === '..') throw new Error(`${JSON.stringify(value)} cannot be a segment of an API path`);
  return encodeURIComponent(value);
}

/** The cluster-wide collection of an HNC kind, e.g. every HierarchyConfiguration (what a watch lists). */
export const hncCollectionPath = (plural: Plural): string => `/apis/${GROUP}/${VERSION}/${plural}`;

/** A namespace's HierarchyConfigurations, or with a name one of them (there is only `hierarchy`). */
export const hierarchyConfigurationPath = (namespace: string, name?: string): string =>
  `/apis/${GROUP}/${VERSION}/namespaces/${segment(namespace)}/${Plural.HierarchyConfiguration}${name ? `/${segment(name)}` : ''}`;

/** A namespace's SubnamespaceAnchors, or with a name one of them. */
export const anchorPath = (namespace: string, name?: string): string =>
  `/apis/${GROUP}/${VERSION}/namespaces/${segment(namespace)}/${Plural.SubnamespaceAnchor}${name ? `/${segment(name)}` : ''}`;

/** The HNCConfigurations, or with a name one of them (there is only `config`). */
export const hncConfigurationPath = (name?: string): string =>
  `/apis/${GROUP}/${VERSION}/${Plural.HNCConfiguration}${name ? `/${segment(name)}` : ''}`;
