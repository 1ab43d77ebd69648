// The Helm chart on a real API server (a control plane of its own: the shared one already holds
// HNC's objects, which Helm would refuse to adopt). `helm install` creates every object the chart
// renders, CRDs included; HNC, run on this machine as the chart's service account (no node runs pods
// here), works with the chart's RBAC alone: it propagates, and its webhooks refuse a cycle;
// `helm upgrade` changes replicas and grants more kinds through the aggregated role; `helm
// uninstall` removes the release and keeps the CRDs, HNC's namespace and every user object.
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHnc, type Hnc } from '../../cmd/hnc.js';
import { HierarchyPolicy } from '../../core/hierarchy/policy.js';
import { KubeClient, isNotFound } from '../../kube/client.js';
import { MANAGER_GROUPS, MANAGER_SERVICE_ACCOUNT, MANAGER_USER } from '../../kube/install.js';
import { createLogger } from '../../kube/log.js';
import { LocalControlPlane } from '../../local-cluster/index.js';
import { findHelm } from '../../scripts/helm.js';
import { ROOT } from '../../scripts/build-install.js';
import { eventually, eventuallyEqual, kubectl } from '../support/cluster.js';
import { setParent, treeDepths } from '../support/hnc.js';
import { waitForWebhooks } from '../support/manager.js';
import { helmIn, type ProcessResult } from '../support/process.js';

const CHART = join(ROOT, 'charts', 'hnc');
const NS = MANAGER_SERVICE_ACCOUNT.namespace;
let cp: LocalControlPlane;
let admin: KubeClient;
let helm: (args: string[]) => Promise<ProcessResult>;
let hnc: Hnc | undefined;

beforeAll(async () => {
  const helmBin = await findHelm();
  cp = await LocalControlPlane.start({ log: () => undefined });
  helm = helmIn(helmBin, cp.kubeconfigPath, cp.stateDir);
  admin = await KubeClient.fromKubeconfig(cp.kubeconfigPath);
}, 180_000);
afterAll(async () => {
  await hnc?.stop();
  await cp?.stop();
});

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
}
const exists = (path: string) =>
  admin.get(path).then(
    () => true,
    (e: unknown) => (isNotFound(e) ? false : Promise.reject(e)),
  );
const PLURAL: Record<string, string> = {
  ServiceAccount: 'serviceaccounts',
  Service: 'services',
  ClusterRole: 'clusterroles',
  ClusterRoleBinding: 'clusterrolebindings',
  Role: 'roles',
  RoleBinding: 'rolebindings',
  Deployment: 'deployments',
  PodDisruptionBudget: 'poddisruptionbudgets',
  NetworkPolicy: 'networkpolicies',
};
/** The API path of an object of the chart. */
function pathOf(o: Obj): string {
  const plural = PLURAL[o.kind];
  if (!plural) throw new Error(`the chart renders a ${o.kind}: add its plural here`);
  const base = o.apiVersion.includes('/') ? `/apis/${o.apiVersion}` : `/api/${o.apiVersion}`;
  return `${base}${o.metadata.namespace ? `/namespaces/${o.metadata.namespace}` : ''}/${plural}/${o.metadata.name}`;
}
const managerRules = async () =>
  (await admin.get<{ rules?: Array<{ resources?: string[] }> }>('/apis/rbac.authorization.k8s.io/v1/clusterroles/hnc-manager-role'))
    .rules ?? [];

