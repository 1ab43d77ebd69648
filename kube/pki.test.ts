import { describe, expect, it } from 'vitest';
import { CertificateAuthority, certificateExpiry } from './pki.js';

describe('certificates', () => {
  it("reads a certificate's expiry to the second, as the certificate holds it", async () => {
    const ca = await CertificateAuthority.create('test-ca', 10);
    expect(certificateExpiry(ca.certPem).getTime()).toBe(ca.cert.notAfter.getTime());
    const before = Date.now();
    const serving = await ca.issue({ commonName: 'webhook', usage: 'server', dnsNames: ['hnc.example'], days: 3 });
    const expiry = certificateExpiry(serving.cert).getTime();
    // notAfter is written in whole seconds: at most one second before the exact time.
    expect(expiry).toBeGreaterThan(before + 3 * 24 * 3600_000 - 1000);
    expect(expiry).toBeLessThanOrEqual(Date.now() + 3 * 24 * 3600_000);
    // A CA loaded from its PEM text is the same CA.
    const loaded = await CertificateAuthority.load(ca.certPem, ca.keyPem);
    expect(loaded.daysLeft()).toBeCloseTo(ca.daysLeft(), 3);
  });
});
