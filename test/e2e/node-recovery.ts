// The crash rehearsal of the local node (docs/real-node.md, "After a crash"), run by the e2e setup
// before the suite's own node starts: a node started in a child process, a pod running on it,
// then the child SIGKILLed. Its daemons are started through a stand-in for setpriv that gives
// them no parent-death signal and no pipe to the dead process, so they outlive it as orphans:
// the worst a crash leaves (with setpriv the kernel kills the daemons, but the container shims
// and the pods survive either way). The suite's node start that follows is the recovery: it must
// undo all of it by itself and reach Ready; the teardown then compares the host with `before`.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeClient, isNotFound } from '../../kube/client.js';
import { BRIDGE, BUSYBOX_IMAGE, kubeProxySynced, type NodeControlPlane, type PreparedNode } from '../../local-cluster/node/index.js';
import { eventually } from '../support/cluster.js';
import type { CrashNodeInput } from './crash-node.js';
import { hostDiff, snapshotHost, type HostState } from './host-state.js';

const here = import.meta.dirname;
const POD = '/api/v1/namespaces/default/pods/node-recovery-rehearsal';

export interface RecoveryReport {
  /** What the killed run left on the host (hostDiff against the host before it started). */
  leftAfterCrash: string[];
  /** The killed run's own processes, network namespaces, interfaces and container mounts still there after the next start. */
  crashedStillThere: string[];
  /** What the next start logged about the previous run. */
  recoveryLog: string[];
  seconds: { crashedNodeReady: number; podRunning: number; recoveryReady: number; rehearsal: number };
}

export interface Crashed {
  /** The host before the killed node started. */
  before: HostState;
  /** Completes the report once the next node (the recovery) is Ready. */
  report(recoveryLog: string[], recoveryReadySeconds: number): Promise<RecoveryReport>;
}

/** Starts a node in a child process, runs a pod on it, and SIGKILLs the child. */
export async function crashANode(cp: NodeControlPlane, prepared: PreparedNode, log: (l: string) => void): Promise<Crashed> {
  const t0 = Date.now();
  const before = snapshotHost();
  const scratch = mkdtempSync(join(tmpdir(), 'hnc-node-crash-'));
  const daemonLog = join(scratch, 'daemons.log');
  // What `setpriv --pdeathsig SIGKILL -- <daemon> <args>` becomes (local-cluster/process.ts).
  writeFileSync(
    join(scratch, 'setpriv'),
    `#!/bin/sh\n[ "$1" = --help ] && exit 0\nwhile [ "$1" != -- ]; do shift; done\nshift\nexec "$@" >>"${daemonLog}" 2>&1\n`,
  );
  chmodSync(join(scratch, 'setpriv'), 0o755);
  const input: CrashNodeInput = {
    cp: { stateDir: cp.stateDir, server: cp.server, kubeconfigPath: cp.kubeconfigPath },
    binaries: prepared.binaries,
    // The pause and busybox images only: HNC's is not needed to crash.
    images: prepared.images.filter((i) => /(pause|busybox)\.tar$/.test(i)),
  };
  const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'crash-node.ts'), JSON.stringify(input)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PATH: `${scratch}:${process.env.PATH ?? ''}` },
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
      void exited.then(() => reject(new Error(`the node to crash did not start:\n${stderr}\n${readTail(daemonLog)}`)));
    });
  } catch (err) {
    rmSync(scratch, { recursive: true, force: true });
    throw err;
  }
  const crashedNodeReady = (Date.now() - t0) / 1000;
  log(`e2e: node to crash Ready in ${crashedNodeReady.toFixed(1)} s`);
  const admin = await KubeClient.fromKubeconfig(cp.kubeconfigPath);
  await admin.create('/api/v1/namespaces/default/pods', {
    metadata: { name: 'node-recovery-rehearsal' },
    spec: {
      terminationGracePeriodSeconds: 0,
      containers: [{ name: 'main', image: BUSYBOX_IMAGE, imagePullPolicy: 'Never', command: ['sleep', '100000'] }],
    },
  });
  await eventually(
    async () => ((await admin.get<{ status: { phase?: string } }>(POD)).status.phase === 'Running' ? true : undefined),
    'the rehearsal pod to run',
    60_000,
  );
  // Mid-run means every daemon has made its changes: kube-proxy's complete first sync (a wait for
  // one of its filter chains once let the crash come before its nat rules) and kube-router's chains.
  const filter = () => spawnSync('iptables-save', ['-t', 'filter'], { encoding: 'utf8' }).stdout ?? '';
  try {
    await eventually(
      async () => (kubeProxySynced() && /^:KUBE-ROUTER-INPUT /m.test(filter()) ? true : undefined),
      "kube-proxy's and kube-router's rules",
      120_000,
    );
  } catch (err) {
    child.kill('SIGKILL');
    await exited;
    throw new Error(`${(err as Error).message}\nthe daemons' log:\n${readTail(daemonLog)}`);
  }
  const podRunning = (Date.now() - t0) / 1000;
  child.kill('SIGKILL');
  await exited;
  const crashed = snapshotHost();
  log(
    `e2e: node process killed ${podRunning.toFixed(1)} s after its start, a pod running; ${hostDiff(before, crashed).length} changes left`,
  );
  return {
    before,
    async report(recoveryLog, recoveryReady) {
      const after = snapshotHost();
      // The pod's object goes (its own namespace's pods are the suite's business).
      await admin
        .request('DELETE', POD, { body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0 } })
        .catch((e: unknown) => {
          if (!isNotFound(e)) throw e;
        });
      rmSync(scratch, { recursive: true, force: true });
      // Process ids, namespace, veth and container ids are new in every run: any of the killed
      // run's still there was not cleaned. (Rules, sysctls and the bridge come back with the new
      // node: the teardown's comparison with `before` covers them.)
      const own = (key: 'processes' | 'netns' | 'links' | 'mounts', keep: (x: string) => boolean) => {
        const was = new Set(before[key]);
        const now = new Set(after[key]);
        return crashed[key].filter((x) => !was.has(x) && keep(x) && now.has(x)).map((x) => `${key}: ${x}`);
      };
      return {
        leftAfterCrash: hostDiff(before, crashed),
        crashedStillThere: [
          ...own('processes', () => true),
          ...own('netns', () => true),
          ...own('links', (l) => l !== BRIDGE),
          ...own('mounts', (m) => m.includes('/containerd/')),
        ],
        recoveryLog,
        seconds: { crashedNodeReady, podRunning, recoveryReady, rehearsal: (Date.now() - t0) / 1000 },
      };
    },
  };
}

function readTail(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-30).join('\n');
  } catch {
    return '';
  }
}
