// The admission webhook server: one handler per path, answers from memory, over node's https
// server with its timeouts and limits set for what the API server sends (docs/webhooks.md, "Limits").
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Decision } from '../core/validation/decision.js';
import type { Logger } from '../kube/log.js';
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
  /**
   * False while this replica cannot reach the API server (kube/reachability.ts): its caches may be
   * stale, so what needs them answers 503 and the rest (allowWhenCutOff) is allowed unjudged;
   * judgedWhenCutOff's handlers decide for themselves.
   */
  reachesApiServer?: () => boolean;
  allowWhenCutOff?: ReadonlySet<string>;
  judgedWhenCutOff?: ReadonlySet<string>;
  logger: Logger;
  /** Called per answered review, for metrics. */
  onReview?: (path: string, verdict: Decision, ms: number) => void;
  /** Tests shorten the timeouts. */
  timeouts?: Partial<Timeouts>;
}

export interface Timeouts {
  /** From a request's first byte until its head has arrived (else a 408, and the connection closed). */
  headersMs: number;
  /** From a request's first byte until the last byte of its body, a refused body's drain included. */
  requestMs: number;
  /** A kept-alive connection with no request is closed after this. */
  keepAliveMs: number;
  /** How often the first two are checked (one timer for all connections). */
  checkEveryMs: number;
}

/**
 * The API server closes its idle connections to a webhook after 90 s: ours stay open longer, so it
 * never sends a review on a connection closed under it. A head and a body get 10 s each (a
 * webhook's timeoutSeconds is at most 30 s): a client trickling bytes holds nothing for long.
 */
const TIMEOUTS: Timeouts = { headersMs: 10_000, requestMs: 20_000, keepAliveMs: 95_000, checkEveryMs: 1_000 };
/** The TLS handshake (node's default is 120 s). */
const HANDSHAKE_TIMEOUT_MS = 10_000;
/**
 * Each API server keeps a pool of connections to a webhook (a few dozen under load); beyond this a
 * new connection is closed at once, rather than each one holding TLS buffers until memory runs out.
 */
export const MAX_CONNECTIONS = 1024;

/** The API server's own request limit is 3 MiB; a review carries the object and its old version. */
export const MAX_BODY = 3 * 1024 * 1024;
/** Ordinary reviews are far smaller: above this a body waits for one of LARGE_SLOTS. */
const SMALL_BODY = 64 * 1024;
/** Large bodies read and parsed at once: bounds their memory and how long one turn of the event loop can take. */
const LARGE_SLOTS = 2;
/** A refused body is read to its end (so the client gets the answer, not a reset) up to this much, then the connection is cut. */
const MAX_DRAIN = 4 * MAX_BODY;

export const NOT_READY_MESSAGE = 'HNC is starting up and has not loaded the namespace hierarchy yet; please try again in a few seconds';
export const CUT_OFF_MESSAGE =
  'this HNC replica cannot reach the API server, so its view of the namespace hierarchy may be out of date; please try again in a few seconds';

type Route = { handler: Handler; shape?: Shape };
type Reply = { status: number; body: string };

export class WebhookServer {
  private readonly server: https.Server;
  private readonly handlers = new Map<string, Route>();
  private readonly large = new Slots(LARGE_SLOTS);
  /** Stopping: every answer closes its connection (stop()). */
  private draining = false;

  constructor(private readonly opts: WebhookServerOptions) {
    const t = { ...TIMEOUTS, ...opts.timeouts };
    this.server = https.createServer(
      {
        cert: opts.cert,
        key: opts.key,
        // The API server's Go client offers h2 and http/1.1: only the second is served.
        ALPNProtocols: ['http/1.1'],
        handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
        headersTimeout: t.headersMs,
        requestTimeout: t.requestMs,
        keepAliveTimeout: t.keepAliveMs,
        connectionsCheckingInterval: t.checkEveryMs,
      },
      (req, res) => void this.serve(req, res),
    );
    this.server.maxConnections = MAX_CONNECTIONS;
  }

