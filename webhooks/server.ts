// The admission webhook server: one handler per path, answers from memory; over the lean HTTP/1.1
// layer of http1-server.ts by default, or node:https (`http: 'node'`, --webhook-http-server=node).
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Decision } from '../core/validation/decision.js';
import type { Logger } from '../kube/log.js';
import { Http1Server, Slots, type Http1Head, type Http1Limits, type Http1Reply } from './http1-server.js';
import { JsonCostScanner } from './json-limits.js';
import { BadReview, decodeReview, encodeResponse, type AdmissionRequest } from './review.js';
import type { Shape } from './shapes.js';

export type Handler = (req: AdmissionRequest) => Decision | Promise<Decision>;

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
  onReview?: (path: string, verdict: Decision, ms: number) => void;
  /** The HTTP layer: `lean` (default, webhooks/http1-server.ts) or node's https server. */
  http?: WebhookHttp;
  /** The lean layer's timeouts (tests shorten them). */
  timeouts?: Partial<Pick<Http1Limits, 'headTimeoutMs' | 'bodyTimeoutMs' | 'idleTimeoutMs' | 'checkEveryMs'>>;
}

export type WebhookHttp = 'lean' | 'node';
export const WEBHOOK_HTTP: readonly WebhookHttp[] = ['lean', 'node'];
/**
 * How the API calls a review waits on are sent (--webhook-api-client): `lean`, hnc-ts's HTTP/1.1
 * transport (kube/http1-transport.ts; the default), or `node`, node's https client.
 */
export type WebhookApiClient = 'lean' | 'node';
export const WEBHOOK_API_CLIENT: readonly WebhookApiClient[] = ['lean', 'node'];

/** The API server's own request limit is 3 MiB; a review carries the object and its old version. */
export const MAX_BODY = 3 * 1024 * 1024;
/** Ordinary reviews are far smaller: above this a body waits for one of LARGE_SLOTS. */
const SMALL_BODY = 64 * 1024;
/** Large bodies read and parsed at once: bounds their memory and how long one turn of the event loop can take. */
const LARGE_SLOTS = 2;
/** A large body must arrive (and a refused one drain) within this; the API server's webhook timeout is at most 30 s. */
const BODY_TIMEOUT_MS = 10_000;
/** A refused body is read to its end (so the client gets the answer, not a reset) up to this much, then the connection is cut. */
const MAX_DRAIN = 4 * MAX_BODY;
/** The request line and headers (node's http server's default limit); the API server sends well under 1 KiB. */
export const MAX_HEAD = 16 * 1024;
/** An idle kept-alive connection is closed after this: longer than the API server's (90 s), so it never sends on one we closed. */
const IDLE_TIMEOUT_MS = 95_000;

export const NOT_READY_MESSAGE = 'HNC is starting up and has not loaded the namespace hierarchy yet; please try again in a few seconds';

type Route = { handler: Handler; shape?: Shape };

export class WebhookServer {
  private readonly server?: https.Server;
  private readonly lean?: Http1Server;
  private readonly handlers = new Map<string, Route>();
  private readonly large = new Slots(LARGE_SLOTS);
  /** Stopping: every answer closes its connection (stop()). */
  private draining = false;

  constructor(private readonly opts: WebhookServerOptions) {
    if (opts.http === 'node') {
      this.server = https.createServer({ cert: opts.cert, key: opts.key }, (req, res) => void this.serve(req, res));
      // Longer than the apiserver's idle connections, so it never writes to a socket we closed.
      this.server.keepAliveTimeout = 90_000;
      this.server.headersTimeout = 95_000;
      return;
    }
    this.lean = new Http1Server(
      { cert: opts.cert, key: opts.key },
      {
        open: (head) => this.open(head),
        handle: (head, body) => this.handle(head, body),
        draining: () => this.draining,
      },
      {
        maxHead: MAX_HEAD,
        maxDrain: MAX_DRAIN,
        smallBody: SMALL_BODY,
        largeSlots: LARGE_SLOTS,
        headTimeoutMs: BODY_TIMEOUT_MS,
        bodyTimeoutMs: BODY_TIMEOUT_MS,
        idleTimeoutMs: IDLE_TIMEOUT_MS,
        checkEveryMs: 1000,
        handshakeTimeoutMs: BODY_TIMEOUT_MS,
        ...opts.timeouts,
      },
    );
  }

  /** Serves `path`; `shape` is what its reviews' object and oldObject must look like (webhooks/shapes.ts). */
  route(path: string, handler: Handler, shape?: Shape): this {
    this.handlers.set(path, { handler, shape });
    return this;
  }

