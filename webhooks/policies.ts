// The rules that need no forest, decided by the API server itself (ValidatingAdmissionPolicy, CEL):
// they hold while every HNC replica is down, and cost no webhook call while it is up.
//
// - `namespace-labels.hnc.x-k8s.io`, on every namespace (excluded ones too): tree labels
//   (`<ns>.tree.hnc.x-k8s.io/depth`) may not be set, changed or removed; the included-namespace
//   label must be "true" on a managed namespace and absent on an unmanaged one (on UPDATE only when
//   it changes; on CREATE only when present, since the mutator that adds it may have been skipped).
// - `propagated-copies.hnc.x-k8s.io`, on the propagated kinds in included namespaces: no object may
//   be created with the `hnc.x-k8s.io/inherited-from` label; a copy may not be deleted (unless its
//   namespace is going), its label changed, or anything else of it changed (as canonical() compares:
//   every field but metadata and status, and the labels and annotations that are not HNC's).
//
// Both skip HNC's own requests (the same `not-hnc` condition as the webhooks, notByManager), and
// carry HNC's messages (core/validation/namespace.ts, objects.ts). The API server puts them after
// `<resource> "<name>" is forbidden: ValidatingAdmissionPolicy '<policy>' with binding '<binding>'
// denied request: `. The webhooks keep the rules that need the forest (webhooks/configurations.ts).
import { GROUP, Label, TREE_LABEL_SUFFIX } from '../core/api/constants.js';
import type { Manifest } from '../kube/apply.js';
import { notByManager, type ConfigurationInput } from './configurations.js';

export const Policy = {
  namespaceLabels: `namespace-labels.${GROUP}`,
  copies: `propagated-copies.${GROUP}`,
} as const;

const ADMISSION_API_VERSION = 'admissionregistration.k8s.io/v1';
const COLLECTIONS = {
  policies: `/apis/${ADMISSION_API_VERSION}/validatingadmissionpolicies`,
  bindings: `/apis/${ADMISSION_API_VERSION}/validatingadmissionpolicybindings`,
} as const;

/** The policies and bindings the manager keeps, by kind, collection and name. */
export const POLICY_OBJECTS = Object.values(Policy).flatMap((name) => [
  { kind: 'ValidatingAdmissionPolicy', collection: COLLECTIONS.policies, name },
  { kind: 'ValidatingAdmissionPolicyBinding', collection: COLLECTIONS.bindings, name },
]);

/** A CEL string literal (a JSON string is one: same escapes). */
const lit = (s: string) => JSON.stringify(s);
/** No label value can be this (values start with an alphanumeric): stands for "absent". */
const ABSENT = '(absent)';

/** CEL: a key of HNC's (its prefix ends with hnc.x-k8s.io), as isHncKey in core/propagation/copy.ts. */
const hncKey = (k: string) => `${k}.matches('^[^/]*hnc[.]x-k8s[.]io(/|$)')`;

/** CEL: the value of `key` in the map `map` of `obj` (metadata.labels or .annotations), or ABSENT. */
const valueOf = (obj: string, map: 'labels' | 'annotations', key: string) =>
  `(${obj} != null && has(${obj}.metadata.${map}) && ${lit(key)} in ${obj}.metadata.${map} ? ${obj}.metadata.${map}[${lit(key)}] : ${lit(ABSENT)})`;

/** CEL: the map, or an empty one. */
const mapOf = (obj: string, map: 'labels' | 'annotations') =>
  `(${obj} != null && has(${obj}.metadata.${map}) ? ${obj}.metadata.${map} : {})`;

/** Same keys and values but HNC's (both maps given as variables). */
const sameOwnKeys = (a: string, b: string) =>
  `${a}.all(k, ${hncKey('k')} || (k in ${b} && ${b}[k] == ${a}[k])) && ${b}.all(k, ${hncKey('k')} || k in ${a})`;

/** The fields canonical() leaves out of a copy's comparison. */
const NOT_COMPARED = JSON.stringify(['metadata', 'status', 'apiVersion', 'kind']);

