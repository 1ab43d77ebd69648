// One local control plane and one real node for the whole e2e run, the HNC image built from the
// Dockerfile and imported into the node, and dist/install.yaml rendered with that image. Before
// that node starts, a node started in a child process is killed (node-recovery.ts): the suite's
// node start is the recovery, and the teardown proves the host is as it was before both.
import type { TestProject } from 'vitest/node';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { LocalControlPlane } from '../../local-cluster/index.js';
import { leftovers, prepareLocalNode, recoverHost, startLocalNode, type LocalNode } from '../../local-cluster/node/index.js';
import { renderInstall } from '../../scripts/build-install.js';
import { rmSync, writeFileSync } from 'node:fs';
import { crashANode, type RecoveryReport } from './node-recovery.js';
import { hostDiff, snapshotHost, type HostState } from './host-state.js';

/** The image under test, and a second tag of it for the rolling update. */
export const HNC_IMAGE = 'localhost/hnc-ts:e2e';
export const HNC_IMAGE_NEXT = 'localhost/hnc-ts:e2e-next';

declare module 'vitest' {
  export interface ProvidedContext {
    /** dist/install.yaml rendered with HNC_IMAGE. */
    installYaml: string;
    nodeStateDir: string;
    containerdSocket: string;
    /** The crash rehearsal: what the killed node left and what the next start did about it. */
    nodeRecovery: RecoveryReport;
  }
}

const log = (l: string) => process.stderr.write(l.endsWith('\n') ? l : `${l}\n`);
const secs = (t0: number) => ((Date.now() - t0) / 1000).toFixed(1);

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) {
    throw new Error(
      'npm run test:e2e needs Linux and root: it runs a real node (containerd, kubelet) and changes iptables (docs/real-node.md)',
    );
  }
  const t0 = Date.now();
  // Packages, binaries and images first: none of it needs the control plane.
  const prepared = await prepareLocalNode({ hncImage: HNC_IMAGE, log });
  log(`e2e: packages, node binaries and images ready in ${secs(t0)} s`);
  // A run killed on this host (a cancelled job) left its node's changes and journal. Undo them
  // first, as any node start would, so that the host the teardown compares with is without them.
  recoverHost(log);
  const cp = await LocalControlPlane.start({ withNode: true, log });
  log(`e2e: control plane ready in ${cp.startSeconds.toFixed(1)} s`);
  let node: LocalNode | undefined;
  let before: HostState | undefined;
  try {
    const crashed = await crashANode(cp, prepared, log);
    before = crashed.before;
    // This start finds the killed run's journal and must undo what it left, by itself.
    const recoveryLog: string[] = [];
    node = await startLocalNode(cp, {
      prepared,
      log: (l) => {
        if (/previous run|undone|cleanup/.test(l)) recoveryLog.push(l.trim());
        log(l);
      },
    });
    log(`e2e: node Ready in ${node.startSeconds.toFixed(1)} s (images imported; ${secs(t0)} s from the start)`);
    const recovery = await crashed.report(recoveryLog, node.startSeconds);
    project.provide('nodeRecovery', recovery);
    log(`e2e: crash rehearsal and recovery took ${recovery.seconds.rehearsal.toFixed(1)} s (${JSON.stringify(recovery.seconds)})`);
    node.ctr(['images', 'tag', '--force', HNC_IMAGE, HNC_IMAGE_NEXT]);
    const installYaml = join(cp.stateDir, 'install.yaml');
    writeFileSync(installYaml, renderInstall({ image: HNC_IMAGE }).yaml);
    project.provide('kubeconfig', cp.kubeconfigPath);
    project.provide('stateDir', cp.stateDir);
    project.provide('server', cp.server);
    project.provide('kubectl', cp.binaries.kubectl ?? 'kubectl');
    project.provide('pluginDir', join(cp.stateDir, 'bin'));
    project.provide('installYaml', installYaml);
    project.provide('nodeStateDir', node.stateDir);
    project.provide('containerdSocket', node.containerdSocket);
  } catch (err) {
    // The error is what the run reports: a failing clean-up is logged, not thrown in its place.
    const cleanUp = async (what: string, fn: () => unknown) => {
      try {
        await fn();
      } catch (e) {
        log(`e2e: after the failed setup, ${what} failed too: ${(e as Error).message}`);
      }
    };
    await cleanUp('stopping the node', () => node?.stop());
    // A failed rehearsal leaves its node's daemons, mounts and rules (before the control plane's
    // folder, which holds its state, can go).
    await cleanUp("undoing the rehearsal node's changes", () => recoverHost(log));
    await cleanUp('stopping the control plane', () => cp.stop());
    rmSync(prepared.imageDir, { recursive: true, force: true });
    throw err;
  }
  return async () => {
    if (process.env.HNC_E2E_KEEP) {
      log(`e2e: HNC_E2E_KEEP is set: leaving the node and control plane running (export KUBECONFIG=${cp.kubeconfigPath})`);
      return;
    }
    // The pods' logs are gone with the node: keep the manager's for a failed run.
    spawnSync('sh', ['-c', `cp -r ${node!.stateDir}/pod-logs /tmp/hnc-e2e-pod-logs 2>/dev/null || true`]);
    await node?.stop();
    await cp.stop();
    rmSync(prepared.imageDir, { recursive: true, force: true });
    // The host is as it was before the killed node and this one: no bridge, no chain of the
    // node's, no pod network namespace, no mount, process or sysctl of theirs.
    const left = [...leftovers(), ...(before ? hostDiff(before, snapshotHost()) : [])];
    if (left.length) throw new Error(`the node left changes on the host:\n${left.join('\n')}`);
  };
}
