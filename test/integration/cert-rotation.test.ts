// Rotating the webhook certificate while two replicas serve behind one address (a round-robin TCP
// proxy here, a Service in a cluster): an admin deletes the Secret hnc-webhook-server-cert
// (docs/webhooks.md#certificates). Both replicas must serve the new certificate, and both
// configurations trust its CA, within seconds, and no admission in between may fail because the
// API server did not trust the certificate it met.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startHnc, type Hnc } from '../../cmd/hnc.js';
import { HierarchyPolicy } from '../../core/hierarchy/policy.js';
import { ApiError, KubeClient } from '../../kube/client.js';
import { MANAGER_GROUPS, MANAGER_SERVICE_ACCOUNT, MANAGER_USER } from '../../kube/install.js';
import { createLogger } from '../../kube/log.js';
import { mintUser } from '../../local-cluster/index.js';
import { bundleFingerprints, fingerprint, presentedFingerprint } from '../../soak/probes.js';
import { CERT_SECRET } from '../../webhooks/certs.js';
import { TestCluster, eventually } from '../support/cluster.js';
import { removeWebhookConfigurations } from '../support/manager.js';
import { roundRobinProxy, type RoundRobin } from '../support/round-robin.js';

/** How long the rotation may take, from the Secret's deletion until every replica and configuration has the new one. */
const ROTATION_BOUND_MS = 5_000;
const SECRET = `/api/v1/namespaces/${MANAGER_SERVICE_ACCOUNT.namespace}/secrets/${CERT_SECRET}`;
const VALIDATING = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/hnc-validating-webhook-configuration';
const MUTATING = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/hnc-mutating-webhook-configuration';

let cluster: TestCluster;
const replicas: Hnc[] = [];
let proxy: RoundRobin | undefined;
const backends: number[] = [];

/** One admission HNC must answer: an anchor in an excluded namespace, which its webhook refuses. Its error if HNC did not answer. */
async function admission(): Promise<string | undefined> {
  const anchor = { apiVersion: 'hnc.x-k8s.io/v1alpha2', kind: 'SubnamespaceAnchor', metadata: { name: 'rotation-probe' } };
  try {
    await cluster.admin.create('/apis/hnc.x-k8s.io/v1alpha2/namespaces/kube-system/subnamespaceanchors', anchor, { dryRun: 'All' });
    return 'admitted: the webhook did not decide';
  } catch (err) {
    const m = (err as Error).message;
    return err instanceof ApiError && m.includes('subnamespaceanchors.hnc.x-k8s.io') && !m.includes('failed calling webhook')
      ? undefined
      : m;
  }
}

interface Secret {
  data: Record<string, string>;
}
const unb64 = (s: string | undefined) => Buffer.from(s ?? '', 'base64').toString('utf8');

/** Whether the Secret holds a CA other than `oldCa`, both configurations trust it, and every replica presents its certificate. */
async function rotated(oldCa: string): Promise<true | undefined> {
  const secret = await cluster.admin.get<Secret>(SECRET).catch(() => undefined);
  if (!secret || unb64(secret.data['ca.crt']) === oldCa) return undefined;
  const ca = fingerprint(unb64(secret.data['ca.crt']));
  for (const path of [VALIDATING, MUTATING]) {
    const live = await cluster.admin.get<{ webhooks: Array<{ clientConfig: { caBundle: string } }> }>(path);
    if (!live.webhooks.every((w) => bundleFingerprints(unb64(w.clientConfig.caBundle)).includes(ca))) return undefined;
  }
  const serving = fingerprint(unb64(secret.data['tls.crt']));
  for (const port of backends) if ((await presentedFingerprint('127.0.0.1', port, 'localhost')) !== serving) return undefined;
  return true;
}

beforeAll(async () => {
  cluster = await TestCluster.connect();
  proxy = await roundRobinProxy(backends);
  const proxyPort = proxy.port;
  const stateDir = inject('stateDir');
  const lease = TestCluster.uniqueName('rotation');
  for (const name of ['one', 'two']) {
    const identity = await mintUser(stateDir, MANAGER_USER, MANAGER_GROUPS);
    const hnc = await startHnc({
      client: await KubeClient.fromKubeconfig(identity.kubeconfigPath),
      policy: new HierarchyPolicy(),
      namespace: MANAGER_SERVICE_ACCOUNT.namespace,
      logger: createLogger({ name: `rotation-${name}`, file: join(stateDir, 'logs', `rotation-${name}.log`) }),
      workers: 4,
      webhooks: { port: 0, host: '127.0.0.1', endpoint: () => ({ url: `https://127.0.0.1:${proxyPort}` }) },
      leaderElection: { id: lease, leaseDurationMs: 4000, renewDeadlineMs: 2600, retryPeriodMs: 500 },
    });
    replicas.push(hnc);
    backends.push(hnc.webhooks!.port);
  }
  await eventually(async () => ((await admission()) === undefined ? true : undefined), 'the webhooks to take effect');
});

afterAll(async () => {
  for (const r of replicas) await r.stop();
  await proxy?.close();
  await removeWebhookConfigurations();
});

describe('webhook certificate rotation', () => {
  it('deleting the Secret: both replicas serve a new CA within seconds, and every admission meanwhile is answered', async () => {
    const oldCa = unb64((await cluster.admin.get<Secret>(SECRET)).data['ca.crt']);
    const failures: Array<{ at: number; error: string }> = [];
    let sent = 0;
    let running = true;
    // Admissions one after another, before, during and after the rotation.
    const load = (async () => {
      while (running) {
        const error = await admission();
        sent++;
        if (error) failures.push({ at: Date.now(), error });
      }
    })();
    await eventually(async () => (sent >= 10 ? true : undefined), '10 admissions before the rotation');
    const t0 = Date.now();
    await cluster.admin.delete(SECRET);
    await eventually(() => rotated(oldCa), 'every replica and configuration to take the new certificate', ROTATION_BOUND_MS);
    const tookMs = Date.now() - t0;
    process.stderr.write(`cert rotation: taken up by both replicas and configurations ${tookMs} ms after the Secret's deletion\n`);
    // Then admissions go on against the new certificate on new connections of the API server.
    const after = sent;
    await eventually(async () => (sent - after >= 20 ? true : undefined), '20 admissions after the rotation');
    running = false;
    await load;
    expect(failures.map((f) => `${f.at - t0} ms: ${f.error}`)).toEqual([]);
    expect(tookMs).toBeLessThan(ROTATION_BOUND_MS);
    // During the change the old CA is still trusted, for a replica that has not swapped yet.
    const bundle = unb64(
      (await cluster.admin.get<{ webhooks: Array<{ clientConfig: { caBundle: string } }> }>(VALIDATING)).webhooks[0]!.clientConfig.caBundle,
    );
    expect(bundleFingerprints(bundle)).toContain(fingerprint(oldCa));
    // And the two replicas agree on it: the configuration is not written back and forth.
    const rv = async () => (await cluster.admin.get<{ metadata: { resourceVersion: string } }>(VALIDATING)).metadata.resourceVersion;
    const settled = await rv();
    await new Promise((r) => setTimeout(r, 1000));
    expect(await rv()).toBe(settled);
  });
});
