// `npm start`: the main job. With no cluster given, it starts the local control plane, installs
// the CRDs and HNC's RBAC, runs HNC there (controller and webhooks, as its own service account)
// and prints the KUBECONFIG to use. Given --kubeconfig, KUBECONFIG or an in-cluster service
// account, it runs HNC against that cluster and starts nothing.
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { LocalControlPlane, ControlPlaneError, defaultStateDir } from '../test/control-plane/index.js';
import { KubeClient, ApiError } from '../kube/client.js';
import { installCrds, installRbac, loadCrds, MANAGER_GROUPS, MANAGER_USER } from '../kube/install.js';
import { createLogger } from '../kube/log.js';
import { PolicyError } from '../core/hierarchy/policy.js';
import { FlagError, MANAGER_FLAG_HELP, managerFlagOptions, managerFlagsFrom, withoutIgnoredHncFlags } from './flags.js';
import { startHnc, type Hnc } from './hnc.js';

const IN_CLUSTER_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

const usage = `Usage: npm start -- [--kubeconfig PATH] [--context NAME] [--install-crds] [--state-dir DIR] [--ephemeral] [manager flags]
       npm run cluster    (the local control plane alone)

With no cluster given (no --kubeconfig, no KUBECONFIG, not in a pod), starts a local Kubernetes
control plane on 127.0.0.1 (state in ${defaultStateDir()}), installs the HNC CRDs and RBAC, prints
"export KUBECONFIG=..." and runs HNC there (controller and webhooks) until Ctrl-C. HNC acts as its
own service account (${MANAGER_USER}), bound only to the ClusterRole in deploy/rbac/.

${MANAGER_FLAG_HELP}`;

async function main(): Promise<void> {
  const { args, ignored } = withoutIgnoredHncFlags(process.argv.slice(2));
  const { values: flags } = parseArgs({
    args,
    options: {
      kubeconfig: { type: 'string' },
      context: { type: 'string' },
      'install-crds': { type: 'boolean', default: false },
      'state-dir': { type: 'string' },
      // Only the local control plane, no HNC (`npm run cluster`).
      'cluster-only': { type: 'boolean', default: false },
      // A throwaway control plane in a temporary folder, removed on stop.
      ephemeral: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
      ...managerFlagOptions,
    },
    strict: true,
  });
  if (flags.help) {
    process.stdout.write(usage);
    return;
  }
  const manager = managerFlagsFrom(flags);
  const logger = createLogger({ name: 'hnc' });
  if (ignored.length) logger.warn({ flags: ignored }, 'ignoring HNC flags that hnc-ts does not need');
  const given = flags.kubeconfig ?? process.env.KUBECONFIG;
  const inCluster = !given && !!process.env.KUBERNETES_SERVICE_HOST && existsSync(IN_CLUSTER_TOKEN);
  let cp: LocalControlPlane | undefined;
  let client: KubeClient;
  if (given || inCluster) {
    // The loader reads a KUBECONFIG list itself (merged as kubectl does).
    client = await KubeClient.fromKubeconfig(flags.kubeconfig, flags.context);
    process.stderr.write(`using the cluster at ${client.server}\n`);
    if (flags['install-crds']) await installCrds(client);
    else await checkCrds(client);
  } else {
    cp = await LocalControlPlane.start(flags.ephemeral ? {} : { stateDir: flags['state-dir'] ?? defaultStateDir(), persistent: true });
    const admin = await KubeClient.fromKubeconfig(cp.kubeconfigPath);
    await installCrds(admin);
    await installRbac(admin);
    client = await KubeClient.fromKubeconfig((await cp.mintUser(MANAGER_USER, MANAGER_GROUPS)).kubeconfigPath);
    process.stderr.write(`local control plane ready in ${cp.startSeconds.toFixed(1)} s at ${cp.server} (state in ${cp.stateDir})\n`);
    if (cp.binaries.kubectl) process.stderr.write(`a kubectl of the same version: ${cp.binaries.kubectl}\n`);
    console.log(`export KUBECONFIG=${cp.kubeconfigPath}`);
  }
  let hnc: Hnc | undefined;
  if (!flags['cluster-only']) {
    // Locally, webhooks are registered by URL on 127.0.0.1; in a cluster, through the Service.
    const local = !!cp;
    hnc = await startHnc({
      client,
      policy: manager.policy,
      namespace: manager.namespace,
      logger,
      workers: manager.workers,
      objectWorkers: manager.objectWorkers,
      qps: manager.qps,
      propagation: manager.propagation,
      webhooks: manager.webhooks
        ? {
            port: local && flags['webhook-server-port'] === undefined ? 0 : manager.webhookPort,
            host: local ? '127.0.0.1' : undefined,
            endpoint: (port) => (local ? { url: `https://127.0.0.1:${port}` } : { service: { namespace: manager.namespace, name: 'hnc-webhook-service' } }),
            certDir: manager.certDir,
          }
        : false,
      leaderElection: manager.leaderElection
        ? { id: manager.leaderElectionId, leaseDurationMs: manager.leaseSeconds * 1000, renewDeadlineMs: (manager.leaseSeconds * 2000) / 3, retryPeriodMs: Math.min(2000, (manager.leaseSeconds * 1000) / 4) }
        : undefined,
      healthAddress: local && flags['health-probe-bind-address'] === undefined ? '' : manager.healthAddress,
      metricsAddress: local && flags['metrics-addr'] === undefined ? '' : manager.metricsAddress,
    });
  }
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`${signal}: stopping ...\n`);
    await hnc?.stop();
    await cp?.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  const ports = hnc ? [hnc.probePorts.health && `probes on :${hnc.probePorts.health}`, hnc.probePorts.metrics && `metrics on :${hnc.probePorts.metrics}`].filter(Boolean) : [];
  process.stderr.write(`${hnc ? 'HNC is running' : 'running'}${ports.length ? ` (${ports.join(', ')})` : ''}; Ctrl-C stops\n`);
  // Keep the process alive until a signal arrives.
  setInterval(() => undefined, 1 << 30);
}

async function checkCrds(client: KubeClient): Promise<void> {
  const missing: string[] = [];
  for (const crd of loadCrds()) {
    try {
      await client.get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`);
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) missing.push(crd.metadata.name);
      else throw err;
    }
  }
  if (missing.length) throw new ControlPlaneError(`the cluster lacks the HNC CRDs ${missing.join(', ')}: run again with --install-crds, or kubectl apply -k crds/`);
}

main().catch((err: unknown) => {
  const known = err instanceof ControlPlaneError || err instanceof ApiError || err instanceof FlagError || err instanceof PolicyError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
  process.stderr.write(`hnc: ${known ? (err as Error).message : err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
