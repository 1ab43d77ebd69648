// Test support: a POST to a webhook server over real HTTPS on 127.0.0.1, trusting the given CA.
import https from 'node:https';

export interface HttpsAnswer {
  status: number;
  body: string;
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
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: b }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
