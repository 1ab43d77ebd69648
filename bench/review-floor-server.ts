// The review floor's server, a process of its own (bench/review-floor.ts starts it): a bare TLS
// server that reads each HTTP/1.1 request to its end and writes one fixed allowed AdmissionReview.
// No HTTP library, no decoding, no deciding: what a review costs on this machine when the server
// does nothing (TLS, loopback, wake-ups, a core).
import { createServer, type TLSSocket } from 'node:tls';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const BODY = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  response: { uid: '', allowed: true },
});
const ANSWER = Buffer.from(
  `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(BODY)}\r\nconnection: keep-alive\r\n\r\n${BODY}`,
);
const END = Buffer.from('\r\n\r\n');

/**
 * The requests complete in `buffered` (head, and `content-length` bytes of body), and the bytes
 * after the last of them: the start of a request still arriving.
 */
export function takeRequests(buffered: Buffer): { complete: number; rest: Buffer } {
  let complete = 0;
  let rest = buffered;
  for (;;) {
    const head = rest.indexOf(END);
    if (head < 0) return { complete, rest };
    const length = Number(/content-length:\s*(\d+)/i.exec(rest.subarray(0, head).toString('latin1'))?.[1] ?? 0);
    const end = head + END.length + length;
    if (rest.length < end) return { complete, rest };
    rest = rest.subarray(end);
    complete++;
  }
}

/** Answers each request on the connection once it has arrived whole. */
function serve(socket: TLSSocket): void {
  let buffered: Buffer = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    const { complete, rest } = takeRequests(buffered.length ? Buffer.concat([buffered, chunk]) : chunk);
    buffered = rest;
    for (let i = 0; i < complete; i++) socket.write(ANSWER);
  });
  socket.on('error', () => socket.destroy());
}

function main(): void {
  process.once('message', (m: { cert: string; key: string }) => {
    const server = createServer({ cert: m.cert, key: m.key }, serve);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      process.send?.({ port: typeof address === 'object' && address ? address.port : 0 });
    });
  });
  // The benchmark went away: nothing to clean up.
  process.on('disconnect', () => process.exit(0));
}

// Run as the process's entry (bundled or under tsx; node names its entry by its real path), not
// when a test imports it.
if (process.argv[1] && fileURLToPath(import.meta.url) === realpathSync(process.argv[1])) main();
