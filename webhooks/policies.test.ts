import { describe, expect, it } from 'vitest';
import type { Manifest } from '../kube/apply.js';
import { admissionPolicies, copiesPolicy, namespaceLabelsPolicy, Policy, type PolicyInput } from './policies.js';
import { AdminDeletions, admissionDeletedCondition, KEPT_OBJECTS } from './kept-objects.js';

const input: PolicyInput = {
  excludedNamespaces: ['kube-system', 'hnc-system'],
  objectRules: [
    { group: 'rbac.authorization.k8s.io', resources: ['roles', 'rolebindings'] },
    { group: '', resources: [] },
  ],
  manager: { namespace: 'hnc-system' },
};

interface Spec {
  matchConditions: Array<{ name: string; expression: string }>;
  variables: Array<{ name: string; expression: string }>;
  validations: Array<{ expression: string; message: string; messageExpression?: string; reason: string }>;
  matchConstraints: { resourceRules: Array<{ apiGroups: string[]; resources: string[]; operations: string[] }> };
}
const spec = (m: Manifest | undefined) => (m as unknown as { spec: Spec }).spec;
const variable = (m: Manifest, name: string) => spec(m).variables.find((v) => v.name === name)?.expression;

describe('the API server’s own checks (ValidatingAdmissionPolicies)', () => {
  it('skip HNC itself, as the webhooks do, including the user it acts as', () => {
    for (const m of admissionPolicies({ ...input, manager: { namespace: 'hnc-system', username: 'ad"min' } }))
      if (m.kind === 'ValidatingAdmissionPolicy')
        expect(spec(m).matchConditions).toEqual([
          {
            name: 'not-hnc',
            expression:
              '!((has(request.userInfo.groups) && \'system:serviceaccounts:hnc-system\' in request.userInfo.groups) || request.userInfo.username == "ad\\"min")',
          },
        ]);
  });

  it('are bound: the namespace labels everywhere, the copies in included namespaces only', () => {
    const all = admissionPolicies(input);
    expect(all.map((m) => `${m.kind}/${m.metadata.name}`)).toEqual([
      `ValidatingAdmissionPolicy/${Policy.namespaceLabels}`,
      `ValidatingAdmissionPolicyBinding/${Policy.namespaceLabels}`,
      `ValidatingAdmissionPolicy/${Policy.copies}`,
      `ValidatingAdmissionPolicyBinding/${Policy.copies}`,
    ]);
    expect(all[1]!.spec).toEqual({ policyName: Policy.namespaceLabels, validationActions: ['Deny'] });
    expect(all[3]!.spec).toEqual({
      policyName: Policy.copies,
      validationActions: ['Deny'],
      matchResources: { namespaceSelector: { matchLabels: { 'hnc.x-k8s.io/included-namespace': 'true' } } },
    });
    // Every policy and binding is one the manager keeps (watched, repaired, removed).
    for (const m of all)
      expect(
        KEPT_OBJECTS.some((o) => o.kind === m.kind && o.name === m.metadata.name),
        m.metadata.name,
      ).toBe(true);
  });

  it('know managed namespaces as the policy does: excluded names, and the included regex when set', () => {
    expect(variable(namespaceLabelsPolicy(input), 'managed')).toBe('!(variables.name in ["hnc-system","kube-system"])');
    expect(variable(namespaceLabelsPolicy({ ...input, includedNamespaceRegex: 'team-.*' }), 'managed')).toBe(
      '!(variables.name in ["hnc-system","kube-system"]) && variables.name.matches("^(?:team-.*)$")',
    );
  });

  it('carry the namespace validator’s messages, in its order', () => {
    const v = spec(namespaceLabelsPolicy(input)).validations;
    expect(v.map((x) => x.reason)).toEqual(['Forbidden', 'Forbidden', 'Forbidden']);
    expect(v[0]!.messageExpression).toContain('you cannot change the value of the \\"hnc.x-k8s.io/included-namespace\\" label');
    expect(v[0]!.messageExpression).toContain('you cannot enforce webhook rules on this unmanaged namespace');
    expect(v[1]!.messageExpression).toContain("'cannot set or modify tree label \"' + variables.treeSet.min()");
    expect(v[2]!.messageExpression).toContain("'cannot remove tree label \"' + variables.treeRemoved.min()");
  });

  it('guard copies of the propagated kinds only, with the objects validator’s messages', () => {
    const p = copiesPolicy(input)!;
    expect(spec(p).matchConstraints.resourceRules).toEqual([
      {
        apiGroups: ['rbac.authorization.k8s.io'],
        apiVersions: ['*'],
        operations: ['CREATE', 'UPDATE', 'DELETE'],
        resources: ['rolebindings', 'roles'],
        scope: 'Namespaced',
      },
    ]);
    const v = spec(p).validations;
    expect(v[0]!.message).toBe('cannot create objects with the label "hnc.x-k8s.io/inherited-from"');
    expect(v[1]!.expression).toContain('has(namespaceObject.metadata.deletionTimestamp)');
    expect(v[2]!.message).toBe('cannot modify the label "hnc.x-k8s.io/inherited-from"');
    expect(v[3]!.messageExpression).toContain('cannot modify object propagated from namespace');
    // canonical(): every field but metadata and status; HNC's own labels and annotations left out.
    expect(variable(p, 'sameContent')).toContain('k in ["metadata","status","apiVersion","kind"]');
    expect(variable(p, 'sameContent')).toContain("k.matches('^[^/]*hnc[.]x-k8s[.]io(/|$)')");
    expect(copiesPolicy({ ...input, objectRules: [] })).toBeUndefined();
  });
});

describe('an admin’s deletion', () => {
  it('counts only once this run has written everything, once per object', () => {
    const d = new AdminDeletions();
    const path = KEPT_OBJECTS[0]!.path;
    expect(d.sawDeleted(path)).toBe(false); // before the first registration: simply written
    expect(d.has(path)).toBe(false);
    d.arm();
    expect(d.sawDeleted(path)).toBe(true);
    expect(d.sawDeleted(path)).toBe(false); // not news
    expect(d.sawDeleted('/apis/other')).toBe(false);
    expect(d.list().map((o) => o.name)).toEqual(['hnc-validating-webhook-configuration']);
    expect(admissionDeletedCondition(d.list())).toEqual({
      type: 'BadConfiguration',
      reason: 'AdmissionObjectDeleted',
      message: expect.stringContaining('ValidatingWebhookConfiguration hnc-validating-webhook-configuration') as string,
    });
    expect(admissionDeletedCondition(d.list()).message).toContain('until the HNC manager restarts');
  });
});
