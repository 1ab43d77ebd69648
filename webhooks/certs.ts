// The webhook serving certificate. By default the manager is its own small CA: it keeps the CA and
// the serving certificate in a Secret in its namespace (so every replica serves the same one),
// renews the serving certificate before it expires without a restart, and hands out the CA bundle
// for the webhook configurations. Or it takes certificate files (for cert-manager).
//
// Rotation (docs/webhooks.md#certificates): an admin deletes the Secret. Every replica watches it,
// so one of them issues a new CA and certificate at once and every replica swaps them in within
// moments. The CA before stays in the Secret (`ca-previous.crt`) for PREVIOUS_CA_GRACE_MS and in
// the CA bundle, so that the API server trusts a replica that still serves the old certificate
// for the moment it takes to see the new one.
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CertificateAuthority, certificateExpiry } from '../kube/pki.js';
import { isAlreadyExists, isNotFound, type KubeClient } from '../kube/client.js';
import type { Logger } from '../kube/log.js';
import { Reflector } from '../kube/watch/reflector.js';

export interface ServingCerts {
  cert: string;
  key: string;
  /**
   * PEM of the CAs to trust, for the configurations' caBundle: the one that signed `cert`, and
   * during a CA change the one before (absent with cert files when cert-manager injects it).
   */
  ca?: string;
  /** During a CA change: when the CA before stops being trusted (ms since the epoch). */
  previousCaUntil?: number;
}

export const CERT_SECRET = 'hnc-webhook-server-cert';
const DAY_MS = 24 * 3600 * 1000;
const SANS_ANNOTATION = 'hnc.x-k8s.io/serving-names';
const PREVIOUS_UNTIL_ANNOTATION = 'hnc.x-k8s.io/previous-ca-until';
const PREVIOUS_CA_KEY = 'ca-previous.crt';
/**
 * How long the CA before a new one stays trusted: every replica watches the Secret and swaps in
 * moments, but one that cannot reach the API server (a network cut) only sees it when it can.
 */
export const PREVIOUS_CA_GRACE_MS = 2 * 60_000;
const RETRY_MS = 5_000;

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
  /** How long the CA before a new one stays in the CA bundle (default PREVIOUS_CA_GRACE_MS). */
  previousCaGraceMs?: number;
  logger: Logger;
}

export class InternalCertificates {
  private timer?: ReturnType<typeof setInterval>;
  private graceTimer?: ReturnType<typeof setTimeout>;
  private watch?: Reflector<Secret & { metadata: { uid?: string } }>;
  /** The CA that signed the certificate ensure() last returned: the previous CA if the Secret is deleted. */
  private lastCa?: string;
  private checking?: Promise<void>;
  private checkAgain = false;
  private stopped = false;
  constructor(private readonly opts: InternalCertOptions) {}

  private get name(): string {
    return this.opts.secretName ?? CERT_SECRET;
  }

  private get path(): string {
    return `/api/v1/namespaces/${this.opts.namespace}/secrets/${this.name}`;
  }

  private get names(): string {
    return [...this.opts.dnsNames, ...(this.opts.ips ?? [])].sort().join(',');
  }

  /** Reads the Secret, creating or renewing what is missing, stale or for other names, and dropping a previous CA whose time is over. */
  async ensure(now = Date.now()): Promise<ServingCerts> {
    for (;;) {
      const secret = await this.opts.client.get<Secret>(this.path).catch((e: unknown) => (isNotFound(e) ? undefined : Promise.reject(e)));
      const current = this.read(secret);
      const renewBefore = (this.opts.renewBeforeDays ?? 30) * DAY_MS;
      const fresh =
        current &&
        certificateExpiry(current.cert).getTime() - now > renewBefore &&
        secret?.metadata.annotations?.[SANS_ANNOTATION] === this.names;
      const previousOver = previousUntil(secret) !== undefined && previousUntil(secret)! <= now;
      if (fresh && !previousOver) return this.served(secret!, now);
      const next = fresh ? withoutPrevious(secret!) : await this.issue(secret, now);
      try {
        if (secret) await this.opts.client.replace(this.path, next);
        else await this.opts.client.create(`/api/v1/namespaces/${this.opts.namespace}/secrets`, next);
        this.opts.logger.info(
          { namespace: this.opts.namespace, secret: next.metadata.name, names: this.names, previousCa: previousUntil(next) !== undefined },
          fresh ? 'the previous webhook CA is no longer trusted' : 'issued the webhook serving certificate',
        );
        return this.served(next, now);
      } catch (err) {
        // Another replica wrote it first: read theirs.
        if (!isAlreadyExists(err) && (err as { code?: number }).code !== 409) throw err;
      }
    }
  }

  /**
   * Follows the Secret from `current` on: any change to it (an admin deleting it, another replica
   * renewing it) is checked at once, expiry every `everyMs`, and a previous CA dropped when its
   * time is over; onRenew is called with the certificates whenever they or the CA bundle changed.
   */
  startRenewal(current: ServingCerts, onRenew: (certs: ServingCerts) => Promise<void> | void, everyMs = 12 * 3600 * 1000): void {
    let last = current;
    this.lastCa ??= firstPem(current.ca);
    const check = async () => {
      const c = await this.ensure();
      if (c.cert !== last.cert || c.ca !== last.ca) await onRenew(c);
      last = c;
      this.scheduleGraceEnd(c, () => this.check(check));
    };
    this.scheduleGraceEnd(current, () => this.check(check));
    this.timer = setInterval(() => this.check(check), everyMs);
    this.timer.unref();
    this.watch = new Reflector({
      client: this.opts.client,
      path: `/api/v1/namespaces/${this.opts.namespace}/secrets`,
      fieldSelector: `metadata.name=${this.name}`,
      name: this.name,
      logger: this.opts.logger,
    });
    this.watch.addHandler(() => this.check(check));
    this.watch.start();
  }

