// The real `kubectl hns` (kubectl's plugin lookup on PATH finds the built bundle) against the real
// control plane with the manager running: output texts and exit codes, as admin and as a team lead.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Manager } from '../../controller/manager.js';
import { TestCluster, eventually, eventuallyEqual, kubectl } from '../support/cluster.js';
import { startManager } from '../support/manager.js';
import { namespaceExists } from '../support/hnc.js';

let cluster: TestCluster;
let manager: Manager;
let team: string;
let other: string;
let alice: string;

beforeAll(async () => {
  cluster = await TestCluster.connect();
  manager = await startManager('kubectl-hns');
  team = await cluster.namespace('team');
  other = await cluster.namespace('other');
  await cluster.admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${team}/rolebindings`, {
    metadata: { name: 'alice-admin' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
  });
  alice = (await cluster.user('alice')).kubeconfigPath;
});
afterAll(async () => {
  await manager?.stop();
  await cluster.cleanup();
});

const hns = (kubeconfig: string, ...args: string[]) => kubectl(kubeconfig, ['hns', ...args]);

describe('kubectl hns', () => {
  it('creates a subnamespace, shows it in the tree and in describe, and deletes it', async () => {
    const dev = TestCluster.uniqueName('dev');
    const created = await hns(cluster.kubeconfigPath, 'create', dev, '-n', team);
    expect(created).toMatchObject({ code: 0, stdout: `Successfully created "${dev}" subnamespace anchor in "${team}" namespace\n` });
    await eventuallyEqual(async () => (await hns(cluster.kubeconfigPath, 'tree', team)).stdout, `${team}\n└── [s] ${dev}\n\n[s] indicates subnamespaces\n`, 'the tree');
    const described = await hns(cluster.kubeconfigPath, 'describe', dev);
    expect(described.code).toBe(0);
    expect(described.stdout).toContain(`Hierarchy configuration for namespace ${dev}\n  Parent: ${team}\n`);
    const json = JSON.parse((await hns(cluster.kubeconfigPath, 'tree', team, '-o', 'json')).stdout);
    expect(json.trees[0]).toMatchObject({ name: team, children: [{ name: dev, subnamespace: true }] });
    const deleted = await hns(cluster.kubeconfigPath, 'delete', dev, '-n', team);
    expect(deleted).toMatchObject({ code: 0, stdout: `Successfully deleted "${dev}" subnamespace anchor in "${team}" namespace\n` });
    await eventuallyEqual(() => namespaceExists(cluster.admin, dev), false, 'the subnamespace to be deleted', 60_000);
  });

  it('sets and unsets a parent with HNC texts, and says when nothing changes', async () => {
    const prod = await cluster.namespace('prod');
    expect(await hns(cluster.kubeconfigPath, 'set', prod, '--parent', team)).toMatchObject({
      code: 0,
      stdout: `Setting the parent of ${prod} to ${team}\nSuccesfully updated 1 property of the hierarchical configuration of ${prod}\n`,
    });
    expect(await hns(cluster.kubeconfigPath, 'set', prod, '--parent', team)).toMatchObject({ code: 0, stdout: `Parent of ${prod} is already ${team}; unchanged\nNo changes made\n` });
    await eventually(async () => ((await hns(cluster.kubeconfigPath, 'tree', team)).stdout.includes(`── ${prod}\n`) ? true : undefined), 'the tree to show the new child');
    expect((await hns(cluster.kubeconfigPath, 'set', prod, '--root')).stdout).toBe(`Unsetting the parent of ${prod} (was previously ${team})\nSuccesfully updated 1 property of the hierarchical configuration of ${prod}\n`);
  });

  it('prints one clear line and exits 1 on misuse, on an RBAC denial and on an unreachable cluster', async () => {
    expect(await hns(cluster.kubeconfigPath, 'create', 'x')).toMatchObject({ code: 1, stderr: 'Error: parent must be set via --namespace or -n\n' });
    const denied = await hns(alice, 'create', TestCluster.uniqueName('nope'), '-n', other);
    expect(denied.code).toBe(1);
    expect(denied.stderr.trim().split('\n')).toHaveLength(1);
    expect(denied.stderr).toMatch(/^Error: .*User "alice" cannot create resource "subnamespaceanchors" in API group "hnc.x-k8s.io" in the namespace "other-/);
    const unreachable = await kubectl(cluster.kubeconfigPath, ['hns', 'tree', team, '--server', 'https://127.0.0.1:1']);
    expect(unreachable.code).not.toBe(0);
  });

  it('lets a team lead create a subnamespace in the namespace she administers', async () => {
    const dev = TestCluster.uniqueName('alice-dev');
    expect(await hns(alice, 'create', dev, '-n', team)).toMatchObject({ code: 0 });
    await eventuallyEqual(() => namespaceExists(cluster.admin, dev), true, 'her subnamespace');
    // She cannot read the new namespace itself yet (no RoleBinding there until propagation): a
    // note, not a failure.
    await eventuallyEqual(async () => hns(alice, 'tree', team), { code: 0, stdout: `${team}\n└── ${dev} (no permission to read ${dev})\n`, stderr: '' }, 'her tree');
  });

  it('reports its version', async () => {
    const v = await hns(cluster.kubeconfigPath, 'version');
    expect(v.code).toBe(0);
    expect(v.stdout).toMatch(/v0\.1\.0/);
  });
});
