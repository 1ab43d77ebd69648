// The admission webhooks through the real apiserver, with kubectl for the texts users see.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hnc } from '../../cmd/hnc.js';
import { TestCluster, eventually, eventuallyEqual, kubectl } from '../support/cluster.js';
import { removeWebhookConfigurations, startHncWithWebhooks, waitForWebhooks } from '../support/manager.js';
import { createAnchor, getAnchor, namespaceExists, setParent, treeDepths } from '../support/hnc.js';
import { inject } from 'vitest';
import { KubeClient } from '../../kube/client.js';
import { MANAGER_GROUPS, MANAGER_USER } from '../../kube/install.js';
import { createLogger } from '../../kube/log.js';
import { InternalCertificates } from '../../webhooks/certs.js';
import { admissionReview } from '../../webhooks/testing.js';
import { mintUser } from '../../local-cluster/index.js';
import { Worker } from 'node:worker_threads';
import { generateKeyPairSync } from 'node:crypto';

let cluster: TestCluster;
let hnc: Hnc;
let stopped = false;

beforeAll(async () => {
  cluster = await TestCluster.connect();
  hnc = await startHncWithWebhooks('webhooks');
  await waitForWebhooks(cluster.kubeconfigPath);
});
afterAll(async () => {
  if (!stopped) await hnc?.stop();
  await removeWebhookConfigurations();
  await cluster.cleanup();
});

/** How many reviews the objects webhook has answered (its latency histogram's count). */
async function objectReviews(): Promise<number> {
  const { values } = await hnc.metrics.webhookSeconds.get();
  return (
    values.find((v) => v.metricName === 'hnc_webhook_duration_seconds_count' && v.labels.webhook === 'objects.hnc.x-k8s.io')?.value ?? 0
  );
}
const denied = (webhook: string, message: string) => `admission webhook "${webhook}.hnc.x-k8s.io" denied the request: ${message}`;
/** A refusal by one of HNC's ValidatingAdmissionPolicies (the API server itself): `<resource> "<name>" is forbidden: ` first. */
const deniedByPolicy = (policy: string, forbidden: string, message: string) =>
  `${forbidden} is forbidden: ValidatingAdmissionPolicy '${policy}.hnc.x-k8s.io' with binding '${policy}.hnc.x-k8s.io' denied request: ${message}`;
const apply = (kubeconfig: string, obj: unknown) => kubectl(kubeconfig, ['apply', '-f', '-'], JSON.stringify(obj));
const hc = (ns: string, parent: string) => ({
  apiVersion: 'hnc.x-k8s.io/v1alpha2',
  kind: 'HierarchyConfiguration',
  metadata: { name: 'hierarchy', namespace: ns },
  spec: { parent },
});
const adminOf = (ns: string, user: string) =>
  cluster.admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
    metadata: { name: `${user}-admin` },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  });