describe('helm install, upgrade and uninstall of charts/hnc', () => {
  let manifest: Obj[] = [];

  it('installs every object of the chart, CRDs first', async () => {
    const installed = await helm(['install', 'hnc', CHART, '--namespace', NS, '--create-namespace']);
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toContain('STATUS: deployed');
    const got = await helm(['get', 'manifest', 'hnc', '--namespace', NS]);
    manifest = parseAllDocuments(got.stdout)
      .map((d) => d.toJSON() as Obj | null)
      .filter((o): o is Obj => o !== null);
    expect(manifest.map((o) => o.kind)).toEqual(expect.arrayContaining(['Deployment', 'Service', 'ClusterRole', 'PodDisruptionBudget']));
    for (const o of manifest) expect(await exists(pathOf(o)), `${o.kind} ${o.metadata.name}`).toBe(true);
    for (const crd of ['hierarchyconfigurations', 'subnamespaceanchors', 'hncconfigurations', 'hierarchicalresourcequotas'])
      expect(await exists(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd}.hnc.x-k8s.io`), crd).toBe(true);
    // The aggregation controller fills the manager's role from the chart's labelled ClusterRoles.
    await eventually(
      async () => ((await managerRules()).some((r) => r.resources?.includes('rolebindings')) ? true : undefined),
      'hnc-manager-role to aggregate the chart roles',
    );
  });

  it("runs HNC as the chart's service account: it propagates, and its webhooks refuse a cycle", async () => {
    const identity = await cp.mintUser(MANAGER_USER, MANAGER_GROUPS);
    hnc = await startHnc({
      client: await KubeClient.fromKubeconfig(identity.kubeconfigPath),
      policy: new HierarchyPolicy({}),
      namespace: NS,
      logger: createLogger({ level: 'silent' }),
      workers: 2,
      webhooks: { port: 0, host: '127.0.0.1', endpoint: (port) => ({ url: `https://127.0.0.1:${port}` }) },
    });
    for (const name of ['org', 'team']) await admin.create('/api/v1/namespaces', { metadata: { name } });
    await setParent(admin, 'team', 'org');
    await eventuallyEqual(() => treeDepths(admin, 'team'), { team: 0, org: 1 }, 'team under org');
    await admin.create('/apis/rbac.authorization.k8s.io/v1/namespaces/org/roles', {
      metadata: { name: 'readers' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
    });
    await eventually(
      async () => ((await exists('/apis/rbac.authorization.k8s.io/v1/namespaces/team/roles/readers')) ? true : undefined),
      'the copy',
    );
    const cycle = JSON.stringify({
      apiVersion: 'hnc.x-k8s.io/v1alpha2',
      kind: 'HierarchyConfiguration',
      metadata: { name: 'hierarchy', namespace: 'org' },
      spec: { parent: 'team' },
    });
    await waitForWebhooks(cp.kubeconfigPath);
    const refused = await kubectl(cp.kubeconfigPath, ['apply', '-f', '-'], cycle);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'admission webhook "hierarchyconfigurations.hnc.x-k8s.io" denied the request: Operation cannot be fulfilled on hierarchyconfigurations.hnc.x-k8s.io "hierarchy": illegal parent: cycle when making "team" the parent of "org": current ancestry is team -> org',
    );
  });

  it('upgrades: replicas, and more kinds granted to the manager through its aggregated role', async () => {
    const upgraded = await helm([
      'upgrade',
      'hnc',
      CHART,
      '--namespace',
      NS,
      '--reuse-values',
      '--set',
      'replicas=3',
      '--set-json',
      'extraPropagatedResources=[{"apiGroup":"","resources":["secrets"]}]',
    ]);
    expect(upgraded.code, upgraded.stderr).toBe(0);
    expect(upgraded.stdout).toContain('REVISION: 2');
    const deployment = await admin.get<{ spec: { replicas: number } }>(`/apis/apps/v1/namespaces/${NS}/deployments/hnc-controller-manager`);
    expect(deployment.spec.replicas).toBe(3);
    await eventually(
      async () => ((await managerRules()).some((r) => r.resources?.includes('secrets')) ? true : undefined),
      'hnc-manager-role to aggregate the extra kinds',
    );
  });

  it('uninstalls the release and keeps the CRDs, its namespace and every user object', async () => {
    await hnc!.stop();
    hnc = undefined;
    const removed = await helm(['uninstall', 'hnc', '--namespace', NS, '--wait']);
    expect(removed.code, removed.stderr).toBe(0);
    for (const o of manifest) expect(await exists(pathOf(o)), `${o.kind} ${o.metadata.name}`).toBe(false);
    expect(await exists('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/hierarchyconfigurations.hnc.x-k8s.io')).toBe(true);
    expect(await exists(`/api/v1/namespaces/${NS}`)).toBe(true);
    expect(await treeDepths(admin, 'team')).toEqual({ team: 0, org: 1 });
    expect(await exists('/apis/hnc.x-k8s.io/v1alpha2/namespaces/team/hierarchyconfigurations/hierarchy')).toBe(true);
    expect(await exists('/apis/rbac.authorization.k8s.io/v1/namespaces/team/roles/readers')).toBe(true);
    expect((await helm(['list', '--all-namespaces', '--short'])).stdout.trim()).toBe('');
  });
});
