// The follower's forwarding of quota raises to the leader (hrq-router.ts) against a leader that
// accepts connections and never answers, as a frozen (SIGSTOPped) process does: each raise must be
// refused with 503 within the API server's 2 s webhook timeout. Found by the soak (docs/reliability.md):
// every forward after the first took 3 s, the API server gave up, and the webhook's Ignore policy
// admitted the raises unchecked, over the hierarchical quota.
import https from 'node:https';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORWARD_TIMEOUT_MS, QuotaRouter } from './hrq-router.js';
import type { AdmissionRequest } from './review.js';
import { CertificateAuthority } from '../kube/pki.js';

/** The resourcesquotasstatus webhook's timeoutSeconds (configurations.ts). */
const API_SERVER_TIMEOUT_MS = 2000;

let silent: net.Server;
let port: number;
const held: net.Socket[] = [];

beforeAll(async () => {
  // Accepts TCP connections and never says a word: no TLS handshake, no answer.
  silent = net.createServer((s) => void held.push(s));
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  port = (silent.address() as net.AddressInfo).port;
});
afterAll(async () => {
  for (const s of held) s.destroy();
  await new Promise((r) => silent.close(r));
});

describe('forwarding a quota raise to a leader that does not answer', () => {
  it('refuses each raise with 503 within the API server webhook timeout, not only the first', async () => {
    const router = new QuotaRouter({
      isLeader: () => false,
      holder: () => `hnc-a webhooks=https://127.0.0.1:${port}`,
      ca: () => undefined,
    });
    try {
      for (let i = 0; i < 3; i++) {
        const t0 = performance.now();
        const decision = await router.forward({ uid: `raise-${i}` } as AdmissionRequest);
        const ms = performance.now() - t0;
        expect(decision).toMatchObject({ allowed: false, code: 503 });
        expect(ms).toBeGreaterThanOrEqual(FORWARD_TIMEOUT_MS - 50);
        expect(ms, `forward ${i}`).toBeLessThan(API_SERVER_TIMEOUT_MS);
      }
    } finally {
      router.close();
    }
  });
});

describe('forwarding right after a handover', () => {
  it('reads the Lease when no holder is known, and forwards to the leader it names', async () => {
    const ca = await CertificateAuthority.create('router-test');
    const pair = await ca.issue({ commonName: 'hnc-webhook-service', usage: 'server', ips: ['127.0.0.1'] });
    const leader = https.createServer({ cert: pair.cert, key: pair.key }, (req, res) => {
      req.resume();
      req.on('end', () => res.end(JSON.stringify({ response: { allowed: true } })));
    });
    await new Promise<void>((r) => leader.listen(0, '127.0.0.1', r));
    const leaderPort = (leader.address() as net.AddressInfo).port;
    let reads = 0;
    let named: string | undefined = `hnc-b webhooks=https://127.0.0.1:${leaderPort}`;
    const router = new QuotaRouter({
      isLeader: () => false,
      holder: () => undefined,
      readHolder: async () => (reads++, named),
      ca: () => ca.certPem,
    });
    try {
      expect(await router.forward({ uid: 'after-handover' } as AdmissionRequest)).toEqual({ allowed: true });
      expect(reads).toBe(1);
      named = undefined;
      expect(await router.forward({ uid: 'no-leader' } as AdmissionRequest)).toMatchObject({
        allowed: false,
        code: 503,
        message: 'no HNC leader is known to decide on hierarchical quotas; try again',
      });
    } finally {
      router.close();
      leader.closeAllConnections();
      await new Promise((r) => leader.close(r));
    }
  });
});
