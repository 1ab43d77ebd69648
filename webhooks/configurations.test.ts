import { describe, expect, it } from 'vitest';
import { Webhook } from '../core/api/constants.js';
import type { Manifest } from '../kube/apply.js';
import {
  mutatingConfiguration,
  NEEDS_THE_FOREST,
  NEEDS_THE_MUTATOR,
  notByManager,
  SINGLETON_RAISE,
  validatingConfiguration,
  WRITES_A_SOURCE,
  type ConfigurationInput,
} from './configurations.js';
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
  });

  it('call HNC only for what needs it: the namespace validator for the forest, the objects one for sources, failing open', () => {
    const rendered = webhooks(validatingConfiguration(input)) as Array<Rendered & { failurePolicy: string; timeoutSeconds: number }>;
    const ns = rendered.find((w) => w.name === Webhook.namespaces.name)!;
    expect(ns.matchConditions?.map((c) => c.name)).toEqual(['not-hnc', 'needs-the-forest']);
    expect(ns.matchConditions?.[1]?.expression).toBe(NEEDS_THE_FOREST);
    expect(NEEDS_THE_FOREST).toContain("request.operation == 'DELETE'");
    for (const key of ['hnc.x-k8s.io/subnamespace-of', 'hnc.x-k8s.io/grafted-by', 'hnc.x-k8s.io/managed-by'])
      expect(NEEDS_THE_FOREST).toContain(`"${key}"`);
    expect(ns.failurePolicy).toBe('Fail');
    const objects = rendered.find((w) => w.name === Webhook.objects.name)!;
    expect(objects.matchConditions?.map((c) => c.name)).toEqual(['not-hnc', 'writes-a-source']);
    expect(objects).toMatchObject({ failurePolicy: 'Ignore', timeoutSeconds: 1 });
    expect(WRITES_A_SOURCE).toContain("request.operation != 'DELETE'");
    expect(WRITES_A_SOURCE).toContain('"hnc.x-k8s.io/inherited-from" in oldObject.metadata.labels');
    // The HNC objects' validators still fail closed: they need the forest.
    for (const name of [Webhook.hierarchyConfigurations.name, Webhook.subnamespaceAnchors.name, Webhook.hncConfigurations.name])
      expect(rendered.find((w) => w.name === name)?.failurePolicy, name).toBe('Fail');
  });

  it("judges only the API server's raises of HRQ singletons, failing closed (a raise let through overshoots the quota)", () => {
    const rendered = webhooks(validatingConfiguration({ ...input, hrq: true })) as Array<Rendered & { failurePolicy: string }>;
    const status = rendered.find((w) => w.name === Webhook.resourceQuotaStatus.name)!;
    expect(status).toMatchObject({ failurePolicy: 'Fail', timeoutSeconds: 2 });
    expect(status.matchConditions).toEqual([{ name: 'singleton-raise', expression: SINGLETON_RAISE }]);
    expect(SINGLETON_RAISE).toBe(`request.name == "hrq.hnc.x-k8s.io" && request.userInfo.username == 'system:apiserver'`);
  });

  it('uses the group the validators check, for the namespace HNC runs in', () => {
    expect(serviceAccountsGroup('tenant-hnc')).toBe('system:serviceaccounts:tenant-hnc');
    const objects = webhooks(validatingConfiguration({ ...input, manager: { namespace: 'tenant-hnc' } })).find(
      (w) => w.name === Webhook.objects.name,
    )!;
    expect(objects.matchConditions?.[0]?.expression).toContain("'system:serviceaccounts:tenant-hnc' in request.userInfo.groups");
  });

  it('still sends HNC’s own namespace writes to the mutator, which does not exempt it, with a 1 s timeout', () => {
    const [mutator] = webhooks(mutatingConfiguration(input)) as Array<Rendered & { failurePolicy: string; timeoutSeconds: number }>;
    expect(mutator?.matchConditions).toEqual([{ name: 'needs-the-mutator', expression: NEEDS_THE_MUTATOR }]);
    expect(mutator).toMatchObject({ failurePolicy: 'Ignore', timeoutSeconds: 1 });
    expect(NEEDS_THE_MUTATOR).not.toContain('userInfo');
    expect(NEEDS_THE_MUTATOR).toContain("request.operation == 'CREATE'");
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
