// `npm start`: the developer launcher and the main job of a trial (the image runs cmd/manager.ts).
// With no cluster given, it starts the local control plane, installs
// the CRDs and HNC's RBAC, runs HNC there (controller and webhooks, as its own service account)
// and prints the KUBECONFIG to use. Given --kubeconfig, KUBECONFIG or an in-cluster service
// account, it runs HNC against that cluster and starts nothing.
import { LocalControlPlane, ControlPlaneError, defaultStateDir } from '../local-cluster/index.js';
import { prepareLocalNode, startLocalNode, type LocalNode } from '../local-cluster/node/index.js';
import { KubeClient } from '../kube/client.js';
import {
  installAnyKindGrant,
  installCrds,
  installRbac,
  installSecretsConfigMapsGrant,
  MANAGER_GROUPS,
  MANAGER_USER,
  removeAnyKindGrant,
} from '../kube/install.js';
import { createLogger } from '../kube/log.js';
import { MANAGER_FLAG_HELP, managerFlagsFrom, parseCommandLine } from './flags.js';
import type { Hnc } from './hnc.js';
import { checkCrds, describeStartupError, runningInCluster, runUntilSignal, startHncFromFlags, webhookPlacement } from './run-hnc.js';

const usage = `Usage: npm start -- [--kubeconfig PATH] [--context NAME] [--install-crds] [--state-dir DIR] [--ephemeral] [--node]
                    [--grant-secrets-configmaps | --no-grant-secrets-configmaps]
                    [--grant-any-kind | --no-grant-any-kind] [manager flags]
       npm run cluster [-- --node]   (the local control plane alone)

--node adds a real node to the local control plane (Linux, root): containerd, the kubelet,
kube-proxy, kube-scheduler and kube-router for NetworkPolicies, so pods run and policies are
enforced (docs/real-node.md). Missing system packages are installed with apt-get; every change
to the host is undone on Ctrl-C.

--grant-secrets-configmaps lets HNC's manager propagate Secrets and ConfigMaps (as HNC's quickstart
does), by applying deploy/optional/propagate-secrets-configmaps. On by default for the local
control plane (a trial cluster with nothing to protect); off by default on an existing cluster,
where the manager stays least-privilege unless an admin asks.

--grant-any-kind lets it propagate any kind named in HNCConfiguration, as HNC's cluster-admin
manager could, by applying deploy/optional/propagate-any-kind: read and write access to every
resource, Secrets included (docs/deploy.md, "Propagating any kind"). On by default for the local
control plane, off on an existing cluster; --no-grant-any-kind removes it from the local one.

With no cluster given (no --kubeconfig, no KUBECONFIG, not in a pod), starts a local Kubernetes
control plane on 127.0.0.1 (state in ${defaultStateDir()}), installs the HNC CRDs and RBAC, prints
"export KUBECONFIG=..." and runs HNC there (controller and webhooks) until Ctrl-C. HNC acts as its
own service account (${MANAGER_USER}), bound only to the ClusterRole in deploy/rbac/.

${MANAGER_FLAG_HELP}`;

