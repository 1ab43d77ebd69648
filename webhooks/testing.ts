// Test support: a POST to a webhook server over real HTTPS on 127.0.0.1, trusting the given CA.
import https from 'node:https';

export interface HttpsAnswer {
  status: number;
  body: string;
  /** The answer's Connection header ("close": the server closes the connection after it). */
  connection?: string;
}

/** POSTs `body` (JSON unless `headers` says otherwise) and resolves with the status and the whole answer. */
export function postHttps(
  port: number,
  ca: string,
  path: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      { host: '127.0.0.1', port, path, method: 'POST', ca, headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        let b = '';
        res.on('data', (c: Buffer) => (b += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: b, connection: res.headers.connection }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** What a test's AdmissionReview is about; `kind`/`resource` name the type in `group`/`version` (core group: ''). */
export interface ReviewRequest {
  uid?: string;
  group: string;
  version: string;
  kind: string;
  resource: string;
  name: string;
  namespace?: string;
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  userInfo: unknown;
  object?: unknown;
  oldObject?: unknown;
}

/** The JSON body of an AdmissionReview as the API server sends it to a webhook. */
export function admissionReview(r: ReviewRequest): string {
  const { uid = 'u-1', group, version, kind, resource, ...rest } = r;
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: { uid, kind: { group, version, kind }, resource: { group, version, resource }, ...rest },
  });
}

/** A review of creating Namespace `x` by alice: the smallest well-formed review. */
export const namespaceReview = (uid = 'u-1'): string =>
  admissionReview({
    uid,
    group: '',
    version: 'v1',
    kind: 'Namespace',
    resource: 'namespaces',
    name: 'x',
    operation: 'CREATE',
    userInfo: { username: 'alice' },
    object: { metadata: { name: 'x' } },
  });
