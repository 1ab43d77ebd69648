// The real `kubectl hns` (kubectl's plugin lookup on PATH finds the built bundle) against the real
// control plane with the manager running: output texts and exit codes, as admin and as a team lead.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hnc } from '../../cmd/hnc.js';
import { TestCluster, eventually, eventuallyEqual, kubectl } from '../support/cluster.js';
import { removeWebhookConfigurations, startHncWithWebhooks } from '../support/manager.js';
import { namespaceExists } from '../support/hnc.js';

let cluster: TestCluster;
let hnc: Hnc;
let team: string;
let other: string;
let alice: string;
let bob: string;

const makeAdmin = (ns: string, user: string) =>
  cluster.admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
    metadata: { name: `${user}-admin` },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  });

beforeAll(async () => {
  cluster = await TestCluster.connect();
  hnc = await startHncWithWebhooks('kubectl-hns');
  team = await cluster.namespace('team-a');
  other = await cluster.namespace('team-b');
  await makeAdmin(team, 'alice');
  await makeAdmin(other, 'bob');
  alice = (await cluster.user('alice')).kubeconfigPath;
  bob = (await cluster.user('bob')).kubeconfigPath;
});
afterAll(async () => {
  await hnc?.stop();
  await removeWebhookConfigurations();
  await cluster.cleanup();
});

const hns = (kubeconfig: string, ...args: string[]) => kubectl(kubeconfig, ['hns', ...args]);

