// `kubectl hns set/create/delete --dry-run` (the real bundle, through kubectl) against the real
// control plane with HNC and its webhooks running, as admin and as namespace admins: the preview
// is what the controller then does (copies and access compared after the real change), a refusal
// shows the webhook's own words, exits non-zero and writes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hnc } from '../../cmd/hnc.js';
import { Label, Singleton } from '../../core/api/constants.js';
import { hierarchyConfigurationPath } from '../../core/api/paths.js';
import type { HierarchyConfiguration } from '../../core/api/types.js';
import { describeAccessChange, diffAccess, grantsOf, type AccessChange, type RoleBindingObject } from '../../core/access/index.js';
import type { CopyChange } from '../../core/preview/index.js';
import { TestCluster, eventually, eventuallyEqual, kubectl, type TestUser } from '../support/cluster.js';
import { createAnchor, getAnchor, getHierarchy, namespaceExists, setParent } from '../support/hnc.js';
import { removeWebhookConfigurations, startHncWithWebhooks, waitForWebhooks } from '../support/manager.js';
import { KubeHncApi } from '../../kubectl-plugin/kube-api.js';
import type { AnyObject, HncApi } from '../../kubectl-plugin/api.js';
import { runSet } from '../../kubectl-plugin/commands/set.js';
import { captureIo } from '../../kubectl-plugin/io.js';

let cluster: TestCluster;
let hnc: Hnc;
let org: string;
let teamA: string;
let teamB: string;
/** Admin of the whole org (group org-admins, bound in org, inherited everywhere below). */
let olga: TestUser;
/** Admin of team-a only (group team-a). */
let alice: TestUser;

const RBAC = '/apis/rbac.authorization.k8s.io/v1';

const bindGroup = (ns: string, name: string, group: string) =>
  cluster.admin.create(`${RBAC}/namespaces/${ns}/rolebindings`, {
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: group }],
  });

async function rolebindings(nss: readonly string[]): Promise<RoleBindingObject[]> {
  const lists = await Promise.all(
    nss.map((ns) => cluster.admin.get<{ items: RoleBindingObject[] }>(`${RBAC}/namespaces/${ns}/rolebindings`)),
  );
  return lists.flatMap((l, i) => l.items.map((o) => ({ ...o, metadata: { ...o.metadata, namespace: nss[i] } })));
}

/** `ns/name<from` of every RoleBinding copy in these namespaces, sorted. */
const copiesIn = async (nss: readonly string[]): Promise<string[]> =>
  (await rolebindings(nss))
    .filter((o) => o.metadata?.labels?.[Label.inheritedFrom] !== undefined)
    .map((o) => `${o.metadata?.namespace}/${o.metadata?.name}<${o.metadata?.labels?.[Label.inheritedFrom]}`)
    .sort();

/** The copies there should be once the preview's creates, updates and deletes are done. */
function afterPreview(before: readonly string[], copies: { create: CopyChange[]; update: CopyChange[]; delete: CopyChange[] }): string[] {
  const key = (c: CopyChange) => `${c.namespace}/${c.name}<${c.source}`;
  const gone = new Set(copies.delete.map(key));
  // An update may change the source a copy comes from: whatever the copy named, it is replaced.
  const updated = new Set(copies.update.map((c) => `${c.namespace}/${c.name}`));
  const kept = before.filter((k) => !gone.has(k) && !updated.has(k.slice(0, k.indexOf('<'))));
  return [...kept, ...copies.update.map(key), ...copies.create.map(key)].sort();
}

interface Report {
  admission: { checked: boolean; allowed: boolean; checks: { request: string; allowed: boolean; message?: string }[] };
  affectedNamespaces: string[];
  createdNamespaces: string[];
  deletedNamespaces: string[];
  labels: { namespace: string; treeLabels: { key: string; before?: string; after?: string }[] }[];
  networkPolicies: { namespace: string; name: string; startsMatching: string[]; stopsMatching: string[] }[];
  copies: { create: CopyChange[]; update: CopyChange[]; delete: CopyChange[]; conflicts: CopyChange[] };
  access: AccessChange[];
  notes: string[];
}

