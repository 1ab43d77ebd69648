// High availability with real processes: two managers on one control plane, only the leader
// writes; SIGTERM hands the lease over at once, SIGKILL within the lease duration; propagation
// keeps working. Also /readyz, /metrics and Events, which a platform team watches.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import net from 'node:net';
import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { TestCluster, eventually, eventuallyEqual } from '../support/cluster.js';
import { setParent } from '../support/hnc.js';
import { mintUser } from '../../local-cluster/index.js';
import { MANAGER_GROUPS, MANAGER_USER } from '../../kube/install.js';
import { HierarchyCache } from '../../kube/hierarchy-cache.js';
import { HierarchyPolicy } from '../../core/hierarchy/policy.js';
import { KubeClient } from '../../kube/client.js';
import { createLogger } from '../../kube/log.js';
import { serveProbes } from '../../cmd/probes.js';
import { spawnHnc, startManager } from '../support/manager.js';

const LEASE_SECONDS = 4;
let cluster: TestCluster;
let kubeconfig: string;
const leaseId = TestCluster.uniqueName('ha');
const children: ChildProcess[] = [];

interface Replica {
  proc: ChildProcess;
  metricsPort: number;
  identityPid: number;
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });

async function replica(env: Record<string, string> = {}, leaseSeconds = LEASE_SECONDS): Promise<Replica> {
  const metricsPort = await freePort();
  const healthPort = await freePort();
  const { proc } = await spawnHnc(
    kubeconfig,
    [
      '--no-webhooks',
      '--enable-leader-election',
      '--leader-election-id',
      leaseId,
      '--leader-election-lease-seconds',
      String(leaseSeconds),
      '--metrics-addr',
      `127.0.0.1:${metricsPort}`,
      '--health-probe-bind-address',
      `127.0.0.1:${healthPort}`,
    ],
    join(inject('stateDir'), 'logs', `ha-${metricsPort}.log`),
    60_000,
    env,
  );
  children.push(proc);
  await eventually(
    () => fetch(`http://127.0.0.1:${healthPort}/readyz`).then((r) => (r.status === 200 ? true : undefined)),
    'the replica to be ready',
  );
  return { proc, metricsPort, identityPid: proc.pid! };
}

const holder = async () =>
  (await cluster.admin.get<{ spec: { holderIdentity?: string } }>(`/apis/coordination.k8s.io/v1/namespaces/hnc-system/leases/${leaseId}`))
    .spec.holderIdentity ?? '';
const writesOf = async (r: Replica) => {
  const text = await (await fetch(`http://127.0.0.1:${r.metricsPort}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('hnc_api_writes_total{'))
    .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
};
const leaderOf = async (replicas: Replica[]) => {
  const h = await eventually(async () => (await holder().catch(() => '')) || undefined, 'a leader');
  return replicas.find((r) => h.includes(`_${r.identityPid}_`));
};
const roleCopied = (parent: string, child: string, name: string) =>
  cluster.admin
    .create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${parent}/roles`, { metadata: { name }, rules: [] })
    .then(() =>
      eventually(
        () => cluster.admin.get(`/apis/rbac.authorization.k8s.io/v1/namespaces/${child}/roles/${name}`),
        `the copy of ${name}`,
        30_000,
      ),
    );

beforeAll(async () => {
  cluster = await TestCluster.connect();
  kubeconfig = (await mintUser(inject('stateDir'), MANAGER_USER, MANAGER_GROUPS)).kubeconfigPath;
});
afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await cluster.cleanup();
});