  /** One check at a time; a change during one runs another; a failure is retried. */
  private check(run: () => Promise<void>): void {
    this.checkAgain = true;
    if (this.checking || this.stopped) return;
    this.checking = (async () => {
      while (this.checkAgain && !this.stopped) {
        this.checkAgain = false;
        await run().catch((err: unknown) => {
          this.opts.logger.warn({ err: (err as Error).message }, 'checking the webhook certificate failed; will retry');
          setTimeout(() => this.check(run), RETRY_MS).unref();
        });
      }
    })().finally(() => (this.checking = undefined));
  }

  private scheduleGraceEnd(c: ServingCerts, check: () => void): void {
    if (this.graceTimer) clearTimeout(this.graceTimer);
    if (c.previousCaUntil === undefined || this.stopped) return;
    this.graceTimer = setTimeout(check, Math.max(0, c.previousCaUntil - Date.now()));
    this.graceTimer.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.graceTimer) clearTimeout(this.graceTimer);
    void this.watch?.stop();
  }

  /** What a Secret holds for serving, the previous CA in the bundle while its time lasts. */
  private served(secret: Secret, now: number): ServingCerts {
    const { cert, key, ca } = this.read(secret)!;
    this.lastCa = ca;
    const until = previousUntil(secret);
    const previous = unb64(secret.data?.[PREVIOUS_CA_KEY]);
    if (until === undefined || until <= now || !previous || previous === ca) return { cert, key, ca };
    return { cert, key, ca: `${ca.trimEnd()}\n${previous.trimEnd()}\n`, previousCaUntil: until };
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
    // A new CA: the one replicas serve now (the Secret's, or ours if it was deleted) stays trusted for a while.
    const before = old?.ca ?? this.lastCa;
    const previous = before && before !== ca.certPem ? before : undefined;
    const kept = withoutPrevious(existing ?? { metadata: { name: this.name, namespace: this.opts.namespace } });
    return {
      ...kept,
      metadata: {
        ...kept.metadata,
        annotations: {
          ...(kept.metadata.annotations ?? {}),
          [SANS_ANNOTATION]: this.names,
          ...(previous
            ? { [PREVIOUS_UNTIL_ANNOTATION]: new Date(now + (this.opts.previousCaGraceMs ?? PREVIOUS_CA_GRACE_MS)).toISOString() }
            : {}),
        },
      },
      // A Secret's type cannot change: HNC's default.yaml made this one Opaque (its rotator fills it).
      type: existing?.type ?? 'kubernetes.io/tls',
      data: {
        'tls.crt': b64(serving.cert),
        'tls.key': b64(serving.key),
        'ca.crt': b64(ca.certPem),
        'ca.key': b64(ca.keyPem),
        ...(previous ? { [PREVIOUS_CA_KEY]: b64(previous) } : {}),
      },
    };
  }
}

/** When the previous CA in the Secret stops being trusted, if it holds one. */
function previousUntil(secret: Secret | undefined): number | undefined {
  const at = secret?.metadata.annotations?.[PREVIOUS_UNTIL_ANNOTATION];
  return at && secret?.data?.[PREVIOUS_CA_KEY] ? Date.parse(at) : undefined;
}

/** The Secret without a previous CA. */
function withoutPrevious(secret: Secret): Secret {
  const { [PREVIOUS_UNTIL_ANNOTATION]: _a, ...annotations } = secret.metadata.annotations ?? {};
  const { [PREVIOUS_CA_KEY]: _d, ...data } = secret.data ?? {};
  return { ...secret, metadata: { ...secret.metadata, annotations }, data };
}

/** The first certificate of a PEM bundle. */
function firstPem(pem: string | undefined): string | undefined {
  const end = '-----END CERTIFICATE-----';
  return pem?.includes(end) ? `${pem.slice(0, pem.indexOf(end) + end.length)}\n` : undefined;
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

/** How often --cert-dir's files are read again (the kubelet updates a mounted Secret within about a minute). */
export const CERT_DIR_EVERY_MS = 10_000;

/**
 * Reads --cert-dir's files every `everyMs` and hands on a pair that changed (cert-manager renewed
 * the Secret mounted there), once its key matches its certificate: files read while the kubelet
 * swaps them could mix an old key with a new certificate. Polled rather than watched: the kubelet
 * replaces a mounted Secret by swapping a symlink, which file watches do not reliably report.
 * Returns what stops it.
 */
export function watchCertDir(
  dir: string,
  current: ServingCerts,
  onChange: (certs: ServingCerts) => Promise<void> | void,
  logger: Logger,
  everyMs = CERT_DIR_EVERY_MS,
): () => void {
  let last = current;
  let busy = false;
  const check = async () => {
    if (busy) return;
    busy = true;
    try {
      const next = certificatesFromDir(dir);
      if (next.cert === last.cert && next.key === last.key && next.ca === last.ca) return;
      if (!new X509Certificate(next.cert).checkPrivateKey(createPrivateKey(next.key))) return;
      last = next;
      logger.info({ dir }, 'the certificate files changed: serving them');
      await onChange(next);
    } catch (err) {
      logger.warn({ dir, err: (err as Error).message }, 'could not read the certificate files; serving the ones before');
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void check(), everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
