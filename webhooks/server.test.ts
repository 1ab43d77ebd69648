// The admission server's contract with the apiserver, over real HTTPS on 127.0.0.1.
import { afterEach, describe, expect, it, vi } from 'vitest';
import https from 'node:https';
import { once } from 'node:events';
import tls from 'node:tls';
import { CertificateAuthority } from '../kube/pki.js';
import { createLogger, type Logger } from '../kube/log.js';
import { noopLogger } from '../kube/watch/logger.js';
import { namespaceReview, postHttps } from './testing.js';
import { CUT_OFF_MESSAGE, MAX_BODY, NOT_READY_MESSAGE, WebhookServer, type Handler, type Timeouts } from './server.js';

// Real TLS on a shared machine: a first handshake under load can take seconds.
vi.setConfig({ testTimeout: 20_000 });

let server: WebhookServer | undefined;
let lastPort = 0;
let lastCa = '';
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

// One CA and serving pair for every test: making keys is the slow part on a busy machine.
let pki: Promise<{ ca: CertificateAuthority; pair: { cert: string; key: string } }> | undefined;

let reaches = true;

async function serve(ready: boolean, handler: Handler, logger?: Logger, timeouts?: Partial<Timeouts>) {
  pki ??= CertificateAuthority.create('test-ca').then(async (ca) => ({
    ca,
    pair: await ca.issue({ commonName: 'webhook', usage: 'server', ips: ['127.0.0.1'] }),
  }));
  const { ca, pair } = await pki;
  server = new WebhookServer({
    host: '127.0.0.1',
    port: 0,
    cert: pair.cert,
    key: pair.key,
    isReady: () => ready,
    allowWhileStarting: new Set(['/mutate']),
    reachesApiServer: () => reaches,
    allowWhenCutOff: new Set(['/mutate']),
    judgedWhenCutOff: new Set(['/judged']),
    logger: logger ?? ({ ...noopLogger, info: () => undefined } as never),
    timeouts,
  });
  server.route('/validate', handler).route('/mutate', handler).route('/judged', handler);
  const port = await server.start();
  lastPort = port;
  lastCa = ca.certPem;
  return (path: string, body: string | Buffer, headers: Record<string, string> = {}) => postHttps(port, ca.certPem, path, body, headers);
}

const review = namespaceReview;

