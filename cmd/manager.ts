// The manager's production entry point: the image runs it (Dockerfile ENTRYPOINT) with the
// install manifests' args. Flags → client (the pod's service account, or --kubeconfig) → CRD
// check → HNC until SIGTERM. It imports nothing of the local control plane: that is npm start's
// launcher (cmd/start.ts), and the image never ships it (tested by deploy/manifests.test.ts).
import { KubeClient } from '../kube/client.js';
import { createLogger } from '../kube/log.js';
import { MANAGER_FLAG_HELP, managerFlagsFrom, parseCommandLine } from './flags.js';
import { checkCrds, describeStartupError, runningInCluster, runUntilSignal, startHncFromFlags, webhookPlacement } from './run-hnc.js';

const usage = `Usage: node cmd/manager.js [--kubeconfig PATH] [--context NAME] [manager flags]

Runs HNC (controller and webhooks) against the cluster it is in (its service account), or the one
--kubeconfig / KUBECONFIG names. The HNC CRDs must be installed. Webhooks are registered through
the Service hnc-webhook-service in HNC's namespace; run outside the cluster, by URL instead (see
--webhook-host), or not at all.

${MANAGER_FLAG_HELP}`;

async function main(): Promise<void> {
  const { values: flags, given, ignored } = parseCommandLine(process.argv.slice(2), {});
  if (flags.help) {
    process.stdout.write(usage);
    return;
  }
  const manager = managerFlagsFrom(flags);
  const logger = createLogger({ name: 'hnc' });
  if (ignored.length) logger.warn({ flags: ignored }, 'ignoring flags hnc-ts does not need (HNC flags, or retired hnc-ts flags)');
  const client = await KubeClient.fromKubeconfig(flags.kubeconfig, flags.context);
  await checkCrds(client);
  const webhooks = webhookPlacement(manager, { inCluster: runningInCluster(flags.kubeconfig), server: client.server });
  const hnc = await startHncFromFlags(client, manager, logger, { local: false, given, webhooks });
  logger.info({ server: client.server }, 'HNC is running');
  runUntilSignal(() => hnc.stop(), { fatal: hnc.failed });
}

main().catch((err: unknown) => {
  process.stderr.write(`${describeStartupError(err)}\n`);
  process.exit(1);
});
