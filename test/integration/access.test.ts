// `kubectl hns access` (beyond HNC) on the real control plane with the manager running: grants read
// from the RoleBindings HNC really propagated, as admin and as namespace admins who may read only
// part of a tree, and the view after a real move.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hnc } from '../../cmd/hnc.js';
import { TestCluster, eventually, eventuallyEqual, kubectl } from '../support/cluster.js';
import { setParent } from '../support/hnc.js';
import { removeWebhookConfigurations, startHncWithWebhooks } from '../support/manager.js';

let cluster: TestCluster;
let hnc: Hnc;

beforeAll(async () => {
  cluster = await TestCluster.connect();
  hnc = await startHncWithWebhooks('access');
});
afterAll(async () => {
  await hnc?.stop();
  await removeWebhookConfigurations();
  await cluster.cleanup();
});

const hns = (kubeconfig: string, ...args: string[]) => kubectl(kubeconfig, ['hns', ...args]);

type SubjectSpec = { kind: 'User' | 'Group'; name: string };

async function bind(ns: string, name: string, role: string, subject: SubjectSpec, annotations: Record<string, string> = {}): Promise<void> {
  await cluster.admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
    metadata: { name, annotations },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', ...subject }],
  });
}

interface GrantJson {
  namespace: string;
  subject: { kind: string; name: string };
  role: { kind: string; name: string };
  binding: string;
  origin: string;
  from?: string;
}

/** The grants `access ... -o json` prints, as `ns subject role binding origin` lines. */
async function grants(kubeconfig: string, ...args: string[]): Promise<string[]> {
  const out = await hns(kubeconfig, 'access', ...args, '-o', 'json');
  if (out.code !== 0) throw new Error(`kubectl hns access failed: ${out.stderr}`);
  const doc = JSON.parse(out.stdout) as { grants: GrantJson[] };
  return doc.grants.map(
    (g) =>
      `${g.namespace} ${g.subject.kind}:${g.subject.name} ${g.role.name} ${g.binding} ${g.origin === 'own' ? 'own' : `from ${g.from}`}`,
  );
}

