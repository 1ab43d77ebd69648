// What the admission webhooks decide, as plain data, and the helpers that word denials the way
// the Kubernetes apimachinery error helpers (k8s.io/apimachinery/pkg/api/errors, .../validation/field)
// do, so `kubectl` shows exactly what it showed with HNC (docs/behaviour.md §7.1):
//
//   admission webhook "<name>" denied the request: <message>
//
// where <message> is the `message` of a Denied decision. The shell turns a Decision into an
// AdmissionReview response (status.code, status.reason, status.message, patch, warnings).
import { goQuote } from '../util/k8s-names.js';
import { GROUP, Kind, Plural } from '../api/constants.js';
import type { UserInfo } from '../api/types.js';

// ---- requests -------------------------------------------------------------------------------------

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** Who asks (one type for the whole project, in core/api). */
export type { UserInfo };

/**
 * A decoded AdmissionRequest: what every validator reads. The shell decodes the review, and
 * decides `isHncServiceAccount` (HNC's own service account is exempt from every validator).
 */
export interface AdmissionInput<T> {
  readonly operation: Operation;
  /** request.name: the object's name (the only name some DELETE requests carry). */
  readonly name?: string;
  /** request.namespace, for namespaced kinds. */
  readonly namespace?: string;
  /** request.object: absent on DELETE. */
  readonly object?: T;
  /** request.oldObject: present on UPDATE and DELETE. */
  readonly oldObject?: T;
  readonly userInfo: UserInfo;
  readonly isHncServiceAccount: boolean;
}

// ---- decisions ------------------------------------------------------------------------------------

/** One RFC 6902 operation. Paths are JSON pointers: escape with `jsonPointer`. */
export interface JsonPatchOp {
  readonly op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  readonly path: string;
  readonly value?: unknown;
  readonly from?: string;
}

export interface Allowed {
  readonly allowed: true;
  readonly warnings?: string[];
  readonly patch?: JsonPatchOp[];
}

/** metav1.StatusReason values the webhooks answer with. */
export type StatusReason = 'Forbidden' | 'Conflict' | 'Invalid' | 'BadRequest' | 'ServiceUnavailable' | 'Unauthorized' | 'InternalError';

export interface Denied {
  readonly allowed: false;
  /** HTTP status code of the Status object. */
  readonly code: number;
  readonly reason: StatusReason;
  /** The full text kubectl shows after "denied the request: ", helper prefix included. */
  readonly message: string;
  /** Status.details.causes, for field errors. */
  readonly causes?: ReadonlyArray<{ field: string; message: string }>;
}

export type Decision = Allowed | Denied;

export function allow(opts: { warnings?: string[]; patch?: JsonPatchOp[] } = {}): Allowed {
  return {
    allowed: true,
    ...(opts.warnings?.length ? { warnings: opts.warnings } : {}),
    ...(opts.patch?.length ? { patch: opts.patch } : {}),
  };
}

