// What the e2e tests share: HNC installed from the rendered install.yaml and converged, the
// manager's pods and Lease, test pods from the local busybox image, and a loop of admission
// requests that counts what was tried and what failed.
import { inject } from 'vitest';
import { BUSYBOX_IMAGE } from '../../local-cluster/node/index.js';
import { ApiError, isNotFound, type KubeClient } from '../../kube/client.js';
import { eventually, kubectl, type TestCluster } from '../support/cluster.js';
import { WEBHOOK_PROBE_ANCHOR } from '../support/hnc.js';
import { Policy } from '../../webhooks/policies.js';

export const HNC_NAMESPACE = 'hnc-system';
export const DEPLOYMENT = 'hnc-controller-manager';
export const LEASE = 'controller-leader-election-helper';
const SELECTOR = 'app.kubernetes.io/name=hnc-ts,control-plane=controller-manager';

export interface Pod {
  metadata: { name: string; namespace: string; uid: string; deletionTimestamp?: string; labels?: Record<string, string> };
  spec: { containers: Array<{ image: string }> };
  status: { phase?: string; podIP?: string; conditions?: Array<{ type: string; status: string; lastTransitionTime?: string }> };
}
interface Deployment {
  metadata: { generation: number };
  spec: { replicas: number; template: { spec: { containers: Array<{ name: string; image: string }> } } };
  status: { observedGeneration?: number; replicas?: number; readyReplicas?: number; updatedReplicas?: number; availableReplicas?: number };
}

export const admin = (cluster: TestCluster, args: string[], input?: string) => kubectl(cluster.kubeconfigPath, args, input);

export function isReady(p: Pod): boolean {
  return !p.metadata.deletionTimestamp && !!p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
}

export async function managerPods(client: KubeClient): Promise<Pod[]> {
  const list = await client.get<{ items: Pod[] }>(`/api/v1/namespaces/${HNC_NAMESPACE}/pods`, { labelSelector: SELECTOR });
  return list.items;
}

/** The Lease's holder: the pod name of the replica that reconciles. */
export async function leaseHolder(client: KubeClient): Promise<string | undefined> {
  const lease = await client
    .get<{ spec: { holderIdentity?: string } }>(`/apis/coordination.k8s.io/v1/namespaces/${HNC_NAMESPACE}/leases/${LEASE}`)
    .catch((e: unknown) => (isNotFound(e) ? undefined : Promise.reject(e)));
  // The identity is `<hostname>_<pid>_<random>`, and a pod's hostname is its name.
  return lease?.spec.holderIdentity?.split('_')[0] || undefined;
}

/** Waits until the Deployment has rolled out completely: every replica updated and Ready, none left over. */
export async function waitRolledOut(client: KubeClient, timeoutMs = 240_000): Promise<Pod[]> {
  let last = '';
  try {
    return await eventually(
      async () => {
        const d = await client.get<Deployment>(`/apis/apps/v1/namespaces/${HNC_NAMESPACE}/deployments/${DEPLOYMENT}`);
        const pods = await managerPods(client);
        const s = d.status;
        last = `status ${JSON.stringify(s)}; pods ${pods.map((p) => `${p.metadata.name}:${p.status.phase}${isReady(p) ? ':ready' : ''}`).join(' ')}`;
        const done =
          s.observedGeneration === d.metadata.generation &&
          s.updatedReplicas === d.spec.replicas &&
          s.readyReplicas === d.spec.replicas &&
          s.replicas === d.spec.replicas &&
          pods.length === d.spec.replicas &&
          pods.every(isReady);
        return done ? pods : undefined;
      },
      'the manager Deployment to roll out',
      timeoutMs,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; last seen: ${last}`);
  }
}

/** Applies the install manifest (server-side, as docs/deploy.md says) and waits until HNC serves. */
export async function ensureInstalled(cluster: TestCluster): Promise<Pod[]> {
  // --force-conflicts: a test may have changed the image with kubectl set image (another field manager).
  const r = await admin(cluster, ['apply', '--server-side', '--force-conflicts', '-f', inject('installYaml')]);
  if (r.code !== 0) throw new Error(`kubectl apply failed: ${r.stderr}`);
  const pods = await waitRolledOut(cluster.admin);
  // One of these pods: a replica killed by an earlier test holds the Lease until it expires.
  const names = new Set(pods.map((p) => p.metadata.name));
  await eventually(async () => {
    const holder = await leaseHolder(cluster.admin);
    return holder !== undefined && names.has(holder) ? holder : undefined;
  }, 'a leader among the rolled-out pods');
  await waitForWebhooksThroughService(cluster);
  return pods;
}

/**
 * Waits until HNC itself answers the API server through the webhook Service: a dry-run anchor in
 * an excluded namespace until HNC denies it. Ready pods are not enough: kube-proxy programs the
 * Service's new endpoints a moment later, and until then the API server's call is refused
 * ("failed calling webhook ... connection refused", which names the webhook too).
 */
export async function waitForWebhooksThroughService(cluster: TestCluster): Promise<void> {
  let last = '';
  await eventually(
    async () => {
      const r = await admin(cluster, ['create', '-f', '-', '--dry-run=server'], WEBHOOK_PROBE_ANCHOR);
      last = r.stderr.trim();
      return r.code !== 0 && r.stderr.includes('admission webhook "subnamespaceanchors.hnc.x-k8s.io" denied the request')
        ? true
        : undefined;
    },
    'HNC to answer through the webhook Service',
    120_000,
  ).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}; last answer: ${last}`);
  });
}