describe('kubectl hns', () => {
  it('creates a subnamespace, shows it in the tree and in describe, and deletes it', async () => {
    const dev = TestCluster.uniqueName('dev');
    const created = await hns(cluster.kubeconfigPath, 'create', dev, '-n', team);
    expect(created).toMatchObject({ code: 0, stdout: `Successfully created "${dev}" subnamespace anchor in "${team}" namespace\n` });
    await eventuallyEqual(
      async () => (await hns(cluster.kubeconfigPath, 'tree', team)).stdout,
      `${team}\n└── [s] ${dev}\n\n[s] indicates subnamespaces\n`,
      'the tree',
    );
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
    expect(await hns(cluster.kubeconfigPath, 'set', prod, '--parent', team)).toMatchObject({
      code: 0,
      stdout: `Parent of ${prod} is already ${team}; unchanged\nNo changes made\n`,
    });
    await eventually(
      async () => ((await hns(cluster.kubeconfigPath, 'tree', team)).stdout.includes(`── ${prod}\n`) ? true : undefined),
      'the tree to show the new child',
    );
    expect((await hns(cluster.kubeconfigPath, 'set', prod, '--root')).stdout).toBe(
      `Unsetting the parent of ${prod} (was previously ${team})\nSuccesfully updated 1 property of the hierarchical configuration of ${prod}\n`,
    );
  });

  it('prints one clear line and exits 1 on misuse, on an RBAC denial and on an unreachable cluster', async () => {
    expect(await hns(cluster.kubeconfigPath, 'create', 'x')).toMatchObject({
      code: 1,
      stderr: 'Error: parent must be set via --namespace or -n\n',
    });
    const denied = await hns(alice, 'create', TestCluster.uniqueName('nope'), '-n', other);
    expect(denied.code).toBe(1);
    expect(denied.stderr.trim().split('\n')).toHaveLength(1);
    expect(denied.stderr).toMatch(
      /^Error: .*User "alice" cannot create resource "subnamespaceanchors" in API group "hnc.x-k8s.io" in the namespace "team-b-/,
    );
    const unreachable = await kubectl(cluster.kubeconfigPath, ['hns', 'tree', team, '--server', 'https://127.0.0.1:1']);
    expect(unreachable.code).not.toBe(0);
  });

  it('walks the self-service story as non-admin users', async () => {
    // alice, admin of team-a only, creates a subnamespace herself.
    const dev = TestCluster.uniqueName('dev');
    expect(await hns(alice, 'create', dev, '-n', team)).toEqual({
      code: 0,
      stdout: `Successfully created "${dev}" subnamespace anchor in "${team}" namespace\n`,
      stderr: '',
    });
    await eventuallyEqual(() => namespaceExists(cluster.admin, dev), true, 'her subnamespace');
    // She becomes admin of it through the propagated RoleBinding, and can create a Role there.
    await eventuallyEqual(
      async () => (await kubectl(alice, ['create', 'role', 'deployer', '--verb=get', '--resource=pods', '-n', dev])).code,
      0,
      'her Role in the subnamespace',
    );
    const copy = await cluster.admin.get<{ metadata: { labels: Record<string, string> } }>(
      `/apis/rbac.authorization.k8s.io/v1/namespaces/${dev}/rolebindings/alice-admin`,
    );
    expect(copy.metadata.labels['hnc.x-k8s.io/inherited-from']).toBe(team);
    // She sees her tree.
    expect(await hns(alice, 'tree', team)).toEqual({
      code: 0,
      stdout: `${team}\n└── [s] ${dev}\n\n[s] indicates subnamespaces\n`,
      stderr: '',
    });
    // She may not move it under team-b, nor create a subnamespace in team-b: one clear line each.
    const move = await hns(alice, 'set', dev, '--parent', other);
    expect(move.code).toBe(1);
    expect(move.stderr).toBe(
      `Error: admission webhook "hierarchyconfigurations.hnc.x-k8s.io" denied the request: Operation cannot be fulfilled on hierarchyconfigurations.hnc.x-k8s.io "hierarchy": illegal parent: Cannot set the parent of "${dev}" to "${other}" because it's a subnamespace of "${team}"\n`,
    );
    const create = await hns(alice, 'create', TestCluster.uniqueName('sneaky'), '-n', other);
    expect(create.code).toBe(1);
    expect(create.stderr).toMatch(
      new RegExp(
        `^Error: .*User "alice" cannot create resource "subnamespaceanchors" in API group "hnc.x-k8s.io" in the namespace "${other}"\n$`,
      ),
    );
    // bob, admin of team-b, can neither see nor change dev.
    const look = await kubectl(bob, ['get', 'namespace', dev]);
    expect(look.code).toBe(1);
    expect(look.stderr).toContain(`namespaces "${dev}" is forbidden: User "bob" cannot get resource "namespaces"`);
    const bobTree = await hns(bob, 'tree', dev);
    expect(bobTree.code).toBe(1);
    expect(bobTree.stderr).toContain('forbidden');
    const bobSet = await hns(bob, 'set', dev, '--root');
    expect(bobSet.code).toBe(1);
    expect(bobSet.stderr).toContain('User "bob" cannot');
  });

  it('describe lists inherited objects with their source, and --object explains why an object is or is not propagated', async () => {
    const parent = await cluster.namespace('src');
    const child = await cluster.namespace('dst');
    expect((await hns(cluster.kubeconfigPath, 'set', child, '--parent', parent)).code).toBe(0);
    const rbac = (ns: string) => `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`;
    const rules = [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }];
    await cluster.admin.create(rbac(parent), { metadata: { name: 'shared-reader' }, rules });
    await cluster.admin.create(rbac(parent), {
      metadata: { name: 'kept-home', annotations: { 'propagate.hnc.x-k8s.io/none': 'true' } },
      rules,
    });

    // describe: the inherited Role, with the namespace it comes from.
    const described = await eventually(async () => {
      const out = await hns(cluster.kubeconfigPath, 'describe', child);
      return out.stdout.includes(`  - Role/shared-reader (from ${parent})\n`) ? out : undefined;
    }, 'describe to list the inherited Role');
    expect(described.code).toBe(0);
    expect(described.stdout).toContain(`Hierarchy configuration for namespace ${child}\n  Parent: ${parent}\n`);
    expect(described.stdout).toContain('\nInherited objects:\n');
    expect(described.stdout).not.toContain('kept-home');

    // --object: the propagated Role, and the one its annotation keeps at home.
    expect(await hns(cluster.kubeconfigPath, 'describe', child, '--object', 'role/shared-reader')).toEqual({
      code: 0,
      stdout: [
        `Role shared-reader in namespace ${child}: propagated from ${parent}`,
        '  Type: roles (mode Propagate)',
        `  Ancestors, highest first: ${parent}`,
        `  - ${parent}: source, propagates to ${child}: it wins (the highest ancestor whose source does)`,
        `  In ${child}: a copy from ${parent} (hnc.x-k8s.io/inherited-from=${parent})`,
        '',
      ].join('\n'),
      stderr: '',
    });
    expect(await hns(cluster.kubeconfigPath, 'describe', child, '--object', 'roles.rbac.authorization.k8s.io/kept-home')).toEqual({
      code: 0,
      stdout: [
        `Role kept-home in namespace ${child}: not propagated`,
        '  Type: roles (mode Propagate)',
        `  Ancestors, highest first: ${parent}`,
        `  - ${parent}: source, not propagated to ${child}: propagate.hnc.x-k8s.io/none is "true"`,
        `  In ${child}: no Role of that name`,
        '',
      ].join('\n'),
      stderr: '',
    });
    // A name no ancestor holds, a type HNC does not handle, and a malformed --object.
    expect((await hns(cluster.kubeconfigPath, 'describe', child, '--object', 'Role/nothing')).stdout).toContain(
      `  No ancestor has a Role named nothing\n`,
    );
    const unknown = await hns(cluster.kubeconfigPath, 'describe', child, '--object', 'widgets/x');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^Error: HNC does not handle a type named "widgets"; the types it handles are roles, rolebindings.*\n$/);
    expect(await hns(cluster.kubeconfigPath, 'describe', child, '--object', 'nothing')).toMatchObject({
      code: 1,
      stdout: '',
      stderr: 'Error: --object must be TYPE/NAME, e.g. role/admin or secrets/db-password; got "nothing"\n',
    });
  });

  it('marks a subnamespace [s] in the tree even when the user may not read it', async () => {
    // carol is admin of her namespace only, through a RoleBinding that does not propagate: she may
    // list the anchors there, but not read the subnamespace an admin made under it.
    const home = await cluster.namespace('carol');
    await cluster.admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${home}/rolebindings`, {
      metadata: { name: 'carol-admin', annotations: { 'propagate.hnc.x-k8s.io/none': 'true' } },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'carol' }],
    });
    const carol = (await cluster.user('carol')).kubeconfigPath;
    const sub = TestCluster.uniqueName('hidden');
    expect((await hns(cluster.kubeconfigPath, 'create', sub, '-n', home)).code).toBe(0);
    await eventuallyEqual(
      async () => (await hns(cluster.kubeconfigPath, 'tree', home)).stdout,
      `${home}\n└── [s] ${sub}\n\n[s] indicates subnamespaces\n`,
      'the subnamespace in the tree',
    );
    expect(await hns(carol, 'tree', home)).toEqual({
      code: 0,
      stdout: `${home}\n└── [s] ${sub} (no permission to read ${sub})\n\n[s] indicates subnamespaces\n`,
      stderr: '',
    });
    // Her describe works too: what she may not read (the cluster-wide configuration) is a note.
    const described = await hns(carol, 'describe', home);
    expect(described).toMatchObject({ code: 0, stderr: '' });
    expect(described.stdout).toContain(`  Children:\n  - ${sub} (subnamespace)\n`);
    expect(described.stdout).toContain(
      '\nNo inherited objects (looked at roles, rolebindings)\n  (no permission to read HNCConfiguration config, so only roles and rolebindings were looked at)\n',
    );
    expect((await hns(cluster.kubeconfigPath, 'delete', sub, '-n', home, '-a')).code).toBe(0);
  });

  it('reports its version', async () => {
    const v = await hns(cluster.kubeconfigPath, 'version');
    expect(v.code).toBe(0);
    expect(v.stdout).toMatch(/v0\.1\.0/);
  });
});
