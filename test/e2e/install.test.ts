// The shipped install manifest and image, running as pods on a real node: both replicas Ready,
// readiness gated on cache sync, /metrics from a pod and through its Service, and the API
// server calling the webhooks through the Service for a non-admin user.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { TestCluster, eventually, eventuallyEqual, kubectl } from '../support/cluster.js';
import { setParent, treeDepths } from '../support/hnc.js';
import { HNC_NAMESPACE, ensureInstalled, isReady, leaseHolder, type Pod } from './support.js';

let cluster: TestCluster;
let pods: Pod[];

beforeAll(async () => {
  cluster = await TestCluster.connect();
  pods = await ensureInstalled(cluster);
});
afterAll(() => cluster?.cleanup());

const pinnedNode = readFileSync(join(import.meta.dirname, '..', '..', '.nvmrc'), 'utf8')
  .trim()
  .replace(/^v/, '');

const httpGet = async (url: string): Promise<{ status: number; body: string }> => {
  const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  return { status: res.status, body: await res.text() };
};

describe('install.yaml on a real node', () => {
  it('runs both replicas Ready from the local image, one of them holding the Lease', async () => {
    expect(pods).toHaveLength(2);
    for (const p of pods) {
      expect(isReady(p)).toBe(true);
      expect(p.spec.containers[0]!.image).toBe('localhost/hnc-ts:e2e');
    }
    expect(pods.map((p) => p.metadata.name)).toContain(await leaseHolder(cluster.admin));
  });

  it('serves /metrics from a pod, directly and through the metrics Service', async () => {
    for (const pod of pods) {
      const direct = await httpGet(`http://${pod.status.podIP}:8080/metrics`);
      expect(direct.status).toBe(200);
      expect(direct.body).toMatch(/^hnc_namespaces /m);
      // The image runs the Node.js LTS the project pins (.nvmrc), whose node and npm the local base image holds.
      expect(direct.body).toContain(`hnc_process_nodejs_version_info{version="v${pinnedNode}"`);
    }
    const svc = await cluster.admin.get<{ spec: { clusterIP: string } }>(
      `/api/v1/namespaces/${HNC_NAMESPACE}/services/hnc-controller-manager-metrics-service`,
    );
    // kube-proxy programs each Service as its endpoints arrive: wait for this one's.
    const viaService = await eventually(
      () => httpGet(`http://${svc.spec.clusterIP}:8080/metrics`),
      'the metrics Service to answer',
      60_000,
    );
    expect(viaService.status).toBe(200);
    expect(viaService.body).toContain('hnc_webhook_duration_seconds');
  });

  it('keeps a replica unready until its caches sync', async () => {
    // The same image and probes as the Deployment's, as a service account that may read the CRDs
    // (the start-up check) but not list namespaces: the caches cannot sync, so it must stay unready
    // while alive; once allowed, it syncs and turns ready.
    const name = TestCluster.uniqueName('e2e-gated');
    const rbac = '/apis/rbac.authorization.k8s.io/v1';
    const deployment = await cluster.admin.get<{
      spec: { template: { spec: Record<string, unknown> & { containers: Array<Record<string, unknown>> } } };
    }>(`/apis/apps/v1/namespaces/${HNC_NAMESPACE}/deployments/hnc-controller-manager`);
    const template = deployment.spec.template.spec;
    const container = {
      ...template.containers[0]!,
      args: ['--no-webhooks', '--health-probe-bind-address=:8081', '--metrics-addr=:8080', '--enable-leader-election'],
    };
    await cluster.admin.create(`/api/v1/namespaces/${HNC_NAMESPACE}/serviceaccounts`, { metadata: { name } });
    const cleanup: string[] = [
      `/api/v1/namespaces/${HNC_NAMESPACE}/serviceaccounts/${name}`,
      `${rbac}/clusterroles/${name}`,
      `${rbac}/clusterrolebindings/${name}`,
      `${rbac}/clusterrolebindings/${name}-manager`,
      `${rbac}/namespaces/${HNC_NAMESPACE}/rolebindings/${name}-leader`,
      `/api/v1/namespaces/${HNC_NAMESPACE}/pods/${name}`,
    ];
    const subject = [{ kind: 'ServiceAccount', name, namespace: HNC_NAMESPACE }];
    try {
      await cluster.admin.create(`${rbac}/clusterroles`, {
        metadata: { name },
        rules: [{ apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: ['get'] }],
      });
      await cluster.admin.create(`${rbac}/clusterrolebindings`, {
        metadata: { name },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
        subjects: subject,
      });
      await cluster.admin.create(`/api/v1/namespaces/${HNC_NAMESPACE}/pods`, {
        metadata: { name, labels: { app: name } },
        spec: { ...template, serviceAccountName: name, containers: [container], affinity: undefined, topologySpreadConstraints: undefined },
      });
      const ip = await eventually(
        async () => {
          const p = await cluster.admin.get<Pod & { status: { containerStatuses?: Array<{ started?: boolean; restartCount: number }> } }>(
            `/api/v1/namespaces/${HNC_NAMESPACE}/pods/${name}`,
          );
          return p.status.containerStatuses?.[0]?.started ? p.status.podIP : undefined;
        },
        'the gated replica to start (its startup probe on /healthz passed)',
        120_000,
      );
      expect((await httpGet(`http://${ip}:8081/healthz`)).status).toBe(200);
      expect(await httpGet(`http://${ip}:8081/readyz`)).toEqual({ status: 503, body: 'not ready: caches not synced yet' });
      const pod = await cluster.admin.get<Pod>(`/api/v1/namespaces/${HNC_NAMESPACE}/pods/${name}`);
      expect(isReady(pod)).toBe(false);

      await cluster.admin.create(`${rbac}/clusterrolebindings`, {
        metadata: { name: `${name}-manager` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'hnc-manager-role' },
        subjects: subject,
      });
      await cluster.admin.create(`${rbac}/namespaces/${HNC_NAMESPACE}/rolebindings`, {
        metadata: { name: `${name}-leader` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'hnc-leader-election' },
        subjects: subject,
      });
      await eventually(
        async () => (isReady(await cluster.admin.get<Pod>(`/api/v1/namespaces/${HNC_NAMESPACE}/pods/${name}`)) ? true : undefined),
        'the replica to turn Ready once its caches sync',
        120_000,
      );
      expect(await httpGet(`http://${ip}:8081/readyz`)).toEqual({ status: 200, body: 'ok' });
    } finally {
      for (const path of cleanup.reverse()) await cluster.admin.delete(path).catch(() => undefined);
    }
  });

  it('the API server reaches the webhooks through the Service: a non-admin user sees HNC refuse a cycle, and its policy an edit of a copy', async () => {
    const a = await cluster.namespace('e2e-wh-a');
    const b = await cluster.namespace('e2e-wh-b');
    await setParent(cluster.admin, b, a);
    await eventuallyEqual(() => treeDepths(cluster.admin, b), { [b]: 0, [a]: 1 }, 'b under a');
    const user = await cluster.user(TestCluster.uniqueName('lead'));
    // Admin of the parent, and so (by HNC's copy of the RoleBinding) of the child.
    await cluster.admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${a}/rolebindings`, {
      metadata: { name: 'lead-admin' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user.name }],
    });
    await eventually(
      () => cluster.admin.get(`/apis/rbac.authorization.k8s.io/v1/namespaces/${b}/rolebindings/lead-admin`).then(() => true),
      'the RoleBinding copied into the child',
    );
    const hc = {
      apiVersion: 'hnc.x-k8s.io/v1alpha2',
      kind: 'HierarchyConfiguration',
      metadata: { name: 'hierarchy', namespace: a },
      spec: { parent: b },
    };
    const cycle = await kubectl(user.kubeconfigPath, ['apply', '-f', '-'], JSON.stringify(hc));
    expect(cycle.code).toBe(1);
    expect(cycle.stderr).toContain(
      `admission webhook "hierarchyconfigurations.hnc.x-k8s.io" denied the request: Operation cannot be fulfilled on hierarchyconfigurations.hnc.x-k8s.io "hierarchy": illegal parent: cycle when making "${b}" the parent of "${a}": current ancestry is ${b} -> ${a}`,
    );

    await cluster.admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${a}/roles`, {
      metadata: { name: 'readers' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
    });
    await eventually(
      () => cluster.admin.get(`/apis/rbac.authorization.k8s.io/v1/namespaces/${b}/roles/readers`).then(() => true),
      'the Role copied into the child',
    );
    const edit = await kubectl(user.kubeconfigPath, ['label', 'role', 'readers', '-n', b, 'team=x']);
    expect(edit.code).toBe(1);
    // Copies are guarded by the API server itself (an admission policy HNC installs), so that they
    // stay read-only while HNC is down.
    expect(edit.stderr).toContain(
      `ValidatingAdmissionPolicy 'propagated-copies.hnc.x-k8s.io' with binding 'propagated-copies.hnc.x-k8s.io' denied request`,
    );
    expect(edit.stderr).toContain(`cannot modify object propagated from namespace "${a}"`);
    // The webhook configuration names the Service, not a URL: the calls went through it.
    const wh = await cluster.admin.get<{
      webhooks: Array<{ clientConfig: { service?: { name: string; namespace: string }; url?: string } }>;
    }>('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/hnc-validating-webhook-configuration');
    for (const w of wh.webhooks)
      expect(w.clientConfig).toMatchObject({ service: { name: 'hnc-webhook-service', namespace: HNC_NAMESPACE } });
    expect(inject('installYaml')).toMatch(/install\.yaml$/);
  });
});