  /** Serves `path`; `shape` is what its reviews' object and oldObject must look like (webhooks/shapes.ts). */
  route(path: string, handler: Handler, shape?: Shape): this {
    this.handlers.set(path, { handler, shape });
    return this;
  }

  /** Swaps the serving certificate without a restart (renewal). */
  setCertificate(cert: string, key: string): void {
    this.server.setSecureContext({ cert, key });
  }

  async start(): Promise<number> {
    const server = this.server;
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
    const server = this.server;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      setTimeout(() => server.closeAllConnections(), 1000).unref();
    });
  }

  /** Decodes, decides and encodes one review: a 200 with the AdmissionReview, or a 400 naming what is wrong. */
  private answer(path: string, route: Route, body: Buffer, started: number): Reply | Promise<Reply> {
    let review: AdmissionRequest;
    try {
      review = decodeReview(body.toString('utf8'), route.shape);
    } catch (err) {
      if (err instanceof BadReview) return { status: 400, body: err.message };
      return { status: 400, body: `the review could not be read: ${(err as Error).message}` };
    }
    const done = (verdict: Decision): Reply => {
      this.opts.onReview?.(path, verdict, performance.now() - started);
      return { status: 200, body: encodeResponse(review.uid, verdict) };
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
    let answer: Reply;
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
    if (answer.status !== 200) return this.plain(res, answer.status, answer.body);
    // With its length known the answer leaves in one write (no chunked encoding).
    const bytes = Buffer.from(answer.body);
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': bytes.length,
      // Cut off from the API server, this replica leaves the Service once unready; but the API
      // server's kept-alive connections stay with it: closing each after its answer sends the next
      // review through the Service to a replica that can judge it.
      ...(this.draining || this.opts.reachesApiServer?.() === false ? { connection: 'close' } : {}),
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
    if (this.opts.reachesApiServer?.() === false && !this.opts.judgedWhenCutOff?.has(path)) {
      return this.logDenial(
        path,
        review,
        this.opts.allowWhenCutOff?.has(path)
          ? { allowed: true }
          : { allowed: false, code: 503, reason: 'ServiceUnavailable', message: CUT_OFF_MESSAGE },
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
   * then the connection is closed. A body past MAX_DRAIN is cut; one too slow, by requestTimeout.
   */
  private refuse(req: IncomingMessage, res: ServerResponse, code: number, message: string): void {
    let drained = 0;
    const answer = () => {
      if (res.headersSent || res.destroyed) return;
      res.writeHead(code, { 'content-type': 'text/plain', connection: 'close' });
      res.end(`${message}\n`);
    };
    if (req.readableEnded) return answer();
    req.removeAllListeners('data');
    req.on('data', (c: Buffer) => {
      drained += c.length;
      if (drained > MAX_DRAIN) req.destroy();
    });
    req.once('end', answer);
    req.resume();
  }
}

/** Turns for large bodies (LARGE_SLOTS). */
class Slots {
  private free: number;
  private readonly waiting: Array<() => void> = [];
  constructor(n: number) {
    this.free = n;
  }
  take(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }
  give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}

const TOO_LARGE = Symbol('too large');

/**
 * The body; or TOO_LARGE as soon as it passes MAX_BODY (the rest is left for refuse() to drain);
 * or, as soon as the chunks so far would cost too much to parse, why (json-limits.ts). A body too
 * slow is cut by the server's requestTimeout (the request then closes).
 */
function readBody(req: IncomingMessage): Promise<Buffer | typeof TOO_LARGE | string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const scanner = new JsonCostScanner();
    let size = 0;
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
    // Gone while waiting for a turn, or before its end: its slot is free at once.
    const onClose = () => onError(new Error('the client closed the connection before the body ended'));
    const done = () => {
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
