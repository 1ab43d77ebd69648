// The swap users make (docs/migrating-from-hnc.md, "From HNC's default manifest"), on the real
// node: HNC v1.1.0 runs in a pod from its own default.yaml (rendered from its Go module's config/
// by the kustomize it pins; its manager built from the module, test/support/hnc-go.ts, in a local
// image), builds a forest, and is replaced by `kubectl apply -f install.yaml` as the guide says,
// while ordinary users' requests are sent and counted. Nothing may be deleted or recreated, each
// modified object must be a documented difference, and hnc-ts must then work. The file ends with
// hnc-ts installed and converged and HNC's leftovers removed, as the next file expects.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { hierarchyConfigurationPath, hncConfigurationPath } from '../../core/api/paths.js';
import { isNotFound, type KubeClient } from '../../kube/client.js';
import { runScript } from '../../kube/script.js';
import { renderInstall, ROOT } from '../../scripts/build-install.js';
import { TestCluster, eventually, eventuallyAllowed, refusal, type TestUser } from '../support/cluster.js';
import { createAnchor, editHierarchy, getHierarchy, setParent } from '../support/hnc.js';
import { HNC_GO_VERSION, hncGoBinary, hncGoDefaultManifest, hncGoIdle, idleByMetrics, sum } from '../support/hnc-go.js';
import { NO_LAST_APPLIED, compare, normalizeConfigStatus, report, snapshot, type Obj, type Snapshot } from '../support/snapshot.js';
import { HNC_IMAGE } from './global-setup.js';
import {
  DEPLOYMENT,
  HNC_NAMESPACE,
  admin,
  admissionLoop,
  anchorDryRun,
  ensureInstalled,
  isReady,
  leaseHolder,
  managerPods,
  uninstall,
  type AdmissionRequest,
  type AdmissionStats,
  type Pod,
} from './support.js';

const MINUTE = 60_000;
/** HNC's manager as an image of the node's containerd (images.sh --hnc-go). */
const HNC_GO_IMAGE = `localhost/hnc-go:${HNC_GO_VERSION}`;
/** HNC's pods: its Deployment's selector (ours adds app.kubernetes.io/name=hnc-ts). */
const HNC_GO_PODS = 'control-plane=controller-manager,!app.kubernetes.io/name';
/** What HNC's default.yaml has that install.yaml does not: the guide's step 3 removes them. */
const HNC_LEFTOVERS = [
  ['-n', HNC_NAMESPACE, 'role', 'hnc-leader-election-role'],
  ['-n', HNC_NAMESPACE, 'rolebinding', 'hnc-leader-election-rolebinding'],
  ['clusterrole', 'hnc-admin-role'],
];
const RBAC = '/apis/rbac.authorization.k8s.io/v1';

let cluster: TestCluster;
let work: string;
const figures: string[] = [];
const t0 = Date.now();

const secs = (ms: number) => (ms / 1000).toFixed(1);
const run = async (args: string[], input?: string) => {
  const r = await admin(cluster, args, input);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
};

async function hncGoPods(client: KubeClient): Promise<Pod[]> {
  return (await client.get<{ items: Pod[] }>(`/api/v1/namespaces/${HNC_NAMESPACE}/pods`, { labelSelector: HNC_GO_PODS })).items;
}

/** A pod's /metrics text (the host reaches pod IPs on the node's bridge). */
const scrape = (pod: Pod) => async () =>
  (await fetch(`http://${pod.status.podIP}:8080/metrics`, { signal: AbortSignal.timeout(5_000) })).text();

/** hnc-ts's leader idle: no key queued, and no write sent for 3 s (its HNCConfiguration status waits 1 s for counts to settle). */
async function hncTsIdle(client: KubeClient): Promise<void> {
  const holder = await eventually(() => leaseHolder(client), 'a leader');
  const pod = (await managerPods(client)).find((p) => p.metadata.name === holder);
  if (!pod) throw new Error(`the leader ${holder} is not a manager pod`);
  await idleByMetrics(
    scrape(pod),
    (t) => sum(t, 'hnc_queue_depth') > 0,
    (t) => sum(t, 'hnc_api_writes_total'),
    3000,
    2 * MINUTE,
  );
}

/** A server-side dry-run creation of a ConfigMap: an ordinary write HNC's objects webhook answers in an included namespace. */
const configMapDryRun: AdmissionRequest = (client, ns) =>
  client.create(`/api/v1/namespaces/${ns}/configmaps`, { metadata: { name: 'probe' }, data: { a: '1' } }, { dryRun: 'All' });
