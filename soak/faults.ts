// The faults the soak injects, one at a time: each resolves when the fault is over (the pod
// deleted, the process continued, the API server answering, the rollout done), which is when the
// time to settle starts.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isNotFound, type KubeClient } from '../kube/client.js';
import { MAX_RESTARTS, RESTART_WINDOW_MS } from '../local-cluster/control-plane.js';
import type { Prng } from './prng.js';
import { bundleFingerprints, cutFromApiServer, cutPackets, fingerprint, presentedFingerprint, removeCuts } from './probes.js';

export const FAULT_KINDS = [
  'delete-leader',
  'kill-replica',
  'freeze-replica',
  'restart-apiserver',
  'rolling-update',
  'restart-etcd',
  'rotate-webhook-cert',
  'cut-replica',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface ManagerPod {
  metadata: { name: string; deletionTimestamp?: string };
  status: {
    podIP?: string;
    containerStatuses?: Array<{ containerID?: string }>;
    conditions?: Array<{ type: string; status: string }>;
  };
}

export interface FaultTarget {
  admin: KubeClient;
  /** The control plane's state folder (its pids/ folder names kube-apiserver's process). */
  stateDir: string;
  containerdSocket: string;
  namespace: string;
  deployment: string;
  managerPods(): Promise<ManagerPod[]>;
  leaseHolder(): Promise<string | undefined>;
  waitRolledOut(): Promise<unknown>;
  /** Waits until the API server answers again. */
  waitApiServer(): Promise<void>;
  log(line: string): void;
}

export interface Fault {
  kind: FaultKind;
  /** What was done to what. */
  detail: string;
  startedAt: number;
  endedAt: number;
}

/**
 * The control plane's supervisor restarts crashed components (etcd and kube-apiserver alike) at
 * most MAX_RESTARTS times in RESTART_WINDOW_MS, all together, and gives up after: the soak's kills
 * leave one restart of that budget for a real crash.
 */
const CONTROL_PLANE_KILLS_PER_WINDOW = MAX_RESTARTS - 1;
const CONTROL_PLANE_KILLS: readonly FaultKind[] = ['restart-apiserver', 'restart-etcd'];
const FREEZE_MS = 30_000;
const CUT_MS = 30_000;
const WEBHOOK_PORT = 9443;
const WEBHOOK_SERVER_NAME = 'hnc-webhook-service.hnc-system.svc';
const CERT_SECRET = 'hnc-webhook-server-cert';
const CONFIGURATIONS = [
  '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/hnc-validating-webhook-configuration',
  '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/hnc-mutating-webhook-configuration',
];
/** A rotation not taken up by every replica and configuration in this long is reported as such. */
const ROTATION_TIMEOUT_MS = 60_000;

/** The kinds the supervisor's budget allows now, given the times of the soak's earlier kills of etcd or kube-apiserver. */
export function allowedKinds(kills: readonly number[], now: number): FaultKind[] {
  const recent = kills.filter((t) => now - t < RESTART_WINDOW_MS).length;
  return FAULT_KINDS.filter((k) => !CONTROL_PLANE_KILLS.includes(k) || recent < CONTROL_PLANE_KILLS_PER_WINDOW);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class FaultInjector {
  private readonly controlPlaneKills: number[] = [];

  /** `order`: kinds to inject first, in this order (SOAK_FAULTS), before the seeded choice. */
  constructor(
    private readonly target: FaultTarget,
    private readonly prng: Prng,
    private readonly order: FaultKind[] = [],
  ) {}

  /** A fault kind for the next cycle; etcd and kube-apiserver kills only while the supervisor's budget allows one. */
  choose(now = Date.now()): FaultKind {
    const allowed = allowedKinds(this.controlPlaneKills, now);
    while (this.order.length) {
      const next = this.order.shift()!;
      if (allowed.includes(next)) return next;
    }
    return this.prng.pick(allowed);
  }

  /** A kill of etcd or kube-apiserver at `at`, which the supervisor's restart budget counts. */
  recordControlPlaneKill(at = Date.now()): void {
    this.controlPlaneKills.push(at);
  }

  async inject(kind: FaultKind): Promise<Fault> {
    const startedAt = Date.now();
    const detail = await this[kind]();
    this.target.log(`soak: fault ${kind}: ${detail}`);
    return { kind, detail, startedAt, endedAt: Date.now() };
  }

  private async pickPod(): Promise<{ name: string; containerId: string }> {
    const pods = await this.target.managerPods();
    const pod = this.prng.pick(pods);
    const id = pod.status.containerStatuses?.[0]?.containerID?.replace(/^containerd:\/\//, '');
    if (!id) throw new Error(`manager pod ${pod.metadata.name} has no running container`);
    return { name: pod.metadata.name, containerId: id };
  }

  /** The host pid of a container's main process (the manager's node), from containerd. */
  private hostPid(containerId: string): number {
    const r = spawnSync('ctr', ['-a', this.target.containerdSocket, '-n', 'k8s.io', 'tasks', 'ls'], { encoding: 'utf8' });
    const line = r.stdout.split('\n').find((l) => l.startsWith(containerId));
    const pid = Number(line?.split(/\s+/)[1]);
    if (!pid) throw new Error(`no task for container ${containerId}: ${r.stdout}${r.stderr}`);
    return pid;
  }

  async 'delete-leader'(): Promise<string> {
    const leader = await this.target.leaseHolder();
    if (!leader) throw new Error('no leader to delete');
    await this.target.admin.delete(`/api/v1/namespaces/${this.target.namespace}/pods/${leader}`);
    return `deleted the leader pod ${leader}`;
  }

  async 'kill-replica'(): Promise<string> {
    const pod = await this.pickPod();
    process.kill(this.hostPid(pod.containerId), 'SIGKILL');
    return `SIGKILL to the manager process of ${pod.name}`;
  }

  async 'freeze-replica'(): Promise<string> {
    const pod = await this.pickPod();
    const pid = this.hostPid(pod.containerId);
    const leader = (await this.target.leaseHolder()) === pod.name;
    process.kill(pid, 'SIGSTOP');
    try {
      await new Promise((r) => setTimeout(r, FREEZE_MS));
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    return `SIGSTOP for ${FREEZE_MS / 1000} s, then SIGCONT, to the manager process of ${pod.name}${leader ? ' (the leader)' : ''}`;
  }

  async 'restart-apiserver'(): Promise<string> {
    const pid = await this.killComponent('kube-apiserver');
    return `SIGKILL to kube-apiserver (pid ${pid}); the control plane's supervisor restarted it`;
  }

  async 'restart-etcd'(): Promise<string> {
    const pid = await this.killComponent('etcd');
    return `SIGKILL to etcd (pid ${pid}); the control plane's supervisor restarted it and the API server is ready again`;
  }

  /** SIGKILL to a control-plane component; over when the supervisor has started another and the API server is ready. */
  private async killComponent(name: 'etcd' | 'kube-apiserver'): Promise<number> {
    const pidFile = join(this.target.stateDir, 'pids', `${name}.pid`);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    this.recordControlPlaneKill();
    process.kill(pid, 'SIGKILL');
    // The supervisor writes the new process's pid; /readyz alone could still answer from before it noticed.
    const deadline = Date.now() + 120_000;
    while (readPid(pidFile) === pid || readPid(pidFile) === undefined) {
      if (Date.now() > deadline) throw new Error(`${name} was not restarted within 120 s`);
      await sleep(100);
    }
    await this.target.waitApiServer();
    return pid;
  }

  /**
   * What an admin does to rotate the webhook certificate (docs/webhooks.md#certificates): delete
   * its Secret. Over when a new CA is in the Secret, every ready replica presents the certificate
   * it holds, and both configurations' caBundle trust it.
   */
  async 'rotate-webhook-cert'(): Promise<string> {
    const path = `/api/v1/namespaces/${this.target.namespace}/secrets/${CERT_SECRET}`;
    const before = (await this.target.admin.get<CertSecret>(path)).data;
    const t0 = Date.now();
    await this.target.admin.delete(path);
    const deadline = t0 + ROTATION_TIMEOUT_MS;
    let state = 'not checked';
    while (Date.now() < deadline) {
      state = await this.rotationState(path, before['ca.crt']).catch((err: unknown) => (err as Error).message);
      if (state === 'done')
        return `deleted the Secret ${CERT_SECRET}; a new CA served by every replica and trusted by both configurations in ${((Date.now() - t0) / 1000).toFixed(1)} s`;
      await sleep(100);
    }
    return `deleted the Secret ${CERT_SECRET}; NOT taken up within ${ROTATION_TIMEOUT_MS / 1000} s: ${state}`;
  }

  /** 'done', or what is still missing. */
  private async rotationState(path: string, oldCa: string | undefined): Promise<string> {
    const secret = await this.target.admin.get<CertSecret>(path).catch((e: unknown) => (isNotFound(e) ? undefined : Promise.reject(e)));
    if (!secret) return 'no Secret yet';
    const unb64 = (s: string | undefined) => Buffer.from(s ?? '', 'base64').toString('utf8');
    if (secret.data['ca.crt'] === oldCa) return 'the Secret still holds the old CA';
    const ca = fingerprint(unb64(secret.data['ca.crt']));
    for (const config of CONFIGURATIONS) {
      const live = await this.target.admin.get<{ webhooks?: Array<{ name: string; clientConfig: { caBundle?: string } }> }>(config);
      const stale = (live.webhooks ?? []).find((w) => !bundleFingerprints(unb64(w.clientConfig.caBundle)).includes(ca));
      if (stale) return `${stale.name}'s caBundle does not hold the new CA`;
    }
    const serving = fingerprint(unb64(secret.data['tls.crt']));
    for (const pod of await this.readyPods()) {
      const presented = await presentedFingerprint(pod.status.podIP!, WEBHOOK_PORT, WEBHOOK_SERVER_NAME);
      if (presented !== serving) return `${pod.metadata.name} still presents another certificate`;
    }
    return 'done';
  }

  private async readyPods(): Promise<ManagerPod[]> {
    const ready = (p: ManagerPod) => p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
    return (await this.target.managerPods()).filter((p) => p.status.podIP && !p.metadata.deletionTimestamp && ready(p));
  }

  /**
   * One replica cut from the API server for CUT_MS (its packets to the API server's port dropped on
   * the host), the rule removed after, whatever happens. What HNC does meanwhile is watched, not
   * judged: whether the pod stays Ready (in the webhook Service) and whether the Lease moves.
   */
  async 'cut-replica'(): Promise<string> {
    const pods = await this.readyPods();
    if (!pods.length) throw new Error('no ready manager pod to cut off');
    const pod = this.prng.pick(pods);
    const leader = (await this.target.leaseHolder()) === pod.metadata.name;
    const svc = await this.target.admin.get<{ spec: { clusterIP: string; ports: Array<{ port: number }> } }>(
      '/api/v1/namespaces/default/services/kubernetes',
    );
    removeCuts();
    const t0 = Date.now();
    cutFromApiServer(pod.status.podIP!, { ip: svc.spec.clusterIP, port: svc.spec.ports[0]!.port });
    let seen: string[];
    let dropped: number;
    try {
      seen = await this.watchCut(pod.metadata.name, t0);
    } finally {
      dropped = cutPackets();
      removeCuts();
    }
    const who = `${pod.metadata.name} (${pod.status.podIP}${leader ? ', the leader' : ''})`;
    return `cut ${who} from the API server for ${CUT_MS / 1000} s (iptables DROP, ${dropped} packets dropped), then the rule removed; ${seen.join('; ') || 'it stayed Ready and the Lease did not move'}`;
  }

  /** Until CUT_MS after t0, once a second: when the pod stops being Ready and when the Lease changes hands. */
  private async watchCut(name: string, t0: number): Promise<string[]> {
    const seen: string[] = [];
    const at = () => `${((Date.now() - t0) / 1000).toFixed(1)} s`;
    let ready = true;
    let holder = await this.target.leaseHolder().catch(() => undefined);
    while (Date.now() - t0 < CUT_MS) {
      await sleep(1000);
      const pod = (await this.target.managerPods().catch(() => [])).find((p) => p.metadata.name === name);
      const nowReady = pod?.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
      if (nowReady !== ready) seen.push(`${nowReady ? 'Ready again' : 'not Ready'} after ${at()}`);
      ready = nowReady;
      const h = await this.target.leaseHolder().catch(() => holder);
      if (h !== holder) seen.push(`the Lease went to ${h ?? 'nobody'} after ${at()}`);
      holder = h;
    }
    return seen;
  }

  async 'rolling-update'(): Promise<string> {
    const { admin, namespace, deployment } = this.target;
    await admin.request('PATCH', `/apis/apps/v1/namespaces/${namespace}/deployments/${deployment}`, {
      body: { spec: { template: { metadata: { annotations: { 'soak/rolled-at': new Date().toISOString() } } } } },
      contentType: 'application/strategic-merge-patch+json',
    });
    await this.target.waitRolledOut();
    return 'a pod template annotation changed; rolled out';
  }
}

interface CertSecret {
  data: Record<string, string>;
}

function readPid(file: string): number | undefined {
  try {
    return Number(readFileSync(file, 'utf8')) || undefined;
  } catch {
    return undefined;
  }
}
