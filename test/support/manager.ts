// Runs the real manager in the test process, as its own service account bound only to the
// shipped ClusterRole (deploy/rbac/manager.yaml): a missing permission fails the test.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { inject } from 'vitest';
import { Manager } from '../../controller/manager.js';
import { HierarchyPolicy, type PolicyOptions } from '../../core/hierarchy/policy.js';
import { KubeClient } from '../../kube/client.js';
import { MANAGER_GROUPS, MANAGER_SERVICE_ACCOUNT, MANAGER_USER } from '../../kube/install.js';
import { startHnc, type Hnc, type HncOptions } from '../../cmd/hnc.js';
import { createLogger } from '../../kube/log.js';
import { mintUser } from '../../local-cluster/index.js';
import { eventually, kubectl } from './cluster.js';
import { WEBHOOK_PROBE_ANCHOR } from './hnc.js';
import { Policy } from '../../webhooks/policies.js';
import { TREE_LABEL_SUFFIX } from '../../core/api/constants.js';

const ROOT = join(import.meta.dirname, '..', '..');

export async function startManager(name: string, policy: PolicyOptions = {}): Promise<Manager> {
  const stateDir = inject('stateDir');
  const identity = await mintUser(stateDir, MANAGER_USER, MANAGER_GROUPS);
  const client = await KubeClient.fromKubeconfig(identity.kubeconfigPath);
  // Logs go to the control plane's log folder (HNC_LOG_FILE overrides; HNC_LOG_LEVEL=debug for more).
  const logger = createLogger({ name: `manager-${name}`, file: process.env.HNC_LOG_FILE ?? join(stateDir, 'logs', `manager-${name}.log`) });
  const manager = new Manager({ client, policy: new HierarchyPolicy(policy), logger, workers: 4 });
  await manager.start();
  return manager;
}

/**
 * The whole HNC process (controller and webhooks on 127.0.0.1), registered with the real apiserver
 * by URL. Its stop() leaves the webhook configurations in place (as a crashed HNC would): call
 * removeWebhookConfigurations() after, so later test files are not refused by a webhook that is gone.
 */
export async function startHncWithWebhooks(
  name: string,
  policy: PolicyOptions = {},
  extra: Pick<HncOptions, 'hrq' | 'leaderElection'> = {},
): Promise<Hnc> {
  const stateDir = inject('stateDir');
  const identity = await mintUser(stateDir, MANAGER_USER, MANAGER_GROUPS);
  const client = await KubeClient.fromKubeconfig(identity.kubeconfigPath);
  const logger = createLogger({ name: `hnc-${name}`, file: process.env.HNC_LOG_FILE ?? join(stateDir, 'logs', `hnc-${name}.log`) });
  const hnc = await startHnc({
    client,
    policy: new HierarchyPolicy(policy),
    namespace: MANAGER_SERVICE_ACCOUNT.namespace,
    logger,
    workers: 4,
    webhooks: { port: 0, host: '127.0.0.1', endpoint: (port) => ({ url: `https://127.0.0.1:${port}` }) },
    ...extra,
  });
  return hnc;
}

/**
 * Waits until the API server calls HNC's webhooks: it uses a new configuration only once its
 * informer has it, so a dry-run anchor in an excluded namespace is sent until a refusal shows.
 */
export async function waitForWebhooks(kubeconfigPath: string): Promise<void> {
  await eventually(async () => {
    const r = await kubectl(kubeconfigPath, ['create', '-f', '-', '--dry-run=server'], WEBHOOK_PROBE_ANCHOR);
    // Not a "failed calling webhook": the API server may still call a previous process's port for a moment.
    return r.code !== 0 && r.stderr.includes('subnamespaceanchors.hnc.x-k8s.io') && !r.stderr.includes('failed calling webhook')
      ? true
      : undefined;
  }, 'the webhooks to take effect');
}

/** Removes HNC's webhook configurations and admission policies (left behind when an HNC process stops). */
export async function removeWebhookConfigurations(): Promise<void> {
  const admin = await KubeClient.fromKubeconfig(inject('kubeconfig'));
  for (const kind of [
    'validatingwebhookconfigurations/hnc-validating-webhook-configuration',
    'mutatingwebhookconfigurations/hnc-mutating-webhook-configuration',
    ...Object.values(Policy).flatMap((p) => [`validatingadmissionpolicybindings/${p}`, `validatingadmissionpolicies/${p}`]),
  ]) {
    await admin.delete(`/apis/admissionregistration.k8s.io/v1/${kind}`).catch(() => undefined);
  }
  // The API server drops a deleted policy from its cache a moment later: wait until a forged tree
  // label (which the namespace-labels policy refuses) is accepted in a dry run.
  const name = `policy-gone-${Math.random().toString(36).slice(2, 8)}`;
  await eventually(
    () =>
      admin
        .create('/api/v1/namespaces', { metadata: { name, labels: { [`${name}${TREE_LABEL_SUFFIX}`]: '0' } } }, { dryRun: 'All' })
        .then(() => true),
    "the API server to drop HNC's admission policies",
  );
}

/** HNC as a process of its own (`npm start -- --kubeconfig K ...`), as the tests that stop, freeze or cut it run it. */
export interface HncProcess {
  proc: ChildProcess;
  /** What it wrote on stderr so far. */
  stderr(): string;
  /** Its exit code (null: killed by a signal), once it has exited. */
  exited: Promise<number | null>;
}

/**
 * Starts `cmd/start.ts --kubeconfig <kubeconfig> <args>`, its log in `logFile`, and resolves once it
 * says it is running (or rejects with its stderr).
 */
export async function spawnHnc(
  kubeconfig: string,
  args: string[],
  logFile: string,
  timeoutMs = 90_000,
  env: Record<string, string> = {},
): Promise<HncProcess> {
  const proc = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'cmd', 'start.ts'), '--kubeconfig', kubeconfig, ...args], {
    cwd: ROOT,
    env: { ...process.env, KUBECONFIG: '', HNC_LOG_FILE: logFile, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  await eventually(async () => (stderr.includes('HNC is running') ? true : undefined), 'HNC to start', timeoutMs).catch((e: unknown) => {
    throw new Error(`${String(e)}\n${stderr}`);
  });
  return { proc, stderr: () => stderr, exited };
}