describe('kubectl hns access', () => {
  // org -> team-a -> svc, and team-c (a second tree). ops holds view from org and edit from team-a.
  let org: string;
  let teamA: string;
  let svc: string;
  let teamC: string;
  const ops: SubjectSpec = { kind: 'Group', name: TestCluster.uniqueName('ops') };
  const teamB: SubjectSpec = { kind: 'Group', name: TestCluster.uniqueName('team-b') };
  const teamCGroup: SubjectSpec = { kind: 'Group', name: TestCluster.uniqueName('team-c') };
  const alice: SubjectSpec = { kind: 'User', name: TestCluster.uniqueName('alice') };

  beforeAll(async () => {
    org = await cluster.namespace('org');
    teamA = await cluster.namespace('team-a');
    svc = await cluster.namespace('svc');
    teamC = await cluster.namespace('team-c');
    await setParent(cluster.admin, teamA, org);
    await setParent(cluster.admin, svc, teamA);
    await bind(org, 'ops-view', 'view', ops);
    await bind(teamA, 'ops-edit', 'edit', ops);
    await bind(teamA, 'team-b-admin', 'admin', teamB);
    await bind(teamA, 'alice-admin', 'admin', alice);
    await bind(teamC, 'team-c-admin', 'admin', teamCGroup);
    await bind(teamC, 'alice-view', 'view', alice);
    await eventually(async () => ((await grants(cluster.kubeconfigPath, svc)).length === 4 ? true : undefined), 'the copies in svc');
  });

  it('lists a subject with access through two inherited bindings with both, and every subject of the subtree with its origin', async () => {
    // Rows: the root first, then by namespace name.
    expect(await grants(cluster.kubeconfigPath, org, '--subject', `group:${ops.name}`)).toEqual([
      `${org} Group:${ops.name} view ops-view own`,
      ...[
        `${teamA} Group:${ops.name} edit ops-edit own`,
        `${teamA} Group:${ops.name} view ops-view from ${org}`,
        `${svc} Group:${ops.name} edit ops-edit from ${teamA}`,
        `${svc} Group:${ops.name} view ops-view from ${org}`,
      ].sort(),
    ]);
    const text = await hns(cluster.kubeconfigPath, 'access', teamA);
    expect(text.code).toBe(0);
    expect(text.stderr).toBe('');
    const rows = text.stdout.split('\n').map((l) => l.split(/\s{3,}/).join(' | '));
    expect(rows[0]).toBe('NAMESPACE | SUBJECT | ROLE | BINDING | ORIGIN');
    expect(rows).toContain(`${svc} | group ${teamB.name} | admin | team-b-admin | inherited from ${teamA}`);
    expect(rows).toContain(`${svc} | group ${ops.name} | view | ops-view | inherited from ${org}`);
    expect(rows).toContain(`${teamA} | user ${alice.name} | admin | alice-admin | own`);
    expect(rows.filter((r) => r.startsWith(org))).toEqual([]); // the subtree of team-a only
  });

  it('with --subject and no namespace, shows where the subject has access across trees', async () => {
    // Other test files' namespaces may hold bindings to system:authenticated: only this file's count.
    const ours = (g: string) => [org, teamA, svc, teamC].includes(g.split(' ')[0]!);
    expect((await grants(cluster.kubeconfigPath, '--subject', `user:${alice.name}`)).filter(ours)).toEqual(
      [
        `${svc} User:${alice.name} admin alice-admin from ${teamA}`,
        `${teamA} User:${alice.name} admin alice-admin own`,
        `${teamC} User:${alice.name} view alice-view own`,
      ].sort(),
    );
  });

  it('shows a namespace admin the part of a tree she may read, with the notes tree gives', async () => {
    // dana is admin of home and open (bindings that do not propagate), not of closed.
    const dana = TestCluster.uniqueName('dana');
    const home = await cluster.namespace('home');
    const open = await cluster.namespace('open');
    const closed = await cluster.namespace('closed');
    const none = { 'propagate.hnc.x-k8s.io/none': 'true' };
    await bind(home, 'dana-admin', 'admin', { kind: 'User', name: dana }, none);
    await bind(open, 'dana-admin', 'admin', { kind: 'User', name: dana }, none);
    await bind(home, 'viewers', 'view', ops);
    await setParent(cluster.admin, open, home);
    await setParent(cluster.admin, closed, home);
    await eventually(
      async () => ((await grants(cluster.kubeconfigPath, home)).filter((g) => g.includes('viewers')).length === 3 ? true : undefined),
      'the viewers copies in open and closed',
    );
    const danaConfig = (await cluster.user(dana)).kubeconfigPath;
    const got = await hns(danaConfig, 'access', home);
    expect(got.code).toBe(0);
    const rows = got.stdout.split('\n').map((l) => l.split(/\s{3,}/).join(' | '));
    expect(rows).toEqual([
      'NAMESPACE | SUBJECT | ROLE | BINDING | ORIGIN',
      `${home} | group ${ops.name} | view | viewers | own`,
      `${home} | user ${dana} | admin | dana-admin | own`,
      `${open} | group ${ops.name} | view | viewers | inherited from ${home}`,
      `${open} | user ${dana} | admin | dana-admin | own`,
      '',
    ]);
    expect(got.stderr).toBe(
      `Note: no permission to read the hierarchy of ${closed}: namespaces below it are left out\n` +
        `Note: no permission to list rolebindings in namespace ${closed}: left out\n` +
        'Note: no permission to list clusterroles: whether the ClusterRoles named exist was not checked\n',
    );
    // Everywhere, she cannot look: she is told to name the subtrees.
    const everywhere = await hns(danaConfig, 'access', '--subject', `user:${dana}`);
    expect(everywhere.code).toBe(1);
    expect(everywhere.stderr).toBe(
      'Error: no permission to list RoleBindings or namespaces cluster-wide; name the subtrees to look in: kubectl hns access NAMESPACE... --subject ...\n',
    );
  });

  it('after a real move, shows the access the new ancestors give and not the old', async () => {
    await setParent(cluster.admin, svc, teamC);
    await eventuallyEqual(
      () => grants(cluster.kubeconfigPath, svc),
      [`${svc} Group:${teamCGroup.name} admin team-c-admin from ${teamC}`, `${svc} User:${alice.name} view alice-view from ${teamC}`],
      'svc to hold only what team-c gives',
    );
    expect(await grants(cluster.kubeconfigPath, '--subject', `group:${teamB.name}`)).toEqual([
      `${teamA} Group:${teamB.name} admin team-b-admin own`,
    ]);
  });
});
