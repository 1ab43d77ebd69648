// HNC installed with `helm install` of charts/hnc (docs/deploy.md, "Helm") on the real node: the
// image's pods turn Ready, one takes the Lease, and the API server's call through the Service
// shows HNC refusing a cycle. The install.yaml objects other files apply are removed first (Helm
// adopts no object it did not create; the CRDs and HNC's namespace stay, as Helm expects), and the
// release is uninstalled after, as the docs say, so the next file applies install.yaml again.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ROOT, renderInstall } from '../../scripts/build-install.js';
import { findHelm } from '../../scripts/helm.js';
import { TestCluster, eventually, eventuallyEqual, kubectl } from '../support/cluster.js';
import { setParent, treeDepths } from '../support/hnc.js';
import { helmIn, type ProcessResult } from '../support/process.js';
import { HNC_IMAGE } from './global-setup.js';
import { HNC_NAMESPACE, leaseHolder, managerPods, waitForWebhooksThroughService, waitRolledOut } from './support.js';

let cluster: TestCluster;
let helm: (args: string[]) => Promise<ProcessResult>;

/** Deletes HNC's webhook configurations once no manager pod is left to write them again. */
async function removeWebhookConfigurations(): Promise<void> {
  await eventually(
    async () => ((await managerPods(cluster.admin)).length === 0 ? true : undefined),
    'the manager pods to be gone',
    120_000,
  );
  for (const kind of [
    'validatingwebhookconfiguration/hnc-validating-webhook-configuration',
    'mutatingwebhookconfiguration/hnc-mutating-webhook-configuration',
  ]) {
    const r = await kubectl(cluster.kubeconfigPath, ['delete', '--ignore-not-found', kind]);
    if (r.code !== 0) throw new Error(`kubectl delete ${kind}: ${r.stderr}`);
  }
}

beforeAll(async () => {
  cluster = await TestCluster.connect();
  helm = helmIn(await findHelm(), cluster.kubeconfigPath, inject('stateDir'));
  // What an earlier file applied from install.yaml, except the CRDs and the namespace (kept, so
  // the hierarchy and the webhook CA stay).
  const previous = renderInstall({ image: HNC_IMAGE }).objects.filter(
    (o) => o.kind !== 'Namespace' && o.kind !== 'CustomResourceDefinition',
  );
  const file = join(inject('stateDir'), 'helm-e2e-previous.json');
  writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: previous }));
  const deleted = await kubectl(cluster.kubeconfigPath, ['delete', '--ignore-not-found', '--wait=true', '-f', file]);
  if (deleted.code !== 0) throw new Error(`removing the install.yaml objects failed: ${deleted.stderr}`);
  await removeWebhookConfigurations();
});
afterAll(async () => {
  await helm(['uninstall', 'hnc', '--namespace', HNC_NAMESPACE, '--wait']);
  await removeWebhookConfigurations();
  await cluster?.cleanup();
});

describe('helm install of charts/hnc on the node', () => {
  it('runs Ready replicas of the image, one holding the Lease, whose webhooks refuse a cycle', async () => {
    const [repository, tag] = HNC_IMAGE.split(/:(?=[^:/]+$)/);
    const installed = await helm([
      'install',
      'hnc',
      join(ROOT, 'charts', 'hnc'),
      '--namespace',
      HNC_NAMESPACE,
      '--create-namespace',
      '--set',
      `image.repository=${repository}`,
      '--set',
      `image.tag=${tag}`,
      '--wait',
      '--timeout',
      '4m',
    ]);
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toContain('STATUS: deployed');
    const pods = await waitRolledOut(cluster.admin);
    expect(pods).toHaveLength(2);
    expect(pods.map((p) => p.spec.containers[0]!.image)).toEqual([HNC_IMAGE, HNC_IMAGE]);
    expect(pods.map((p) => p.metadata.labels?.['app.kubernetes.io/name'])).toEqual(['hnc-ts', 'hnc-ts']);
    // The removed install's pod may hold the Lease until it lapses: wait for one of the release's.
    const names = pods.map((p) => p.metadata.name);
    const holder = await eventually(
      async () => {
        const h = await leaseHolder(cluster.admin);
        return h !== undefined && names.includes(h) ? h : undefined;
      },
      'a leader among the release pods',
      60_000,
    );
    expect(names).toContain(holder);
    // Ready pods are not yet a Service kube-proxy routes to: wait for HNC's own answer through it.
    await waitForWebhooksThroughService(cluster);

    const a = await cluster.namespace('e2e-helm-a');
    const b = await cluster.namespace('e2e-helm-b');
    await setParent(cluster.admin, b, a);
    await eventuallyEqual(() => treeDepths(cluster.admin, b), { [b]: 0, [a]: 1 }, 'b under a');
    const hc = {
      apiVersion: 'hnc.x-k8s.io/v1alpha2',
      kind: 'HierarchyConfiguration',
      metadata: { name: 'hierarchy', namespace: a },
      spec: { parent: b },
    };
    const cycle = await kubectl(cluster.kubeconfigPath, ['apply', '-f', '-'], JSON.stringify(hc));
    expect(cycle.code).toBe(1);
    expect(cycle.stderr).toContain(
      `admission webhook "hierarchyconfigurations.hnc.x-k8s.io" denied the request: Operation cannot be fulfilled on hierarchyconfigurations.hnc.x-k8s.io "hierarchy": illegal parent: cycle when making "${b}" the parent of "${a}": current ancestry is ${b} -> ${a}`,
    );
  });
});
