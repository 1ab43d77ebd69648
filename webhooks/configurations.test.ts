import { describe, expect, it } from 'vitest';
import { Webhook } from '../core/api/constants.js';
import type { Manifest } from '../kube/apply.js';
import { mutatingConfiguration, notByManager, validatingConfiguration, type ConfigurationInput } from './configurations.js';
import { serviceAccountsGroup } from '../core/validation/manager.js';
import { LOOKUP_CALLS } from './lookups.js';

const input: ConfigurationInput = {
  endpoint: { url: 'https://127.0.0.1:9443' },
  excludedNamespaces: ['kube-system'],
  objectRules: [{ group: 'rbac.authorization.k8s.io', resources: ['roles'] }],
  manager: { namespace: 'hnc-system' },
};

type Rendered = { name: string; timeoutSeconds?: number; matchConditions?: Array<{ name: string; expression: string }> };
const webhooks = (m: Manifest) => (m as unknown as { webhooks: Rendered[] }).webhooks;

describe('webhook configurations', () => {
  it('give the webhooks that call the API server time for two calls in a row, each timing out first, so the review answers with the error', () => {
    const rendered = webhooks(validatingConfiguration(input));
    for (const name of [Webhook.namespaces.name, Webhook.hierarchyConfigurations.name, Webhook.hncConfigurations.name]) {
      const w = rendered.find((x) => x.name === name);
      expect(2 * LOOKUP_CALLS.timeoutMs, name).toBeLessThan((w?.timeoutSeconds ?? 0) * 1000);
    }
  });

  it("skip HNC's own service accounts on every validating webhook, as the validators exempt them", () => {
    const rendered = webhooks(validatingConfiguration(input));
    expect(rendered.map((w) => w.name).sort()).toEqual(
      [
        Webhook.namespaces.name,
        Webhook.excludedNamespaces.name,
        Webhook.hierarchyConfigurations.name,
        Webhook.subnamespaceAnchors.name,
        Webhook.hncConfigurations.name,
        Webhook.objects.name,
      ].sort(),
    );
    for (const w of rendered) {
      expect(w.matchConditions?.[0], w.name).toEqual({
        name: 'not-hnc',
        expression: "!(has(request.userInfo.groups) && 'system:serviceaccounts:hnc-system' in request.userInfo.groups)",
      });
    }
    // The excluded-namespaces entry keeps its own condition as well (both must hold).
    const excluded = rendered.find((w) => w.name === Webhook.excludedNamespaces.name)!;
    expect(excluded.matchConditions?.map((c) => c.name)).toEqual(['not-hnc', 'changes-hnc-labels']);
  });

  it('uses the group the validators check, for the namespace HNC runs in', () => {
    expect(serviceAccountsGroup('tenant-hnc')).toBe('system:serviceaccounts:tenant-hnc');
    const objects = webhooks(validatingConfiguration({ ...input, manager: { namespace: 'tenant-hnc' } })).find(
      (w) => w.name === Webhook.objects.name,
    )!;
    expect(objects.matchConditions?.[0]?.expression).toContain("'system:serviceaccounts:tenant-hnc' in request.userInfo.groups");
  });

  it('still sends HNC’s own namespace writes to the mutator, which does not exempt it', () => {
    for (const w of webhooks(mutatingConfiguration(input))) expect(w.matchConditions, w.name).toBeUndefined();
  });

  it('refuses a namespace that could not be quoted safely into the expression', () => {
    expect(() => notByManager({ namespace: "x' || true || '" })).toThrow(/not a DNS label/);
  });

  it('also skips the user HNC acts as outside a cluster, quoted as a CEL string', () => {
    const rendered = webhooks(validatingConfiguration({ ...input, manager: { namespace: 'hnc-system', username: 'ad"min' } }));
    for (const w of rendered) {
      const notHnc = w.matchConditions?.find((c) => c.name === 'not-hnc');
      if (notHnc) expect(notHnc.expression).toContain('|| request.userInfo.username == "ad\\"min"');
    }
    expect(notByManager({ namespace: 'hnc-system' })).not.toContain('username');
  });
});
