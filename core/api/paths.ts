// The REST paths of the hnc.x-k8s.io kinds: the one place they are built (the controller, the
// caches, the kubectl plugin and the tests all use these). Names are URI-encoded: a name typed by a
// user (the plugin's arguments) can never reach another path.
import { GROUP, Plural, VERSION } from './constants.js';

const seg = encodeURIComponent;

/** The cluster-wide collection of an HNC kind, e.g. every HierarchyConfiguration (what a watch lists). */
export const hncCollectionPath = (plural: Plural): string => `/apis/${GROUP}/${VERSION}/${plural}`;

/** A namespace's HierarchyConfigurations, or with a name one of them (there is only `hierarchy`). */
export const hierarchyConfigurationPath = (namespace: string, name?: string): string =>
  `/apis/${GROUP}/${VERSION}/namespaces/${seg(namespace)}/${Plural.HierarchyConfiguration}${name ? `/${seg(name)}` : ''}`;

/** A namespace's SubnamespaceAnchors, or with a name one of them. */
export const anchorPath = (namespace: string, name?: string): string =>
  `/apis/${GROUP}/${VERSION}/namespaces/${seg(namespace)}/${Plural.SubnamespaceAnchor}${name ? `/${seg(name)}` : ''}`;

/** The HNCConfigurations, or with a name one of them (there is only `config`). */
export const hncConfigurationPath = (name?: string): string =>
  `/apis/${GROUP}/${VERSION}/${Plural.HNCConfiguration}${name ? `/${seg(name)}` : ''}`;
