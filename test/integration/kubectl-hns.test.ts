// The real `kubectl hns` (kubectl's plugin lookup on PATH finds the built bundle) against the real
// control plane with the manager running: output texts and exit codes, as admin and as a team lead.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse } from 'yaml';
import type { Hnc } from '../../cmd/hnc.js';
import { TestCluster, eventually, eventuallyEqual, kubectl } from '../support/cluster.js';
import { removeWebhookConfigurations, startHncWithWebhooks } from '../support/manager.js';
import { namespaceExists } from '../support/hnc.js';
import { hierarchyConfigurationPath } from '../../core/api/paths.js';

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

/** The server, CA and (for a minted user) client certificate of a kubeconfig, as files for the flags. */
function credentialsOf(kubeconfigPath: string): { server: string; ca: string; cert?: string; key?: string } {
  type Raw = {
    clusters: Array<{ cluster: Record<string, string> }>;
    users: Array<{ user: Record<string, string> }>;
  };
  const raw = parse(readFileSync(kubeconfigPath, 'utf8')) as Raw;
  const dir = mkdtempSync(join(tmpdir(), 'hns-flags-'));
  const file = (name: string, data: string | undefined, path: string | undefined): string | undefined => {
    if (path) return path;
    if (!data) return undefined;
    writeFileSync(join(dir, name), Buffer.from(data, 'base64'));
    return join(dir, name);
  };
  const c = raw.clusters[0]?.cluster ?? {};
  const u = raw.users[0]?.user ?? {};
  return {
    server: c.server ?? '',
    ca: file('ca.crt', c['certificate-authority-data'], c['certificate-authority']) ?? '',
    cert: file('client.crt', u['client-certificate-data'], u['client-certificate']),
    key: file('client.key', u['client-key-data'], u['client-key']),
  };
}

