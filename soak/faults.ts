// The faults the soak injects, one at a time: each resolves when the fault is over (the pod
// deleted, the process continued, the API server answering, the rollout done), which is when the
// time to settle starts.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeClient } from '../kube/client.js';
import type { Prng } from './prng.js';

export const FAULT_KINDS = ['delete-leader', 'kill-replica', 'freeze-replica', 'restart-apiserver', 'rolling-update'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface ManagerPod {
  metadata: { name: string };
  status: { containerStatuses?: Array<{ containerID?: string }> };
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

/** The control plane's supervisor restarts a crashed component at most 3 times in 10 minutes. */
const APISERVER_RESTARTS_PER_10_MIN = 2;
const FREEZE_MS = 30_000;

export class FaultInjector {
  private readonly apiserverRestarts: number[] = [];

  constructor(
    private readonly target: FaultTarget,
    private readonly prng: Prng,
  ) {}

  /** A fault kind for the next cycle; the API server restart only while the supervisor's budget allows it. */
  choose(): FaultKind {
    const recent = this.apiserverRestarts.filter((t) => Date.now() - t < 10 * 60_000).length;
    const kinds = FAULT_KINDS.filter((k) => k !== 'restart-apiserver' || recent < APISERVER_RESTARTS_PER_10_MIN);
    return this.prng.pick(kinds);
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
    const pid = Number(readFileSync(join(this.target.stateDir, 'pids', 'kube-apiserver.pid'), 'utf8'));
    this.apiserverRestarts.push(Date.now());
    process.kill(pid, 'SIGKILL');
    await this.target.waitApiServer();
    return `SIGKILL to kube-apiserver (pid ${pid}); the control plane's supervisor restarted it`;
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