const INCLUDED_LABEL_DOC =
  'https://github.com/kubernetes-sigs/hierarchical-namespaces/blob/master/docs/user-guide/concepts.md#included-namespace-label';

/** CEL: the namespace named by `name` is managed (policy: not excluded, and matching --included-namespace-regex). */
function managed(name: string, excluded: readonly string[], includedRegex: string | undefined): string {
  const notExcluded = `!(${name} in ${JSON.stringify([...excluded].sort())})`;
  if (includedRegex === undefined || includedRegex === '.*') return notExcluded;
  return `${notExcluded} && ${name}.matches(${lit(`^(?:${includedRegex})$`)})`;
}

export interface PolicyInput extends Pick<ConfigurationInput, 'excludedNamespaces' | 'objectRules' | 'manager'> {
  /** --included-namespace-regex (default: every namespace not excluded). */
  includedNamespaceRegex?: string;
}

export function namespaceLabelsPolicy(input: PolicyInput): Manifest {
  const L = lit(Label.includedNamespace);
  const suffix = lit(TREE_LABEL_SUFFIX);
  return {
    apiVersion: ADMISSION_API_VERSION,
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: Policy.namespaceLabels },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['namespaces'] }],
      },
      matchConditions: [{ name: 'not-hnc', expression: notByManager(input.manager) }],
      variables: [
        { name: 'name', expression: 'object.metadata.name' },
        { name: 'labels', expression: mapOf('object', 'labels') },
        { name: 'oldLabels', expression: mapOf('oldObject', 'labels') },
        { name: 'managed', expression: managed('variables.name', input.excludedNamespaces, input.includedNamespaceRegex) },
        { name: 'included', expression: valueOf('object', 'labels', Label.includedNamespace) },
        {
          name: 'includedChecked',
          expression:
            `request.operation == 'CREATE' ? ${L} in variables.labels : ` +
            `variables.included != ${valueOf('oldObject', 'labels', Label.includedNamespace)}`,
        },
        {
          name: 'treeSet',
          expression: `variables.labels.filter(k, k.contains(${suffix}) && (!(k in variables.oldLabels) || variables.oldLabels[k] != variables.labels[k]))`,
        },
        { name: 'treeRemoved', expression: `variables.oldLabels.filter(k, k.contains(${suffix}) && !(k in variables.labels))` },
      ],
      // In the namespace validator's order: the included label, then tree labels set, then removed.
      validations: [
        {
          expression: `!variables.includedChecked || (variables.managed ? variables.included == 'true' : variables.included == ${lit(ABSENT)})`,
          messageExpression:
            `variables.managed ? ${lit(`you cannot change the value of the "${Label.includedNamespace}" label. It has to be set as true on all managed namespaces. See ${INCLUDED_LABEL_DOC} for detail`)}` +
            ` : ${lit(`you cannot enforce webhook rules on this unmanaged namespace using the "${Label.includedNamespace}" label. See ${INCLUDED_LABEL_DOC} for detail`)}`,
          message: `HNC's "${Label.includedNamespace}" label is wrong for this namespace`,
          reason: 'Forbidden',
        },
        {
          expression: 'size(variables.treeSet) == 0',
          messageExpression: `'cannot set or modify tree label "' + variables.treeSet.min() + '" in namespace "' + variables.name + '"; these can only be managed by HNC'`,
          message: 'cannot set or modify tree labels; these can only be managed by HNC',
          reason: 'Forbidden',
        },
        {
          expression: 'size(variables.treeRemoved) == 0',
          messageExpression: `'cannot remove tree label "' + variables.treeRemoved.min() + '" in namespace "' + variables.name + '"; these can only be managed by HNC'`,
          message: 'cannot remove tree labels; these can only be managed by HNC',
          reason: 'Forbidden',
        },
      ],
    },
  };
}

