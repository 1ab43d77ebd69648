// The review floor's server, a process of its own (bench/review-floor.ts starts it): a bare TLS
// server that reads each HTTP/1.1 request to its end and writes one fixed allowed AdmissionReview.
// No HTTP library, no decoding, no deciding: what a review costs on this machine when the server
// does nothing (TLS, loopback, wake-ups, a core).
import { createServer, type TLSSocket } from 'node:tls';

const BODY = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  response: { uid: '', allowed: true },
});
const ANSWER = Buffer.from(
  `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(BODY)}\r\nconnection: keep-alive\r\n\r\n${BODY}`,
);
const END = Buffer.from('\r\n\r\n');

/** Answers each request on the connection once its headers and `content-length` bytes of body have arrived. */
function serve(socket: TLSSocket): void {
  let buffered: Buffer = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk;
    for (;;) {
      const head = buffered.indexOf(END);
      if (head < 0) return;
      const length = Number(/content-length:\s*(\d+)/i.exec(buffered.subarray(0, head).toString('latin1'))?.[1] ?? 0);
      const end = head + END.length + length;
      if (buffered.length < end) return;
      buffered = buffered.subarray(end);
      socket.write(ANSWER);
    }
  });
  socket.on('error', () => socket.destroy());
}

process.once('message', (m: { cert: string; key: string }) => {
  const server = createServer({ cert: m.cert, key: m.key }, serve);
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.send?.({ port: typeof address === 'object' && address ? address.port : 0 });
  });
});
// The benchmark went away: nothing to clean up.
process.on('disconnect', () => process.exit(0));
