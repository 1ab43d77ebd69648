import { describe, expect, it } from 'vitest';
import { CredentialRejections, type CredentialsRejectedError } from './credentials.js';

/** A CredentialRejections on a clock the test moves. */
function counter(opts: { answers?: number; ms?: number } = {}) {
  let t = 1_000_000;
  const seen: CredentialsRejectedError[] = [];
  const rejections = new CredentialRejections({ ...opts, now: () => t });
  rejections.onRejected((err) => seen.push(err));
  return { rejections, seen, after: (ms: number) => (t += ms) };
}

describe('CredentialRejections', () => {
  it('is persistent after 3 401s in a row spanning 5 s, naming the last request', () => {
    const { rejections, seen, after } = counter();
    rejections.answered(401, 'GET /a');
    after(2_500);
    rejections.answered(401, 'GET /b');
    expect(rejections.rejected).toBeUndefined();
    after(2_500);
    rejections.answered(401, 'PUT /lease');
    expect(seen).toHaveLength(1);
    expect(rejections.rejected).toBe(seen[0]);
    expect(seen[0]).toMatchObject({ rejections: 3, forMs: 5_000, lastRequest: 'PUT /lease' });
    expect(seen[0]!.message).toBe(
      "the API server rejects this process's credentials (401 Unauthorized, 3 answers in a row over 5.0 s, the last to PUT /lease), " +
        'even read anew: its token or certificate was revoked (a deleted pod, service account or secret)',
    );
  });

  it('needs both the count and the time: a burst of 401s at once is not enough, nor two 401s far apart', () => {
    const burst = counter();
    for (let i = 0; i < 50; i++) burst.rejections.answered(401, 'GET /a');
    expect(burst.seen).toHaveLength(0);
    burst.after(5_000);
    burst.rejections.answered(401, 'GET /a');
    expect(burst.seen).toHaveLength(1);

    const sparse = counter();
    sparse.rejections.answered(401, 'GET /a');
    sparse.after(60_000);
    sparse.rejections.answered(401, 'GET /a');
    expect(sparse.seen).toHaveLength(0);
  });

  it('starts over on any answer that is not a 401: the server authenticated that request (403 and 500 too)', () => {
    for (const status of [200, 201, 403, 404, 409, 429, 500]) {
      const { rejections, seen, after } = counter();
      rejections.answered(401, 'GET /a');
      after(3_000);
      rejections.answered(401, 'GET /a');
      expect(rejections.suspect).toBe(true);
      rejections.answered(status, 'GET /a');
      expect(rejections.suspect).toBe(false);
      after(3_000);
      rejections.answered(401, 'GET /a');
      after(1_000);
      rejections.answered(401, 'GET /a');
      expect(seen).toHaveLength(0);
    }
  });

  it('tells each listener once, and a listener added later at once; then ignores further answers', () => {
    const { rejections, seen, after } = counter({ answers: 2, ms: 1_000 });
    rejections.answered(401, 'GET /a');
    after(1_000);
    rejections.answered(401, 'GET /a');
    rejections.answered(200, 'GET /a');
    after(5_000);
    rejections.answered(401, 'GET /a');
    expect(seen).toHaveLength(1);
    expect(rejections.rejected).toBe(seen[0]);
    const late: Error[] = [];
    rejections.onRejected((err) => late.push(err));
    expect(late).toEqual([seen[0]]);
  });

  it('lets a listener be removed before the rejection', () => {
    const { rejections, after } = counter({ answers: 1, ms: 0 });
    const told: Error[] = [];
    const remove = rejections.onRejected((err) => told.push(err));
    remove();
    after(1);
    rejections.answered(401, 'GET /a');
    expect(told).toEqual([]);
  });
});
