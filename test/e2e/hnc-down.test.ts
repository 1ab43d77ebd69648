// Issue #31 on the real node: HNC installed from the shipped image and install-hrq.yaml (2 replicas,
// webhooks through their Service), then taken down in two ways that leave its webhook
// configurations and admission policies behind: the Deployment scaled to zero (the pods drain and
// stop), and the pods killed (scaled to zero, then their containers killed with SIGKILL: no drain). Each time the operation
// table of test/support/hnc-down.ts (the one the integration test runs with HNC's process frozen)
// runs as a matrix: ordinary writes succeed in under 1 s, the API server's policies refuse what
// needs no forest with HNC's message, the rest is refused naming HNC's webhook. Then HNC is scaled
// back and works again. The file ends with install.yaml in place again (ensureInstalled).
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CONFIGURATION_PATHS } from '../../webhooks/configurations.js';
import { POLICY_OBJECTS, policyPath } from '../../webhooks/policies.js';
import { DEPLOY_HRQ_KUSTOMIZATION, renderInstall } from '../../scripts/build-install.js';
import { isNotFound } from '../../kube/client.js';
import { TestCluster, eventually } from '../support/cluster.js';
import { WEBHOOK_PROBE_ANCHOR, treeDepths } from '../support/hnc.js';
import {
  cleanUpDownScenario,
  downRows,
  expectKubectlShowsPolicyRefusal,
  attempt,
  prepareDownScenario,
  runDownRow,
  type DownRun,
  type DownScenario,
} from '../support/hnc-down.js';
import { HNC_IMAGE } from './global-setup.js';
import {
  DEPLOYMENT,
  HNC_NAMESPACE,
  type Pod,
  admin,
  ensureInstalled,
  managerPods,
  waitForWebhooksThroughService,
  waitRolledOut,
} from './support.js';

const HNC = '/apis/hnc.x-k8s.io/v1alpha2';
let cluster: TestCluster;
let scenario: DownScenario | undefined;
const created: string[] = [];

interface WebhookConfiguration {
  webhooks?: Array<{ name: string }>;
}
const webhookNames = async () =>
  (
    await Promise.all(
      Object.values(CONFIGURATION_PATHS).map((p) =>
        cluster.admin.get<WebhookConfiguration>(p).then((c) => (c.webhooks ?? []).map((w) => w.name)),
      ),
    )
  ).flat();

beforeAll(async () => {
  cluster = await TestCluster.connect();
  await ensureInstalled(cluster);
  // The HRQ variant, so that the HRQ rows run too (afterAll puts install.yaml back).
  const installHrq = join(inject('stateDir'), 'install-hrq.yaml');
  writeFileSync(installHrq, renderInstall({ kustomization: DEPLOY_HRQ_KUSTOMIZATION, image: HNC_IMAGE }).yaml);
  const r = await admin(cluster, ['apply', '--server-side', '--force-conflicts', '-f', installHrq]);
  if (r.code !== 0) throw new Error(`kubectl apply failed: ${r.stderr}`);
  await waitRolledOut(cluster.admin);
  await eventually(
    async () => ((await webhookNames()).includes('hrqquantities.hnc.x-k8s.io') ? true : undefined),
    'the HRQ webhooks',
    60_000,
  );
  await waitForWebhooksThroughService(cluster);
  scenario = await prepareDownScenario(cluster, true);
});

afterAll(async () => {
  if (!cluster) return;
  await ensureInstalled(cluster);
  await eventually(
    async () => ((await webhookNames()).some((n) => n.startsWith('hrq')) ? undefined : true),
    'the HRQ webhooks gone with install.yaml',
    60_000,
  );
  if (scenario) await cleanUpDownScenario(scenario, created);
  await cluster.cleanup();
});

const scale = async (replicas: number) => {
  const r = await admin(cluster, ['scale', '-n', HNC_NAMESPACE, `deployment/${DEPLOYMENT}`, `--replicas=${replicas}`]);
  expect(r.code, r.stderr).toBe(0);
};

/**
 * Waits until no manager pod exists and the webhook Service has no endpoint left, then until the
 * node's Service rules say so too: until then the API server's calls still go to the last pods'
 * addresses and wait for their timeouts. Returns how long that last part took.
 */
async function waitHncGone(): Promise<number> {
  await eventually(async () => ((await managerPods(cluster.admin)).length === 0 ? true : undefined), 'no manager pod', 120_000);
  await eventually(
    async () => {
      const slices = await cluster.admin.get<{ items: Array<{ endpoints?: unknown[] | null }> }>(
        `/apis/discovery.k8s.io/v1/namespaces/${HNC_NAMESPACE}/endpointslices`,
        { labelSelector: 'kubernetes.io/service-name=hnc-webhook-service' },
      );
      return slices.items.every((s) => !s.endpoints?.length) ? true : undefined;
    },
    'no endpoint behind the webhook Service',
    60_000,
  );
  const t0 = performance.now();
  await eventually(
    async () => {
      const o = await attempt(() =>
        cluster.admin.create(`${HNC}/namespaces/kube-system/subnamespaceanchors`, JSON.parse(WEBHOOK_PROBE_ANCHOR), { dryRun: 'All' }),
      );
      return o.message.includes('failed calling webhook "subnamespaceanchors.hnc.x-k8s.io"') && o.ms < 1000 ? true : undefined;
    },
    'the API server to find no webhook server at once',
    60_000,
  );
  return performance.now() - t0;
}

