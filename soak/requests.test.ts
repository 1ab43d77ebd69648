// How a refusal is classified: an HNC webhook that could not decide (500, 503) is HNC unavailable,
// not a rule.
import { describe, expect, it } from 'vitest';
import { ApiError } from '../kube/client.js';
import { classify } from './requests.js';

const refusal = (code: number, message: string) => classify(new ApiError('PUT', '/x', code, { code, message } as never, ''));

describe('classify', () => {
  it('counts an HNC webhook that could not decide as HNC unavailable', () => {
    const internal =
      'admission webhook "hierarchyconfigurations.hnc.x-k8s.io" denied the request: Internal error occurred: while checking authz for "soak-b": POST /apis/authorization.k8s.io/v1/subjectaccessreviews: no answer';
    expect(refusal(500, internal).kind).toBe('hnc-unavailable');
    expect(
      refusal(503, 'admission webhook "resourcesquotasstatus.hnc.x-k8s.io" denied the request: this HNC replica no longer leads').kind,
    ).toBe('hnc-unavailable');
    expect(refusal(409, 'admission webhook "hierarchyconfigurations.hnc.x-k8s.io" denied the request: illegal parent: cycle').kind).toBe(
      'hnc-rule',
    );
  });
});
