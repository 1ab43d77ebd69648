// The follower's forwarding of quota raises to the leader (hrq-router.ts) against a leader that
// accepts connections and never answers, as a frozen (SIGSTOPped) process does: each raise must be
// refused with 503 within the API server's 2 s webhook timeout. Found by the soak (docs/reliability.md):
// every forward after the first took 3 s, the API server gave up, and the webhook's Ignore policy
// admitted the raises unchecked, over the hierarchical quota.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORWARD_TIMEOUT_MS, QuotaRouter } from './hrq-router.js';
import type { AdmissionRequest } from './review.js';

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