const hns = (user: { kubeconfigPath: string }, ...args: string[]) => kubectl(user.kubeconfigPath, ['hns', ...args]);

async function previewJson(user: { kubeconfigPath: string }, ...args: string[]): Promise<{ code: number; report: Report; stderr: string }> {
  const r = await hns(user, ...args, '-o', 'json');
  try {
    return { code: r.code, report: JSON.parse(r.stdout) as Report, stderr: r.stderr };
  } catch {
    throw new Error(`kubectl hns ${args.join(' ')} printed no JSON (exit ${r.code}): ${r.stdout}${r.stderr}`);
  }
}

/** A namespace of `prefix` under `parent`, with the parent's RoleBindings propagated into it. */
async function child(prefix: string, parent: string): Promise<string> {
  const ns = await cluster.namespace(prefix);
  await setParent(cluster.admin, ns, parent);
  return ns;
}

const waitForCopy = (ns: string, name: string) =>
  eventually(
    async () => ((await copiesIn([ns])).some((k) => k.startsWith(`${ns}/${name}<`)) ? true : undefined),
    `${name} copied into ${ns}`,
  );

beforeAll(async () => {
  cluster = await TestCluster.connect();
  hnc = await startHncWithWebhooks('kubectl-hns-preview');
  await waitForWebhooks(cluster.kubeconfigPath);
  org = await cluster.namespace('org');
  teamA = await child('team-a', org);
  teamB = await child('team-b', org);
  await bindGroup(org, 'org-admins', 'org-admins');
  await bindGroup(teamA, 'team-a-admins', 'team-a');
  await bindGroup(teamB, 'team-b-admins', 'team-b');
  olga = await cluster.user('olga', ['org-admins']);
  alice = await cluster.user('alice', ['team-a']);
});
afterAll(async () => {
  await hnc?.stop();
  await removeWebhookConfigurations();
  await cluster?.cleanup();
});