describe('WebhookServer', () => {
  it('echoes the uid and sets an explicit status on a denial', async () => {
    const post = await serve(true, () => ({ allowed: false, code: 403, reason: 'Forbidden', message: 'namespaces "x" is forbidden: no' }));
    const res = await post('/validate', review('abc'));
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).response).toEqual({
      uid: 'abc',
      allowed: false,
      status: { metadata: {}, status: 'Failure', code: 403, reason: 'Forbidden', message: 'namespaces "x" is forbidden: no' },
    });
  });

  it('encodes a JSON patch for a mutation', async () => {
    const post = await serve(true, () => ({ allowed: true, patch: [{ op: 'add', path: '/metadata/labels/a', value: 'b' }] }));
    const r = JSON.parse((await post('/mutate', review())).body).response;
    expect(r.patchType).toBe('JSONPatch');
    expect(JSON.parse(Buffer.from(r.patch, 'base64').toString())).toEqual([{ op: 'add', path: '/metadata/labels/a', value: 'b' }]);
  });

  it('answers a malformed review with 400, and keeps serving', async () => {
    const post = await serve(true, () => ({ allowed: true }));
    expect((await post('/validate', '{not json')).status).toBe(400);
    expect(
      (await post('/validate', JSON.stringify({ kind: 'AdmissionReview', apiVersion: 'admission.k8s.io/v1', request: { uid: 'x' } })))
        .status,
    ).toBe(400);
    expect(
      (await post('/validate', JSON.stringify({ kind: 'AdmissionReview', apiVersion: 'admission.k8s.io/v1beta1', request: {} }))).body,
    ).toContain('only admission.k8s.io/v1 is served');
    expect(JSON.parse((await post('/validate', review())).body).response.allowed).toBe(true);
  });

  it('answers 503 with a clear message until ready, but lets the mutator allow', async () => {
    const post = await serve(false, () => ({ allowed: true }));
    const v = JSON.parse((await post('/validate', review())).body).response;
    expect(v.allowed).toBe(false);
    expect(v.status.code).toBe(503);
    expect(v.status.message).toBe(NOT_READY_MESSAGE);
    expect(JSON.parse((await post('/mutate', review())).body).response.allowed).toBe(true);
  });

  it('answers 503 while cut off from the API server (its caches may be stale), lets the fail-open paths allow, and judges again after', async () => {
    let judged = 0;
    const post = await serve(true, () => (judged++, { allowed: false, code: 403, reason: 'Forbidden', message: 'judged' }));
    reaches = false;
    try {
      const refused = await post('/validate', review());
      expect(JSON.parse(refused.body).response.status).toMatchObject({ code: 503, reason: 'ServiceUnavailable', message: CUT_OFF_MESSAGE });
      // Every answer closes its connection: the API server's next review goes through the Service anew.
      expect(refused.connection).toBe('close');
      const allowed = await post('/mutate', review());
      expect(JSON.parse(allowed.body).response.allowed).toBe(true);
      expect(allowed.connection).toBe('close');
      expect(judged).toBe(0);
      // A path whose handler decides for itself what being cut off means.
      expect(JSON.parse((await post('/judged', review())).body).response.status.message).toBe('judged');
      expect(judged).toBe(1);
    } finally {
      reaches = true;
    }
    const again = await post('/validate', review());
    expect(JSON.parse(again.body).response.status.message).toBe('judged');
    expect(again.connection).not.toBe('close');
  });

  it('turns a handler that throws into a 500 denial, not a crash', async () => {
    const post = await serve(true, () => {
      throw new Error('boom');
    });
    const v = JSON.parse((await post('/validate', review())).body).response;
    expect(v.status).toMatchObject({ code: 500, reason: 'InternalError', message: 'Internal error occurred: boom' });
  });

  it('puts the review uid, as rid, on the lines it logs for a review, and no rid elsewhere', async () => {
    const lines: Array<{ msg: string; rid?: string; uid?: string }> = [];
    const logger = createLogger({ format: 'json', destination: { write: (l: string) => lines.push(JSON.parse(l)) } });
    const post = await serve(
      true,
      async (r) => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        if (r.uid === 'uid-2') throw new Error('boom');
        return { allowed: false, code: 403, reason: 'Forbidden', message: 'no' };
      },
      logger,
    );
    await Promise.all([post('/validate', review('uid-1')), post('/validate', review('uid-2'))]);
    logger.info('between reviews');
    const msgs = (rid?: string) => lines.filter((l) => l.rid === rid).map((l) => l.msg);
    expect(msgs('uid-1')).toEqual(['denied']);
    expect(msgs('uid-2')).toEqual(['webhook handler failed', 'denied']);
    expect(msgs(undefined)).toEqual(['between reviews']);
    expect(lines.find((l) => l.msg === 'webhook handler failed')?.uid).toBe('uid-2');
  });

  it('while draining on stop, keeps answering and closes each connection after its answer', async () => {
    const send = await serve(true, () => ({ allowed: true }));
    const agent = new https.Agent({ keepAlive: true, ca: lastCa });
    const post = () =>
      new Promise<{ status: number; connection?: string }>((resolve, reject) => {
        const req = https.request(
          { host: '127.0.0.1', port: lastPort, path: '/validate', method: 'POST', agent, headers: { 'content-type': 'application/json' } },
          (res) => {
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
          },
        );
        req.on('error', reject);
        req.end(review());
      });
    expect(await post()).toEqual({ status: 200, connection: 'keep-alive' });
    const stopped = server!.stop(300);
    expect(await post()).toEqual({ status: 200, connection: 'close' });
    expect((await send('/validate', review())).status).toBe(200);
    await stopped;
    server = undefined;
    agent.destroy();
  });

  it('answers 404 for an unknown path', async () => {
    const post = await serve(true, () => ({ allowed: true }));
    expect((await post('/nope', review())).status).toBe(404);
  });

  it('answers a body over the limit with a real 413 (declared, or chunked as it passes the limit), and keeps serving', async () => {
    const post = await serve(true, () => ({ allowed: true }));
    const big = Buffer.alloc(MAX_BODY + 1, 0x20);
    const declared = await post('/validate', big);
    expect(declared.status).toBe(413);
    expect(declared.body).toContain('larger than');
    const chunked = await post('/validate', big, { 'transfer-encoding': 'chunked' });
    expect(chunked.status).toBe(413);
    expect(JSON.parse((await post('/validate', review())).body).response.allowed).toBe(true);
  });

  it('refuses deeply nested JSON with a 400 at its first chunk, before the rest is sent, and keeps serving', async () => {
    const post = await serve(true, () => ({ allowed: true }));
    // 3 MB declared, only the first 64 KiB of `[[[…` sent: the answer must come without the rest.
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = https.request(
        {
          host: '127.0.0.1',
          port: lastPort,
          path: '/validate',
          method: 'POST',
          ca: lastCa,
          headers: { 'content-type': 'application/json', 'content-length': 3_000_000 },
        },
        (res) => {
          let b = '';
          res.on('data', (c: Buffer) => (b += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: b }));
        },
      );
      req.on('error', reject);
      req.write('['.repeat(64 * 1024));
    });
    expect(answer).toEqual({ status: 400, body: 'the review is nested more than 256 levels deep\n' });
    expect(JSON.parse((await post('/validate', review())).body).response.allowed).toBe(true);
  });

  it('answers a wrong-typed field with a 400 naming it, never a handler crash', async () => {
    const post = await serve(true, () => ({ allowed: true }));
    const bad = JSON.parse(review()) as { request: { userInfo: { groups: unknown } } };
    bad.request.userInfo.groups = 'system:masters';
    expect(await post('/validate', JSON.stringify(bad))).toMatchObject({
      status: 400,
      body: 'request.userInfo.groups must be an array, not a string\n',
    });
  });
});

