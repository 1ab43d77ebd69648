import type { UserInfo } from '../core/api/types.js';
import type { Decision } from '../core/validation/decision.js';
import { ANY_OBJECT, REQUEST, shapeError, type Shape } from './shapes.js';

// AdmissionReview v1: decoding requests defensively (a malformed review is a 400, never a crash)
// and encoding answers that always echo the uid and carry an explicit status.

export interface AdmissionRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  subResource?: string;
  name?: string;
  namespace?: string;
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  userInfo: UserInfo;
  object?: Record<string, unknown> | null;
  oldObject?: Record<string, unknown> | null;
  dryRun?: boolean;
}

export class BadReview extends Error {
  override name = 'BadReview';
}

const OPERATIONS = new Set(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']);

/** Parses and checks a review; `objectShape` is what its object and oldObject must look like (default: any object with valid metadata). */
export function decodeReview(body: string, objectShape: Shape = ANY_OBJECT): AdmissionRequest {
  let review: unknown;
  try {
    review = JSON.parse(body);
  } catch (err) {
    throw new BadReview(`the body is not JSON: ${(err as Error).message}`);
  }
  const r = review as { apiVersion?: unknown; kind?: unknown; request?: Partial<AdmissionRequest> };
  if (!r || typeof r !== 'object' || r.kind !== 'AdmissionReview') throw new BadReview('the body is not an AdmissionReview');
  if (r.apiVersion !== 'admission.k8s.io/v1')
    throw new BadReview(`unsupported AdmissionReview version ${JSON.stringify(r.apiVersion)}; only admission.k8s.io/v1 is served`);
  const req = r.request;
  if (!req || typeof req !== 'object' || Array.isArray(req)) throw new BadReview('the AdmissionReview has no request');
  if (typeof req.uid !== 'string' || !req.uid) throw new BadReview('the request has no uid');
  const wrong = shapeError(req, REQUEST, 'request');
  if (wrong) throw new BadReview(wrong);
  if (!OPERATIONS.has(req.operation!)) throw new BadReview(`unknown operation ${JSON.stringify(req.operation)}`);
  for (const f of ['object', 'oldObject'] as const) {
    const o = req[f];
    if (o !== undefined && o !== null && (typeof o !== 'object' || Array.isArray(o))) throw new BadReview(`request.${f} is not an object`);
    const e = shapeError(o, objectShape, `request.${f}`);
    if (e) throw new BadReview(e);
  }
  return req as AdmissionRequest;
}

export function encodeResponse(uid: string, verdict: Decision): string {
  const response: Record<string, unknown> = { uid, allowed: verdict.allowed };
  if (verdict.allowed) {
    response.status = { code: 200, metadata: {} };
    if (verdict.patch?.length) {
      response.patchType = 'JSONPatch';
      response.patch = Buffer.from(JSON.stringify(verdict.patch)).toString('base64');
    }
  } else {
    response.status = { metadata: {}, status: 'Failure', code: verdict.code, reason: verdict.reason, message: verdict.message };
    if (verdict.causes?.length) (response.status as Record<string, unknown>).details = { causes: verdict.causes };
  }
  if ('warnings' in verdict && verdict.warnings?.length) response.warnings = verdict.warnings;
  return JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response });
}
