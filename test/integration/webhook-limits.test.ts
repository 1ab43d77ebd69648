// The webhook server's limits on the real manager (docs/webhooks.md, "Limits"): reviews sent
// straight to its port, as anyone who reaches it could, and an HNCConfiguration through the API
// server whose group would have climbed out of its URL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hnc } from '../../cmd/hnc.js';
import { Webhook } from '../../core/api/constants.js';
import { TestCluster, eventually, kubectl } from '../support/cluster.js';
import { admissionReview, postHttps } from '../../webhooks/testing.js';
import { removeWebhookConfigurations, startHncWithWebhooks, waitForWebhooks } from '../support/manager.js';

let cluster: TestCluster;
let hnc: Hnc;
let ca: string;

beforeAll(async () => {
  cluster = await TestCluster.connect();
  hnc = await startHncWithWebhooks('webhook-limits');
  const secret = await cluster.admin.get<{ data: Record<string, string> }>('/api/v1/namespaces/hnc-system/secrets/hnc-webhook-server-cert');
  ca = Buffer.from(secret.data['ca.crt']!, 'base64').toString('utf8');
  await waitForWebhooks(cluster.kubeconfigPath);
});
afterAll(async () => {
  await hnc?.stop();
  await removeWebhookConfigurations();
  await cluster.cleanup();
});

const post = (path: string, body: string | Buffer) => postHttps(hnc.webhooks!.port, ca, path, body);

const hcReview = (userInfo: unknown) =>
  admissionReview({
    group: 'hnc.x-k8s.io',
    version: 'v1alpha2',
    kind: 'HierarchyConfiguration',
    resource: 'hierarchyconfigurations',
    namespace: 'default',
    name: 'hierarchy',
    operation: 'UPDATE',
    userInfo,
    object: { metadata: { name: 'hierarchy', namespace: 'default' }, spec: { parent: 'kube-system' } },
    oldObject: { metadata: { name: 'hierarchy', namespace: 'default' }, spec: {} },
  });

describe('webhook limits on the real manager', () => {
  it('answers wrong-typed fields with a 400 naming the field, and a good review as before', async () => {
    expect(await post(Webhook.hierarchyConfigurations.path, hcReview({ username: 'alice', groups: 'system:masters' }))).toMatchObject({
      status: 400,
      body: 'request.userInfo.groups must be an array, not a string\n',
    });
    const bad = JSON.parse(hcReview({ username: 'alice' })) as { request: { object: { spec: { parent: unknown } } } };
    bad.request.object.spec.parent = { name: 'x' };
    expect(await post(Webhook.hierarchyConfigurations.path, JSON.stringify(bad))).toMatchObject({
      status: 400,
      body: 'request.object.spec.parent must be a string, not an object\n',
    });
    const good = await post(Webhook.hierarchyConfigurations.path, hcReview({ username: 'alice', groups: ['system:authenticated'] }));
    expect(good.status).toBe(200);
    expect((JSON.parse(good.body) as { response: { uid: string } }).response.uid).toBe('u-1');
  });

  it('answers an oversized body with a 413 and deeply nested JSON with a 400, then keeps serving', async () => {
    const big = await post(Webhook.objects.path, Buffer.alloc(3 * 1024 * 1024 + 1, 0x20));
    expect(big.status).toBe(413);
    const deep = await post(Webhook.objects.path, '['.repeat(1000));
    expect(deep).toMatchObject({ status: 400, body: 'the review is nested more than 256 levels deep\n' });
    expect((await post(Webhook.hierarchyConfigurations.path, hcReview({ username: 'alice', groups: [] }))).status).toBe(200);
  });

  it('refuses an HNCConfiguration whose group would climb out of its URL, before asking discovery', async () => {
    const config = await eventually(
      () =>
        cluster.admin
          .get<{ spec?: { resources?: unknown[] } }>('/apis/hnc.x-k8s.io/v1alpha2/hncconfigurations/config')
          .catch(() => undefined),
      'the HNCConfiguration config',
    );
    // No resourceVersion: the controller may write the object's status meanwhile, and a replace
    // of a stale version would be refused as a conflict before the webhook is asked.
    const changed = {
      ...config,
      metadata: { name: 'config' },
      spec: {
        ...config.spec,
        resources: [...(config.spec?.resources ?? []), { group: '../api/v1/namespaces/kube-system/secrets', resource: 'x' }],
      },
    };
    const r = await kubectl(cluster.kubeconfigPath, ['replace', '-f', '-'], JSON.stringify(changed));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('group "../api/v1/namespaces/kube-system/secrets" is not a valid API group name');
  });
});
