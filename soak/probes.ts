// What the faults need from the host: the certificate a replica presents on its webhook port, and
// an iptables rule that cuts one pod off from the API server (and nothing else).
import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import tls from 'node:tls';

/** The SHA-256 fingerprint of the certificate a TLS server presents (trusting anything: this reads, it does not check). */
export function presentedFingerprint(host: string, port: number, servername: string, timeoutMs = 2000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host, port, servername, rejectUnauthorized: false, timeout: timeoutMs }, () => {
      const cert = socket.getPeerX509Certificate();
      socket.destroy();
      if (cert) resolve(cert.fingerprint256);
      else reject(new Error(`${host}:${port} presented no certificate`));
    });
    socket.on('timeout', () => socket.destroy(new Error(`${host}:${port}: TLS timed out`)));
    socket.on('error', reject);
  });
}

export const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;

/** Every certificate of a PEM bundle, by fingerprint. */
export function bundleFingerprints(pem: string): string[] {
  return (pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map(fingerprint);
}

const CUT_COMMENT = 'hnc-soak-cut';

/**
 * The rule that drops a pod's packets to the API server, at the `kubernetes` Service's address
 * (they are DNATed to the API server after). In the raw table, which comes before that DNAT and
 * which neither kube-proxy nor kube-router touch: in filter INPUT, kube-router's own jump, put
 * back first whenever a NetworkPolicy changes, accepts the pod's packets before the rule. The
 * kubelet's probes go the other way (host to pod) and their answers to the host's address, so
 * they pass.
 */
const cutRule = (podIp: string, service: { ip: string; port: number }) => [
  ...['-s', `${podIp}/32`, '-d', `${service.ip}/32`, '-p', 'tcp', '--dport', String(service.port)],
  ...['-m', 'comment', '--comment', CUT_COMMENT, '-j', 'DROP'],
];

function iptables(args: string[]): { ok: boolean; out: string } {
  const r = spawnSync('iptables', ['-w', '5', '-t', 'raw', ...args], { encoding: 'utf8' });
  return { ok: r.status === 0, out: `${r.stdout}${r.stderr}` };
}

export function cutFromApiServer(podIp: string, service: { ip: string; port: number }): void {
  const r = iptables(['-I', 'PREROUTING', '1', ...cutRule(podIp, service)]);
  if (!r.ok) throw new Error(`iptables could not cut ${podIp} from the API server: ${r.out}`);
}

/** How many packets the cut rules dropped so far (proof that the cut cut). */
export function cutPackets(): number {
  const lines = iptables(['-L', 'PREROUTING', '-v', '-x', '-n'])
    .out.split('\n')
    .filter((l) => l.includes(CUT_COMMENT));
  return lines.reduce((sum, l) => sum + Number(l.trim().split(/\s+/)[0]), 0);
}

/** Removes every cut rule (ours from this run, or one a killed run left). */
export function removeCuts(): void {
  const rules = iptables(['-S', 'PREROUTING'])
    .out.split('\n')
    .filter((l) => l.includes(CUT_COMMENT));
  for (const rule of rules) {
    const args = rule
      .replace(/^-A /, '')
      .match(/"[^"]*"|\S+/g)!
      .map((a) => a.replace(/^"|"$/g, ''));
    const r = iptables(['-D', ...args]);
    if (!r.ok) throw new Error(`iptables could not remove "${rule}": ${r.out}`);
  }
}