async function main(): Promise<void> {
  const {
    values: flags,
    given,
    ignored,
  } = parseCommandLine(process.argv.slice(2), {
    'install-crds': { type: 'boolean', default: false },
    'grant-secrets-configmaps': { type: 'boolean' },
    'no-grant-secrets-configmaps': { type: 'boolean' },
    'grant-any-kind': { type: 'boolean' },
    'no-grant-any-kind': { type: 'boolean' },
    'state-dir': { type: 'string' },
    // Only the local control plane, no HNC (`npm run cluster`).
    'cluster-only': { type: 'boolean', default: false },
    // A throwaway control plane in a temporary folder, removed on stop.
    ephemeral: { type: 'boolean', default: false },
    // A real node (containerd, kubelet, ...) on the local control plane.
    node: { type: 'boolean', default: false },
  });
  if (flags.help) {
    process.stdout.write(usage);
    return;
  }
  const manager = managerFlagsFrom(flags);
  // A trial user sees hierarchical quotas work unless they say --enable-hrq=false.
  if (!process.argv.some((a) => a.startsWith('--enable-hrq'))) manager.hrq = managerFlagsFrom({ ...flags, 'enable-hrq': true }).hrq;
  const logger = createLogger({ name: 'hnc' });
  if (ignored.length) logger.warn({ flags: ignored }, 'ignoring flags hnc-ts does not need (HNC flags, or retired hnc-ts flags)');
  const kubeconfig = flags.kubeconfig ?? process.env.KUBECONFIG;
  const inCluster = runningInCluster(kubeconfig);
  let cp: LocalControlPlane | undefined;
  let node: LocalNode | undefined;
  let hnc: Hnc | undefined;
  let client: KubeClient;
  if (kubeconfig || inCluster) {
    // The loader reads a KUBECONFIG list itself (merged as kubectl does).
    client = await KubeClient.fromKubeconfig(flags.kubeconfig, flags.context);
    process.stderr.write(`using the cluster at ${client.server}\n`);
    if (flags.node)
      throw new ControlPlaneError('--node adds a node to the local control plane only, not to a cluster given by a kubeconfig');
    if (flags['install-crds']) await installCrds(client);
    else await checkCrds(client);
    if (flags['grant-secrets-configmaps']) await installSecretsConfigMapsGrant(client);
    if (flags['grant-any-kind']) await installAnyKindGrant(client);
  } else {
    // A crashed component is restarted (within a limit); past it, everything stops with one line.
    const onFailure = (message: string) => {
      process.stderr.write(`hnc: ${message}\n`);
      const timer = setTimeout(() => process.exit(1), 10_000);
      timer.unref();
      void (async () => {
        await hnc?.stop().catch(() => undefined);
        await node?.stop().catch(() => undefined);
        await cp?.stop().catch(() => undefined);
        process.exit(1);
      })();
    };
    // The node's packages, binaries and images first (minutes the first time): none needs the control plane.
    const prepared = flags.node ? await prepareLocalNode() : undefined;
    cp = await LocalControlPlane.start({
      ...(flags.ephemeral ? {} : { stateDir: flags['state-dir'] ?? defaultStateDir(), persistent: true }),
      onFailure,
      withNode: flags.node,
    });
    if (flags.node) {
      try {
        node = await startLocalNode(cp, { prepared });
      } catch (err) {
        await cp.stop();
        throw err;
      }
      process.stderr.write(`local node ${node.name} Ready in ${node.startSeconds.toFixed(1)} s (logs in ${node.stateDir}/logs)\n`);
    }
    const admin = await KubeClient.fromKubeconfig(cp.kubeconfigPath);
    await installCrds(admin);
    await installRbac(admin);
    if (!flags['no-grant-secrets-configmaps']) await installSecretsConfigMapsGrant(admin);
    // A kept state folder may hold the grant from an earlier start: opting out takes it back.
    if (flags['no-grant-any-kind']) await removeAnyKindGrant(admin);
    else await installAnyKindGrant(admin);
    client = await KubeClient.fromKubeconfig((await cp.mintUser(MANAGER_USER, MANAGER_GROUPS)).kubeconfigPath);
    process.stderr.write(`local control plane ready in ${cp.startSeconds.toFixed(1)} s at ${cp.server} (state in ${cp.stateDir})\n`);
    if (cp.binaries.kubectl) process.stderr.write(`a kubectl of the same version: ${cp.binaries.kubectl}\n`);
    console.log(`export KUBECONFIG=${cp.kubeconfigPath}`);
  }
  if (!flags['cluster-only']) {
    // The local control plane reaches us on 127.0.0.1; another cluster through the Service only
    // when HNC runs in it, else by a URL it is proven to reach (or no webhooks, loudly).
    const webhooks = cp
      ? webhookPlacement(manager, { inCluster: false, server: cp.server })
      : webhookPlacement(manager, { inCluster, server: client.server });
    hnc = await startHncFromFlags(client, manager, logger, { local: !!cp, given, webhooks });
  }
  const ports = hnc
    ? [
        hnc.probePorts.health && `probes on :${hnc.probePorts.health}`,
        hnc.probePorts.metrics && `metrics on :${hnc.probePorts.metrics}`,
      ].filter(Boolean)
    : [];
  if (hnc && !hnc.webhooks) ports.push('WITHOUT webhooks');
  process.stderr.write(`${hnc ? 'HNC is running' : 'running'}${ports.length ? ` (${ports.join(', ')})` : ''}; Ctrl-C stops\n`);
  runUntilSignal(
    async () => {
      await hnc?.stop();
      await node?.stop();
      await cp?.stop();
    },
    // Cut short, the control plane's processes are killed and a throwaway folder (its CA key
    // included) is removed; a node's host changes are undone by the next start (docs/real-node.md).
    { abandon: () => cp?.abandon(), fatal: hnc?.failed },
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof ControlPlaneError ? `hnc: ${err.message}` : describeStartupError(err)}\n`);
  process.exit(1);
});
