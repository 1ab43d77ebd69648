// A small certificate authority on WebCrypto (ECDSA P-256): the local control plane uses it for
// every component and for minted users, and the webhook server for its serving certificate.
//
// @peculiar/x509 is loaded on first use, not with this module: it costs the manager about 10 MB of
// memory, and a manager whose certificate is still valid (every start but the first) never needs
// it; the expiry of a certificate is read with node:crypto (docs/benchmarks.md, item 2).
import { X509Certificate as NodeX509Certificate, webcrypto } from 'node:crypto';
import type * as X509 from '@peculiar/x509';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

let loaded: Promise<typeof X509> | undefined;
function x509lib(): Promise<typeof X509> {
  return (loaded ??= import('@peculiar/x509').then((x509) => {
    x509.cryptoProvider.set(webcrypto as never);
    return x509;
  }));
}

const EC = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGN = { name: 'ECDSA', hash: 'SHA-256' } as const;
const DAY_MS = 24 * 3600 * 1000;
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';

export interface PemPair {
  cert: string;
  key: string;
}

export interface CertRequest {
  commonName: string;
  /** Organisations, which Kubernetes reads as the user's groups. */
  organizations?: string[];
  usage: 'client' | 'server' | 'both';
  /** Subject alternative names: IP addresses and DNS names, for serving certificates. */
  ips?: string[];
  dnsNames?: string[];
  days?: number;
}

async function newKeyPair(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function keyToPem(key: CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key);
  return (await x509lib()).PemConverter.encode(der, 'PRIVATE KEY');
}

function subject(commonName: string, organizations: string[] = []): X509.JsonName {
  // JSON names avoid escaping problems with commas or '=' in user and group names.
  return [...organizations.map((o) => ({ O: [o] })), { CN: [commonName] }];
}

export class CertificateAuthority {
  private constructor(
    readonly cert: X509.X509Certificate,
    private readonly signingKey: CryptoKey,
    readonly certPem: string,
    readonly keyPem: string,
  ) {}

  static async create(commonName: string, days = 365): Promise<CertificateAuthority> {
    const x509 = await x509lib();
    const keys = await newKeyPair();
    const now = Date.now();
    const cert = await x509.X509CertificateGenerator.createSelfSigned({
      name: subject(commonName),
      notBefore: new Date(now - 60_000),
      notAfter: new Date(now + days * DAY_MS),
      signingAlgorithm: SIGN,
      keys,
      extensions: [
        new x509.BasicConstraintsExtension(true, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      ],
    });
    return new CertificateAuthority(cert, keys.privateKey, cert.toString('pem'), await keyToPem(keys.privateKey));
  }

  static async load(certPem: string, keyPem: string): Promise<CertificateAuthority> {
    const x509 = await x509lib();
    const cert = new x509.X509Certificate(certPem);
    const der = x509.PemConverter.decodeFirst(keyPem);
    const key = await webcrypto.subtle.importKey('pkcs8', der, EC, true, ['sign']);
    return new CertificateAuthority(cert, key, certPem, keyPem);
  }

  /** The time left before this CA expires, in days. */
  daysLeft(now = Date.now()): number {
    return (this.cert.notAfter.getTime() - now) / DAY_MS;
  }

  async issue(req: CertRequest): Promise<PemPair> {
    const x509 = await x509lib();
    const keys = await newKeyPair();
    const now = Date.now();
    const usages = req.usage === 'client' ? [CLIENT_AUTH] : req.usage === 'server' ? [SERVER_AUTH] : [SERVER_AUTH, CLIENT_AUTH];
    const extensions: X509.Extension[] = [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension(usages),
      await x509.AuthorityKeyIdentifierExtension.create(this.cert),
    ];
    const names = [
      ...(req.ips ?? []).map((value) => ({ type: 'ip' as const, value })),
      ...(req.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ];
    if (names.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(names));
    const cert = await x509.X509CertificateGenerator.create({
      subject: subject(req.commonName, req.organizations),
      issuer: this.cert.subject,
      notBefore: new Date(now - 60_000),
      notAfter: new Date(now + (req.days ?? 365) * DAY_MS),
      signingAlgorithm: SIGN,
      publicKey: keys.publicKey,
      signingKey: this.signingKey,
      extensions,
    });
    return { cert: cert.toString('pem'), key: await keyToPem(keys.privateKey) };
  }
}

/** A key pair for signing service-account tokens, as PEM (PKCS#8 private, SPKI public). */
export async function newSigningKeyPair(): Promise<{ privateKey: string; publicKey: string }> {
  const keys = await newKeyPair();
  const spki = await webcrypto.subtle.exportKey('spki', keys.publicKey);
  return { privateKey: await keyToPem(keys.privateKey), publicKey: (await x509lib()).PemConverter.encode(spki, 'PUBLIC KEY') };
}

/** When a PEM certificate (the first of the text) stops being valid. */
export function certificateExpiry(certPem: string): Date {
  return new Date(new NodeX509Certificate(certPem).validTo);
}
