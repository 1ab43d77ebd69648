// The plugin's version: set by the bundler (build.ts) from package.json; "(UNKNOWN)" when run from
// source, as HNC's plugin says when built without one.
declare const __KUBECTL_HNS_VERSION__: string | undefined;

export const VERSION: string = typeof __KUBECTL_HNS_VERSION__ === 'string' ? __KUBECTL_HNS_VERSION__ : '(UNKNOWN)';

export const versionText = (): string => `kubectl-hns version ${VERSION}`;
