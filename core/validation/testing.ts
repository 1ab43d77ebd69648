// Request builders for the validators' tests, so each case reads like its description:
//
//   validateNamespace(h, create(namespace('a', { labels: INCLUDED })))
//   validateHierarchyConfiguration(h, update(hc('c', { parent: 'a' })))
//   validateAnchor(h, del(anchor('a', 'b', { state: 'Ok' })))
//
// Requests come from `alice` unless told otherwise; `{ hncServiceAccount: true }` makes them come
// from HNC's own service account. Test-only: nothing outside tests imports this file.
import { Label } from '../api/constants.js';
import type {
  HierarchyConfiguration,
  HierarchyConfigurationSpec,
  HNCConfiguration,
  ResourceSpec,
  SubnamespaceAnchor,
  SubnamespaceAnchorSpec,
} from '../api/types.js';
import type { AdmissionInput, Decision, Denied, Operation, StatusReason, UserInfo } from './decision.js';
import type { NamespaceObject } from '../api/types.js';

export const alice: UserInfo = {
  username: 'alice',
  uid: 'uid-alice',
  groups: ['team-a', 'system:authenticated'],
  extra: { 'example.com/scope': ['dev'] },
};

export const HNC_SA: UserInfo = {
  username: 'system:serviceaccount:hnc-system:default',
  groups: ['system:serviceaccounts', 'system:serviceaccounts:hnc-system'],
};

export interface RequestOptions {
  user?: UserInfo;
  hncServiceAccount?: boolean;
  /** request.name / request.namespace, when they should differ from the object's. */
  name?: string;
  namespace?: string;
}

function request<T>(operation: Operation, object: T | undefined, oldObject: T | undefined, opts: RequestOptions): AdmissionInput<T> {
  const hncServiceAccount = opts.hncServiceAccount ?? false;
  return {
    operation,
    ...(object !== undefined ? { object } : {}),
    ...(oldObject !== undefined ? { oldObject } : {}),
    ...(opts.name !== undefined ? { name: opts.name } : {}),
    ...(opts.namespace !== undefined ? { namespace: opts.namespace } : {}),
    userInfo: opts.user ?? (hncServiceAccount ? HNC_SA : alice),
    isHncServiceAccount: hncServiceAccount,
  };
}

export const create = <T>(object: T, opts: RequestOptions = {}): AdmissionInput<T> => request('CREATE', object, undefined, opts);
export const update = <T>(oldObject: T, object: T, opts: RequestOptions = {}): AdmissionInput<T> =>
  request('UPDATE', object, oldObject, opts);
export const del = <T>(oldObject: T, opts: RequestOptions = {}): AdmissionInput<T> => request('DELETE', undefined, oldObject, opts);
/** A request without the object it needs (a malformed review). */
export const empty = <T>(operation: Operation, opts: RequestOptions = {}): AdmissionInput<T> =>
  request<T>(operation, undefined, undefined, opts);

/** The included-namespace label as the mutator sets it. */
export const INCLUDED = { [Label.includedNamespace]: 'true' } as const;

export function namespace(
  name: string,
  meta: { labels?: Record<string, string>; annotations?: Record<string, string> } = {},
): NamespaceObject {
  return { metadata: { name, ...meta } };
}

export function hc(ns: string, spec: HierarchyConfigurationSpec = {}): HierarchyConfiguration {
  return { apiVersion: 'hnc.x-k8s.io/v1alpha2', kind: 'HierarchyConfiguration', metadata: { name: 'hierarchy', namespace: ns }, spec };
}

export function anchor(parent: string, child: string, opts: { spec?: SubnamespaceAnchorSpec; state?: string } = {}): SubnamespaceAnchor {
  return {
    apiVersion: 'hnc.x-k8s.io/v1alpha2',
    kind: 'SubnamespaceAnchor',
    metadata: { name: child, namespace: parent },
    spec: opts.spec ?? {},
    ...(opts.state !== undefined ? { status: { status: opts.state } } : {}),
  };
}

export function hncConfig(resources: ResourceSpec[] = [], name = 'config'): HNCConfiguration {
  return { apiVersion: 'hnc.x-k8s.io/v1alpha2', kind: 'HNCConfiguration', metadata: { name }, spec: { resources } };
}

export const denied = (code: number, reason: StatusReason, message: string): Denied => ({ allowed: false, code, reason, message });

/** The verdict, which must be a denial (fails the test otherwise): for asserting on its parts. */
export function refusal(v: Decision | { readonly allowed: 'pending' }): Denied {
  if (v.allowed !== false) throw new Error(`expected a denial, got ${JSON.stringify(v)}`);
  return v;
}