/** A server-side dry-run creation of a namespace: HNC's namespace webhook answers it. */
const namespaceDryRun: AdmissionRequest = (client, ns) =>
  client.create('/api/v1/namespaces', { metadata: { name: `${ns}-probe` } }, { dryRun: 'All' });

/** The guide's step 1: HNC's webhook configurations, then its Deployment and pod. */
async function stopHncGo(): Promise<void> {
  await run([
    'delete',
    '--ignore-not-found',
    'validatingwebhookconfiguration/hnc-validating-webhook-configuration',
    'mutatingwebhookconfiguration/hnc-mutating-webhook-configuration',
  ]);
  await run(['-n', HNC_NAMESPACE, 'delete', 'deployment', DEPLOYMENT, '--cascade=foreground', '--wait']);
}

/** Puts the cluster back as the next files expect, from any point of this file: HNC's Deployment gone, hnc-ts installed. */
async function restore(): Promise<void> {
  const deployment = await cluster.admin
    .get<{ spec: { selector: { matchLabels?: Record<string, string> } } }>(
      `/apis/apps/v1/namespaces/${HNC_NAMESPACE}/deployments/${DEPLOYMENT}`,
    )
    .catch((e: unknown) => (isNotFound(e) ? undefined : Promise.reject(e)));
  if (deployment && !deployment.spec.selector.matchLabels?.['app.kubernetes.io/name']) await stopHncGo();
  await ensureInstalled(cluster);
  for (const args of HNC_LEFTOVERS) await run(['delete', '--ignore-not-found', ...args]);
}

beforeAll(async () => {
  cluster = await TestCluster.connect();
  work = mkdtempSync(join(tmpdir(), 'hnc-e2e-migration-'));
  // HNC's manager: built from its Go module once (about 10 minutes cold; `npm test`'s migration
  // test builds the same one), in an image of its own, imported into the node.
  const binary = await hncGoBinary();
  const archive = join(work, 'hnc-go.tar');
  await runScript(join(ROOT, 'local-cluster', 'node', 'images.sh'), ['--hnc-go', binary, HNC_GO_IMAGE, archive], (l) =>
    process.stderr.write(l),
  );
  execFileSync('ctr', ['-a', inject('containerdSocket'), '-n', 'k8s.io', 'images', 'import', archive], { stdio: 'ignore' });
  writeFileSync(join(work, 'default.yaml'), await hncGoDefaultManifest(HNC_GO_IMAGE));
  // A cluster that has only ever had HNC: hnc-ts (which earlier files installed) removed entirely.
  await uninstall(cluster);
}, 30 * MINUTE);

afterAll(async () => {
  try {
    await restore();
  } finally {
    await cluster.cleanup();
    rmSync(work, { recursive: true, force: true });
    figures.push(`whole file: ${secs(Date.now() - t0)} s`);
    process.stdout.write(`\nIn-cluster migration figures (test/e2e/migration.test.ts)\n${figures.join('\n')}\n`);
  }
}, 10 * MINUTE);

