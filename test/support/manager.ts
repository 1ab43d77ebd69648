// Runs the real manager in the test process, as its own service account bound only to the
// shipped ClusterRole (deploy/rbac/manager.yaml): a missing permission fails the test.
import { join } from 'node:path';
import { inject } from 'vitest';
import { Manager } from '../../controller/manager.js';
import { HierarchyPolicy, type PolicyOptions } from '../../core/hierarchy/policy.js';
import { KubeClient } from '../../kube/client.js';
import { MANAGER_GROUPS, MANAGER_USER } from '../../kube/install.js';
import { createLogger } from '../../kube/log.js';
import { mintUser } from '../control-plane/index.js';

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
