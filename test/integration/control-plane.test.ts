// Proves the local control plane is a real one: the namespace and quota controllers run, RBAC
// (with aggregated roles) decides for minted users, and the apiserver calls webhooks by URL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { ApiError } from '../../kube/client.js';
import { isNotFound } from '../../kube/client.js';
import { TestCluster, eventually, kubectl, refusal } from '../support/cluster.js';

let cluster: TestCluster;
beforeAll(async () => {
  cluster = await TestCluster.connect();
});
afterAll(() => cluster.cleanup());

describe('the local control plane', () => {
  it('deletes a namespace with content, and it is really gone (namespace controller)', async () => {
    const name = TestCluster.uniqueName('gone');
    await cluster.admin.create('/api/v1/namespaces', { metadata: { name } });
    await cluster.admin.create(`/api/v1/namespaces/${name}/configmaps`, { metadata: { name: 'content' }, data: { a: '1' } });
    await cluster.admin.delete(`/api/v1/namespaces/${name}`);
    const gone = await eventually(
      () =>
        cluster.admin.get(`/api/v1/namespaces/${name}`).then(
          () => undefined,
          (e: unknown) => (isNotFound(e) ? true : Promise.reject(e)),
        ),
      `namespace ${name} to be finalized`,
    );
    expect(gone).toBe(true);
  });

  it('deletes a PVC, and the namespace holding one (PVC protection controller)', async () => {
    const name = TestCluster.uniqueName('pvc');
    await cluster.admin.create('/api/v1/namespaces', { metadata: { name } });
    const claim = { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
    await cluster.admin.create(`/api/v1/namespaces/${name}/persistentvolumeclaims`, claim);
    await cluster.admin.create(`/api/v1/namespaces/${name}/persistentvolumeclaims`, { ...claim, metadata: { name: 'kept' } });
    const absent = (path: string) =>
      cluster.admin.get(path).then(
        () => undefined,
        (e: unknown) => (isNotFound(e) ? true : Promise.reject(e)),
      );
    await cluster.admin.delete(`/api/v1/namespaces/${name}/persistentvolumeclaims/data`);
    expect(await eventually(() => absent(`/api/v1/namespaces/${name}/persistentvolumeclaims/data`), 'the PVC to go')).toBe(true);
    await cluster.admin.delete(`/api/v1/namespaces/${name}`);
    expect(await eventually(() => absent(`/api/v1/namespaces/${name}`), `namespace ${name} with a PVC to go`)).toBe(true);
  });

  it('fills in status.hard of a ResourceQuota (quota controller)', async () => {
    const ns = await cluster.namespace('quota');
    await cluster.admin.create(`/api/v1/namespaces/${ns}/resourcequotas`, { metadata: { name: 'q' }, spec: { hard: { configmaps: '5' } } });
    const hard = await eventually(async () => {
      const q = await cluster.admin.get<{ status?: { hard?: Record<string, string>; used?: Record<string, string> } }>(
        `/api/v1/namespaces/${ns}/resourcequotas/q`,
      );
      return q.status?.hard && q.status.used ? q.status.hard : undefined;
    }, 'the quota status');
    expect(hard).toEqual({ configmaps: '5' });
  });

  it('forbids a user with no bindings to create a namespace', async () => {
    const nobody = await cluster.user('nobody');
    const err = await refusal(nobody.client.create('/api/v1/namespaces', { metadata: { name: TestCluster.uniqueName('nope') } }));
    expect(err.code).toBe(403);
    expect(err.message).toContain('User "nobody" cannot create resource "namespaces"');
  });

  it('lets an admin of one namespace create a RoleBinding there but not in another (RBAC, aggregation, minted users)', async () => {
    const mine = await cluster.namespace('alice');
    const other = await cluster.namespace('other');
    await cluster.admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${mine}/rolebindings`, {
      metadata: { name: 'alice-admin' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
    });
    const alice = await cluster.user('alice', ['team-a']);
    const binding = (name: string) => ({
      metadata: { name },
      // Granting `edit` needs every permission of `edit`: true only if aggregation filled `admin`.
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'bob' }],
    });
    await expect(
      alice.client.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${mine}/rolebindings`, binding('bob-edit')),
    ).resolves.toBeTruthy();
    const err = await refusal(
      alice.client.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${other}/rolebindings`, binding('bob-edit')),
    );
    expect(err.code).toBe(403);
  });

  it('calls an admission webhook registered by URL on 127.0.0.1', async () => {
    const ns = await cluster.namespace('webhook', { 'hnc-test/webhook': 'on' });
    const ca = await cluster.ca();
    const serving = await ca.issue({ commonName: 'test-webhook', usage: 'server', ips: ['127.0.0.1'], dnsNames: ['localhost'] });
    const calls: string[] = [];
    const server = https.createServer({ cert: serving.cert, key: serving.key }, (req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const review = JSON.parse(body) as { request: { uid: string; name: string } };
        calls.push(review.request.name);
        const allowed = review.request.name !== 'forbidden';
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            apiVersion: 'admission.k8s.io/v1',
            kind: 'AdmissionReview',
            response: {
              uid: review.request.uid,
              allowed,
              status: allowed ? undefined : { code: 403, reason: 'Forbidden', message: 'configmaps may not be called "forbidden"' },
            },
          }),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const name = TestCluster.uniqueName('test-webhook');
    try {
      await cluster.admin.create('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
        metadata: { name },
        webhooks: [
          {
            name: 'configmaps.test.hnc.x-k8s.io',
            clientConfig: { url: `https://127.0.0.1:${port}/validate`, caBundle: Buffer.from(ca.certPem).toString('base64') },
            rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
            namespaceSelector: { matchLabels: { 'hnc-test/webhook': 'on' } },
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
            failurePolicy: 'Fail',
            timeoutSeconds: 5,
          },
        ],
      });
      // The apiserver uses a new configuration only once its informer has seen it: probe for that.
      const err = await eventually(
        () =>
          cluster.admin.create(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'forbidden' } }, { dryRun: 'All' }).then(
            () => undefined,
            (e: unknown) => e as ApiError,
          ),
        'the webhook to take effect',
      );
      expect(err.code).toBe(403);
      expect(err.message).toContain('configmaps may not be called "forbidden"');
      // What a user sees in kubectl.
      const out = await kubectl(cluster.kubeconfigPath, ['create', 'configmap', 'forbidden', '-n', ns]);
      expect(out.code).toBe(1);
      expect(out.stderr.trim()).toBe(
        'error: failed to create configmap: admission webhook "configmaps.test.hnc.x-k8s.io" denied the request: configmaps may not be called "forbidden"',
      );
      await expect(cluster.admin.create(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'fine' } })).resolves.toBeTruthy();
      expect(calls).toContain('fine');
    } finally {
      await cluster.admin.delete(`/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${name}`);
      server.close();
    }
  });
});
