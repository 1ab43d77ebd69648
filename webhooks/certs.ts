// The webhook serving certificate. By default the manager is its own small CA: it keeps the CA and
// the serving certificate in a Secret in its namespace (so every replica serves the same one),
// renews the serving certificate before it expires without a restart, and hands out the CA bundle
// for the webhook configurations. Or it takes certificate files (for cert-manager).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CertificateAuthority, certificateExpiry } from '../kube/pki.js';
import { isAlreadyExists, isNotFound, type KubeClient } from '../kube/client.js';
import type { Logger } from '../kube/log.js';

export interface ServingCerts {
  cert: string;
  key: string;
  /** PEM of the CA that signed `cert`, for the configurations' caBundle (absent with cert files when cert-manager injects it). */
  ca?: string;
}

export const CERT_SECRET = 'hnc-webhook-server-cert';
const DAY_MS = 24 * 3600 * 1000;
const SANS_ANNOTATION = 'hnc.x-k8s.io/serving-names';

interface Secret {
  metadata: { name: string; namespace: string; resourceVersion?: string; annotations?: Record<string, string> };
  type?: string;
  data?: Record<string, string>;
}

const b64 = (s: string) => Buffer.from(s).toString('base64');
const unb64 = (s: string | undefined) => (s ? Buffer.from(s, 'base64').toString('utf8') : undefined);

export interface InternalCertOptions {
  client: KubeClient;
  namespace: string;
  secretName?: string;
  dnsNames: string[];
  ips?: string[];
  /** Serving certificates live this long (default 365 days) and are renewed this close to expiry (default 30). */
  validityDays?: number;
  renewBeforeDays?: number;
  logger: Logger;
}

export class InternalCertificates {
  private timer?: ReturnType<typeof setInterval>;
  constructor(private readonly opts: InternalCertOptions) {}

  private get path(): string {
    return `/api/v1/namespaces/${this.opts.namespace}/secrets/${this.opts.secretName ?? CERT_SECRET}`;
  }

  private get names(): string {
    return [...this.opts.dnsNames, ...(this.opts.ips ?? [])].sort().join(',');
  }

  /** Reads the Secret, creating or renewing what is missing, stale or for other names. */
  async ensure(now = Date.now()): Promise<ServingCerts> {
    for (;;) {
      const secret = await this.opts.client.get<Secret>(this.path).catch((e: unknown) => (isNotFound(e) ? undefined : Promise.reject(e)));
      const current = this.read(secret);
      const renewBefore = (this.opts.renewBeforeDays ?? 30) * DAY_MS;
      const fresh =
        current &&
        certificateExpiry(current.cert).getTime() - now > renewBefore &&
        secret?.metadata.annotations?.[SANS_ANNOTATION] === this.names;
      if (fresh) return { cert: current.cert, key: current.key, ca: current.ca };
      const next = await this.issue(secret, now);
      try {
        if (secret) await this.opts.client.replace(this.path, next);
        else await this.opts.client.create(`/api/v1/namespaces/${this.opts.namespace}/secrets`, next);
        this.opts.logger.info(
          { namespace: this.opts.namespace, secret: next.metadata.name, names: this.names },
          'issued the webhook serving certificate',
        );
        return this.read(next)!;
      } catch (err) {
        // Another replica wrote it first: read theirs.
        if (!isAlreadyExists(err) && (err as { code?: number }).code !== 409) throw err;
      }
    }
  }

  /** Checks periodically and calls onRenew with new certificates when they were renewed. */
  startRenewal(onRenew: (certs: ServingCerts) => void, everyMs = 12 * 3600 * 1000): void {
    let last: string | undefined;
    this.timer = setInterval(() => {
      this.ensure()
        .then((c) => {
          if (last !== undefined && c.cert !== last) onRenew(c);
          last = c.cert;
        })
        .catch((err: unknown) =>
          this.opts.logger.warn({ err: (err as Error).message }, 'checking the webhook certificate failed; will retry'),
        );
    }, everyMs);
    this.timer.unref();
    void this.ensure()
      .then((c) => (last = c.cert))
      .catch(() => undefined);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private read(secret: Secret | undefined): (ServingCerts & { ca: string; caKey: string }) | undefined {
    const d = secret?.data ?? {};
    const cert = unb64(d['tls.crt']);
    const key = unb64(d['tls.key']);
    const ca = unb64(d['ca.crt']);
    const caKey = unb64(d['ca.key']);
    return cert && key && ca && caKey ? { cert, key, ca, caKey } : undefined;
  }

  private async issue(existing: Secret | undefined, now: number): Promise<Secret> {
    const old = this.read(existing);
    // Keep a CA that is valid for long enough: the configurations' caBundle stays as it is.
    // A CA whose key it cannot use (HNC v1.1.0's rotator writes an RSA PKCS#1 key) is replaced.
    let ca = old ? await CertificateAuthority.load(old.ca, old.caKey).catch(() => undefined) : undefined;
    if (!ca || ca.daysLeft(now) < 2 * (this.opts.validityDays ?? 365)) ca = await CertificateAuthority.create('hnc-ca', 10 * 365);
    const serving = await ca.issue({
      commonName: this.opts.dnsNames[0] ?? 'hnc-webhook',
      usage: 'server',
      dnsNames: this.opts.dnsNames,
      ips: this.opts.ips,
      days: this.opts.validityDays ?? 365,
    });
    return {
      ...(existing ?? {}),
      metadata: {
        ...(existing?.metadata ?? { name: this.opts.secretName ?? CERT_SECRET, namespace: this.opts.namespace }),
        annotations: { ...(existing?.metadata.annotations ?? {}), [SANS_ANNOTATION]: this.names },
      },
      // A Secret's type cannot change: HNC's default.yaml made this one Opaque (its rotator fills it).
      type: existing?.type ?? 'kubernetes.io/tls',
      data: { 'tls.crt': b64(serving.cert), 'tls.key': b64(serving.key), 'ca.crt': b64(ca.certPem), 'ca.key': b64(ca.keyPem) },
    };
  }
}

/** Certificates from a folder (tls.crt, tls.key, optional ca.crt), as cert-manager mounts them. */
export function certificatesFromDir(dir: string): ServingCerts {
  const read = (f: string) => readFileSync(join(dir, f), 'utf8');
  let ca: string | undefined;
  try {
    ca = read('ca.crt');
  } catch {
    ca = undefined;
  }
  return { cert: read('tls.crt'), key: read('tls.key'), ca };
}
