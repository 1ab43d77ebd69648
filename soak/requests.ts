// Every request a soak user or the admin sends, and its answer, as one JSON line; and what kind
// of refusal an error is, so that the figures can tell "HNC was unavailable" from a rule HNC
// (or Kubernetes) applied rightly.
import { createWriteStream, type WriteStream } from 'node:fs';
import { ApiError } from '../kube/client.js';

export type RefusalKind =
  /** The API server could not get an answer from HNC's webhooks, or HNC said it cannot answer now (503). */
  | 'hnc-unavailable'
  /** The API server itself did not answer (restarting) or timed out. */
  | 'apiserver-unavailable'
  /** A hierarchical quota (HNC) or a namespace's own quota (Kubernetes) was full. */
  | 'quota'
  /** HNC's webhooks denied the request by one of their rules (cycle, not a leaf, overwrite, authorization ...). */
  | 'hnc-rule'
  /** RBAC said no: the user's permissions (propagated RoleBindings) are not there (yet). */
  | 'rbac'
  /** A write raced another (409 Conflict, AlreadyExists) or its object is gone (404). */
  | 'race'
  /** The namespace is being deleted. */
  | 'terminating'
  | 'other';

export interface Refusal {
  kind: RefusalKind;
  code?: number;
  message: string;
}

const WEBHOOK_UNREACHABLE = /failed calling webhook|no endpoints available for service|webhook.*(timeout|deadline)/i;

export function classify(err: unknown): Refusal {
  const message = err instanceof Error ? err.message : String(err);
  if (!(err instanceof ApiError)) return { kind: 'apiserver-unavailable', message };
  const code = err.code;
  const r = (kind: RefusalKind): Refusal => ({ kind, code, message });
  if (WEBHOOK_UNREACHABLE.test(message)) return r('hnc-unavailable');
  if (/exceeded (hierarchical )?quota/i.test(message)) return r('quota');
  // 503: HNC says it cannot answer now; 500: it could not decide (its own API calls failed, e.g. a
  // SubjectAccessReview with no answer from a replica cut off from the API server): no rule either way.
  if (/admission webhook "[^"]*hnc\.x-k8s\.io" denied the request/.test(message))
    return r(code === 503 || code === 500 ? 'hnc-unavailable' : 'hnc-rule');
  if (code === 503 || code === 504 || code === 500) return r('apiserver-unavailable');
  if (/because it is being terminated|being deleted/i.test(message)) return r('terminating');
  if (code === 403 && /cannot \w+ resource/.test(message)) return r('rbac');
  if (code === 409 || code === 404) return r('race');
  return r('other');
}

export interface RequestRecord {
  t: string;
  who: string;
  op: string;
  target: string;
  ms: number;
  ok: boolean;
  refusal?: Refusal;
}

export type Outcome<T> = { ok: true; value: T } | { ok: false; refusal: Refusal; error: unknown };

/** The JSON-lines log of requests, with counts of outcomes by actor kind. */
export class RequestLog {
  private readonly out: WriteStream;
  readonly records: RequestRecord[] = [];

  constructor(readonly path: string) {
    this.out = createWriteStream(path, { flags: 'w' });
  }

  /** Sends one request through `fn`, logs it and its answer, and hands back the outcome. */
  async call<T>(who: string, op: string, target: string, fn: () => Promise<T>): Promise<Outcome<T>> {
    const t0 = Date.now();
    let outcome: Outcome<T>;
    try {
      outcome = { ok: true, value: await fn() };
    } catch (error) {
      outcome = { ok: false, refusal: classify(error), error };
    }
    const rec: RequestRecord = { t: new Date(t0).toISOString(), who, op, target, ms: Date.now() - t0, ok: outcome.ok };
    if (!outcome.ok) rec.refusal = outcome.refusal;
    this.records.push(rec);
    this.out.write(`${JSON.stringify(rec)}\n`);
    return outcome;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.out.end(resolve));
  }
}
