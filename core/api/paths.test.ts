import { describe, expect, it } from 'vitest';
import { anchorPath, hierarchyConfigurationPath, hncCollectionPath, hncConfigurationPath } from './paths.js';

describe('HNC REST paths', () => {
  it('name collections and objects as the API server serves them', () => {
    expect(hncCollectionPath('hierarchyconfigurations')).toBe('/apis/hnc.x-k8s.io/v1alpha2/hierarchyconfigurations');
    expect(hierarchyConfigurationPath('a')).toBe('/apis/hnc.x-k8s.io/v1alpha2/namespaces/a/hierarchyconfigurations');
    expect(hierarchyConfigurationPath('a', 'hierarchy')).toBe('/apis/hnc.x-k8s.io/v1alpha2/namespaces/a/hierarchyconfigurations/hierarchy');
    expect(anchorPath('p')).toBe('/apis/hnc.x-k8s.io/v1alpha2/namespaces/p/subnamespaceanchors');
    expect(anchorPath('p', 'c')).toBe('/apis/hnc.x-k8s.io/v1alpha2/namespaces/p/subnamespaceanchors/c');
    expect(hncConfigurationPath()).toBe('/apis/hnc.x-k8s.io/v1alpha2/hncconfigurations');
    expect(hncConfigurationPath('config')).toBe('/apis/hnc.x-k8s.io/v1alpha2/hncconfigurations/config');
  });

  it('encode names, so a name from user input cannot reach another path', () => {
    expect(anchorPath('p', '../../x')).toBe('/apis/hnc.x-k8s.io/v1alpha2/namespaces/p/subnamespaceanchors/..%2F..%2Fx');
    expect(hierarchyConfigurationPath('a/b?c')).toBe('/apis/hnc.x-k8s.io/v1alpha2/namespaces/a%2Fb%3Fc/hierarchyconfigurations');
    for (const bad of ['.', '..']) expect(() => anchorPath('p', bad)).toThrow(`"${bad}" cannot be a segment of an API path`);
    expect(() => anchorPath('')).toThrow('"" cannot be a segment of an API path');
  });
});
