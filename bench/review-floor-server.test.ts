import { describe, expect, it } from 'vitest';
import { takeRequests } from './review-floor-server.js';

const request = (body: string) =>
  `POST /validate-v1-namespace HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

describe('takeRequests', () => {
  it('counts a request only once its whole body has arrived', () => {
    const whole = Buffer.from(request('{"kind":"AdmissionReview"}'));
    for (let cut = 1; cut < whole.length; cut++) {
      const first = takeRequests(whole.subarray(0, cut));
      expect(first.complete, `cut at ${cut}`).toBe(0);
      expect(takeRequests(Buffer.concat([first.rest, whole.subarray(cut)]))).toMatchObject({ complete: 1 });
    }
  });

  it('counts pipelined requests one by one and keeps the start of the next', () => {
    const two = request('{"a":1}') + request('{"b":"ü"}');
    const next = request('{"c":3}');
    const { complete, rest } = takeRequests(Buffer.from(two + next.slice(0, 20)));
    expect(complete).toBe(2);
    expect(rest.toString()).toBe(next.slice(0, 20));
  });

  it('takes a request without a body (no content-length) at the end of its head', () => {
    expect(takeRequests(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'))).toMatchObject({ complete: 1 });
  });
});
