// Routes every usage-raise decision to one replica, the leader, so that decisions over the whole
// cluster are taken one at a time against one set of reservations (docs/hrq.md, "Admitting
// concurrent creations"). A follower forwards the AdmissionReview to the leader's webhook server,
// found in the Lease's holder identity, over TLS checked against HNC's own CA. When no leader
// can be reached the raise is refused with 503 (the creation can be retried): admitting it
// without the leader could overshoot a quota.
import https from 'node:https';
import type { Decision } from '../core/validation/decision.js';
import type { AdmissionRequest } from './review.js';

/** Where a leader receives forwarded decisions; never registered with the API server. */
export const FORWARDED_PATH = '/internal/hrq/resourcequotastatus';
const ADDRESS_MARK = ' webhooks=';
/**
 * The most a forwarded decision may take: below the resourcesquotasstatus webhook's 2 s timeout,
 * so that the API server gets the 503 rather than giving up and, as that webhook fails open
 * (Ignore), admitting the raise unchecked.
 */
export const FORWARD_TIMEOUT_MS = 1500;

/** The Lease identity of a replica whose webhooks are at `address` (https://host:port). */
export const identityWithAddress = (identity: string, address: string): string => `${identity}${ADDRESS_MARK}${address}`;

/** The webhook address a Lease holder identity carries, if any. */
export function addressOf(holder: string | undefined): string | undefined {
  const i = holder?.lastIndexOf(ADDRESS_MARK) ?? -1;
  return i < 0 ? undefined : holder!.slice(i + ADDRESS_MARK.length);
}

export interface RouterOptions {
  isLeader(): boolean;
  /** The current Lease holder's identity, as last read (undefined: not known, e.g. this replica just stopped leading). */
  holder(): string | undefined;
  /** Reads the Lease now: its live holder, if any. */
  readHolder?(): Promise<string | undefined>;
  /** HNC's CA (PEM), which signed every replica's serving certificate. */
  ca(): string | undefined;
  /** FORWARD_TIMEOUT_MS unless given. */
  timeoutMs?: number;
}

export class QuotaRouter {
  private agent?: https.Agent;
  private agentCa?: string;

  constructor(private readonly opts: RouterOptions) {}

  get isLeader(): boolean {
    return this.opts.isLeader();
  }

  /** The leader's decision on `r`, or a 503 refusal when it cannot be had. */
  async forward(r: AdmissionRequest): Promise<Decision> {
    // Right after a handover (this replica stopped leading, the Lease was released) the holder
    // last read is no one: read the Lease once rather than refuse what a new leader could decide.
    const address = addressOf(this.opts.holder()) ?? addressOf(await this.opts.readHolder?.().catch(() => undefined));
    if (!address) return unavailable('no HNC leader is known to decide on hierarchical quotas; try again');
    try {
      const body = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: r });
      const answer = await this.post(`${address}${FORWARDED_PATH}`, body);
      const response = (
        JSON.parse(answer) as { response?: { allowed?: boolean; status?: { code?: number; reason?: string; message?: string } } }
      ).response;
      if (!response) return unavailable('the HNC leader gave no answer on hierarchical quotas; try again');
      if (response.allowed) return { allowed: true };
      const s = response.status ?? {};
      return {
        allowed: false,
        code: s.code ?? 403,
        reason: (s.reason ?? 'Forbidden') as 'Forbidden',
        message: s.message ?? 'refused by the HNC leader',
      };
    } catch (err) {
      return unavailable(`could not reach the HNC leader to decide on hierarchical quotas (${(err as Error).message}); try again`);
    }
  }

  private post(url: string, body: string): Promise<string> {
    const ca = this.opts.ca();
    if (!this.agent || this.agentCa !== ca) {
      this.agent?.destroy();
      // Replicas' certificates name the Service, not each pod: trust HNC's CA, whatever the name.
      this.agent = new https.Agent({ keepAlive: true, ca, checkServerIdentity: () => undefined });
      this.agentCa = ca;
    }
    return new Promise((resolve, reject) => {
      const req = https.request(
        url,
        {
          method: 'POST',
          agent: this.agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (text += d));
          res.on('end', () =>
            res.statusCode === 200 ? resolve(text) : reject(new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`)),
          );
          res.on('error', reject);
        },
      );
      // One deadline for the whole exchange, connection and TLS handshake included. A socket
      // timeout alone started again once the TCP connection was up, so a leader that accepts
      // connections but never answers (a frozen process: the kernel completes the handshake)
      // took 2 × 1.5 s, past the API server's 2 s, which then admitted the raise unchecked.
      const deadline = setTimeout(() => req.destroy(new Error('timed out')), this.opts.timeoutMs ?? FORWARD_TIMEOUT_MS);
      req.on('close', () => clearTimeout(deadline));
      req.on('error', reject);
      req.end(body);
    });
  }

  close(): void {
    this.agent?.destroy();
  }
}

const unavailable = (message: string): Decision => ({ allowed: false, code: 503, reason: 'ServiceUnavailable', message });
