// Availability of the shipped Deployment on a real node: the leader pod deleted while 1,000 copies
// are being propagated (the other replica takes the Lease, exactly the expected copies result),
// a follower frozen (out of the webhook Service within seconds), and a rolling update to a new
// image tag; admission requests are sent all along and counted.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TestCluster, eventually, eventuallyEqual } from '../support/cluster.js';
import { setParent, treeDepths } from '../support/hnc.js';
import { HNC_IMAGE_NEXT } from './global-setup.js';
import {
  DEPLOYMENT,
  HNC_NAMESPACE,
  admin,
  admissionLoop,
  ensureInstalled,
  leaseHolder,
  managerPods,
  waitRolledOut,
  type Pod,
} from './support.js';

let cluster: TestCluster;

beforeAll(async () => {
  cluster = await TestCluster.connect();
  await ensureInstalled(cluster);
});
afterAll(() => cluster?.cleanup());

const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const CHILDREN = 10;

/** The webhook Service's endpoints, as the EndpointSlice controller publishes them. */
async function webhookEndpoints(): Promise<Array<{ addresses: string[]; ready: boolean }>> {
  const slices = await cluster.admin.get<{
    items: Array<{ endpoints?: Array<{ addresses: string[]; conditions?: { ready?: boolean } }> }>;
  }>(`/apis/discovery.k8s.io/v1/namespaces/${HNC_NAMESPACE}/endpointslices`, {
    labelSelector: 'kubernetes.io/service-name=hnc-webhook-service',
  });
  return slices.items.flatMap((s) => s.endpoints ?? []).map((e) => ({ addresses: e.addresses, ready: e.conditions?.ready === true }));
}
const ROLES = 100;

interface Listed {
  items: Array<{ metadata: { name: string; namespace: string; labels?: Record<string, string> } }>;
}

