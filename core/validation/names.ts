// Kubernetes name and label checks (core/util/k8s-names.ts), and the managed-metadata field errors
// the HC and anchor validators share.
import type { HierarchyPolicy } from '../hierarchy/policy.js';
import type { MetaKVP } from '../api/types.js';
import { isQualifiedName, isValidLabelValue } from '../util/k8s-names.js';
import { fieldInvalid, type FieldError } from './decision.js';

export { isDns1123Label, isDns1123Subdomain, isQualifiedName, isValidLabelValue } from '../util/k8s-names.js';

/**
 * The managed labels and annotations of an HC or anchor spec (docs/behaviour.md §7.3 check 3, §7.4), as
 * field errors on `spec.labels` / `spec.annotations`, labels first. Per entry: a key that is not a
 * qualified name, else a key no `--managed-namespace-label`/`-annotation` regex allows; then, for
 * labels only, an invalid value (on `spec.labels[<key>]`). Annotation values are not checked.
 */
export function managedMetadataErrors(
  policy: HierarchyPolicy,
  labels: readonly MetaKVP[] = [],
  annotations: readonly MetaKVP[] = [],
): FieldError[] {
  const errs: FieldError[] = [];
  for (const { key, value } of labels) {
    const keyErrs = isQualifiedName(key);
    if (keyErrs.length) errs.push(fieldInvalid('spec.labels', key, keyErrs.join('; ')));
    else if (!policy.isManagedLabel(key)) errs.push(fieldInvalid('spec.labels', key, 'not a managed label and cannot be configured'));
    const valueErrs = isValidLabelValue(value);
    if (valueErrs.length) errs.push(fieldInvalid(`spec.labels[${key}]`, value, valueErrs.join('; ')));
  }
  for (const { key } of annotations) {
    const keyErrs = isQualifiedName(key);
    if (keyErrs.length) errs.push(fieldInvalid('spec.annotations', key, keyErrs.join('; ')));
    else if (!policy.isManagedAnnotation(key))
      errs.push(fieldInvalid('spec.annotations', key, 'not a managed annotation and cannot be configured'));
  }
  return errs;
}