/** `kubectl hns ARGS` left running: its stdout as it comes, line by line. */
function follow(kubeconfigPath: string, args: string[]) {
  const env = { ...process.env, KUBECONFIG: kubeconfigPath, PATH: `${inject('pluginDir')}:${process.env.PATH ?? ''}`, NO_COLOR: '1' };
  const child = spawn(inject('kubectl'), ['hns', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const out = { stdout: '', stderr: '', exited: false, code: null as number | null };
  child.stdout.on('data', (d: Buffer) => (out.stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out.stderr += d.toString()));
  child.on('close', (code) => {
    out.exited = true;
    out.code = code;
  });
  return {
    out,
    /** Waits until a line of stdout matches. */
    line: (re: RegExp, what: string) =>
      eventually(async () => {
        if (out.exited) throw new Error(`kubectl hns exited: ${out.stderr}`);
        return out.stdout.split('\n').find((l) => re.test(l));
      }, what),
    stop: () => child.kill('SIGTERM'),
    /** Stops reading, as `| head -1` does once it has its line. */
    closeStdout: () => child.stdout.destroy(),
  };
}

const secret = (ns: string, name: string, labels: Record<string, string> = {}) =>
  cluster.admin.create(`/api/v1/namespaces/${ns}/secrets`, { metadata: { name, labels }, stringData: { k: 'v' } });

describe('kubectl hns flags as kubectl users type them', () => {
  it('takes --flag=true, short forms, and global flags before the command', async () => {
    const ns = await cluster.namespace('flags');
    expect(await hns(cluster.kubeconfigPath, 'set', ns, '--allowCascadingDeletion=true')).toMatchObject({
      code: 0,
      stdout: `Allowing cascading deletion on '${ns}'\nSuccesfully updated 1 property of the hierarchical configuration of ${ns}\n`,
    });
    const hc = await cluster.admin.get<{ spec: { allowCascadingDeletion?: boolean } }>(hierarchyConfigurationPath(ns, 'hierarchy'));
    expect(hc.spec.allowCascadingDeletion).toBe(true);
    expect((await hns(cluster.kubeconfigPath, 'set', ns, '-f')).stdout).toContain(`Forbidding cascading deletion on '${ns}'`);
    const child = TestCluster.uniqueName('flagchild');
    expect(await hns(cluster.kubeconfigPath, '--namespace', ns, 'create', child)).toMatchObject({ code: 0 });
    await eventuallyEqual(() => namespaceExists(cluster.admin, child), true, 'the subnamespace');
    await secret(child, 'in-child');
    await eventually(async () => {
      const got = await hns(cluster.kubeconfigPath, '--namespace', ns, 'get', 'secret', '-o=name');
      return got.stdout === 'secret/in-child\n' ? got : undefined;
    }, 'get through a global flag before the command');
    expect(await hns(cluster.kubeconfigPath, 'delete', '-a', child, '-n', ns)).toMatchObject({ code: 0 });
  });

  it('applies kubectl’s connection flags: --server, --token, --certificate-authority, client certificates, --as', async () => {
    const admin = credentialsOf(cluster.kubeconfigPath);
    const carolFiles = credentialsOf((await cluster.user('flag-carol')).kubeconfigPath);
    const ns = await cluster.namespace('conn');
    // A service account, admin of ns, and a token for it.
    await cluster.admin.create(`/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: 'bot' } });
    await cluster.admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
      metadata: { name: 'bot-admin' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
      subjects: [{ kind: 'ServiceAccount', name: 'bot', namespace: ns }],
    });
    const { status } = await cluster.admin.create<{ status: { token: string } }>(`/api/v1/namespaces/${ns}/serviceaccounts/bot/token`, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: 600 },
    });
    await secret(ns, 'conn-secret');
    const none = ['--kubeconfig', '/dev/null'];

    // No kubeconfig at all: the flags say where and who.
    const viaToken = await hns(
      cluster.kubeconfigPath,
      'get',
      'secrets',
      ...none,
      '-n',
      ns,
      `--server=${admin.server}`,
      `--token=${status.token}`,
      `--certificate-authority=${admin.ca}`,
      '-o',
      'name',
    );
    expect(viaToken).toEqual({ code: 0, stdout: 'secret/conn-secret\n', stderr: '' });
    expect(
      await hns(cluster.kubeconfigPath, 'tree', ns, ...none, '-s', admin.server, '--token', status.token, '--insecure-skip-tls-verify'),
    ).toMatchObject({
      code: 0,
      stdout: `${ns}\n`,
    });
    // --token overrides the kubeconfig's own (admin) credentials: a wrong one is refused.
    const bad = await hns(cluster.kubeconfigPath, 'tree', ns, '--token=not-a-token');
    expect(bad).toMatchObject({ code: 1, stderr: 'Error: You must be logged in to the server (Unauthorized)\n' });
    // --server overrides the kubeconfig's server.
    const elsewhere = await hns(cluster.kubeconfigPath, 'tree', ns, '--server', 'https://127.0.0.1:1');
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toMatch(/^Error: Unable to connect to the server at https:\/\/127\.0\.0\.1:1: .*ECONNREFUSED/);
    // --tls-server-name: the API server's certificate names kubernetes.default, not wrong.example.
    const named = (name: string) =>
      hns(
        cluster.kubeconfigPath,
        'tree',
        ns,
        ...none,
        '--server',
        admin.server,
        '--certificate-authority',
        admin.ca,
        '--token',
        status.token,
        '--tls-server-name',
        name,
      );
    expect((await named('kubernetes.default')).code).toBe(0);
    expect((await named('wrong.example')).stderr).toMatch(/wrong\.example/);
    // Client certificate flags: carol may not read ns, as herself.
    const asCarol = await hns(
      cluster.kubeconfigPath,
      'tree',
      ns,
      ...none,
      '--server',
      admin.server,
      '--certificate-authority',
      admin.ca,
      '--client-certificate',
      carolFiles.cert ?? '',
      '--client-key',
      carolFiles.key ?? '',
    );
    expect(asCarol.code).toBe(1);
    expect(asCarol.stderr).toContain('User "flag-carol" cannot get resource');
    // --as impersonates; --as-group adds groups.
    const impersonated = await hns(cluster.kubeconfigPath, 'create', 'x', '-n', ns, '--as', 'mallory');
    expect(impersonated.code).toBe(1);
    expect(impersonated.stderr).toContain('User "mallory" cannot create resource "subnamespaceanchors"');
    const withGroup = await hns(cluster.kubeconfigPath, 'tree', ns, '--as', 'mallory', '--as-group', 'system:masters');
    expect(withGroup).toMatchObject({ code: 0, stdout: `${ns}\n` });
  });
  it('authenticates through an exec credential plugin (client-node, compiled only for such users)', async () => {
    const admin = credentialsOf(cluster.kubeconfigPath);
    const ns = await cluster.namespace('exec');
    await cluster.admin.create(`/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: 'exec-bot' } });
    await cluster.admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
      metadata: { name: 'exec-bot-admin' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
      subjects: [{ kind: 'ServiceAccount', name: 'exec-bot', namespace: ns }],
    });
    const { status } = await cluster.admin.create<{ status: { token: string } }>(
      `/api/v1/namespaces/${ns}/serviceaccounts/exec-bot/token`,
      {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 600 },
      },
    );
    // The exec plugin prints the service account's token; the kubeconfig holds no other credential.
    const credential = JSON.stringify({
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      status: { token: status.token },
    });
    const kubeconfig = join(mkdtempSync(join(tmpdir(), 'hns-exec-')), 'config');
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: admin.server, 'certificate-authority': admin.ca } }],
        users: [
          {
            name: 'exec-user',
            user: {
              exec: {
                apiVersion: 'client.authentication.k8s.io/v1',
                command: process.execPath,
                args: ['-e', `process.stdout.write(${JSON.stringify(credential)})`],
                interactiveMode: 'Never',
              },
            },
          },
        ],
        contexts: [{ name: 'c', context: { cluster: 'c', user: 'exec-user' } }],
        'current-context': 'c',
      }),
    );
    expect(await hns(kubeconfig, 'tree', ns)).toEqual({ code: 0, stdout: `${ns}\n`, stderr: '' });
    // The server saw the service account: it may not read another namespace.
    const elsewhere = await hns(kubeconfig, 'tree', team);
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toContain(`system:serviceaccount:${ns}:exec-bot`);
  });
});

