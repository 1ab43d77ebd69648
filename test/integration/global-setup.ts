// One real control plane for the whole integration run; test files isolate themselves by namespace.
import type { TestProject } from 'vitest/node';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LocalControlPlane } from '../../local-cluster/index.js';
import { KubeClient } from '../../kube/client.js';
import { installCrds, installRbac } from '../../kube/install.js';

declare module 'vitest' {
  export interface ProvidedContext {
    kubeconfig: string;
    stateDir: string;
    server: string;
    /** A kubectl of the cluster's version (ours when built, else the one on PATH). */
    kubectl: string;
    /** A folder holding `kubectl-hns` (the built bundle), for kubectl's plugin lookup on PATH. */
    pluginDir: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const cp = await LocalControlPlane.start({ log: (l) => process.stderr.write(l.endsWith('\n') ? l : `${l}\n`) });
  process.stderr.write(`control plane ready in ${cp.startSeconds.toFixed(1)} s at ${cp.server}\n`);
  try {
    const admin = await KubeClient.fromKubeconfig(cp.kubeconfigPath);
    await installCrds(admin);
    await installRbac(admin);
  } catch (err) {
    await cp.stop();
    throw err;
  }
  project.provide('kubeconfig', cp.kubeconfigPath);
  project.provide('stateDir', cp.stateDir);
  project.provide('server', cp.server);
  project.provide('kubectl', cp.binaries.kubectl ?? 'kubectl');
  const pluginDir = join(cp.stateDir, 'bin');
  mkdirSync(pluginDir, { recursive: true });
  const bundle = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'kubectl-hns.mjs');
  if (existsSync(bundle)) symlinkSync(bundle, join(pluginDir, 'kubectl-hns'));
  project.provide('pluginDir', pluginDir);
  return () => cp.stop();
}