describe('the in-cluster swap from HNC v1.1.0 (its default.yaml) to hnc-ts (install.yaml)', { timeout: 10 * MINUTE }, () => {
  const p = TestCluster.uniqueName('e2e-mig');
  const org = p;
  const teams = [0, 1, 2].map((i) => `${p}-t${i}`);
  const subs = (t: string) => [0, 1].map((i) => `${t}-s${i}`);
  const leaves = (s: string) => [0, 1].map((i) => `${s}-l${i}`);
  const full = `${p}-x`; // a full namespace under a subnamespace
  const forest = new Set([org, ...teams, ...teams.flatMap((t) => [...subs(t), ...subs(t).flatMap(leaves)]), full]);
  const leaf = `${teams[0]}-s0-l0`;
  const created = `${teams[1]}-new`; // the subnamespace made under hnc-ts
  let lead: TestUser;
  let before: Snapshot;
  let secretUid: string;

  const list = async (path: string) =>
    (await cluster.admin.get<{ items: Obj[] }>(path)).items.filter((o) => forest.has(o.metadata.namespace!));
  const copies = async (path: string, name: string) =>
    (await list(path)).filter((o) => o.metadata.name === name && o.metadata.labels?.['hnc.x-k8s.io/inherited-from']).length;
  /** What HNC (either) must have done to the forest as built: every subnamespace, every copy. */
  const forestBuilt = async (): Promise<true | undefined> => {
    const nss = (await cluster.admin.get<{ items: Obj[] }>('/api/v1/namespaces')).items.filter((n) => forest.has(n.metadata.name));
    const counts = [
      nss.length,
      await copies(`${RBAC}/roles`, 'reader'),
      await copies(`${RBAC}/rolebindings`, 'readers'),
      await copies(`${RBAC}/rolebindings`, 'leads'),
      await copies('/apis/networking.k8s.io/v1/networkpolicies', 'deny-ingress'),
    ];
    const n = forest.size;
    if (!isDeepStrictEqual(counts, [n, n - 1, n - 1, n - 1, n - 1]))
      throw new Error(`namespaces and copies ${JSON.stringify(counts)}, expected ${JSON.stringify([n, n - 1, n - 1, n - 1, n - 1])}`);
    return true;
  };

  it('installs HNC v1.1.0 from its own default.yaml: its pod Ready, its webhooks answering', async () => {
    const started = Date.now();
    // As HNC's README says: a client-side kubectl apply of the release's default.yaml.
    await run(['apply', '-f', join(work, 'default.yaml')]);
    const pod = await eventually(
      async () => {
        const pods = await hncGoPods(cluster.admin);
        return pods.length === 1 && isReady(pods[0]!) ? pods[0] : undefined;
      },
      "HNC's pod to be Ready",
      5 * MINUTE,
    );
    expect(pod.spec.containers[0]!.image).toBe(HNC_GO_IMAGE);
    // Its own certificate management (cert-controller's rotator) filled the Secret its manifest made.
    const secret = await cluster.admin.get<{ metadata: { uid: string }; data?: Record<string, string> }>(
      `/api/v1/namespaces/${HNC_NAMESPACE}/secrets/hnc-webhook-server-cert`,
    );
    expect(Object.keys(secret.data ?? {}).sort()).toEqual(['ca.crt', 'ca.key', 'tls.crt', 'tls.key']);
    secretUid = secret.metadata.uid;
    // The API server reaches it through its Service: a namespace HNC excludes may hold no anchor.
    await eventually(
      async () => {
        const r = await admin(
          cluster,
          ['create', '-n', 'kube-system', '-f', '-', '--dry-run=server'],
          JSON.stringify({
            apiVersion: 'hnc.x-k8s.io/v1alpha2',
            kind: 'SubnamespaceAnchor',
            metadata: { name: 'probe', namespace: 'kube-system' },
          }),
        );
        return r.code !== 0 && r.stderr.includes('admission webhook "subnamespaceanchors.hnc.x-k8s.io" denied the request')
          ? true
          : undefined;
      },
      "HNC's webhooks to answer through its Service",
      3 * MINUTE,
    );
    figures.push(`HNC v1.1.0 installed from its default.yaml, pod Ready and webhooks answering in ${secs(Date.now() - started)} s`);
  });

  it(`builds a forest of ${forest.size} namespaces under HNC v1.1.0, with Roles, RoleBindings and NetworkPolicies propagated`, async () => {
    const started = Date.now();
    lead = await cluster.user(`${p}-lead`);
    // HNC's manager creates the `config` singleton once it runs.
    const config = await eventually(() => cluster.admin.get<object>(hncConfigurationPath('config')), 'the config object', MINUTE);
    await cluster.admin.replace(hncConfigurationPath('config'), {
      ...config,
      spec: { resources: [{ group: 'networking.k8s.io', resource: 'networkpolicies', mode: 'Propagate' }] },
    });
    for (const ns of [org, ...teams, full]) await cluster.admin.create('/api/v1/namespaces', { metadata: { name: ns } });
    for (const t of teams) await setParent(cluster.admin, t, org);
    await cluster.admin.create(`${RBAC}/namespaces/${org}/roles`, {
      metadata: { name: 'reader' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }],
    });
    await cluster.admin.create(`${RBAC}/namespaces/${org}/rolebindings`, {
      metadata: { name: 'readers' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: `${p}-readers` }],
    });
    // The team lead administers the whole organisation: `admin` in org, propagated everywhere.
    await cluster.admin.create(`${RBAC}/namespaces/${org}/rolebindings`, {
      metadata: { name: 'leads' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: lead.name }],
    });
    // Applied with kubectl, as users do: its copies carry kubectl's last-applied-configuration.
    await run(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: { name: 'deny-ingress', namespace: org },
        spec: { podSelector: {}, policyTypes: ['Ingress'] },
      }),
    );
    await eventually(
      async () => ((await copies(`${RBAC}/rolebindings`, 'leads')) >= teams.length ? true : undefined),
      'the lead in every team',
    );
    // The lead makes the subnamespaces, as HNC lets namespace admins do. The lead's rights in each
    // namespace are HNC's copy of `leads`, in force once the API server's authorizer has it.
    const leadMayCreateAnchors = (ns: string) =>
      eventuallyAllowed(
        lead.client,
        { namespace: ns, verb: 'create', group: 'hnc.x-k8s.io', resource: 'subnamespaceanchors' },
        `the lead in ${ns}`,
        MINUTE,
      );
    for (const t of teams) {
      await leadMayCreateAnchors(t);
      for (const s of subs(t)) await createAnchor(lead.client, t, s);
    }
    for (const t of teams)
      for (const s of subs(t)) {
        await leadMayCreateAnchors(s);
        for (const l of leaves(s)) await createAnchor(lead.client, s, l);
      }
    await setParent(cluster.admin, full, `${teams[0]}-s0`);
    await eventually(forestBuilt, "HNC's manager to build the forest", 3 * MINUTE);
    await hncGoIdle(scrape((await hncGoPods(cluster.admin))[0]!));
    before = await snapshot(cluster.admin, forest);
    expect(before.size).toBeGreaterThan(5 * forest.size);
    figures.push(`forest built under HNC v1.1.0 in ${secs(Date.now() - started)} s: ${forest.size} namespaces, ${before.size} objects`);
  });

  it('swaps as the guide says while users work: nothing deleted or recreated, each change a documented difference', async () => {
    // Ordinary users' requests all along: the lead's ConfigMap in a subnamespace and the admin's
    // namespace (both answered by HNC's fail-closed webhooks while HNC runs), and the lead's
    // anchor (an HNC operation).
    const loops: Array<[string, ReturnType<typeof admissionLoop>]> = [
      ['ConfigMap creations in a subnamespace (namespace admin)', admissionLoop(lead.client, leaf, configMapDryRun)],
      ['namespace creations (cluster admin)', admissionLoop(cluster.admin, p, namespaceDryRun)],
      ['anchor creations (namespace admin; an HNC operation)', admissionLoop(lead.client, leaf, anchorDryRun)],
    ];
    await eventually(async () => (loops.every(([, l]) => l.stats.tried > 0) ? true : undefined), 'the first requests');
    const swapStart = Date.now();
    // 1. Stop HNC: its webhook configurations first (left behind, their fail-closed validators
    // would refuse every namespace write and every write in its namespaces until hnc-ts writes its
    // own, install.yaml's own Namespace included), then its Deployment. Foreground: kubectl returns
    // once its pod is gone, not only the Deployment.
    await stopHncGo();
    expect(await hncGoPods(cluster.admin)).toEqual([]);
    const stopped = Date.now();
    // 2. install.yaml over HNC's objects (server-side, taking over what HNC's kubectl apply owned).
    await ensureInstalled(cluster);
    const answering = Date.now();
    // 3. HNC's objects hnc-ts does not use.
    for (const args of HNC_LEFTOVERS) await run(['delete', ...args]);
    await eventually(forestBuilt, 'the forest under hnc-ts', 2 * MINUTE);
    await hncTsIdle(cluster.admin);
    const converged = Date.now();
    const stats: Array<[string, AdmissionStats]> = [];
    for (const [what, l] of loops) stats.push([what, await l.stop()]);
    const after = await snapshot(cluster.admin, forest);

    const c = compare(before, after);
    figures.push(
      `swap: HNC stopped in ${secs(stopped - swapStart)} s; hnc-ts answering through its Service ${secs(answering - swapStart)} s after ` +
        `the swap began, converged after ${secs(converged - swapStart)} s`,
      report('HNC v1.1.0 (default.yaml) -> hnc-ts (install.yaml)', c),
      ...stats.map(
        ([what, s]) =>
          `admission requests during the swap, ${what}: ${s.tried} tried, ${s.failed} failed` +
          (s.failed
            ? ` (from ${secs(s.firstFailure! - swapStart)} s to ${secs(s.lastFailure! - swapStart)} s after the swap began; first: ${s.errors[0]})`
            : ''),
      ),
    );
    process.stdout.write(`${figures.join('\n')}\n`);
    expect(c.deleted).toEqual([]);
    expect(c.recreated).toEqual([]);
    expect([...c.modified.keys()].map(normalizeConfigStatus).sort()).toEqual(
      [
        // docs/hnc-differences.md, "GitOps-friendly copies": kubectl's key is never copied.
        `NetworkPolicy copy: ${NO_LAST_APPLIED}`,
        // Status only: hnc-ts's own counts of sources and copies per kind.
        'HNCConfiguration: status.resources changed',
      ].sort(),
    );
    for (const [, s] of stats) expect(s.tried).toBeGreaterThan(0);
    // Ordinary users' writes never fail: HNC's fail-closed webhooks went with step 1.
    expect(stats[0]![1].errors).toEqual([]);
    expect(stats[1]![1].errors).toEqual([]);
    // HNC's own operations may fail only for the moment between hnc-ts's manager registering its
    // webhooks and kube-proxy routing the Service to its pods (`connection refused`), before HNC answers.
    const anchors = stats[2]![1];
    for (const e of anchors.errors) expect(e).toMatch(/failed calling webhook "subnamespaceanchors\.hnc\.x-k8s\.io".*connection refused/);
    if (anchors.failed) expect(anchors.lastFailure!).toBeLessThanOrEqual(answering);

    // HNC's manager role (every verb on every resource) and its binding of hnc-system/default are
    // replaced, not merged: server-side apply takes RBAC's rules and subjects whole.
    const role = await cluster.admin.get<{ rules: Array<{ apiGroups?: string[]; resources?: string[] }> }>(
      `${RBAC}/clusterroles/hnc-manager-role`,
    );
    expect(role.rules.filter((r) => r.resources?.includes('*') || r.apiGroups?.includes('*'))).toEqual([]);
    const binding = await cluster.admin.get<{ subjects: Array<{ name: string; namespace: string }> }>(
      `${RBAC}/clusterrolebindings/hnc-manager-rolebinding`,
    );
    expect(binding.subjects.map((s) => `${s.namespace}/${s.name}`)).toEqual([`${HNC_NAMESPACE}/hnc-controller-manager`]);
    // The CRDs are hnc-ts's: HNC's kubectl-applied schema left nothing behind.
    const crds = renderInstall({ image: HNC_IMAGE }).objects.filter((o) => o.kind === 'CustomResourceDefinition');
    for (const crd of crds) {
      const live = await cluster.admin.get<{ spec: { versions: unknown[] } }>(
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`,
      );
      expect(live.spec.versions, crd.metadata.name).toEqual((crd as unknown as { spec: { versions: unknown[] } }).spec.versions);
    }
    // The webhook certificate's Secret is the one HNC's manifest made.
    const secret = await cluster.admin.get<{ metadata: { uid: string } }>(
      `/api/v1/namespaces/${HNC_NAMESPACE}/secrets/hnc-webhook-server-cert`,
    );
    expect(secret.metadata.uid).toBe(secretUid);
  });

  it('hnc-ts then creates a subnamespace, propagates a new Role and refuses a cycle', async () => {
    await createAnchor(lead.client, teams[1]!, created);
    forest.add(created);
    await eventually(
      async () => ((await copies(`${RBAC}/rolebindings`, 'leads')) === forest.size - 1 ? true : undefined),
      'the copies in the new subnamespace',
      MINUTE,
    );
    await cluster.admin.create(`${RBAC}/namespaces/${org}/roles`, {
      metadata: { name: 'writer' },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create'] }],
    });
    await eventually(
      async () => ((await copies(`${RBAC}/roles`, 'writer')) === forest.size - 1 ? true : undefined),
      'the new Role everywhere',
      MINUTE,
    );
    const hc = (await getHierarchy(cluster.admin, org))!;
    const err = await refusal(
      cluster.admin.replace(hierarchyConfigurationPath(org, 'hierarchy'), { ...hc, spec: { ...hc.spec, parent: leaf } }),
    );
    expect(err.code).toBe(409);
    expect(err.message).toContain(`illegal parent: cycle when making "${leaf}" the parent of "${org}"`);
    // HNC's leftovers are gone; hnc-ts's own pods alone run.
    for (const args of HNC_LEFTOVERS) {
      const r = await admin(cluster, ['get', ...args]);
      expect(r.code, args.join(' ')).not.toBe(0);
    }
    expect(await hncGoPods(cluster.admin)).toEqual([]);

    // The forest goes under hnc-ts (cascading deletion allowed on each full namespace holding subnamespaces).
    for (const ns of [org, ...teams]) await editHierarchy(cluster.admin, ns, (s) => (s.allowCascadingDeletion = true));
    for (const ns of [org, ...teams, full]) await cluster.admin.delete(`/api/v1/namespaces/${ns}`);
    await eventually(
      async () =>
        (await cluster.admin.get<{ items: Obj[] }>('/api/v1/namespaces')).items.some((n) => forest.has(n.metadata.name)) ? undefined : true,
      'the forest to be deleted',
      3 * MINUTE,
    );
  });
});