/** A TLS connection to the server as the API server's Go client holds one: raw bytes, no keep-alive hints read. */
async function rawConnection() {
  const socket = tls.connect({ host: '127.0.0.1', port: lastPort, ca: lastCa, ALPNProtocols: ['http/1.1'] });
  await once(socket, 'secureConnect');
  let received = '';
  socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
  const ended = new Promise<number>((resolve) => socket.once('end', () => resolve(performance.now())));
  socket.on('error', () => undefined);
  return { socket, ended, received: () => received };
}

const requestBytes = (body: string) =>
  `POST /validate HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

describe('WebhookServer connections', () => {
  it('closes a connection idle past its keep-alive timeout (not its shorter headers timeout) with a clean end, and answers the next one', async () => {
    const post = await serve(true, () => ({ allowed: true }), undefined, {
      headersMs: 100,
      requestMs: 200,
      keepAliveMs: 600,
      checkEveryMs: 20,
    });
    const c = await rawConnection();
    c.socket.write(requestBytes(review()));
    await vi.waitFor(() => expect(c.received()).toMatch(/\r\n\r\n\{.*\}$/s), { timeout: 5_000, interval: 5 });
    const answered = performance.now();
    const endedAt = await c.ended;
    // Idle for its keep-alive timeout (the API server closes its own idle ones first), whatever the headers timeout.
    expect(endedAt - answered).toBeGreaterThanOrEqual(550);
    // Closed with nothing written after the answer: a client sees a closed idle connection, not an error to report.
    expect(c.received().match(/HTTP\/1\.1 /g)).toHaveLength(1);
    expect(c.received()).toMatch(/^HTTP\/1\.1 200 /);
    c.socket.destroy();
    // The client's next connection is answered.
    expect(JSON.parse((await post('/validate', review())).body).response.allowed).toBe(true);
  });

  it('answers a head or a body that does not arrive in time (slowloris) with a 408 and closes', async () => {
    await serve(true, () => ({ allowed: true }), undefined, { headersMs: 100, requestMs: 200, keepAliveMs: 5_000, checkEveryMs: 20 });
    const head = await rawConnection();
    head.socket.write('POST /validate HTTP/1.1\r\nHost: webhook\r\n');
    await head.ended;
    expect(head.received()).toMatch(/^HTTP\/1\.1 408 /);
    const body = await rawConnection();
    body.socket.write(requestBytes(review()).slice(0, -10));
    await body.ended;
    expect(body.received()).toMatch(/^HTTP\/1\.1 408 /);
  });
});
