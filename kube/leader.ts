// Leader election over a coordination.k8s.io Lease, as client-go's: acquire when free or expired,
// renew every retry period, give up leadership when renewal fails past the renew deadline, and
// release the lease on a clean stop so that a successor need not wait for it to expire.
import { isConflict, isNotFound, type KubeClient } from './client.js';
import type { Logger } from './watch/logger.js';

export interface LeaderOptions {
  client: KubeClient;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  logger: Logger & { info(obj: object, msg?: string): void };
  /**
   * True for a holder known to have stopped, whose lease may be taken at once rather than after
   * it expires: an earlier run of this process's own container (docs/operations.md).
   */
  isPredecessor?: (holder: string) => boolean;
  onStartedLeading: () => void | Promise<void>;
  onStoppedLeading: () => void | Promise<void>;
}

interface Lease {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec: { holderIdentity?: string; leaseDurationSeconds?: number; acquireTime?: string; renewTime?: string; leaseTransitions?: number };
}

const POD_MARK = ' pod=';

/**
 * A Lease identity naming the pod it runs in (its uid, from the downward API), so that a later run
 * of the same container can tell its predecessor's lease (samePod).
 */
export const identityInPod = (identity: string, podUid: string | undefined): string =>
  podUid ? `${identity}${POD_MARK}${podUid}` : identity;

/**
 * Whether `holder` ran in the pod `podUid`: in a pod, the kubelet starts a container again only
 * once its previous run has exited, so such a holder (not this process) has stopped and its lease
 * need not be waited out. Outside a pod (no uid) nothing is known of other holders.
 */
export const samePod =
  (podUid: string | undefined) =>
  (holder: string): boolean =>
    !!podUid && holder.split(' ').includes(`${POD_MARK.trim()}${podUid}`);

const micro = (d: Date) => d.toISOString().replace('Z', '000Z');

export class LeaderElector {
  private timer?: ReturnType<typeof setTimeout>;
  private leading = false;
  private stopped = false;
  private lastRenew = 0;
  private lastHolder?: string;
  private readonly duration: number;
  private readonly deadline: number;
  private readonly retry: number;

