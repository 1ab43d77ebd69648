// The certificate Secret's rotation: an admin deletes it, a replica issues a new CA and keeps the
// one before trusted for a while, every replica computes the same CA bundle from the Secret (so
// that they never write the configurations back and forth), and the previous CA goes when its
// time is over. Against a Secret store in memory with the API server's conflict rules.
import { describe, expect, it } from 'vitest';
import { ApiError, type KubeClient } from '../kube/client.js';
import { createLogger } from '../kube/log.js';
import { InternalCertificates, PREVIOUS_CA_GRACE_MS, certificatesFromDir, watchCertDir } from './certs.js';
import { WebhookServer } from './server.js';
import { CertificateAuthority } from '../kube/pki.js';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';

interface Stored {
  metadata: { name: string; resourceVersion?: string; annotations?: Record<string, string> };
  data?: Record<string, string>;
}

/** One Secret, with 404 on a missing one, 409 on a create over it or a replace from a stale resourceVersion. */
function secretStore() {
  let secret: Stored | undefined;
  let rv = 0;
  const fail = (method: string, path: string, code: number) => new ApiError(method, path, code, { code } as never, '');
  const client = {
    get: (path: string) => (secret ? Promise.resolve(structuredClone(secret)) : Promise.reject(fail('GET', path, 404))),
    create: (path: string, obj: Stored) => {
      if (secret) return Promise.reject(fail('POST', path, 409));
      secret = { ...structuredClone(obj), metadata: { ...obj.metadata, resourceVersion: String(++rv) } };
      return Promise.resolve(secret);
    },
    replace: (path: string, obj: Stored) => {
      if (!secret || obj.metadata.resourceVersion !== secret.metadata.resourceVersion) return Promise.reject(fail('PUT', path, 409));
      secret = { ...structuredClone(obj), metadata: { ...obj.metadata, resourceVersion: String(++rv) } };
      return Promise.resolve(secret);
    },
  };
  return {
    client: client as unknown as KubeClient,
    delete: () => (secret = undefined),
    get secret() {
      return secret;
    },
  };
}

const replica = (store: ReturnType<typeof secretStore>) =>
  new InternalCertificates({
    client: store.client,
    namespace: 'hnc-system',
    dnsNames: ['hnc-webhook-service.hnc-system.svc'],
    logger: createLogger({ level: 'silent' }),
  });
const pems = (bundle: string | undefined) => bundle?.match(/-----BEGIN CERTIFICATE-----/g)?.length ?? 0;

describe('InternalCertificates rotation', () => {
  it('issues a new CA when the Secret is deleted, trusting the one before until its time is over', async () => {
    const store = secretStore();
    const [a, b] = [replica(store), replica(store)];
    const now = Date.now();
    const first = await a.ensure(now);
    expect(await b.ensure(now)).toEqual(first);
    expect(pems(first.ca)).toBe(1);

    store.delete();
    const rotated = await a.ensure(now + 1000);
    expect(rotated.cert).not.toBe(first.cert);
    expect(pems(rotated.ca)).toBe(2);
    expect(rotated.ca).toContain(first.ca!.trim());
    expect(rotated.previousCaUntil).toBe(now + 1000 + PREVIOUS_CA_GRACE_MS);
    // The other replica reads the same bundle from the Secret: the configurations are written once.
    expect(await b.ensure(now + 2000)).toEqual(rotated);

    const after = await b.ensure(now + 1000 + PREVIOUS_CA_GRACE_MS);
    expect(after.cert).toBe(rotated.cert);
    expect(pems(after.ca)).toBe(1);
    expect(rotated.ca!.startsWith(after.ca!.trim())).toBe(true);
    expect(after.previousCaUntil).toBeUndefined();
    expect(Object.keys(store.secret!.data!).sort()).toEqual(['ca.crt', 'ca.key', 'tls.crt', 'tls.key']);
    expect(await a.ensure(now + 1000 + PREVIOUS_CA_GRACE_MS)).toEqual(after);
  });

  it('when both replicas find the Secret gone, one issues and the other serves what it issued', async () => {
    const store = secretStore();
    const [a, b] = [replica(store), replica(store)];
    const first = await a.ensure();
    await b.ensure();
    store.delete();
    const [ra, rb] = await Promise.all([a.ensure(), b.ensure()]);
    expect(ra).toEqual(rb);
    expect(ra.ca).toContain(first.ca!.trim());
  });

  it('renews the serving certificate under the same CA without a previous one', async () => {
    const store = secretStore();
    const a = replica(store);
    const now = Date.now();
    const first = await a.ensure(now);
    const renewed = await a.ensure(now + 340 * 24 * 3600 * 1000);
    expect(renewed.cert).not.toBe(first.cert);
    expect(renewed.ca).toBe(first.ca);
    expect(renewed.previousCaUntil).toBeUndefined();
  });
});

describe('--cert-dir files renewed under a running server', () => {
  it('serves a renewed pair within the poll, and never a certificate with a key that does not match it', async () => {
    const ca = await CertificateAuthority.create('cert-dir-test');
    const issue = () => ca.issue({ commonName: 'hnc-webhook-service', usage: 'server', ips: ['127.0.0.1'] });
    const [first, second] = [await issue(), await issue()];
    const dir = mkdtempSync(join(tmpdir(), 'hnc-cert-dir-'));
    const write = (p: { cert: string; key: string }) => {
      writeFileSync(join(dir, 'tls.crt'), p.cert);
      writeFileSync(join(dir, 'tls.key'), p.key);
    };
    write(first);
    const server = new WebhookServer({
      host: '127.0.0.1',
      port: 0,
      ...certificatesFromDir(dir),
      isReady: () => true,
      logger: createLogger({ level: 'silent' }),
    });
    const port = await server.start();
    const presented = () =>
      new Promise<string>((resolve, reject) => {
        const s = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
          resolve(s.getPeerX509Certificate()!.fingerprint256);
          s.end();
        });
        s.on('error', reject);
      });
    const fp = (pem: string) => new X509Certificate(pem).fingerprint256;
    const stop = watchCertDir(
      dir,
      certificatesFromDir(dir),
      (c) => server.setCertificate(c.cert, c.key),
      createLogger({ level: 'silent' }),
      50,
    );
    try {
      expect(await presented()).toBe(fp(first.cert));
      // Half-swapped files: the new certificate with the old key. Not served.
      writeFileSync(join(dir, 'tls.crt'), second.cert);
      await new Promise((r) => setTimeout(r, 300));
      expect(await presented()).toBe(fp(first.cert));
      write(second);
      await eventuallyPresented(presented, fp(second.cert));
    } finally {
      stop();
      await server.stop();
    }
  });
});

async function eventuallyPresented(presented: () => Promise<string>, want: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while ((await presented()) !== want) {
    if (Date.now() > deadline) throw new Error('the renewed certificate was not served within 5 s');
    await new Promise((r) => setTimeout(r, 50));
  }
}