describe('kubectl hns --dry-run', () => {
  it("as a namespace admin: a move that takes team-a's access away shows exactly those losses, and the real move agrees", async () => {
    const service = await child('service-1', teamA);
    const sub = TestCluster.uniqueName('sub');
    await createAnchor(cluster.admin, service, sub);
    // Each namespace's copies are made in name order: once team-a's is there, org's is too.
    await waitForCopy(service, 'team-a-admins');
    await waitForCopy(sub, 'team-a-admins');
    const subtree = [service, sub];
    const bindingsBefore = await rolebindings(subtree);
    const copiesBefore = await copiesIn(subtree);
    const hcBefore = await getHierarchy(cluster.admin, service);

    const { code, report, stderr } = await previewJson(olga, 'set', service, '--parent', teamB, '--dry-run');
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(report.admission).toMatchObject({ checked: true, allowed: true });
    expect(report.affectedNamespaces).toEqual([...subtree].sort());
    expect(report.access.map(describeAccessChange).sort()).toEqual(
      [
        `group team-a: loses admin in ${service} (was inherited from ${teamA})`,
        `group team-a: loses admin in ${sub} (was inherited from ${teamA})`,
        `group team-b: gains admin in ${service} (inherited from ${teamB})`,
        `group team-b: gains admin in ${sub} (inherited from ${teamB})`,
      ].sort(),
    );
    // olga may not list namespaces across the cluster: the plugin read the org's part of the forest.
    expect(report.notes.join('\n')).toMatch(/only the namespaces this change concerns were read/);
    // Nothing was written.
    expect((await getHierarchy(cluster.admin, service))?.metadata.resourceVersion).toBe(hcBefore?.metadata.resourceVersion);

    const text = await hns(olga, 'set', service, '--parent', teamB, '--dry-run');
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`  group team-a: loses admin in 2 namespaces: ${service}, ${sub} (was inherited from ${teamA})\n`);

    expect(await hns(olga, 'set', service, '--parent', teamB)).toMatchObject({ code: 0 });
    const expected = afterPreview(copiesBefore, report.copies);
    await eventuallyEqual(() => copiesIn(subtree), expected, 'the copies the preview listed');
    // The access the RoleBindings now grant differs from before exactly as the preview said.
    const now = grantsOf(await rolebindings(subtree));
    expect(diffAccess(grantsOf(bindingsBefore), now).map(describeAccessChange)).toEqual(report.access.map(describeAccessChange));
  });

  it("a move the webhook refuses: the webhook's message, a non-zero exit, nothing changed", async () => {
    const service = await child('service-2', teamA);
    await waitForCopy(service, 'team-a-admins');
    const hcBefore = await getHierarchy(cluster.admin, service);
    const copiesBefore = await copiesIn([service]);

    // alice is admin of team-a only; moving to team-b needs the right to edit the hierarchy in org.
    const r = await hns(alice, 'set', service, '--parent', teamB, '--dry-run');
    expect(r.code).not.toBe(0);
    expect(r.stdout).toContain(`Admission: REFUSED (update HierarchyConfiguration ${service}/hierarchy): admission webhook`);
    expect(r.stdout).toContain(org); // the webhook names the ancestor alice lacks rights in
    expect(r.stderr).toMatch(/^Error: admission would refuse this change: admission webhook/);
    // The preview still says what the move would do.
    expect(r.stdout).toContain(`group team-a: loses admin in ${service} (was inherited from ${teamA})`);

    const hcAfter = await getHierarchy(cluster.admin, service);
    expect(hcAfter?.metadata.resourceVersion).toBe(hcBefore?.metadata.resourceVersion);
    expect(hcAfter?.spec?.parent).toBe(teamA);
    expect(await copiesIn([service])).toEqual(copiesBefore);
  });

  it('as admin: copies, blocking objects and NetworkPolicies listed equal what the controller then does', async () => {
    const service = await child('service-3', teamA);
    const below = await child('below', service);
    await waitForCopy(service, 'team-a-admins');
    await waitForCopy(below, 'team-a-admins');
    // A user's RoleBinding named like team-b's: a source of its own (copied below), it will block
    // the copy of team-b's in its namespace and is never overwritten.
    await bindGroup(service, 'team-b-admins', 'someone-else');
    await waitForCopy(below, 'team-b-admins');
    await cluster.admin.create(`/apis/networking.k8s.io/v1/namespaces/${teamA}/networkpolicies`, {
      metadata: { name: 'from-team-a' },
      spec: {
        podSelector: {},
        ingress: [
          { from: [{ namespaceSelector: { matchExpressions: [{ key: `${teamA}.tree.hnc.x-k8s.io/depth`, operator: 'Exists' }] } }] },
        ],
      },
    });
    const subtree = [service, below];
    const copiesBefore = await copiesIn(subtree);

    const { code, report } = await previewJson(cluster, 'set', service, '--parent', teamB, '--dry-run=server');
    expect(code).toBe(0);
    expect(report.networkPolicies).toEqual([
      { namespace: teamA, name: 'from-team-a', startsMatching: [], stopsMatching: [...subtree].sort() },
    ]);
    expect(report.copies.conflicts.map((c) => `${c.namespace}/${c.name}<${c.source}`)).toEqual([`${service}/team-b-admins<${teamB}`]);
    // Below it, the highest ancestor's source wins: team-b's replaces the copy of service-3's.
    expect(report.copies.update.map((c) => `${c.namespace}/${c.name}<${c.source}`)).toEqual([`${below}/team-b-admins<${teamB}`]);
    expect(report.copies.create).toEqual([]);
    expect(report.copies.delete.map((c) => `${c.namespace}/${c.name}<${c.source}`).sort()).toEqual(
      [`${service}/team-a-admins<${teamA}`, `${below}/team-a-admins<${teamA}`].sort(),
    );
    expect(report.labels.find((l) => l.namespace === below)?.treeLabels).toEqual(
      [
        { key: `${teamA}.tree.hnc.x-k8s.io/depth`, before: '2' },
        { key: `${teamB}.tree.hnc.x-k8s.io/depth`, after: '2' },
      ].sort((a, b) => (a.key < b.key ? -1 : 1)),
    );

    expect(await hns(cluster, 'set', service, '--parent', teamB)).toMatchObject({ code: 0 });
    await eventuallyEqual(() => copiesIn(subtree), afterPreview(copiesBefore, report.copies), 'the copies the preview listed');
    const user = (await rolebindings([service])).find((o) => o.metadata?.name === 'team-b-admins');
    expect(user?.subjects?.[0]?.name).toBe('someone-else');
  });

  it('create and delete --dry-run: the subnamespace that would come or go, nothing written', async () => {
    const dev = TestCluster.uniqueName('dev');
    const created = await previewJson(cluster, 'create', dev, '-n', teamB, '--dry-run');
    expect(created.code).toBe(0);
    expect(created.report.createdNamespaces).toEqual([dev]);
    expect(created.report.copies.create.map((c) => `${c.name}<${c.source}`).sort()).toEqual([
      `org-admins<${org}`,
      `team-b-admins<${teamB}`,
    ]);
    expect(await getAnchor(cluster.admin, teamB, dev)).toBeUndefined();

    const parent = await child('service-4', teamA);
    const sub = TestCluster.uniqueName('sub');
    await createAnchor(cluster.admin, parent, sub);
    await eventuallyEqual(async () => (await getAnchor(cluster.admin, parent, sub))?.status?.status, 'Ok', 'the anchor to be Ok');
    const deleted = await previewJson(olga, 'delete', sub, '-n', parent, '--dry-run');
    expect(deleted.code).toBe(0);
    expect(deleted.report.deletedNamespaces).toEqual([sub]);
    expect(deleted.report.access.map(describeAccessChange)).toContain(`group team-a: loses admin in ${sub} (was inherited from ${teamA})`);
    expect(await namespaceExists(cluster.admin, sub)).toBe(true);
    expect(await getAnchor(cluster.admin, parent, sub)).toBeDefined();

    // A bad --dry-run value is refused before anything is read, in kubectl's words.
    const bad = await hns(cluster, 'set', parent, '--root', '--dry-run=yes');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('Invalid dry-run value (yes). Must be "none", "server", or "client".');
    const hc = await cluster.admin.get<HierarchyConfiguration>(hierarchyConfigurationPath(parent, Singleton.hierarchy));
    expect(hc.spec?.parent).toBe(teamA);
  });
});