/** Undefined when no kind is propagated (the policy would match nothing). */
export function copiesPolicy(input: PolicyInput): Manifest | undefined {
  const rules = input.objectRules.filter((r) => r.resources.length);
  if (!rules.length) return undefined;
  const F = Label.inheritedFrom;
  const none = lit(ABSENT);
  const update = `request.operation == 'UPDATE' && variables.isCopy`;
  return {
    apiVersion: ADMISSION_API_VERSION,
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: Policy.copies },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: rules.map((r) => ({
          apiGroups: [r.group],
          apiVersions: ['*'],
          operations: ['CREATE', 'UPDATE', 'DELETE'],
          resources: [...r.resources].sort(),
          scope: 'Namespaced',
        })),
        matchPolicy: 'Equivalent',
      },
      matchConditions: [{ name: 'not-hnc', expression: notByManager(input.manager) }],
      variables: [
        { name: 'from', expression: valueOf('object', 'labels', F) },
        { name: 'oldFrom', expression: valueOf('oldObject', 'labels', F) },
        { name: 'isCopy', expression: `variables.from != ${none} || variables.oldFrom != ${none}` },
        { name: 'source', expression: `variables.oldFrom != ${none} ? variables.oldFrom : variables.from` },
        { name: 'labels', expression: mapOf('object', 'labels') },
        { name: 'oldLabels', expression: mapOf('oldObject', 'labels') },
        { name: 'annotations', expression: mapOf('object', 'annotations') },
        { name: 'oldAnnotations', expression: mapOf('oldObject', 'annotations') },
        {
          // Everything canonical() compares: every field but metadata and status, the labels and
          // annotations that are not HNC's. Read as maps (dyn), whatever the kind's schema.
          name: 'sameContent',
          expression:
            `dyn(object).all(k, k in ${NOT_COMPARED} || (k in dyn(oldObject) && dyn(object)[k] == dyn(oldObject)[k])) && ` +
            `dyn(oldObject).all(k, k in ${NOT_COMPARED} || k in dyn(object)) && ` +
            `${sameOwnKeys('variables.labels', 'variables.oldLabels')} && ${sameOwnKeys('variables.annotations', 'variables.oldAnnotations')}`,
        },
      ],
      validations: [
        {
          expression: `!(request.operation == 'CREATE' && variables.from != ${none})`,
          message: `cannot create objects with the label "${F}"`,
          reason: 'Forbidden',
        },
        {
          // A terminating (or vanished) namespace takes its copies with it.
          expression: `!(request.operation == 'DELETE' && variables.oldFrom != ${none}) || namespaceObject == null || has(namespaceObject.metadata.deletionTimestamp)`,
          messageExpression: `'cannot delete object propagated from namespace "' + variables.oldFrom + '"'`,
          message: 'cannot delete a propagated object',
          reason: 'Forbidden',
        },
        {
          expression: `!(${update} && variables.from != variables.oldFrom)`,
          message: `cannot modify the label "${F}"`,
          reason: 'Forbidden',
        },
        {
          expression: `!(${update} && variables.from == variables.oldFrom) || variables.sameContent`,
          messageExpression: `'cannot modify object propagated from namespace "' + variables.source + '"'`,
          message: 'cannot modify a propagated object',
          reason: 'Forbidden',
        },
      ],
    },
  };
}

function binding(policy: string, matchResources?: Record<string, unknown>): Manifest {
  return {
    apiVersion: ADMISSION_API_VERSION,
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: policy },
    spec: { policyName: policy, validationActions: ['Deny'], ...(matchResources && { matchResources }) },
  };
}

/** Every policy and its binding, policies first (a binding to a missing policy does nothing). */
export function admissionPolicies(input: PolicyInput): Manifest[] {
  const copies = copiesPolicy(input);
  return [
    namespaceLabelsPolicy(input),
    binding(Policy.namespaceLabels),
    ...(copies ? [copies, binding(Policy.copies, { namespaceSelector: { matchLabels: { [Label.includedNamespace]: 'true' } } })] : []),
  ];
}

export const policyPath = (kind: string, name: string) =>
  `${kind === 'ValidatingAdmissionPolicy' ? COLLECTIONS.policies : COLLECTIONS.bindings}/${name}`;