/** Escapes one JSON pointer token (RFC 6901): '~' → '~0', '/' → '~1'. */
export function jsonPointer(...tokens: readonly string[]): string {
  return tokens.map((t) => '/' + t.replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

// ---- who the messages name -------------------------------------------------------------------------

/** schema.GroupResource: names a resource in Forbidden and Conflict messages. */
export interface GroupResource {
  readonly group: string;
  readonly resource: string;
}

/** schema.GroupKind: names a kind in Invalid messages. */
export interface GroupKind {
  readonly group: string;
  readonly kind: string;
}

/** schema.GroupVersionKind. */
export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

/** GroupResource.String(): `resource.group`, or `resource` for the core group. */
export const groupResourceText = (gr: GroupResource): string => (gr.group ? `${gr.resource}.${gr.group}` : gr.resource);

/** GroupKind.String(): `Kind.group`, or `Kind` for the core group. */
export const groupKindText = (gk: GroupKind): string => (gk.group ? `${gk.kind}.${gk.group}` : gk.kind);

/** GroupVersionKind.String() as Go prints it: `apps/v1, Kind=Deployment`, `/v1, Kind=Secret`. */
export const gvkText = (gvk: GroupVersionKind): string => `${gvk.group}/${gvk.version}, Kind=${gvk.kind}`;

export const Resource = {
  namespaces: { group: '', resource: 'namespaces' },
  hierarchyConfigurations: { group: GROUP, resource: Plural.HierarchyConfiguration },
  subnamespaceAnchors: { group: GROUP, resource: Plural.SubnamespaceAnchor },
  hncConfigurations: { group: GROUP, resource: Plural.HNCConfiguration },
} as const satisfies Record<string, GroupResource>;

export const KindOf = {
  hierarchyConfiguration: { group: GROUP, kind: Kind.HierarchyConfiguration },
  subnamespaceAnchor: { group: GROUP, kind: Kind.SubnamespaceAnchor },
  hncConfiguration: { group: GROUP, kind: Kind.HNCConfiguration },
} as const satisfies Record<string, GroupKind>;

// ---- denials, worded as apimachinery's errors.NewXxx ---------------------------------------------------

const deny = (code: number, reason: StatusReason, message: string): Denied => ({ allowed: false, code, reason, message });

/** errors.NewForbidden: `<resource>[.<group>] "<name>" is forbidden: <msg>` (403). */
export function forbidden(gr: GroupResource, name: string, msg: string): Denied {
  const what = groupResourceText(gr);
  if (what === '' && name === '') return deny(403, 'Forbidden', `forbidden: ${msg}`);
  if (name === '') return deny(403, 'Forbidden', `${what} is forbidden: ${msg}`);
  return deny(403, 'Forbidden', `${what} ${goQuote(name)} is forbidden: ${msg}`);
}

/** errors.NewConflict: `Operation cannot be fulfilled on <resource>[.<group>] "<name>": <msg>` (409). */
export function conflict(gr: GroupResource, name: string, msg: string): Denied {
  return deny(409, 'Conflict', `Operation cannot be fulfilled on ${groupResourceText(gr)} ${goQuote(name)}: ${msg}`);
}

/**
 * errors.NewInvalid: `<Kind>[.<group>] "<name>" is invalid: <field errors>` (422). The field errors
 * are aggregated as Go's utilerrors.NewAggregate prints them: one alone, or `[e1, e2]`, with
 * duplicate texts dropped.
 */
export function invalid(gk: GroupKind, name: string, errs: readonly FieldError[]): Denied {
  const head = `${groupKindText(gk)} ${goQuote(name)} is invalid`;
  if (errs.length === 0) return deny(422, 'Invalid', head);
  return deny(422, 'Invalid', `${head}: ${aggregateText(errs.map(fieldErrorText))}`);
}

/** errors.NewBadRequest: the message as is (400). */
export const badRequest = (msg: string): Denied => deny(400, 'BadRequest', msg);

/** errors.NewServiceUnavailable: the message as is (503). */
export const serviceUnavailable = (msg: string): Denied => deny(503, 'ServiceUnavailable', msg);

/** errors.NewUnauthorized: the message as is, or "not authorized" (401). */
export const unauthorized = (msg: string): Denied => deny(401, 'Unauthorized', msg === '' ? 'not authorized' : msg);

/** errors.NewInternalError: `Internal error occurred: <msg>` (500). */
export const internalError = (msg: string): Denied => deny(500, 'InternalError', `Internal error occurred: ${msg}`);

/** What controller-runtime's decoder answers for a request without the object it needs. */
export const NO_CONTENT = 'there is no content to decode';

// ---- field errors (k8s.io/apimachinery/pkg/util/validation/field) -------------------------------------

export type FieldErrorType = 'Invalid value' | 'Duplicate value' | 'Required value' | 'Forbidden';

/**
 * A value shown in a field error. Go prints strings quoted (%q), numbers and booleans plainly, and
 * values with a String() method (e.g. a GroupResource) unquoted: use `{ printed }` for those.
 */
export type BadValue = string | number | boolean | null | { readonly printed: string };

export interface FieldError {
  readonly type: FieldErrorType;
  /** The field path as Go prints it: `spec.labels`, `spec.labels[team]`, `spec.resources[0]`. */
  readonly field: string;
  readonly value?: BadValue;
  readonly detail?: string;
}

export const fieldInvalid = (field: string, value: BadValue, detail: string): FieldError => ({
  type: 'Invalid value',
  field,
  value,
  detail,
});
export const fieldDuplicate = (field: string, value: BadValue): FieldError => ({ type: 'Duplicate value', field, value });

/** field.Error.Error(): `<field>: <type>[: <value>][: <detail>]`. */
export function fieldErrorText(e: FieldError): string {
  let body: string;
  if (e.type === 'Required value' || e.type === 'Forbidden') {
    body = e.type; // Go prints no value for these
  } else {
    const v = e.value ?? null;
    const shown = v === null ? goQuote('null') : typeof v === 'string' ? goQuote(v) : typeof v === 'object' ? v.printed : String(v);
    body = `${e.type}: ${shown}`;
  }
  if (e.detail) body += `: ${e.detail}`;
  return `${e.field}: ${body}`;
}

/** utilerrors.Aggregate.Error(): one message alone, else `[m1, m2]` with repeated texts dropped. */
export function aggregateText(msgs: readonly string[]): string {
  if (msgs.length === 1) return msgs[0]!;
  const seen = [...new Set(msgs)];
  return seen.length === 1 ? seen[0]! : `[${seen.join(', ')}]`;
}

// Go's %q lives with the other Kubernetes text helpers.
export { goQuote };