  /** Swaps the serving certificate without a restart (renewal). */
  setCertificate(cert: string, key: string): void {
    if (this.lean) this.lean.setSecureContext(cert, key);
    else this.server!.setSecureContext({ cert, key });
  }

  async start(): Promise<number> {
    if (this.lean) return this.lean.listen(this.opts.port, this.opts.host ?? '0.0.0.0');
    const server = this.server!;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.opts.port, this.opts.host ?? '0.0.0.0', () => resolve());
    });
    return (server.address() as AddressInfo).port;
  }

  /**
   * Stops serving. With `drainMs`, first keeps answering that long, each answer closing its
   * connection: behind a Service, the API server holds keep-alive connections to this very pod
   * (its endpoint removal does not end them), and one closed while idle can meet the API server's
   * next request, which then fails ("broken pipe") and, the webhooks failing closed, refuses a
   * user's change. Answered with `Connection: close`, the API server opens its next connection
   * through the Service, to a replica that stays.
   */
  async stop(drainMs = 0): Promise<void> {
    this.draining = true;
    if (drainMs > 0) await new Promise((r) => setTimeout(r, drainMs));
    // The apiserver keeps connections alive; give answers in flight a moment, then cut them.
    if (this.lean) return this.lean.close(1000);
    const server = this.server!;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      setTimeout(() => server.closeAllConnections(), 1000).unref();
    });
  }

  /** The lean layer's head: the route's checks before any byte of the body is read (docs/webhooks.md, "Limits"). */
  private open(head: Http1Head): Http1Reply | ((chunk: Buffer) => string | undefined) {
    const q = head.target.indexOf('?');
    const path = q < 0 ? head.target : head.target.slice(0, q);
    if (!this.handlers.has(path)) return textReply(404, `no webhook is served at ${path}`);
    if (head.method !== 'POST') return textReply(405, 'webhooks take POST');
    if (head.length > MAX_BODY) return textReply(413, `the review is larger than ${MAX_BODY} bytes`);
    const scanner = new JsonCostScanner();
    return (chunk) => scanner.push(chunk);
  }

  /** The lean layer's whole body: the answer, as the node server gives it. */
  private handle(head: Http1Head, body: Buffer): Http1Reply | Promise<Http1Reply> {
    const q = head.target.indexOf('?');
    const path = q < 0 ? head.target : head.target.slice(0, q);
    return this.answer(path, this.handlers.get(path)!, body, head.at);
  }

  /**
   * Decodes, decides and encodes one review: a 200 with the AdmissionReview, or a 400 naming what
   * is wrong. Synchronous when the handler is (most kinds decide from memory): no promise and no
   * microtask turn between the request's bytes and its answer.
   */
  private answer(path: string, route: Route, body: Buffer, started: number): Http1Reply | Promise<Http1Reply> {
    let review: AdmissionRequest;
    try {
      review = decodeReview(body.toString('utf8'), route.shape);
    } catch (err) {
      if (err instanceof BadReview) return textReply(400, err.message);
      return textReply(400, `the review could not be read: ${(err as Error).message}`);
    }
    const done = (verdict: Decision): Http1Reply => {
      this.opts.onReview?.(path, verdict, performance.now() - started);
      return { status: 200, contentType: 'application/json', body: encodeResponse(review.uid, verdict) };
    };
    const verdict = this.decide(path, route.handler, review);
    return verdict instanceof Promise ? verdict.then(done) : done(verdict);
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const path = (req.url ?? '').split('?')[0]!;
    const route = this.handlers.get(path);
    if (!route) return this.refuse(req, res, 404, `no webhook is served at ${path}`);
    if (req.method !== 'POST') return this.refuse(req, res, 405, 'webhooks take POST');
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (declared > MAX_BODY) return this.refuse(req, res, 413, `the review is larger than ${MAX_BODY} bytes`);
    // Small bodies (every ordinary review) go straight on; larger ones take turns.
    const large = !(declared <= SMALL_BODY);
    if (large) await this.large.take();
    let answer: Http1Reply;
    try {
      const read = await readBody(req);
      if (read === TOO_LARGE) return this.refuse(req, res, 413, `the review is larger than ${MAX_BODY} bytes`);
      if (typeof read === 'string') return this.cut(req, res, read);
      answer = await this.answer(path, route, read, started);
    } catch (err) {
      return this.plain(res, 400, `the review could not be read: ${(err as Error).message}`);
    } finally {
      if (large) this.large.give();
    }
    if (answer.status !== 200) return this.plain(res, answer.status, answer.body.trimEnd());
    // With its length known the answer leaves in one write (no chunked encoding).
    const bytes = Buffer.from(answer.body);
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': bytes.length,
      ...(this.draining ? { connection: 'close' } : {}),
    });
    res.end(bytes);
  }

  /**
   * Every line logged for a review carries its uid as its rid (kube/log-context.ts): the id the API
   * server gave this admission request (a handler that logs names it the same way).
   */
  private decide(path: string, handler: Handler, review: AdmissionRequest): Decision | Promise<Decision> {
    if (!this.opts.isReady()) {
      return this.logDenial(
        path,
        review,
        this.opts.allowWhileStarting?.has(path)
          ? { allowed: true }
          : { allowed: false, code: 503, reason: 'ServiceUnavailable', message: NOT_READY_MESSAGE },
      );
    }
    const failed = (err: unknown): Decision => {
      this.opts.logger.error(
        { rid: review.uid, path, uid: review.uid, namespace: review.namespace, name: review.name, err: (err as Error).message },
        'webhook handler failed',
      );
      return { allowed: false, code: 500, reason: 'InternalError', message: `Internal error occurred: ${(err as Error).message}` };
    };
    let verdict: Decision | Promise<Decision>;
    try {
      verdict = handler(review);
    } catch (err) {
      return this.logDenial(path, review, failed(err));
    }
    if (verdict instanceof Promise) return verdict.then((v) => v, failed).then((v) => this.logDenial(path, review, v));
    return this.logDenial(path, review, verdict);
  }

  private logDenial(path: string, review: AdmissionRequest, verdict: Decision): Decision {
    if (!verdict.allowed) {
      this.opts.logger.info(
        {
          rid: review.uid,
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
    return verdict;
  }

  private plain(res: ServerResponse, code: number, message: string): void {
    if (res.headersSent || res.destroyed) return;
    res.writeHead(code, { 'content-type': 'text/plain' });
    res.end(`${message}\n`);
  }

  /**
   * A 400 for a body refused at its first chunks (docs/webhooks.md, "Limits"), and the connection
   * closed without reading (and decrypting) the rest: no client that sends a real review gets
   * here, and draining would cost what the pre-scan saved.
   */
  private cut(req: IncomingMessage, res: ServerResponse, message: string): void {
    if (res.headersSent || res.destroyed) return;
    res.writeHead(400, { 'content-type': 'text/plain', connection: 'close' });
    res.end(`${message}\n`, () => req.destroy());
  }

  /**
   * Answers without keeping the body: what is left of it is read and dropped first (closing a
   * socket with unread data resets it, and the client would see the reset instead of the answer),
   * then the connection is closed. A body past MAX_DRAIN, or too slow, is cut.
   */
  private refuse(req: IncomingMessage, res: ServerResponse, code: number, message: string): void {
    let drained = 0;
    const cut = setTimeout(() => req.destroy(), BODY_TIMEOUT_MS);
    const answer = () => {
      clearTimeout(cut);
      if (res.headersSent || res.destroyed) return;
      res.writeHead(code, { 'content-type': 'text/plain', connection: 'close' });
      res.end(`${message}\n`);
    };
    if (req.readableEnded) return answer();
    req.removeAllListeners('data');
    req.on('data', (c: Buffer) => {
      drained += c.length;
      if (drained > MAX_DRAIN) {
        clearTimeout(cut);
        req.destroy();
      }
    });
    req.once('end', answer);
    req.once('error', () => clearTimeout(cut));
    req.resume();
  }
}

const TOO_LARGE = Symbol('too large');

/**
 * The body; or TOO_LARGE as soon as it passes MAX_BODY (the rest is left for refuse() to drain);
 * or, as soon as the chunks so far would cost too much to parse, why (json-limits.ts).
 */
function readBody(req: IncomingMessage): Promise<Buffer | typeof TOO_LARGE | string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const scanner = new JsonCostScanner();
    let size = 0;
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`the body did not arrive within ${BODY_TIMEOUT_MS} ms`));
    }, BODY_TIMEOUT_MS);
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        done();
        req.pause();
        resolve(TOO_LARGE);
        return;
      }
      const costly = scanner.push(c);
      if (costly) {
        done();
        req.pause();
        resolve(costly);
      } else chunks.push(c);
    };
    const onEnd = () => {
      done();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    };
    const onError = (err: Error) => {
      done();
      reject(err);
    };
    // Gone while waiting for a turn, or before its end: its slot is free at once, not after the timeout.
    const onClose = () => onError(new Error('the client closed the connection before the body ended'));
    const done = () => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    if (req.destroyed) return onClose();
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

const textReply = (status: number, message: string): Http1Reply => ({ status, contentType: 'text/plain', body: `${message}\n` });
