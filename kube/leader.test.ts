// Leader election against a real HTTPS server that plays the Lease API: when the API server
// throttles every renewal, the leader stops acting before the lease it last wrote expires (when
// another replica may take it), retries of the throttled requests included.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KubeClient } from './client.js';
import { LeaderElector, identityInPod, samePod } from './leader.js';
import { localHttpsServers, type LocalHttpsServers } from './testing-https.js';

let servers: LocalHttpsServers;
beforeAll(async () => {
  servers = await localHttpsServers('leader-test');
});
afterEach(() => servers.close());

interface LeaseSpec {
  holderIdentity?: string;
  renewTime?: string;
  leaseDurationSeconds?: number;
}

/** One Lease, kept in memory; every request answered 429 (Retry-After: 1) while `throttled`. */
async function leaseServer() {
  const state = {
    lease: undefined as { metadata: { resourceVersion?: string }; spec: LeaseSpec } | undefined,
    throttled: false,
    written: [] as number[],
    /** Writes are applied and answered this long after they arrive (a slow API server). */
    writeDelayMs: 0,
    writesPending: 0,
    version: 0,
  };
  const answer = (res: ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(code, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const { port } = await servers.serve((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (state.throttled)
        return answer(
          res,
          429,
          { kind: 'Status', code: 429, reason: 'TooManyRequests', message: 'too many requests' },
          { 'retry-after': '1' },
        );
      if (req.method === 'GET')
        return state.lease ? answer(res, 200, state.lease) : answer(res, 404, { kind: 'Status', code: 404, reason: 'NotFound' });
      state.writesPending++;
      setTimeout(() => {
        state.writesPending--;
        const lease = JSON.parse(body) as { metadata: { resourceVersion?: string }; spec: LeaseSpec };
        // As the API server: a write from an older resourceVersion is a conflict.
        if (req.method === 'PUT' && lease.metadata.resourceVersion !== String(state.version))
          return answer(res, 409, { kind: 'Status', code: 409, reason: 'Conflict' });
        state.lease = { ...lease, metadata: { ...lease.metadata, resourceVersion: String(++state.version) } };
        state.written.push(Date.parse(lease.spec.renewTime ?? ''));
        return answer(res, req.method === 'POST' ? 201 : 200, state.lease);
      }, state.writeDelayMs);
    });
  });
  const client = servers.client(port);
  return { state, client };
}

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** A started elector with a 3 s lease; `leading` resolves when it first leads, `stoppedAt` when it stops leading. */
function startElector(client: KubeClient, timing: { renewDeadlineMs: number; retryPeriodMs: number }) {
  let started!: () => void;
  let stopped!: (at: number) => void;
  const leading = new Promise<void>((r) => (started = r));
  const stoppedAt = new Promise<number>((r) => (stopped = r));
  const elector = new LeaderElector({
    client,
    namespace: 'hnc-system',
    name: 'hnc-leader',
    identity: 'me',
    leaseDurationMs: 3_000,
    ...timing,
    logger: quiet,
    onStartedLeading: () => started(),
    onStoppedLeading: () => stopped(Date.now()),
  });
  elector.start();
  return { elector, leading, stoppedAt };
}

describe('LeaderElector', () => {
  it('releases the lease on stop even while a renewal is in flight', async () => {
    const { state, client } = await leaseServer();
    const { elector, leading } = startElector(client, { renewDeadlineMs: 2_000, retryPeriodMs: 100 });
    try {
      await leading;
      // The next renewal's write is held 300 ms: the stop comes while it is in flight.
      state.writeDelayMs = 300;
      while (state.writesPending === 0) await new Promise((r) => setTimeout(r, 5));
      await elector.stop();
      expect(state.writesPending).toBe(0);
      expect(state.lease?.spec.holderIdentity).toBe('');
    } finally {
      client.close();
    }
  });

  it('stops leading before its lease expires when every renewal is throttled', async () => {
    const { state, client } = await leaseServer();
    const { elector, leading, stoppedAt } = startElector(client, { renewDeadlineMs: 1_500, retryPeriodMs: 200 });
    try {
      await leading;
      // Let it renew at least once, then throttle everything (each 429 asks for a 1 s wait).
      while (state.written.length < 2) await new Promise((r) => setTimeout(r, 50));
      state.throttled = true;
      const lastWritten = Math.max(...state.written);
      const at = await stoppedAt;
      // Others may take the lease from lastWritten + its duration: this replica stopped before.
      expect(at).toBeLessThan(lastWritten + 3_000);
      expect(elector.isLeader).toBe(false);
    } finally {
      await elector.stop();
      client.close();
    }
  });
});

describe('samePod', () => {
  const uid = '6b1f0c2e-8a41-4d55-9b1e-3f0a2c9d7e10';
  it("knows an earlier run of this pod's container, whatever follows its identity", () => {
    const earlier = `${identityInPod('hnc-7f9c_1_ab12cd', uid)} webhooks=https://10.244.0.5:9443`;
    expect(samePod(uid)(earlier)).toBe(true);
  });
  it("never takes another pod's holder, a holder of no pod, or anyone's when not in a pod", () => {
    expect(samePod(uid)(identityInPod('hnc-2_1_ab12cd', '0d5e8f7a-0000-4000-8000-000000000000'))).toBe(false);
    expect(samePod(uid)('hnc-7f9c_1_ab12cd')).toBe(false);
    expect(samePod(undefined)(identityInPod('hnc-7f9c_1_ab12cd', uid))).toBe(false);
    expect(identityInPod('x', undefined)).toBe('x');
  });
});
