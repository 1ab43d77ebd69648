// Where the control plane's binaries come from: KUBEBUILDER_ASSETS when set, else the cache that
// build.sh fills from the official Go modules (built once, keyed by versions).
import { existsSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lastLine, runScript } from '../kube/script.js';

export interface Binaries {
  etcd: string;
  apiserver: string;
  /** Absent only when KUBEBUILDER_ASSETS supplies no controller-manager and no build exists. */
  controllerManager?: string;
  /** kubectl of the same version, when built here. */
  kubectl?: string;
  source: string;
}

export class ControlPlaneError extends Error {
  override name = 'ControlPlaneError';
}

const buildScript = join(dirname(fileURLToPath(import.meta.url)), 'build.sh');

/** Runs build.sh (a no-op when the cache is complete) and returns the folder it built into. */
export async function buildBinaries(log: (line: string) => void = (l) => process.stderr.write(l)): Promise<string> {
  const out = await runScript(buildScript, ['--print-dir'], log, (m) => new ControlPlaneError(`building the local control plane: ${m}`));
  if (!out) throw new ControlPlaneError(`building the local control plane: ${buildScript} printed no folder`);
  return lastLine(out);
}

export async function findBinaries(log?: (line: string) => void): Promise<Binaries> {
  const assets = process.env.KUBEBUILDER_ASSETS;
  if (assets) {
    const etcd = join(assets, 'etcd');
    const apiserver = join(assets, 'kube-apiserver');
    for (const bin of [etcd, apiserver]) {
      if (!existsSync(bin)) throw new ControlPlaneError(`KUBEBUILDER_ASSETS=${assets} has no ${bin.split('/').pop()}`);
    }
    const kcm = join(assets, 'kube-controller-manager');
    if (existsSync(kcm)) return { etcd, apiserver, controllerManager: kcm, source: assets };
    // envtest assets carry no controller-manager: take ours from the build when it exists.
    const built = await buildBinaries(log).catch(() => undefined);
    const builtKcm = built && join(built, 'kube-controller-manager');
    return { etcd, apiserver, controllerManager: builtKcm && existsSync(builtKcm) ? builtKcm : undefined, source: assets };
  }
  const dir = await buildBinaries(log);
  return {
    etcd: join(dir, 'etcd'),
    apiserver: join(dir, 'kube-apiserver'),
    controllerManager: join(dir, 'kube-controller-manager'),
    kubectl: join(dir, 'kubectl'),
    source: dir,
  };
}