describe('high availability', () => {
  it('lets only the leader write, and hands over on SIGTERM and on SIGKILL', async () => {
    const parent = await cluster.namespace('ha-parent');
    const child = await cluster.namespace('ha-child');
    await setParent(cluster.admin, child, parent);
    const a = await replica();
    const b = await replica();
    const first = (await leaderOf([a, b]))!;
    const second = first === a ? b : a;
    // Any replica writes the webhook configurations and policies when they differ (two starting
    // at once may both write one): the controller's writes are what only the leader makes.
    const secondBefore = await writesOf(second);
    await roleCopied(parent, child, 'one');
    expect(await writesOf(first)).toBeGreaterThan(0);
    expect(await writesOf(second)).toBe(secondBefore);

    // SIGTERM: the leader finishes, releases the lease, and the other takes over at once.
    let t0 = Date.now();
    first.proc.kill('SIGTERM');
    await eventuallyEqual(
      async () => (await leaderOf([second])) === second,
      true,
      'the second replica to lead',
      LEASE_SECONDS * 1000 + 5000,
    );
    expect(Date.now() - t0).toBeLessThan(LEASE_SECONDS * 1000);
    await roleCopied(parent, child, 'two');

    // SIGKILL: no release; the lease expires and a standby takes over within its duration.
    const third = await replica();
    t0 = Date.now();
    second.proc.kill('SIGKILL');
    await eventuallyEqual(async () => (await leaderOf([third])) === third, true, 'the third replica to lead', LEASE_SECONDS * 3000);
    expect(Date.now() - t0).toBeLessThan(LEASE_SECONDS * 1000 + 3000);
    await roleCopied(parent, child, 'three');

    // Metrics, with their labels, after a propagation.
    const metrics = await (await fetch(`http://127.0.0.1:${third.metricsPort}/metrics`)).text();
    expect(metrics).toMatch(/^hnc_api_writes_total\{verb="create",result="success"\} [1-9]/m);
    expect(metrics).toMatch(/^hnc_propagated_objects\{type="roles\.rbac\.authorization\.k8s\.io"\} [1-9]/m);
    expect(metrics).toMatch(/^hnc_source_objects\{type="rolebindings\.rbac\.authorization\.k8s\.io"\} \d+/m);
    expect(metrics).toMatch(/^hnc_namespaces [1-9]/m);
    expect(metrics).toMatch(/^hnc_reconcile_duration_seconds_count\{controller="hierarchy"\} [1-9]/m);
    expect(metrics).toMatch(/^hnc_queue_depth\{controller="roles\.rbac\.authorization\.k8s\.io"\} \d+/m);

    // A replica left running would reconcile alongside the next tests' own manager.
    if (third.proc.exitCode === null) {
      const exited = new Promise((resolve) => third.proc.once('exit', resolve));
      third.proc.kill('SIGTERM');
      await exited;
    }
  }, 180_000);

  it("gives a container restarted in its pod its killed run's lease at once, not after the lease expires", async () => {
    // As the kubelet restarts a killed container: the same pod (POD_UID), a new process. The lease
    // is long, so waiting it out would fail the bound below.
    const pod = { POD_UID: randomUUID() };
    const lease = 60;
    const first = await replica(pod, lease);
    await eventuallyEqual(async () => (await leaderOf([first])) === first, true, 'the first run to lead', 30_000);
    const t0 = Date.now();
    first.proc.kill('SIGKILL');
    const second = await replica(pod, lease);
    await eventuallyEqual(async () => (await leaderOf([second])) === second, true, 'the second run to lead', 30_000);
    expect(Date.now() - t0).toBeLessThan((lease * 1000) / 2);
    // Another pod's replica still waits the lease out: shown by the SIGKILL step of the first test.
    const exited = new Promise((resolve) => second.proc.once('exit', resolve));
    second.proc.kill('SIGTERM');
    await exited;
  }, 180_000);

  it('answers /readyz 503 before its caches sync and 200 after', async () => {
    const client = await KubeClient.fromKubeconfig(kubeconfig);
    const cache = new HierarchyCache(client, new HierarchyPolicy(), createLogger({ level: 'silent' }));
    const probes = (await serveProbes('127.0.0.1:0', { ready: () => cache.synced }))!;
    try {
      expect((await fetch(`http://127.0.0.1:${probes.port}/readyz`)).status).toBe(503);
      expect((await fetch(`http://127.0.0.1:${probes.port}/healthz`)).status).toBe(200);
      await cache.start();
      expect((await fetch(`http://127.0.0.1:${probes.port}/readyz`)).status).toBe(200);
    } finally {
      await cache.stop();
      await probes.close();
    }
  });

  it('records an Event on a namespace whose parent goes missing', async () => {
    const manager = await startManager('events');
    try {
      const parent = TestCluster.uniqueName('evparent');
      await cluster.admin.create('/api/v1/namespaces', { metadata: { name: parent } });
      const child = await cluster.namespace('evchild');
      await setParent(cluster.admin, child, parent);
      await eventually(
        async () =>
          (await cluster.admin.get<{ metadata: { labels?: Record<string, string> } }>(`/api/v1/namespaces/${child}`)).metadata.labels?.[
            `${parent}.tree.hnc.x-k8s.io/depth`
          ]
            ? true
            : undefined,
        'the child labelled',
      );
      await cluster.admin.delete(`/api/v1/namespaces/${parent}`);
      const event = await eventually(async () => {
        const list = await cluster.admin.get<{
          items: Array<{
            reason: string;
            message: string;
            type: string;
            involvedObject: { kind: string; name: string };
            source?: { component?: string };
          }>;
        }>(`/api/v1/namespaces/${child}/events`);
        return list.items.find((e) => e.reason === 'ParentMissing');
      }, 'the ParentMissing event');
      expect(event).toMatchObject({
        type: 'Warning',
        message: `Parent "${parent}" does not exist`,
        involvedObject: { kind: 'Namespace', name: child },
        source: { component: 'hnc.x-k8s.io' },
      });
      // Events are writes too: through the Writer, counted.
      expect(manager.writer.writesTo('events')).toBeGreaterThanOrEqual(1);
    } finally {
      await manager.stop();
    }
  });
});