/** Sets the HNCConfiguration's propagated kinds (beyond Roles and RoleBindings) and waits until the manager reports them. */
export async function configureResources(cluster: TestCluster, resources: Array<{ group?: string; resource: string; mode: string }>) {
  const path = '/apis/hnc.x-k8s.io/v1alpha2/hncconfigurations/config';
  await eventually(() => cluster.admin.get(path), 'the config object created by the manager');
  for (;;) {
    const cfg = await cluster.admin.get<Record<string, unknown>>(path);
    try {
      await cluster.admin.replace(path, { ...cfg, spec: { resources } });
      break;
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 409)) throw err;
    }
  }
  await eventually(async () => {
    const c = await cluster.admin.get<{ status?: { resources?: Array<{ resource: string; mode: string }> } }>(path);
    return resources.every((r) => c.status?.resources?.some((x) => x.resource === r.resource && x.mode === r.mode)) ? true : undefined;
  }, 'the configuration to take effect');
}

/** A busybox pod (the local image) running `command`; resolves with its IP once it is Running and Ready. */
export async function busyboxPod(
  client: KubeClient,
  ns: string,
  name: string,
  command: string,
  labels: Record<string, string> = {},
): Promise<string> {
  await client.create(`/api/v1/namespaces/${ns}/pods`, {
    metadata: { name, labels: { app: name, ...labels } },
    spec: {
      terminationGracePeriodSeconds: 0,
      containers: [{ name: 'main', image: BUSYBOX_IMAGE, imagePullPolicy: 'Never', command: ['/bin/sh', '-c', command] }],
    },
  });
  return eventually(
    async () => {
      const p = await client.get<Pod>(`/api/v1/namespaces/${ns}/pods/${name}`);
      return p.status.podIP && isReady(p) ? p.status.podIP : undefined;
    },
    `pod ${ns}/${name} to run`,
    120_000,
  );
}

/** A pod serving HTTP on port 8080 (busybox httpd), answering with its own name. */
export async function serverPod(client: KubeClient, ns: string, name: string): Promise<string> {
  return busyboxPod(client, ns, name, `mkdir -p /tmp/www && echo ${name} > /tmp/www/index.html && exec httpd -f -p 8080 -h /tmp/www`);
}

/** A pod that only waits, to run commands in (kubectl exec). */
export async function clientPod(client: KubeClient, ns: string, name: string): Promise<string> {
  return busyboxPod(client, ns, name, 'exec sleep 100000');
}

/**
 * Whether the pod `from` gets an HTTP answer from ip:8080 within 2 s (kubectl exec through the
 * kubelet; busybox's nc, as its static wget crashes resolving even an address).
 */
