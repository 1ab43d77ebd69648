import { describe, expect, it } from 'vitest';
import { renderConfig } from './config-text.js';

describe('renderConfig', () => {
  it('prints the synchronized resources and the conditions in HNC’s layout', () => {
    const text = renderConfig({
      resources: [
        { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'rolebindings', mode: 'Propagate' },
        { group: '', version: 'v1', resource: 'secrets', mode: 'AllowPropagate' },
        { group: '', version: 'v1', resource: 'configmaps', mode: 'Remove' },
        { group: 'stable.example.com', version: 'v1', resource: 'crontabs', mode: 'Ignore' },
        { group: '', version: 'v1', resource: 'limitranges' },
      ],
      conditions: [{ type: 'BadConfiguration', reason: 'ResourceNotFound', message: 'no matches for kind "x"' }],
    });
    expect(text).toBe(
      [
        'Synchronized resources:',
        '* Propagating: rolebindings (rbac.authorization.k8s.io/v1)',
        '* AllowPropagate: secrets (/v1)',
        '* Removing: configmaps (/v1)',
        '* Ignoring: crontabs (stable.example.com/v1)',
        '* Ignoring: limitranges (/v1)',
        '',
        'Conditions:',
        'BadConfiguration (ResourceNotFound): no matches for kind "x"',
        '',
      ].join('\n'),
    );
  });

  it('prints the headings even when the configuration is empty', () => {
    expect(renderConfig({ resources: [], conditions: [] })).toBe('Synchronized resources:\n\nConditions:\n');
  });
});