describe('webhooks', () => {
  it('labels new managed namespaces at once (mutator)', async () => {
    const name = TestCluster.uniqueName('mutated');
    const created = await cluster.admin.create<{ metadata: { labels: Record<string, string> } }>('/api/v1/namespaces', {
      metadata: { name },
    });
    expect(created.metadata.labels['hnc.x-k8s.io/included-namespace']).toBe('true');
    await cluster.admin.delete(`/api/v1/namespaces/${name}`);
  });

  it('refuses a cycle and an excluded parent, with messages that read well in kubectl', async () => {
    const a = await cluster.namespace('cyc-a');
    const b = await cluster.namespace('cyc-b');
    await setParent(cluster.admin, b, a);
    await eventuallyEqual(() => treeDepths(cluster.admin, b), { [b]: 0, [a]: 1 }, 'b under a');
    const cycle = await apply(cluster.kubeconfigPath, hc(a, b));
    expect(cycle.code).toBe(1);
    expect(cycle.stderr).toContain(
      denied(
        'hierarchyconfigurations',
        `Operation cannot be fulfilled on hierarchyconfigurations.hnc.x-k8s.io "hierarchy": illegal parent: cycle when making "${b}" the parent of "${a}": current ancestry is ${b} -> ${a}`,
      ),
    );
    const excluded = await apply(cluster.kubeconfigPath, hc(a, 'kube-system'));
    expect(excluded.stderr).toContain(
      denied(
        'hierarchyconfigurations',
        'hierarchyconfigurations.hnc.x-k8s.io "hierarchy" is forbidden: namespace "kube-system" is not managed by HNC (excluded by the HNC administrator) and cannot be set as the parent of another namespace',
      ),
    );
  });

  it('refuses anchors in excluded namespaces and over existing namespaces', async () => {
    const parent = await cluster.namespace('anchors');
    const existing = await cluster.namespace('taken');
    const anchor = (ns: string, name: string) => ({
      apiVersion: 'hnc.x-k8s.io/v1alpha2',
      kind: 'SubnamespaceAnchor',
      metadata: { name, namespace: ns },
    });
    const inExcluded = await apply(cluster.kubeconfigPath, anchor('kube-system', 'sub'));
    expect(inExcluded.stderr).toContain(
      denied(
        'subnamespaceanchors',
        'subnamespaceanchors.hnc.x-k8s.io "kube-system" is forbidden: cannot create a subnamespace in the unmanaged namespace "kube-system" (excluded by the HNC administrator)',
      ),
    );
    const overExisting = await apply(cluster.kubeconfigPath, anchor(parent, existing));
    expect(overExisting.stderr).toContain(
      denied(
        'subnamespaceanchors',
        `Operation cannot be fulfilled on subnamespaceanchors.hnc.x-k8s.io "${existing}": cannot create a subnamespace using an existing namespace`,
      ),
    );
  });

  it('refuses deleting a namespace that holds subnamespaces unless cascading deletion is allowed', async () => {
    const parent = await cluster.namespace('holder');
    const sub = TestCluster.uniqueName('sub');
    await createAnchor(cluster.admin, parent, sub);
    await eventuallyEqual(async () => (await getAnchor(cluster.admin, parent, sub))?.status?.status, 'Ok', 'the subnamespace');
    const refused = await kubectl(cluster.kubeconfigPath, ['delete', 'namespace', parent, '--wait=false']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      denied(
        'namespaces',
        `namespaces "${parent}" is forbidden: contains subnamespaces. Please remove all subnamespaces before deleting this namespace, or set 'allowCascadingDeletion' to delete them automatically`,
      ),
    );
    const direct = await kubectl(cluster.kubeconfigPath, ['delete', 'namespace', sub, '--wait=false']);
    expect(direct.stderr).toContain(
      `is a subnamespace. Please delete the anchor from the parent namespace ${parent} to delete the subnamespace`,
    );
    expect((await kubectl(cluster.kubeconfigPath, ['hns', 'set', parent, '--allowCascadingDeletion'])).code).toBe(0);
    await eventually(
      async () => ((await kubectl(cluster.kubeconfigPath, ['delete', 'namespace', parent, '--wait=false'])).code === 0 ? true : undefined),
      'the deletion to be allowed',
    );
    await eventuallyEqual(() => namespaceExists(cluster.admin, sub), false, 'the subnamespace to go with its parent', 60_000);
  });

  it('guards propagated copies: users cannot edit or delete them, the controller can', async () => {
    const parent = await cluster.namespace('src');
    const child = await cluster.namespace('dst');
    await setParent(cluster.admin, child, parent);
    await cluster.admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${parent}/roles`, {
      metadata: { name: 'reader' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
    });
    await eventually(() => cluster.admin.get(`/apis/rbac.authorization.k8s.io/v1/namespaces/${child}/roles/reader`), 'the copy');
    const del = await kubectl(cluster.kubeconfigPath, ['delete', 'role', 'reader', '-n', child]);
    expect(del.stderr).toContain(
      deniedByPolicy(
        'propagated-copies',
        'roles.rbac.authorization.k8s.io "reader"',
        `cannot delete object propagated from namespace "${parent}"`,
      ),
    );
    const edit = await kubectl(cluster.kubeconfigPath, ['label', 'role', 'reader', '-n', child, 'mine=yes']);
    expect(edit.stderr).toContain(`cannot modify object propagated from namespace "${parent}"`);
    const forged = await apply(cluster.kubeconfigPath, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'forged', namespace: child, labels: { 'hnc.x-k8s.io/inherited-from': parent } },
      rules: [],
    });
    expect(forged.stderr).toContain('cannot create objects with the label "hnc.x-k8s.io/inherited-from"');
    // The controller may: deleting the source removes the copy.
    await cluster.admin.delete(`/apis/rbac.authorization.k8s.io/v1/namespaces/${parent}/roles/reader`);
    await eventuallyEqual(
      () =>
        cluster.admin.get(`/apis/rbac.authorization.k8s.io/v1/namespaces/${child}/roles/reader`).then(
          () => true,
          () => false,
        ),
      false,
      'the copy removed',
    );
  });

  it("is not called for HNC's own copy writes, while a user's edit of a copy is still refused", async () => {
    const parent = await cluster.namespace('quiet-src');
    const children: string[] = [];
    for (let i = 0; i < 6; i++) {
      const child = await cluster.namespace(`quiet-dst${i}`);
      await setParent(cluster.admin, child, parent);
      children.push(child);
    }
    await eventuallyEqual(() => treeDepths(cluster.admin, children[5]!), { [children[5]!]: 0, [parent]: 1 }, 'the last child under parent');
    const before = await objectReviews();
    await cluster.admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${parent}/roles`, {
      metadata: { name: 'quiet' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
    });
    for (const child of children)
      await eventually(() => cluster.admin.get(`/apis/rbac.authorization.k8s.io/v1/namespaces/${child}/roles/quiet`), 'the copy');
    // The admin's create of the source is reviewed; the six copies HNC wrote are not (matchConditions).
    const during = (await objectReviews()) - before;
    expect(during).toBeGreaterThanOrEqual(1);
    expect(during).toBeLessThan(children.length);
    const edit = await kubectl(cluster.kubeconfigPath, ['label', 'role', 'quiet', '-n', children[0]!, 'mine=yes']);
    expect(edit.code).toBe(1);
    expect(edit.stderr).toContain(`cannot modify object propagated from namespace "${parent}"`);
    // Refused by the API server's own policy: the webhook is not called for copies at all.
    expect(edit.stderr).toContain("ValidatingAdmissionPolicy 'propagated-copies.hnc.x-k8s.io'");
    expect(await objectReviews()).toBe(before + during);
  });

  it('refuses invalid selector annotations and two selectors at once', async () => {
    const ns = await cluster.namespace('sel');
    const role = (annotations: Record<string, string>) => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'r', namespace: ns, annotations },
      rules: [],
    });
    const bad = await apply(cluster.kubeconfigPath, role({ 'propagate.hnc.x-k8s.io/treeSelect': 'Not_A_Namespace' }));
    expect(bad.stderr).toContain(
      denied('objects', 'invalid HNC "propagate.hnc.x-k8s.io/treeSelect" value: "Not_A_Namespace" is not a valid namespace name'),
    );
    const two = await apply(cluster.kubeconfigPath, role({ 'propagate.hnc.x-k8s.io/none': 'true', 'propagate.hnc.x-k8s.io/all': 'true' }));
    expect(two.stderr).toContain(
      denied(
        'objects',
        'cannot have more than one selector at the same time, but got multiple: propagate.hnc.x-k8s.io/none, propagate.hnc.x-k8s.io/all',
      ),
    );
  });

  it('refuses HNCConfigurations naming unknown or cluster-scoped resources or re-moding RBAC, and deleting config', async () => {
    const config = (resources: unknown[]) => ({
      apiVersion: 'hnc.x-k8s.io/v1alpha2',
      kind: 'HNCConfiguration',
      metadata: { name: 'config' },
      spec: { resources },
    });
    const unknown = await apply(cluster.kubeconfigPath, config([{ group: 'example.com', resource: 'widgets', mode: 'Propagate' }]));
    expect(unknown.stderr).toContain('HNCConfiguration.hnc.x-k8s.io "config" is invalid');
    expect(unknown.stderr).toContain('widgets');
    const clusterScoped = await apply(cluster.kubeconfigPath, config([{ resource: 'nodes', mode: 'Propagate' }]));
    expect(clusterScoped.stderr).toContain('HNCConfiguration.hnc.x-k8s.io "config" is invalid');
    const rbac = await apply(cluster.kubeconfigPath, config([{ group: 'rbac.authorization.k8s.io', resource: 'roles', mode: 'Ignore' }]));
    expect(rbac.stderr).toContain("always uses the 'Propagate' mode and cannot be configured");
    const del = await kubectl(cluster.kubeconfigPath, ['delete', 'hncconfiguration', 'config']);
    expect(del.stderr).toContain(
      denied('hncconfigurations', 'hncconfigurations.hnc.x-k8s.io "config" is forbidden: deleting the \'config\' object is forbidden'),
    );
  });

  it('checks permissions: a team lead can move her namespace only under a parent she administers, and cannot pull one out of a tree owned by someone else', async () => {
    const mine = await cluster.namespace('mine');
    const mine2 = await cluster.namespace('mine2');
    const theirs = await cluster.namespace('theirs');
    const theirChild = await cluster.namespace('their-child');
    await setParent(cluster.admin, theirChild, theirs);
    for (const ns of [mine, mine2, theirChild]) await adminOf(ns, 'carol');
    const carol = (await cluster.user('carol')).kubeconfigPath;
    await eventuallyEqual(() => treeDepths(cluster.admin, theirChild), { [theirChild]: 0, [theirs]: 1 }, 'their tree');
    const under = await kubectl(carol, ['hns', 'set', mine, '--parent', theirs]);
    expect(under.code).toBe(1);
    expect(under.stderr).toContain(`User carol is not authorized to modify the subtree of ${theirs}, which is the proposed parent`);
    const pull = await kubectl(carol, ['hns', 'set', theirChild, '--root']);
    expect(pull.code).toBe(1);
    expect(pull.stderr).toContain(`User carol is not authorized to modify the subtree of ${theirs}, which is the current root ancestor`);
    // An admin of both may.
    const ok = await kubectl(carol, ['hns', 'set', mine2, '--parent', mine]);
    expect(ok.code).toBe(0);
  });

  it('refuses forged HNC labels on excluded namespaces, and lets every other label through', async () => {
    const forged = await kubectl(cluster.kubeconfigPath, ['label', 'namespace', 'kube-public', 'team-a.tree.hnc.x-k8s.io/depth=1']);
    expect(forged).toMatchObject({ code: 1 });
    expect(forged.stderr).toContain(
      deniedByPolicy(
        'namespace-labels',
        'namespaces "kube-public"',
        'cannot set or modify tree label "team-a.tree.hnc.x-k8s.io/depth" in namespace "kube-public"; these can only be managed by HNC',
      ),
    );
    const included = await kubectl(cluster.kubeconfigPath, ['label', 'namespace', 'kube-public', 'hnc.x-k8s.io/included-namespace=true']);
    expect(included).toMatchObject({ code: 1 });
    expect(included.stderr).toContain(
      'you cannot enforce webhook rules on this unmanaged namespace using the "hnc.x-k8s.io/included-namespace" label',
    );
    const ordinary = await kubectl(cluster.kubeconfigPath, ['label', 'namespace', 'kube-public', 'ordinary=yes', '--overwrite']);
    expect(ordinary.code).toBe(0);
    expect(await kubectl(cluster.kubeconfigPath, ['label', 'namespace', 'kube-public', 'ordinary-'])).toMatchObject({ code: 0 });
  });

  it('keeps the objects webhook to the propagated kinds and included namespaces', async () => {
    const vwc = await cluster.admin.get<{
      webhooks: Array<{
        name: string;
        rules?: Array<{ apiGroups: string[]; resources: string[] }>;
        namespaceSelector?: unknown;
        failurePolicy: string;
      }>;
    }>('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/hnc-validating-webhook-configuration');
    const objects = vwc.webhooks.find((w) => w.name === 'objects.hnc.x-k8s.io')!;
    expect(objects.rules?.map((r) => [r.apiGroups, r.resources])).toEqual([[['rbac.authorization.k8s.io'], ['rolebindings', 'roles']]]);
    expect(objects.namespaceSelector).toEqual({ matchLabels: { 'hnc.x-k8s.io/included-namespace': 'true' } });
    const namespaces = vwc.webhooks.find((w) => w.name === 'namespaces.hnc.x-k8s.io')!;
    expect(JSON.stringify(namespaces.namespaceSelector)).toContain('kube-system');
  });

  it('repairs edited webhook configurations and policies within seconds, writing each once', async () => {
    const wh = hnc.webhooks!;
    await eventually(async () => (wh.configurationsSettled ? true : undefined), 'the configurations to be in place');
    const writes = wh.configurationWrites;
    const vwc = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/hnc-validating-webhook-configuration';
    const vap = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/namespace-labels.hnc.x-k8s.io';
    const t0 = performance.now();
    // An edit that would switch HNC's checks off: the namespace validator fails open, the policy only warns.
    const live = await cluster.admin.get<{ webhooks: Array<{ failurePolicy: string }> }>(vwc);
    await cluster.admin.replace(vwc, { ...live, webhooks: live.webhooks.map((w) => ({ ...w, failurePolicy: 'Ignore' })) });
    const policy = await cluster.admin.get<{ spec: { failurePolicy: string } }>(vap);
    await cluster.admin.replace(vap, { ...policy, spec: { ...policy.spec, failurePolicy: 'Ignore' } });
    const repairMs = await Promise.all([
      eventually(
        async () =>
          (await cluster.admin.get<{ webhooks: Array<{ failurePolicy: string; name: string }> }>(vwc)).webhooks.find(
            (w) => w.name === 'namespaces.hnc.x-k8s.io',
          )?.failurePolicy === 'Fail'
            ? performance.now() - t0
            : undefined,
        'the configuration repaired',
        10_000,
      ),
      eventually(
        async () =>
          (await cluster.admin.get<{ spec: { failurePolicy: string } }>(vap)).spec.failurePolicy === 'Fail'
            ? performance.now() - t0
            : undefined,
        'the policy repaired',
        10_000,
      ),
    ]);
    console.log(`webhook configuration and policy repaired ${repairMs.map((ms) => `${ms.toFixed(0)} ms`).join(' and ')} after their edit`);
    // One write per object edited, and none once the watches have seen them back.
    await eventually(async () => (wh.configurationsSettled ? true : undefined), 'the repair to settle');
    expect(wh.configurationWrites - writes).toBe(2);
  });

  it('writes an edited configuration once when registration passes overlap', async () => {
    const wh = hnc.webhooks!;
    const settled = async () => (wh.configurationsSettled ? true : undefined);
    await eventually(settled, 'the configurations to be in place');
    // The kinds the controller propagates now: the objects webhook's rules stay as they are.
    const types = [...hnc.manager.config.propagators.values()].map((p) => ({
      group: p.type.group,
      resource: p.type.resource,
      kind: p.type.kind,
      mode: p.currentMode,
    }));
    const writes = wh.configurationWrites;
    const vwc = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/hnc-validating-webhook-configuration';
    const live = await cluster.admin.get<{ webhooks: Array<{ timeoutSeconds: number }> }>(vwc);
    await cluster.admin.replace(vwc, { ...live, webhooks: live.webhooks.map((w) => ({ ...w, timeoutSeconds: 30 })) });
    // The watch's repair and two updates of the propagated kinds at once (as at a cold start, when
    // the kinds arrive while a repair runs): each pass reads what the one before it wrote.
    await Promise.all([wh.setPropagatedTypes(types), wh.setPropagatedTypes(types)]);
    await eventually(settled, 'the repair to settle');
    expect(wh.configurationWrites - writes).toBe(1);
  });

  it('keeps its serving certificate in a Secret and renews it before expiry, keeping the CA', async () => {
    const client = await KubeClient.fromKubeconfig((await mintUser(inject('stateDir'), MANAGER_USER, MANAGER_GROUPS)).kubeconfigPath);
    // The running HNC's own Secret (its RBAC allows no other), with the names it was issued for.
    const certs = new InternalCertificates({
      client,
      namespace: 'hnc-system',
      dnsNames: ['hnc-webhook-service.hnc-system.svc', 'hnc-webhook-service.hnc-system.svc.cluster.local'],
      ips: ['127.0.0.1'],
      logger: createLogger({ level: 'silent' }),
    });
    const first = await certs.ensure();
    expect(await certs.ensure()).toEqual(first); // fresh: nothing changes
    const later = await certs.ensure(Date.now() + 340 * 24 * 3600 * 1000); // within 30 days of expiry
    expect(later.cert).not.toBe(first.cert);
    expect(later.ca).toBe(first.ca);
  });

  it("takes over HNC v1.1.0's Secret: its type (Opaque) kept, its CA (an RSA key it cannot use) replaced", async () => {
    const ns = await cluster.namespace('certs');
    // As HNC's rotator leaves it: an Opaque Secret (its manifest declares no type), a CA whose key
    // is RSA in PKCS#1 (a certificate from the cluster's CA stands in for HNC's own).
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    const caPem = (await cluster.ca()).certPem;
    const b64 = (t: string) => Buffer.from(t).toString('base64');
    await cluster.admin.create(`/api/v1/namespaces/${ns}/secrets`, {
      metadata: { name: 'hnc-webhook-server-cert' },
      data: { 'ca.crt': b64(caPem), 'ca.key': b64(rsa), 'tls.crt': b64(caPem), 'tls.key': b64(rsa) },
    });
    const certs = new InternalCertificates({
      client: cluster.admin,
      namespace: ns,
      dnsNames: ['hnc-webhook-service.hnc-system.svc'],
      logger: createLogger({ level: 'silent' }),
    });
    const issued = await certs.ensure();
    const secret = await cluster.admin.get<{ type: string; data: Record<string, string> }>(
      `/api/v1/namespaces/${ns}/secrets/hnc-webhook-server-cert`,
    );
    expect(secret.type).toBe('Opaque');
    expect(Buffer.from(secret.data['tls.crt']!, 'base64').toString()).toBe(issued.cert);
    expect(issued.ca).toBeDefined();
    expect(issued.ca).not.toBe(caPem);
  });

  it("answers reviews while HNC's main thread is blocked: they are served by a thread of their own", () => {
    // The main thread (HNC's controller and this test) blocks in Atomics.wait until a review sent
    // straight to the webhook server from another thread is answered: if any part of answering
    // needed the main thread, the wait would time out.
    const state = new Int32Array(new SharedArrayBuffer(8));
    const review = admissionReview({
      uid: 'while-blocked',
      group: 'hnc.x-k8s.io',
      version: 'v1alpha2',
      kind: 'SubnamespaceAnchor',
      resource: 'subnamespaceanchors',
      name: 'blocked',
      namespace: 'kube-system',
      operation: 'CREATE',
      userInfo: { username: 'alice', groups: ['system:authenticated'] },
      object: { apiVersion: 'hnc.x-k8s.io/v1alpha2', kind: 'SubnamespaceAnchor', metadata: { name: 'blocked', namespace: 'kube-system' } },
    });
    const sender = new Worker(
      `const { workerData: d } = require('node:worker_threads');
      const body = d.review;
      const req = require('node:https').request(
        { host: '127.0.0.1', port: d.port, path: '/validate-hnc-x-k8s-io-v1alpha2-subnamespaceanchors', method: 'POST', ca: d.ca,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => {
            Atomics.store(d.state, 1, JSON.parse(text).response.allowed === false ? 2 : 1);
            Atomics.store(d.state, 0, 1);
            Atomics.notify(d.state, 0);
          });
        });
      req.on('error', () => { Atomics.store(d.state, 0, 2); Atomics.notify(d.state, 0); });
      req.end(body);`,
      { eval: true, workerData: { review, port: hnc.webhooks!.port, ca: hnc.webhooks!.ca, state } },
    );
    try {
      expect(Atomics.wait(state, 0, 0, 10_000)).toBe('ok');
      expect(state[0]).toBe(1); // answered, not failed
      expect(state[1]).toBe(2); // denied: kube-system is excluded
    } finally {
      void sender.terminate();
    }
  });

  it('leaves deleted what an admin deleted, says so on the HNCConfiguration, and writes it again only when restarted', async () => {
    const wh = hnc.webhooks!;
    const settled = async () => (wh.configurationsSettled ? true : undefined);
    await eventually(settled, 'the configurations to be in place');
    const vwc = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/hnc-validating-webhook-configuration';
    const vap = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/propagated-copies.hnc.x-k8s.io';
    const exists = (p: string) =>
      cluster.admin.get(p).then(
        () => true,
        () => false,
      );
    const writes = wh.configurationWrites;
    await cluster.admin.delete(vwc);
    await cluster.admin.delete(vap);
    type Config = { metadata: { uid: string }; status?: { conditions?: Array<{ type: string; reason: string; message: string }> } };
    const condition = async () =>
      (await cluster.admin.get<Config>('/apis/hnc.x-k8s.io/v1alpha2/hncconfigurations/config')).status?.conditions?.find(
        (c) => c.reason === 'AdmissionObjectDeleted',
      );
    // The two deletions arrive one after the other: the condition names the first, then both.
    const cond = await eventually(
      async () => {
        const c = await condition();
        return c?.message.includes('ValidatingAdmissionPolicy propagated-copies.hnc.x-k8s.io') ? c : undefined;
      },
      'the condition on the HNCConfiguration, naming both',
      30_000,
    );
    expect(cond.type).toBe('BadConfiguration');
    expect(cond.message).toContain('ValidatingWebhookConfiguration hnc-validating-webhook-configuration');
    expect(cond.message).toContain('ValidatingAdmissionPolicy propagated-copies.hnc.x-k8s.io');
    const uid = (await cluster.admin.get<Config>('/apis/hnc.x-k8s.io/v1alpha2/hncconfigurations/config')).metadata.uid;
    const event = await eventually(
      async () =>
        (
          await cluster.admin.get<{ items: Array<{ reason: string; type: string; involvedObject: { uid?: string } }> }>(
            '/api/v1/namespaces/default/events',
          )
        ).items.find((e) => e.reason === 'AdmissionObjectDeleted' && e.involvedObject.uid === uid),
      'the Event',
    );
    expect(event.type).toBe('Warning');
    // A registration pass (as when the propagated kinds change) writes everything else, not these.
    const types = [...hnc.manager.config.propagators.values()].map((p) => ({
      group: p.type.group,
      resource: p.type.resource,
      kind: p.type.kind,
      mode: p.currentMode,
    }));
    await wh.setPropagatedTypes(types);
    await eventually(settled, 'the passes to settle');
    expect(await exists(vwc)).toBe(false);
    expect(await exists(vap)).toBe(false);
    expect(wh.configurationWrites).toBe(writes);
    // A restart writes them again; the new run has no such condition.
    await hnc.stop();
    hnc = await startHncWithWebhooks('webhooks-restarted');
    await eventually(async () => ((await exists(vwc)) && (await exists(vap)) ? true : undefined), 'both written again', 30_000);
    await eventually(async () => ((await condition()) === undefined ? true : undefined), 'the condition gone', 30_000);
    await waitForWebhooks(cluster.kubeconfigPath);
  });

  it('with HNC stopped, objects of kinds not propagated and namespaces it excludes can still be changed', async () => {
    const ns = await cluster.namespace('while-down');
    stopped = true;
    await hnc.stop(); // the configurations stay, pointing at nothing
    const cm = await kubectl(cluster.kubeconfigPath, ['create', 'configmap', 'still-works', '-n', ns]);
    expect(cm.code).toBe(0);
    const ks = await kubectl(cluster.kubeconfigPath, ['label', 'namespace', 'kube-public', 'touched=yes', '--overwrite']);
    expect(ks.code).toBe(0);
    // Only a change of HNC's labels there is sent to HNC, so that one still fails closed.
    const forged = await kubectl(cluster.kubeconfigPath, ['label', 'namespace', 'kube-public', 'team-a.tree.hnc.x-k8s.io/depth=1']);
    expect(forged.code).toBe(1);
    // HNC's labels are the API server's own check: refused while HNC is down, without calling it.
    expect(forged.stderr).toContain("ValidatingAdmissionPolicy 'namespace-labels.hnc.x-k8s.io'");
    const hcRefused = await apply(cluster.kubeconfigPath, hc(ns, 'default'));
    expect(hcRefused.code).toBe(1); // HNC's own objects fail closed
  });
});