export async function reaches(cluster: TestCluster, ns: string, from: string, ip: string): Promise<boolean> {
  const r = await admin(cluster, ['exec', '-n', ns, from, '--', 'sh', '-c', `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 2 ${ip} 8080`]);
  if (r.code === 0 && r.stdout.includes('200 OK')) return true;
  // nc's own failure (timed out, refused) is an answer; anything else (exec failed) is not.
  if (/timed out|refused|can't connect/i.test(r.stderr)) return false;
  throw new Error(`kubectl exec in ${ns}/${from} failed (${r.code}): ${r.stderr.trim()} ${r.stdout.trim()}`);
}

/** Polls until `from` reaches (or does not reach) ip:8080, as kube-router's rules settle. */
export async function eventuallyReaches(cluster: TestCluster, ns: string, from: string, ip: string, expected: boolean): Promise<void> {
  await eventually(
    async () => ((await reaches(cluster, ns, from, ip)) === expected ? true : undefined),
    `${ns}/${from} ${expected ? 'to reach' : 'to be blocked from'} ${ip}`,
    60_000,
  );
}

/** What an admission loop sends, once per turn: it rejects when the request failed. */
export type AdmissionRequest = (client: KubeClient, ns: string) => Promise<unknown>;

/** A server-side dry-run creation of a SubnamespaceAnchor in `ns`, which HNC allows and its fail-closed webhook must answer. */
export const anchorDryRun: AdmissionRequest = (client, ns) =>
  client.create(
    `/apis/hnc.x-k8s.io/v1alpha2/namespaces/${ns}/subnamespaceanchors`,
    { apiVersion: 'hnc.x-k8s.io/v1alpha2', kind: 'SubnamespaceAnchor', metadata: { name: `${ns}-probe`, namespace: ns } },
    { dryRun: 'All' },
  );

export interface AdmissionStats {
  tried: number;
  failed: number;
  /** The first five failures' messages. */
  errors: string[];
  /** When the first and the last failure were seen (ms since the epoch). */
  firstFailure?: number;
  lastFailure?: number;
}

/**
 * Sends admission requests (by default anchorDryRun) one after another until stop(); counts tries
 * and failures. `ns` must be reconciled by HNC already.
 */
export function admissionLoop(client: KubeClient, ns: string, send: AdmissionRequest = anchorDryRun) {
  const stats: AdmissionStats = { tried: 0, failed: 0, errors: [] };
  let running = true;
  const done = (async () => {
    while (running) {
      stats.tried++;
      try {
        await send(client, ns);
      } catch (err) {
        stats.failed++;
        stats.lastFailure = Date.now();
        stats.firstFailure ??= stats.lastFailure;
        if (stats.errors.length < 5) stats.errors.push((err as Error).message);
      }
    }
  })();
  return {
    stats,
    async stop() {
      running = false;
      await done;
      return stats;
    },
  };
}

/**
 * Removes hnc-ts entirely, as docs/deploy.md's "Uninstall" says: the CRDs while the manager runs,
 * the rest of install.yaml, the webhook configurations the manager wrote; and the admission
 * policies and bindings it wrote too. Returns once hnc-system is gone.
 */
export async function uninstall(cluster: TestCluster): Promise<void> {
  const run = async (args: string[]) => {
    const r = await admin(cluster, args);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${r.stderr}`);
  };
  await run([
    'delete',
    'crd',
    '--ignore-not-found',
    'hierarchyconfigurations.hnc.x-k8s.io',
    'subnamespaceanchors.hnc.x-k8s.io',
    'hncconfigurations.hnc.x-k8s.io',
    'hierarchicalresourcequotas.hnc.x-k8s.io',
    '--timeout=120s',
  ]);
  await run(['delete', '-f', inject('installYaml'), '--ignore-not-found', '--timeout=180s']);
  await run([
    'delete',
    '--ignore-not-found',
    'validatingwebhookconfiguration/hnc-validating-webhook-configuration',
    'mutatingwebhookconfiguration/hnc-mutating-webhook-configuration',
    ...Object.values(Policy).flatMap((name) => [`validatingadmissionpolicybinding/${name}`, `validatingadmissionpolicy/${name}`]),
  ]);
  await eventually(
    () =>
      cluster.admin.get(`/api/v1/namespaces/${HNC_NAMESPACE}`).then(
        () => undefined,
        (e: unknown) => (isNotFound(e) ? true : Promise.reject(e)),
      ),
    `${HNC_NAMESPACE} gone`,
    180_000,
  );
}