/**
 * Kills the manager's containers (SIGKILL, through the node's containerd: no drain, no exit
 * handler) once the Deployment is scaled to zero, so that nothing replaces them.
 */
async function killManagers(): Promise<void> {
  await scale(0);
  const pods = await eventually(async () => {
    const p = await managerPods(cluster.admin);
    return p.every((x) => x.metadata.deletionTimestamp) ? p : undefined;
  }, 'the pods to be terminating');
  const ids = pods
    .flatMap((p) => (p as Pod & { status: { containerStatuses?: Array<{ containerID?: string }> } }).status.containerStatuses ?? [])
    .flatMap((c) => (c.containerID ? [c.containerID.replace(/^containerd:\/\//, '')] : []));
  for (const id of ids) {
    const r = spawnSync('ctr', ['-a', inject('containerdSocket'), '-n', 'k8s.io', 'tasks', 'kill', '--all', '--signal', 'SIGKILL', id], {
      encoding: 'utf8',
    });
    // A container that already exited (drained meanwhile) has no task left to kill.
    if (r.status !== 0 && !/not found|process already finished/i.test(r.stderr)) throw new Error(`ctr tasks kill ${id}: ${r.stderr}`);
  }
}

/** The configurations, policies and bindings HNC wrote are still there: HNC down, not uninstalled. */
async function expectAdmissionObjectsLeftBehind(): Promise<void> {
  for (const path of [...Object.values(CONFIGURATION_PATHS), ...POLICY_OBJECTS.map((o) => policyPath(o.kind, o.name))])
    await cluster.admin.get(path);
  expect(await webhookNames()).toContain('hierarchyconfigurations.hnc.x-k8s.io');
}

function matrix(title: string, takeDown: () => Promise<void>) {
  describe(title, () => {
    const results: string[] = [];
    let run: DownRun;
    beforeAll(async () => {
      await takeDown();
      const t0 = performance.now();
      const settle = await waitHncGone();
      results.push(
        `HNC gone in ${((performance.now() - t0) / 1000).toFixed(1)} s; the node's Service rules followed within ${(settle / 1000).toFixed(1)} s`,
      );
      await expectAdmissionObjectsLeftBehind();
      run = { ...scenario!, newNamespace: TestCluster.uniqueName('down-new') };
      created.push(run.newNamespace);
    });
    afterAll(() => process.stderr.write(`\ne2e HNC down (${title}): operation, outcome, time\n${results.join('\n')}\n`));

    // No webhook can be reached: the fail-open ones are skipped and the fail-closed ones refuse at once.
    for (const row of downRows({ hrq: true }))
      it(`${row.expected.kind}: ${row.name}`, async () => {
        await runDownRow(row, run, { succeeds: 1000, succeedsFailOpen: 1000, refusedByApiServer: 1000, unavailable: 1000 }, (l) =>
          results.push(l),
        );
      });

    it('shows the API server’s refusal well in kubectl', () => expectKubectlShowsPolicyRefusal(run));

    it('works again once scaled back to 2 replicas: a subnamespace appears', async () => {
      const t0 = performance.now();
      await scale(2);
      await waitRolledOut(cluster.admin);
      await waitForWebhooksThroughService(cluster);
      const back = performance.now() - t0;
      const { parent } = scenario!;
      const name = TestCluster.uniqueName('down-back');
      await cluster.admin.create(`${HNC}/namespaces/${parent}/subnamespaceanchors`, {
        apiVersion: 'hnc.x-k8s.io/v1alpha2',
        kind: 'SubnamespaceAnchor',
        metadata: { name },
      });
      created.push(name);
      await eventually(
        async () => ((await treeDepths(cluster.admin, name))?.[parent] === 1 ? true : undefined),
        'the subnamespace',
        60_000,
      );
      results.push(`scaled back to 2 and answering through the Service in ${(back / 1000).toFixed(1)} s; subnamespace ${name} created`);
      // Gone again before the next case (its anchor first: a subnamespace is deleted through it).
      await cluster.admin.delete(`${HNC}/namespaces/${parent}/subnamespaceanchors/${name}`);
      await eventually(
        () =>
          cluster.admin.get(`/api/v1/namespaces/${name}`).then(
            () => undefined,
            (e: unknown) => (isNotFound(e) ? true : Promise.reject(e)),
          ),
        'the subnamespace deleted',
        60_000,
      );
    });
  });
}

describe('HNC down on the real node', () => {
  matrix('the Deployment scaled to zero', () => scale(0));
  matrix('the pods killed', killManagers);
});
