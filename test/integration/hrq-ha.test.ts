// Hierarchical quotas are never over-admitted, even with two manager replicas serving webhooks
// behind one address (a round-robin TCP proxy here, a Service in a cluster) and many creations at
// once across a subtree: every usage raise is decided by the leader (docs/hrq.md).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startHnc, type Hnc } from '../../cmd/hnc.js';
import { HierarchyPolicy } from '../../core/hierarchy/policy.js';
import { KubeClient } from '../../kube/client.js';
import { MANAGER_GROUPS, MANAGER_SERVICE_ACCOUNT, MANAGER_USER } from '../../kube/install.js';
import { createLogger } from '../../kube/log.js';
import { mintUser } from '../../local-cluster/index.js';
import { TestCluster, eventually, eventuallyEqual } from '../support/cluster.js';
import { setParent } from '../support/hnc.js';
import { removeWebhookConfigurations } from '../support/manager.js';
import { roundRobinProxy, type RoundRobin } from '../support/round-robin.js';
import { postHttps } from '../../webhooks/testing.js';

let cluster: TestCluster;
const replicas: Hnc[] = [];
let proxy: RoundRobin | undefined;
const backends: number[] = [];

beforeAll(async () => {
  cluster = await TestCluster.connect();
  proxy = await roundRobinProxy(backends);
  const proxyPort = proxy.port;
  const stateDir = inject('stateDir');
  const lease = TestCluster.uniqueName('hrq-ha');
  for (const name of ['one', 'two']) {
    const identity = await mintUser(stateDir, MANAGER_USER, MANAGER_GROUPS);
    const client = await KubeClient.fromKubeconfig(identity.kubeconfigPath);
    const hnc = await startHnc({
      client,
      policy: new HierarchyPolicy(),
      namespace: MANAGER_SERVICE_ACCOUNT.namespace,
      logger: createLogger({ name: `hrq-ha-${name}`, file: join(stateDir, 'logs', `hrq-ha-${name}.log`) }),
      workers: 4,
      hrq: { syncIntervalMs: 60_000 },
      webhooks: { port: 0, host: '127.0.0.1', endpoint: () => ({ url: `https://127.0.0.1:${proxyPort}` }) },
      leaderElection: { id: lease, leaseDurationMs: 4000, renewDeadlineMs: 2600, retryPeriodMs: 500 },
    });
    replicas.push(hnc);
    backends.push(hnc.webhooks!.port);
  }
  await eventually(async () => (replicas.some((r) => r.leader?.isLeader) ? true : undefined), 'a leader');
});
afterAll(async () => {
  for (const r of replicas) await r.stop();
  await proxy?.close();
  await removeWebhookConfigurations();
  await cluster.cleanup();
});

const makeHrq = (ns: string, limit: number) =>
  cluster.admin.create(`/apis/hnc.x-k8s.io/v1alpha2/namespaces/${ns}/hierarchicalresourcequotas`, {
    apiVersion: 'hnc.x-k8s.io/v1alpha2',
    kind: 'HierarchicalResourceQuota',
    metadata: { name: 'cap' },
    spec: { hard: { services: String(limit) } },
  });
interface Rq {
  metadata: { name: string; namespace: string; resourceVersion: string };
  status?: { used?: Record<string, string> };
}
const singleton = (ns: string) => cluster.admin.get<Rq>(`/api/v1/namespaces/${ns}/resourcequotas/hrq.hnc.x-k8s.io`);
const counted = (ns: string) =>
  eventually(async () => ((await singleton(ns).catch(() => undefined))?.status?.used ? true : undefined), `${ns} counted`);

/** Sends an AdmissionReview straight to one replica's webhook server, as the API server would. */
async function review(
  port: number,
  ca: string,
  request: object,
): Promise<{ allowed: boolean; status?: { code?: number; message?: string } }> {
  const body = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request });
  const answer = await postHttps(port, ca, '/validate-hnc-x-k8s-io-v1alpha2-resourcequotasstatus', body);
  return (JSON.parse(answer.body) as { response: { allowed: boolean; status?: { code?: number; message?: string } } }).response;
}

describe('two replicas serving the quota webhooks', () => {
  it('decide concurrent raises across a subtree in one place: exactly the limit is admitted', async () => {
    const root = await cluster.namespace('ha-direct');
    const children: string[] = [];
    for (let i = 0; i < 8; i++) children.push(await cluster.namespace(`ha-d${i}`));
    for (const c of children) await setParent(cluster.admin, c, root);
    const LIMIT = 3;
    await makeHrq(root, LIMIT);
    for (const ns of children) await counted(ns);
    const rqs = await Promise.all(children.map(singleton));
    const ca = replicas[0]!.webhooks!.ca!;
    // Eight raises of one Service each, at once, alternately to each replica, as the API server's
    // quota system would send them for eight creations in eight namespaces.
    const answers = await Promise.all(
      rqs.map((rq, i) =>
        review(backends[i % 2]!, ca, {
          uid: `u${i}`,
          kind: { group: '', version: 'v1', kind: 'ResourceQuota' },
          resource: { group: '', version: 'v1', resource: 'resourcequotas' },
          subResource: 'status',
          name: rq.metadata.name,
          namespace: rq.metadata.namespace,
          operation: 'UPDATE',
          userInfo: { username: 'system:apiserver', groups: ['system:masters'] },
          object: { ...rq, status: { ...rq.status, used: { ...rq.status?.used, services: '1' } } },
          oldObject: rq,
        }),
      ),
    );
    expect(answers.filter((a) => a.allowed)).toHaveLength(LIMIT);
    for (const a of answers.filter((x) => !x.allowed))
      expect(a.status?.message).toBe(
        `exceeded hierarchical quota in namespace "${root}": "cap", requested: services=1, used: services=${LIMIT}, limited: services=${LIMIT}`,
      );
  });

  it('never admit more than an HRQ allows through the API server, with many creations at once', async () => {
    const root = await cluster.namespace('ha-root');
    const children = [await cluster.namespace('ha-a'), await cluster.namespace('ha-b'), await cluster.namespace('ha-c')];
    for (const c of children) await setParent(cluster.admin, c, root);
    const LIMIT = 4;
    await makeHrq(root, LIMIT);
    const namespaces = [root, ...children];
    for (const ns of namespaces) await counted(ns);
    const results = await Promise.allSettled(
      Array.from({ length: 24 }, (_, i) =>
        cluster.admin.create(`/api/v1/namespaces/${namespaces[i % namespaces.length]}/services`, {
          metadata: { name: `s${i}` },
          spec: { ports: [{ port: 80 }] },
        }),
      ),
    );
    const admitted = results.filter((r) => r.status === 'fulfilled').length;
    expect(admitted).toBeGreaterThan(0);
    expect(admitted).toBeLessThanOrEqual(LIMIT);
    let existing = 0;
    for (const ns of namespaces)
      existing += (await cluster.admin.get<{ items: unknown[] }>(`/api/v1/namespaces/${ns}/services`)).items.length;
    expect(existing).toBe(admitted);
    await eventuallyEqual(
      async () =>
        (
          await cluster.admin.get<{ status?: { used?: Record<string, string> } }>(
            `/apis/hnc.x-k8s.io/v1alpha2/namespaces/${root}/hierarchicalresourcequotas/cap`,
          )
        ).status?.used,
      { services: String(admitted) },
      'the HRQ counts what was admitted',
    );
  });
});