describe('kubectl hns get', () => {
  it('lists a resource across the subtree as the server’s table, -A, -o name|json, NAME, and --watch as events arrive', async () => {
    const root = await cluster.namespace('getroot');
    const sub = TestCluster.uniqueName('getsub');
    expect((await hns(cluster.kubeconfigPath, 'create', sub, '-n', root)).code).toBe(0);
    const outside = await cluster.namespace('getout');
    await eventuallyEqual(() => namespaceExists(cluster.admin, sub), true, 'the subnamespace');
    const label = { suite: root };
    await Promise.all([secret(root, 'a-root', label), secret(sub, 'b-sub', label), secret(outside, 'c-out', label)]);
    const lines = (out: string) => out.trimEnd().split('\n');
    const table = await eventually(async () => {
      const got = await hns(cluster.kubeconfigPath, 'get', 'secrets', '-n', root, '-l', `suite=${root}`);
      return lines(got.stdout).length === 3 ? got : undefined;
    }, 'both secrets of the subtree');
    expect(table.code).toBe(0);
    const [header, ...rows] = lines(table.stdout);
    expect(header).toMatch(/^NAMESPACE\s+NAME\s+TYPE\s+DATA\s+AGE$/);
    expect(rows[0]).toMatch(new RegExp(`^${root}\\s+a-root\\s+Opaque\\s+1\\s+\\d+s$`));
    expect(rows[1]).toMatch(new RegExp(`^${sub}\\s+b-sub\\s+Opaque\\s+1\\s+\\d+s$`));
    const all = await hns(cluster.kubeconfigPath, 'get', 'secrets', '-A', '-l', `suite=${root}`, '-o', 'name');
    expect(all.stdout.split('\n').sort()).toEqual(['', 'secret/a-root', 'secret/b-sub', 'secret/c-out']);
    const one = JSON.parse((await hns(cluster.kubeconfigPath, 'get', 'secret', 'b-sub', '-n', root, '-o', 'json')).stdout) as {
      items: Array<{ kind: string; metadata: { namespace: string } }>;
    };
    expect(one.items.map((o) => [o.kind, o.metadata.namespace])).toEqual([['Secret', sub]]);
    expect(await hns(cluster.kubeconfigPath, 'get', 'secrets', 'none', '-n', root)).toEqual({
      code: 0,
      stdout: '',
      stderr: `No resources found in the subtree of ${root}.\n`,
    });

    // --watch: the list, then each change as it happens, with nothing held back.
    const watch = follow(cluster.kubeconfigPath, ['get', 'secrets', '-n', root, '-l', `suite=${root}`, '--watch']);
    try {
      await watch.line(new RegExp(`^${sub}\\s+b-sub\\s`), 'the listed secret');
      await secret(sub, 'd-new', label);
      await watch.line(new RegExp(`^${sub}\\s+d-new\\s+Opaque`), 'the new secret, while the watch runs');
      await secret(outside, 'e-out', label);
      const late = TestCluster.uniqueName('getlate');
      expect((await hns(cluster.kubeconfigPath, 'create', late, '-n', sub)).code).toBe(0);
      // Once HNC has put it in the subtree (its tree label), its objects are the subtree's.
      await eventually(async () => {
        const ns = await cluster.admin.get<{ metadata: { labels?: Record<string, string> } }>(`/api/v1/namespaces/${late}`);
        return ns.metadata.labels?.[`${root}.tree.hnc.x-k8s.io/depth`];
      }, 'a subnamespace made during the watch, in the subtree');
      await secret(late, 'f-late', label);
      await watch.line(new RegExp(`^${late}\\s+f-late\\s`), 'the secret of a namespace that joined the subtree');
      expect(watch.out.stdout).not.toContain('e-out');
    } finally {
      watch.stop();
    }
    // A reader that stops early (`| head -1`): the next event ends the watch quietly, exit 0.
    const head = follow(cluster.kubeconfigPath, ['get', 'secrets', '-n', root, '-l', `suite=${root}`, '-w']);
    try {
      await head.line(new RegExp(`^${root}\\s+a-root\\s`), 'the first line');
      head.closeStdout();
      await secret(root, 'g-after-close', label);
      await eventually(async () => (head.out.exited ? true : undefined), 'the watch to end once its reader is gone');
      expect([head.out.code, head.out.stderr]).toEqual([0, '']);
    } finally {
      head.stop();
    }
  });

  it('shows a namespace admin the part of the subtree she may read, with a note', async () => {
    // dana is admin of her namespace and of one child (RoleBindings that do not propagate), not of the other.
    const home = await cluster.namespace('dana');
    const bind = (ns: string) =>
      cluster.admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
        metadata: { name: 'dana-admin', annotations: { 'propagate.hnc.x-k8s.io/none': 'true' } },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'dana' }],
      });
    await bind(home);
    const open = await cluster.namespace('danaopen');
    const closed = await cluster.namespace('danaclosed');
    await bind(open);
    for (const ns of [open, closed]) expect((await hns(cluster.kubeconfigPath, 'set', ns, '--parent', home)).code).toBe(0);
    await Promise.all([secret(home, 'h'), secret(open, 'o'), secret(closed, 'c')]);
    await eventually(async () => {
      const t = await hns(cluster.kubeconfigPath, 'get', 'secrets', '-n', home, '-o', 'name');
      return t.stdout === 'secret/h\nsecret/o\nsecret/c\n' || t.stdout === 'secret/h\nsecret/c\nsecret/o\n' ? t : undefined;
    }, 'the whole subtree, as admin');
    const dana = (await cluster.user('dana')).kubeconfigPath;
    const got = await hns(dana, 'get', 'secrets', '-n', home);
    expect(got.code).toBe(0);
    expect(got.stdout).toMatch(new RegExp(`^NAMESPACE\\s+NAME\\s+TYPE\\s+DATA\\s+AGE\\n${home}\\s+h\\s.*\\n${open}\\s+o\\s.*\\n$`));
    expect(got.stderr).toContain(`Note: no permission to read the hierarchy of ${closed}`);
    expect(got.stderr).toContain(`Note: no permission to list secrets in namespace ${closed}: left out\n`);
    // She may edit what goes below her open namespace (a RoleBinding HNC propagates).
    await cluster.admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${open}/rolebindings`, {
      metadata: { name: 'dana-edit' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'dana' }],
    });
    const kid = await cluster.namespace('danakid');
    await secret(kid, 'k');
    // Her watch (one per namespace she may read) sees her new secret as it is made, and follows
    // the subtree as it grows: a namespace moved under hers is listed and watched from then on.
    const watch = follow(dana, ['get', 'secrets', '-n', home, '-w']);
    try {
      await watch.line(new RegExp(`^${open}\\s+o\\s`), 'her listed secret');
      await secret(open, 'o2');
      await watch.line(new RegExp(`^${open}\\s+o2\\s`), 'her new secret');
      expect((await hns(cluster.kubeconfigPath, 'set', kid, '--parent', open)).code).toBe(0);
      await watch.line(new RegExp(`^${kid}\\s+k\\s`), 'the secret of a namespace that joined her subtree');
      await secret(kid, 'k2');
      await watch.line(new RegExp(`^${kid}\\s+k2\\s`), 'a new secret there');
      expect(watch.out.stderr).not.toContain(kid);
    } finally {
      watch.stop();
    }
  });
});