describe('failover and upgrades', () => {
  it('another replica takes over when the leader pod is deleted mid-propagation: exactly the expected copies, admissions counted', async () => {
    const root = await cluster.namespace('e2e-fo');
    const children: string[] = [];
    for (let i = 0; i < CHILDREN; i++) children.push(await cluster.namespace(`e2e-fo-${i}`));
    await Promise.all(children.map((c) => setParent(cluster.admin, c, root)));
    await Promise.all(
      children.map((c) => eventuallyEqual(() => treeDepths(cluster.admin, c), { [c]: 0, [root]: 1 }, `${c} under the root`, 60_000)),
    );
    const loop = admissionLoop(cluster.admin, children[0]!);
    const leader = await eventually(() => leaseHolder(cluster.admin), 'a leader');
    const before = (await managerPods(cluster.admin)).map((p) => p.metadata.name);
    expect(before).toContain(leader);

    // 100 Roles in the root: 1,000 copies to write. The leader is deleted as soon as the first
    // copies appear, so the hand-over happens mid-propagation.
    await Promise.all(
      Array.from({ length: ROLES }, (_, i) =>
        cluster.admin.create(`${RBAC}/namespaces/${root}/roles`, {
          metadata: { name: `r${i}` },
          rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }],
        }),
      ),
    );
    const copies = async () => {
      const list = await cluster.admin.get<Listed>(`${RBAC}/roles`, { labelSelector: `hnc.x-k8s.io/inherited-from=${root}` });
      return list.items;
    };
    await eventually(async () => ((await copies()).length > 0 ? true : undefined), 'the first copies', 60_000);
    const copiedAtDeletion = (await copies()).length;
    const del = await admin(cluster, ['delete', 'pod', '-n', HNC_NAMESPACE, leader, '--wait=false']);
    expect(del.code).toBe(0);

    const newLeader = await eventually(
      async () => {
        const h = await leaseHolder(cluster.admin);
        return h && h !== leader ? h : undefined;
      },
      'another replica to take the Lease',
      60_000,
    );
    // The standby replica, or the deleted one's replacement if it starts first: a live pod either way.
    expect((await managerPods(cluster.admin)).map((p) => p.metadata.name)).toContain(newLeader);
    await eventually(async () => ((await copies()).length === CHILDREN * ROLES ? true : undefined), `${CHILDREN * ROLES} copies`, 180_000);
    const stats = await loop.stop();
    const all = await copies();
    const perChild = Object.fromEntries(children.map((c) => [c, all.filter((r) => r.metadata.namespace === c).length]));
    expect(perChild).toEqual(Object.fromEntries(children.map((c) => [c, ROLES])));
    expect(new Set(all.map((r) => `${r.metadata.namespace}/${r.metadata.name}`)).size).toBe(CHILDREN * ROLES);
    process.stderr.write(
      `e2e failover: leader ${leader} deleted after ${copiedAtDeletion}/${CHILDREN * ROLES} copies; ${newLeader} took over; ` +
        `admission requests during the hand-over: ${stats.tried} tried, ${stats.failed} failed${stats.errors.length ? ` (${stats.errors.join('; ')})` : ''}\n`,
    );
    expect(stats.tried).toBeGreaterThan(0);
    expect(stats.failed).toBe(0);
    await waitRolledOut(cluster.admin);
  });

  it('a frozen replica leaves the webhook Service within seconds; admissions then go through the other', async () => {
    const ns = await cluster.namespace('e2e-freeze');
    await eventuallyEqual(() => treeDepths(cluster.admin, ns), { [ns]: 0 }, 'the namespace reconciled');
    const pods = await waitRolledOut(cluster.admin);
    const leader = await eventually(() => leaseHolder(cluster.admin), 'a leader');
    // The follower: its freeze concerns the Service alone, not the Lease.
    const frozen = pods.find((p) => p.metadata.name !== leader)!;
    const id = (frozen as Pod & { status: { containerStatuses?: Array<{ containerID?: string }> } }).status.containerStatuses?.[0]
      ?.containerID;
    const task = (verb: 'pause' | 'resume') => {
      // The cgroup freezer: every process of the container stops, as a hung or SIGSTOPped manager.
      const r = spawnSync('ctr', ['-a', inject('containerdSocket'), '-n', 'k8s.io', 'tasks', verb, id!.replace(/^containerd:\/\//, '')], {
        encoding: 'utf8',
      });
      if (r.status !== 0) throw new Error(`ctr tasks ${verb}: ${r.stderr}`);
    };
    const inService = async () => (await webhookEndpoints()).some((e) => e.ready && e.addresses.includes(frozen.status.podIP!));
    expect(await inService()).toBe(true);
    const t0 = performance.now();
    task('pause');
    try {
      await eventuallyEqual(inService, false, 'the frozen replica out of the webhook Service', 30_000);
      const out = performance.now() - t0;
      // Calls the API server already made to it time out (5 s); new ones reach the other replica.
      const loop = admissionLoop(cluster.admin, ns);
      await eventually(
        async () => (loop.stats.tried - loop.stats.failed >= 20 ? true : undefined),
        '20 admissions through the Service',
        60_000,
      );
      const stats = await loop.stop();
      process.stderr.write(
        `e2e frozen replica: out of the Service ${(out / 1000).toFixed(1)} s after the freeze; then ${stats.tried} admissions, ${stats.failed} failed (${stats.errors.join('; ')})\n`,
      );
      // Readiness every 2 s, 1 s timeout, 2 failures: about 4 s, and the EndpointSlice's update.
      expect(out).toBeLessThan(8_000);
      // At most one call per connection the API server kept open to the frozen replica.
      expect(stats.failed).toBeLessThanOrEqual(3);
    } finally {
      task('resume');
    }
    await eventuallyEqual(inService, true, 'the replica back in the Service once it runs again', 30_000);
  });

  it('rolls out a new image tag with no failed admission', async () => {
    const ns = await cluster.namespace('e2e-roll');
    await eventuallyEqual(() => treeDepths(cluster.admin, ns), { [ns]: 0 }, 'the namespace reconciled');
    const loop = admissionLoop(cluster.admin, ns);
    await eventually(async () => (loop.stats.tried > 0 ? true : undefined), 'the first admission request');
    const oldPods = (await managerPods(cluster.admin)).map((p) => p.metadata.name);
    const set = await admin(cluster, ['set', 'image', '-n', HNC_NAMESPACE, `deployment/${DEPLOYMENT}`, `manager=${HNC_IMAGE_NEXT}`]);
    expect(set.code).toBe(0);
    const pods = await waitRolledOut(cluster.admin);
    const stats = await loop.stop();
    process.stderr.write(`e2e rolling update: admission requests during the rollout: ${stats.tried} tried, ${stats.failed} failed\n`);
    expect(pods.map((p) => p.spec.containers[0]!.image)).toEqual([HNC_IMAGE_NEXT, HNC_IMAGE_NEXT]);
    expect(pods.map((p) => p.metadata.name).filter((n) => oldPods.includes(n))).toEqual([]);
    expect(stats.errors).toEqual([]);
    expect(stats.failed).toBe(0);
  });
});
