// Issue #31: with HNC down (its process frozen by SIGSTOP, so that every call to its webhooks hangs
// until the API server's timeout, the worst case), ordinary writes go through at once, the rules
// that need no forest are still enforced by the API server (ValidatingAdmissionPolicies), and only
// what needs HNC's forest is refused, naming HNC's webhook. Each row's outcome and time are printed;
// the rows are test/support/hnc-down.ts's, which test/e2e/hnc-down.test.ts runs on the real node.
// A source created meanwhile over a user's own object below is reported as a conflict once HNC is
// back, never overwritten.
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MANAGER_GROUPS, MANAGER_USER } from '../../kube/install.js';
import { mintUser } from '../../local-cluster/index.js';
import { TestCluster, eventually, eventuallyEqual } from '../support/cluster.js';
import { conditions } from '../support/hnc.js';
import {
  attempt,
  cleanUpDownScenario,
  downRows,
  expectKubectlShowsPolicyRefusal,
  formatOutcome,
  prepareDownScenario,
  rbac,
  runDownRow,
  type DownRun,
} from '../support/hnc-down.js';
import { removeWebhookConfigurations, spawnHnc, waitForWebhooks } from '../support/manager.js';

let cluster: TestCluster;
let proc: ChildProcess | undefined;
let run: DownRun | undefined;

interface RoleBinding {
  metadata: { name: string; uid: string; resourceVersion: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  roleRef: unknown;
  subjects?: unknown;
}
/** The user's own RoleBinding `clash` in the child, as it was before HNC went down. */
let clash: RoleBinding;
const clashBinding = (user: string) => ({
  metadata: { name: 'clash', labels: { owner: user } },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
  subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
});

beforeAll(async () => {
  cluster = await TestCluster.connect();
  const manager = await mintUser(inject('stateDir'), MANAGER_USER, MANAGER_GROUPS);
  // `npm start -- --kubeconfig K`: HNC as a process of its own, registered by URL on 127.0.0.1
  // (with hierarchical quotas, as `npm start` runs it).
  const args = ['--webhook-server-port', '0', '--metrics-addr=', '--health-probe-bind-address='];
  proc = (await spawnHnc(manager.kubeconfigPath, args, join(inject('stateDir'), 'logs', 'hnc-down.log'))).proc;
  await waitForWebhooks(cluster.kubeconfigPath);
  const scenario = await prepareDownScenario(cluster, true);
  run = { ...scenario, newNamespace: TestCluster.uniqueName('down-new') };
  clash = await cluster.admin.create<RoleBinding>(rbac(run.child, 'rolebindings'), clashBinding('erin'));
  proc.kill('SIGSTOP');
}, 180_000);

afterAll(async () => {
  if (proc && proc.exitCode === null) {
    proc.kill('SIGCONT');
    if (run) await cleanUpDownScenario(run, [run.newNamespace]);
    proc.kill('SIGINT'); // a run outside the cluster removes its configurations and policies when it stops
    await new Promise((resolve) => proc!.once('exit', resolve));
  }
  await removeWebhookConfigurations();
  await cluster?.cleanup();
}, 180_000);

describe('with every HNC replica down (its process frozen)', () => {
  const results: string[] = [];
  afterAll(() => console.log(`\nHNC frozen: operation, outcome, time\n${results.join('\n')}`));

  // Ordinary writes: no webhook call at all (< 1 s), or one that fails open within its 1 s timeout
  // (< 2 s); the policies' refusals at once; the rest refused, each after its webhook's 5 s timeout.
  for (const row of downRows({ hrq: true }))
    it(`${row.expected.kind}: ${row.name}`, async () => {
      await runDownRow(row, run!, { succeeds: 1000, succeedsFailOpen: 2000, refusedByApiServer: 1000 }, (l) => results.push(l));
    });

  it('shows the API server’s refusal well in kubectl', () => expectKubectlShowsPolicyRefusal(run!));

  it('lets a source be created in the parent over a user’s own object in the child (the objects webhook fails open)', async () => {
    const o = await attempt(() => cluster.admin.create(rbac(run!.parent, 'rolebindings'), clashBinding('frank')));
    results.push(formatOutcome('create a source named like a user object below', o));
    expect(o.message).toBe('');
    expect(o.ms).toBeLessThan(2000);
  });
});

describe('when HNC is back', () => {
  beforeAll(() => {
    proc!.kill('SIGCONT');
  });

  it('reports the source created meanwhile as a conflict, and leaves the user’s object below as it was', async () => {
    const { child, parent } = run!;
    await eventuallyEqual(
      () => conditions(cluster.admin, child),
      [
        `ObjectConflict/CannotPropagateObject: Not overwriting objects HNC did not create: RoleBinding "clash" (from "${parent}"). Rename or remove them to receive the propagated objects`,
      ],
      'the conflict condition on the child',
      60_000,
    );
    await eventually(async () => {
      const events = await cluster.admin.get<{
        items: Array<{ reason: string; message: string; involvedObject: { kind: string; name: string } }>;
      }>(`/api/v1/namespaces/${child}/events`);
      return events.items.some(
        (e) =>
          e.reason === 'CannotPropagateObject' &&
          e.involvedObject.kind === 'RoleBinding' &&
          e.involvedObject.name === 'clash' &&
          e.message.includes(`Rename or remove it so that the one from namespace "${parent}" can be propagated`),
      )
        ? true
        : undefined;
    }, 'the CannotPropagateObject event on the user’s object');
    // HNC has caught up: the source it propagates meanwhile (the parent's Role) is still in place.
    await eventually(() => cluster.admin.get(rbac(child, 'roles', 'reader')), 'the copy of reader');
    const now = await cluster.admin.get<RoleBinding>(rbac(child, 'rolebindings', 'clash'));
    expect(now.metadata.uid).toBe(clash.metadata.uid);
    expect(now.metadata.resourceVersion).toBe(clash.metadata.resourceVersion);
    expect(now.metadata.labels).toEqual({ owner: 'erin' });
    expect(now.metadata.annotations).toEqual(clash.metadata.annotations);
    expect(now.roleRef).toEqual(clash.roleRef);
    expect(now.subjects).toEqual(clash.subjects);
  });

  it('refuses such a source again, now that its webhook answers', async () => {
    const { child, parent } = run!;
    await cluster.admin.create(rbac(child, 'rolebindings'), { ...clashBinding('erin'), metadata: { name: 'clash-2' } });
    // HNC judges from its cache, which learns of the child's object by its watch a moment later (as
    // HNC v1.1.0 does): dry runs, which reach the webhook and write nothing, until it is refused.
    const source = { ...clashBinding('frank'), metadata: { name: 'clash-2' } };
    await eventually(
      async () =>
        (await attempt(() => cluster.admin.create(rbac(parent, 'rolebindings'), source, { dryRun: 'All' }))).ok ? undefined : true,
      "HNC's cache to hold the child's object",
    );
    const o = await attempt(() =>
      cluster.admin.create(rbac(parent, 'rolebindings'), { ...clashBinding('frank'), metadata: { name: 'clash-2' } }),
    );
    expect(o.ok).toBe(false);
    expect(o.message).toContain(`admission webhook "objects.hnc.x-k8s.io" denied the request`);
    expect(o.message).toContain(`would overwrite objects in the following descendant namespace(s): ${child}`);
  });
});