describe('what a preview reads', () => {
  it("a cluster-wide list read as it arrives keeps exactly the scope's objects, as listed, without managedFields", async () => {
    const api = new KubeHncApi(cluster.admin, 30_000);
    const type = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'rolebindings', kind: 'RoleBinding' };
    const scope = new Set([org, teamA]);
    const inScope = (ns: string | undefined) => ns !== undefined && scope.has(ns);
    const withoutManagedFields = (o: AnyObject) => {
      const { managedFields: _, ...metadata } = o.metadata as { managedFields?: unknown };
      return { ...o, metadata };
    };
    // Both lists at once, until no write fell between them (HNC is running).
    const [all, some] = await eventually(async () => {
      const lists = await Promise.all([api.listAll(type, undefined), api.listSome(type, undefined, Promise.resolve(inScope))]);
      return lists[0].resourceVersion === lists[1].resourceVersion ? lists : undefined;
    }, 'two lists at the same resourceVersion');
    expect(all.items.length).toBeGreaterThan(some.items.length);
    expect(some.items.map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`)).toContain(`${teamA}/org-admins`);
    expect(some.items).toEqual(all.items.filter((o) => inScope(o.metadata?.namespace)).map(withoutManagedFields));
  });
});

describe('copies made from the sources when the cluster is in sync', () => {
  /** The move previewed in-process as the plugin runs it: its JSON and how it had the copies (stderr). */
  async function preview(api: HncApi, ns: string, parent: string): Promise<{ json: string; how: string }> {
    const io = captureIo();
    await runSet(api, io, ns, { parent }, { dryRun: 'client', output: 'json', debug: true });
    return { json: io.stdout, how: io.stderr };
  }
  /** The same API with no count of objects: the plugin then lists every copy (the read it always did before). */
  const listing = (api: HncApi): HncApi => Object.assign(Object.create(api) as HncApi, { countAll: () => Promise.resolve(undefined) });

  it('the same answer as from every copy on a real propagated tree; a copy deleted while HNC is stopped: every copy is read', async () => {
    // org ─┬─ fast-a ── leaf ── deep   fast-a's binding, and org's, copied below it; deep holds a user's
    //      │                            binding named as fast-b's (a conflict once moved);
    //      └─ fast-b                    fast-b's bindings, one of them not for deep (treeSelect).
    // The move: leaf to fast-b.
    const a = await child('fast-a', org);
    const b = await child('fast-b', org);
    const leaf = await child('fast-leaf', a);
    const deep = await child('fast-deep', leaf);
    await bindGroup(a, 'fast-a-admins', 'fast-a');
    await bindGroup(b, 'fast-b-admins', 'fast-b');
    await bindGroup(deep, 'fast-b-admins', 'someone');
    await cluster.admin.create(`${RBAC}/namespaces/${b}/rolebindings`, {
      metadata: { name: 'fast-b-viewers', annotations: { 'propagate.hnc.x-k8s.io/treeSelect': `!${deep}` } },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'fast-b-viewers' }],
    });
    await waitForCopy(deep, 'fast-a-admins');
    await waitForCopy(deep, 'org-admins');

    const api = new KubeHncApi(cluster.admin, 30_000);
    // Once the controller has caught up and written its counts, the copies are made, not read.
    const fast = await eventually(async () => {
      const p = await preview(api, leaf, b);
      // Not yet: the reason (the last one is in the timeout's message).
      if (!p.how.startsWith('preview: copies synthesized')) throw new Error(p.how.trim());
      return p;
    }, 'a preview with the copies made from the sources');
    const full = await preview(listing(api), leaf, b);
    expect(full.how).toContain('copies listed (the API server did not count the ');
    expect(fast.json).toBe(full.json);
    const report = JSON.parse(fast.json) as Report;
    const key = (c: CopyChange) => `${c.namespace}/${c.name}`;
    expect(report.copies.conflicts.map(key)).toEqual([`${deep}/fast-b-admins`]);
    expect(report.copies.delete.map(key).sort()).toEqual([`${deep}/fast-a-admins`, `${leaf}/fast-a-admins`].sort());
    expect(report.copies.create.map(key).sort()).toEqual([`${leaf}/fast-b-admins`, `${leaf}/fast-b-viewers`].sort());

    // The built plugin, as a user runs it: the same answer.
    process.env.HNS_PREVIEW_DEBUG = '1';
    try {
      const r = await hns(cluster, 'set', leaf, '--parent', b, '--dry-run=client', '-o', 'json');
      expect(r.stderr).toMatch(/^preview: copies synthesized; \d+ requests\n$/);
      expect(r.stdout).toBe(fast.json);
    } finally {
      delete process.env.HNS_PREVIEW_DEBUG;
    }

    // HNC stopped, and an admin deletes a copy: the counts disagree, every copy is read, and the
    // answer is the truth (the copy is gone already: nothing to delete there).
    await hnc.stop();
    await removeWebhookConfigurations();
    try {
      await cluster.admin.delete(`${RBAC}/namespaces/${deep}/rolebindings/fast-a-admins`);
      const stale = await preview(api, leaf, b);
      expect(stale.how).toContain('copies listed (');
      expect(stale.how).toContain('rolebindings copies in the cluster');
      expect(stale.json).toBe((await preview(listing(api), leaf, b)).json);
      expect((JSON.parse(stale.json) as Report).copies.delete.map(key)).not.toContain(`${deep}/fast-a-admins`);
    } finally {
      hnc = await startHncWithWebhooks('kubectl-hns-preview-again');
      await waitForWebhooks(cluster.kubeconfigPath);
    }
  });
});
