// The admission webhook server: plain node:https, one handler per path, answers from memory.
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../kube/log.js';
import { BadReview, decodeReview, encodeResponse, type AdmissionRequest, type Verdict } from './review.js';

export type Handler = (req: AdmissionRequest) => Verdict | Promise<Verdict>;

export interface WebhookServerOptions {
  host?: string;
  port: number;
  cert: string;
  key: string;
  /** Until this is true, validators answer 503 and the mutator allows without a patch. */
  isReady: () => boolean;
  /** Paths whose handler may safely allow while not ready (the mutator: the controller labels later). */
  allowWhileStarting?: ReadonlySet<string>;
  logger: Logger;
  /** Called per answered review, for metrics. */
  onReview?: (path: string, verdict: Verdict, ms: number) => void;
}

const MAX_BODY = 3 * 1024 * 1024; // the apiserver's own request limit is 3 MiB

export const NOT_READY_MESSAGE = 'HNC is starting up and has not loaded the namespace hierarchy yet; please try again in a few seconds';

export class WebhookServer {
  private readonly server: https.Server;
  private readonly handlers = new Map<string, Handler>();

  constructor(private readonly opts: WebhookServerOptions) {
    this.server = https.createServer({ cert: opts.cert, key: opts.key }, (req, res) => void this.serve(req, res));
    // Longer than the apiserver's idle connections, so it never writes to a socket we closed.
    this.server.keepAliveTimeout = 90_000;
    this.server.headersTimeout = 95_000;
  }

  route(path: string, handler: Handler): this {
    this.handlers.set(path, handler);
    return this;
  }

  /** Swaps the serving certificate without a restart (renewal). */
  setCertificate(cert: string, key: string): void {
    this.server.setSecureContext({ cert, key });
  }

  async start(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.opts.port, this.opts.host ?? '0.0.0.0', () => resolve());
    });
    return (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeIdleConnections();
      // The apiserver keeps connections alive; give answers in flight a moment, then cut them.
      setTimeout(() => this.server.closeAllConnections(), 1000).unref();
    });
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const path = (req.url ?? '').split('?')[0]!;
    const handler = this.handlers.get(path);
    if (!handler) return this.plain(res, 404, `no webhook is served at ${path}`);
    if (req.method !== 'POST') return this.plain(res, 405, 'webhooks take POST');
    let body = '';
    try {
      body = await readBody(req);
    } catch (err) {
      return this.plain(res, 413, (err as Error).message);
    }
    let review: AdmissionRequest;
    try {
      review = decodeReview(body);
    } catch (err) {
      if (err instanceof BadReview) return this.plain(res, 400, err.message);
      throw err;
    }
    let verdict: Verdict;
    if (!this.opts.isReady()) {
      verdict = this.opts.allowWhileStarting?.has(path)
        ? { allowed: true }
        : { allowed: false, code: 503, reason: 'ServiceUnavailable', message: NOT_READY_MESSAGE };
    } else {
      try {
        verdict = await handler(review);
      } catch (err) {
        this.opts.logger.error(
          { path, uid: review.uid, namespace: review.namespace, name: review.name, err: (err as Error).message },
          'webhook handler failed',
        );
        verdict = { allowed: false, code: 500, reason: 'InternalError', message: `Internal error occurred: ${(err as Error).message}` };
      }
    }
    const ms = performance.now() - started;
    this.opts.onReview?.(path, verdict, ms);
    if (!verdict.allowed) {
      this.opts.logger.info(
        {
          path,
          namespace: review.namespace,
          name: review.name,
          user: review.userInfo.username,
          operation: review.operation,
          code: verdict.code,
          reason: verdict.reason,
        },
        'denied',
      );
    }
    // With its length known the answer leaves in one write (no chunked encoding).
    const answer = Buffer.from(encodeResponse(review.uid, verdict));
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length });
    res.end(answer);
  }

  private plain(res: ServerResponse, code: number, message: string): void {
    res.writeHead(code, { 'content-type': 'text/plain' });
    res.end(`${message}\n`);
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new Error('the review is larger than 3 MiB'));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
