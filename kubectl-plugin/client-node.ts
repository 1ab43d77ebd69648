// The one thing the plugin takes from @kubernetes/client-node: its KubeConfig, for users whose
// kubeconfig runs an exec credential plugin or names an auth-provider (connection.ts). Imported
// through this file so the bundle keeps only what KubeConfig needs (about a third of the package),
// and build.ts compiles it only when such a user connects.
export { KubeConfig } from '@kubernetes/client-node';
