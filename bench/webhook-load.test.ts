import { afterEach, describe, expect, it } from 'vitest';
import { localHttpsServers } from '../kube/testing-https.js';
import { arrivals, directClient, drive, windowsOf, type Sample, type Sent } from './webhook-load.js';

const ok = (name = 'review'): Sent => ({ name, denied: false, error: false });

describe('arrivals', () => {
  it('are the same every run, increasing, at the asked rate on average', () => {
    const a = arrivals(500, 5000);
    expect(arrivals(500, 5000)).toEqual(a);
    for (let i = 1; i < a.length; i++) expect(a[i]!).toBeGreaterThan(a[i - 1]!);
    // 5,000 exponential gaps of mean 2 ms: within 5 % of 10 s.
    expect(a[a.length - 1]! / 1000).toBeGreaterThan(9.5);
    expect(a[a.length - 1]! / 1000).toBeLessThan(10.5);
  });
});

describe('drive, open loop', () => {
  it('times each request from its scheduled send: a stall of the generator counts against the requests it delays', async () => {
    const STALL_MS = 100;
    const send = (i: number) => {
      // The generator's own thread blocked while sending request 10 (a GC, a busy neighbour).
      if (i === 10) for (const end = performance.now() + STALL_MS; performance.now() < end;);
      return Promise.resolve(ok(i % 2 ? 'odd' : 'even SubjectAccessReview'));
    };
    const rate = 200;
    const res = await drive({ mode: 'open', rate }, 40, send, true);
    const times = arrivals(rate, 40);
    const byAt = [...res.samples!].sort((a, b) => a.at - b.at);
    // Request 11 was due before the stall ended: it went out at least that late, and its latency counts it.
    const lateAtLeast = times[10]! + STALL_MS - times[11]!;
    expect(lateAtLeast).toBeGreaterThan(0);
    expect(byAt[11]!.late).toBeGreaterThanOrEqual(lateAtLeast - 1);
    expect(byAt[11]!.ms).toBeGreaterThanOrEqual(byAt[11]!.late);
    expect(res.overall.max).toBeGreaterThanOrEqual(lateAtLeast - 1);
    expect(res.sendLateness.max).toBeGreaterThanOrEqual(lateAtLeast - 1);
    expect(res.requests).toBe(40);
    expect(res.bySubjectAccessReview.with.n).toBe(20);
    expect(res.bySubjectAccessReview.without.n).toBe(20);
  });

  it('never times a request for less than it took: one sent before its due time is timed from its send', async () => {
    // Each answer takes at least 1.5 ms of the generator's own clock. Timers fire on whole
    // milliseconds, so many requests go out up to a millisecond before they are due.
    const SERVICE_MS = 1.5;
    const send = () => {
      for (const end = performance.now() + SERVICE_MS; performance.now() < end;);
      return Promise.resolve(ok());
    };
    const res = await drive({ mode: 'open', rate: 300 }, 150, send, true);
    const took = res.samples!.map((s) => s.ms);
    expect(Math.min(...took)).toBeGreaterThanOrEqual(SERVICE_MS);
    expect(res.fromSend.p50).toBeGreaterThanOrEqual(SERVICE_MS);
  });

  it('keeps sending on schedule while earlier requests are still unanswered (no coordinated omission)', async () => {
    // Every answer takes 50 ms: an open loop at 400/s has about 20 in flight, a closed one would have 1.
    const send = () => new Promise<Sent>((r) => setTimeout(() => r(ok()), 50));
    const res = await drive({ mode: 'open', rate: 400 }, 80, send);
    expect(res.maxInFlight).toBeGreaterThan(5);
    expect(res.overall.p50).toBeGreaterThanOrEqual(49);
  });
});

describe('drive, closed loop', () => {
  it('keeps the concurrency and is never late', async () => {
    let inFlight = 0;
    let most = 0;
    const send = async () => {
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setTimeout(r, 2));
      inFlight--;
      return ok();
    };
    const res = await drive({ mode: 'closed', concurrency: 4 }, 40, send);
    expect(most).toBe(4);
    expect(res.requests).toBe(40);
    expect(res.sendLateness.max).toBeLessThan(5);
  });
});

describe('windowsOf', () => {
  const sample = (at: number, ms: number): Sample => ({ name: 'review', at, ms, late: 0, denied: false, error: false });
  const load = { mode: 'open' as const, rate: 100 };

  it('pools the reviews sent inside each window, and only those, across runs', () => {
    const first = [sample(0, 1), sample(10, 2), sample(20, 50), sample(30, 1)];
    const second = [sample(1000, 3), sample(1010, 4), sample(1020, 1)];
    const pooled = windowsOf(
      [
        { samples: first, from: 5, to: 25 },
        { samples: second, from: 1000, to: 1010 },
      ],
      load,
    );
    // 10 and 20 from the first run, 1000 and 1010 from the second: never 0, 30 or 1020.
    expect(pooled.requests).toBe(4);
    expect(pooled.overall.max).toBe(50);
    expect(pooled.seconds).toBeCloseTo(0.03);
  });

  it('counts in flight within each window, across the whole of its own run', () => {
    // A slow review sent before the window is still in flight when two more are sent inside it.
    const run = [sample(0, 100), sample(50, 1), sample(60, 1)];
    expect(windowsOf([{ samples: run, from: 40, to: 70 }], load).maxInFlight).toBe(2);
    expect(
      windowsOf(
        [
          { samples: run, from: 40, to: 70 },
          { samples: [sample(500, 1)], from: 400, to: 600 },
        ],
        load,
      ).maxInFlight,
    ).toBe(2);
  });
});

describe('directClient', async () => {
  const servers = await localHttpsServers('bench-direct-client');
  afterEach(servers.close);
  const targets = { root: 'root', leaves: ['a', 'b'], otherParent: 'other', copy: { namespace: 'a', name: 'r', from: 'root' } };

  it('sends each review over kept-alive connections, at most the pool’s size, and reads the verdict', async () => {
    const paths: string[] = [];
    const { port, connections } = await servers.serve((req, res) => {
      paths.push(req.url ?? '');
      req.resume().on('end', () => {
        // Only the namespace mutator allows; every other review is refused.
        const allowed = req.url === '/mutate-namespace';
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'x', allowed } }));
      });
    });
    const client = directClient(port, servers.caPem, targets, () => ({}), undefined, 4);
    try {
      const res = await client.run({ mode: 'closed', concurrency: 8 }, 70);
      expect(res.requests).toBe(70);
      expect(connections()).toBeLessThanOrEqual(4);
      // The mix cycles through seven kinds of review: the first (the mutator) is allowed, 10 of 70.
      const byRequest = Object.values(res.byRequest);
      expect(byRequest.reduce((n, r) => n + r.errors, 0)).toBe(0);
      expect(byRequest.reduce((n, r) => n + r.denied, 0)).toBe(60);
      expect(paths.filter((p) => p === '/mutate-namespace')).toHaveLength(10);
    } finally {
      client.close();
    }
  });

  it('counts an answer other than 200, or none, as an error', async () => {
    const { port } = await servers.serve((req, res) => {
      if (req.url === '/mutate-namespace') req.socket.destroy();
      else req.resume().on('end', () => res.writeHead(500).end('no'));
    });
    const client = directClient(port, servers.caPem, targets, () => ({}), undefined, 2);
    try {
      const res = await client.run({ mode: 'closed', concurrency: 2 }, 14);
      expect(Object.values(res.byRequest).reduce((n, r) => n + r.errors, 0)).toBe(14);
    } finally {
      client.close();
    }
  });
});