  constructor(private readonly opts: LeaderOptions) {
    this.duration = opts.leaseDurationMs ?? 15_000;
    this.deadline = opts.renewDeadlineMs ?? 10_000;
    this.retry = opts.retryPeriodMs ?? 2_000;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /**
   * The Lease holder's identity as last read (ours while leading); undefined before the first read,
   * and while not leading if the Lease last read named this replica (it stopped leading since).
   */
  get holder(): string | undefined {
    if (this.leading) return this.opts.identity;
    return this.lastHolder === this.opts.identity ? undefined : this.lastHolder;
  }

  /** Reads the Lease now (within `timeoutMs`): its holder, unless none or its lease expired. */
  async readHolder(timeoutMs = 500): Promise<string | undefined> {
    if (this.leading) return this.opts.identity;
    const lease = await this.opts.client.request<Lease>('GET', this.path, { timeoutMs });
    const renewed = lease.spec.renewTime ? Date.parse(lease.spec.renewTime) : 0;
    const live = renewed + (lease.spec.leaseDurationSeconds ?? 0) * 1000 >= Date.now();
    const holder = lease.spec.holderIdentity || undefined;
    this.lastHolder = holder;
    return live && holder !== this.opts.identity ? holder : undefined;
  }

  private get path(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${this.opts.namespace}/leases/${this.opts.name}`;
  }

  start(): void {
    void this.tick();
  }

  /** Stops campaigning; a leader steps down and releases the lease. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    // A renewal in flight would write the Lease after the release read it, and the release would
    // then fail on the conflict: the standby would wait for the lease to expire.
    await this.ticking?.catch(() => undefined);
    if (this.leading) {
      this.leading = false;
      await this.opts.onStoppedLeading();
      await this.release().catch((err: unknown) => this.opts.logger.warn({ err: (err as Error).message }, 'could not release the lease'));
    }
  }

  private ticking?: Promise<void>;

  private tick(): Promise<void> {
    this.ticking = this.tickOnce();
    return this.ticking;
  }

  private async tickOnce(): Promise<void> {
    if (this.stopped) return;
    // A leader's renewal must end by its renew deadline, retries included: past it, another
    // replica may take the lease once it expires, so this one must have stopped acting by then.
    const budgetEnd = (this.leading ? this.lastRenew : Date.now()) + this.deadline;
    try {
      const renewedAt = await this.tryAcquireOrRenew(budgetEnd);
      const ok = renewedAt !== undefined;
      // The time written as renewTime, not the time the answer came: others count the lease from it.
      if (ok) this.lastRenew = renewedAt;
      if (ok && !this.leading) {
        this.leading = true;
        this.opts.logger.info({ lease: this.opts.name, identity: this.opts.identity }, 'became the leader');
        await this.opts.onStartedLeading();
      }
    } catch (err) {
      this.opts.logger.warn({ lease: this.opts.name, err: (err as Error).message }, 'leader election request failed');
    }
    if (this.leading && Date.now() - this.lastRenew > this.deadline) {
      // Could not renew in time: another replica may take over now, so stop acting at once.
      this.leading = false;
      this.opts.logger.warn({ lease: this.opts.name }, 'lost the lease');
      await this.opts.onStoppedLeading();
    }
    if (!this.stopped) this.timer = setTimeout(() => void this.tick(), this.retry);
  }

  /** The renewTime written (ms), or undefined when another holds the lease. */
  private async tryAcquireOrRenew(budgetEnd: number): Promise<number | undefined> {
    const now = new Date();
    const client = this.opts.client;
    const timeoutMs = (): number => {
      const left = budgetEnd - Date.now();
      if (left <= 0) throw new Error(`no answer within the renew deadline (${this.deadline} ms)`);
      return left;
    };
    const lease = await client
      .request<Lease>('GET', this.path, { timeoutMs: timeoutMs() })
      .catch((e: unknown) => (isNotFound(e) ? undefined : Promise.reject(e)));
    const spec = { holderIdentity: this.opts.identity, leaseDurationSeconds: Math.ceil(this.duration / 1000), renewTime: micro(now) };
    if (!lease) {
      try {
        await client.request('POST', `/apis/coordination.k8s.io/v1/namespaces/${this.opts.namespace}/leases`, {
          timeoutMs: timeoutMs(),
          body: {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name: this.opts.name, namespace: this.opts.namespace },
            spec: { ...spec, acquireTime: micro(now), leaseTransitions: 0 },
          },
        });
        return now.getTime();
      } catch (err) {
        if (isConflict(err)) return undefined;
        throw err;
      }
    }
    const holder = lease.spec.holderIdentity;
    this.lastHolder = holder || undefined;
    const renewed = lease.spec.renewTime ? Date.parse(lease.spec.renewTime) : 0;
    const expired = renewed + (lease.spec.leaseDurationSeconds ?? 0) * 1000 < now.getTime();
    const ours = holder === this.opts.identity;
    const predecessor = !!holder && !ours && this.opts.isPredecessor?.(holder) === true;
    if (holder && !ours && !expired && !predecessor) return undefined;
    if (predecessor && !expired)
      this.opts.logger.info({ lease: this.opts.name, previous: holder }, 'taking the lease of an earlier run of this container');
    const taking = holder !== this.opts.identity;
    const next: Lease = {
      ...lease,
      spec: {
        ...lease.spec,
        ...spec,
        ...(taking ? { acquireTime: micro(now), leaseTransitions: (lease.spec.leaseTransitions ?? 0) + 1 } : {}),
      },
    };
    try {
      await client.request('PUT', this.path, { timeoutMs: timeoutMs(), body: next });
      return now.getTime();
    } catch (err) {
      if (isConflict(err)) return undefined;
      throw err;
    }
  }

  private async release(): Promise<void> {
    const lease = await this.opts.client.get<Lease>(this.path);
    if (lease.spec.holderIdentity !== this.opts.identity) return;
    await this.opts.client.replace(this.path, {
      ...lease,
      spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: micro(new Date()) },
    });
  }
}
