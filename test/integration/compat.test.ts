// HNC users' command sequences, run through the real `kubectl` and `kubectl hns` against the real
// control plane with HNC (controller and webhooks) running, within the times their scripts poll
// for: about 2 s for most effects, 5 s for a subnamespace to appear, 10 s for a cascading deletion.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hnc } from '../../cmd/hnc.js';
import { TestCluster, eventually, eventuallyEqual, kubectl, type KubectlResult } from '../support/cluster.js';
import { removeWebhookConfigurations, startHncWithWebhooks } from '../support/manager.js';
import { namespaceExists } from '../support/hnc.js';
import { SECRETS_CONFIGMAPS_GRANT } from '../../core/config/access.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let cluster: TestCluster;
let hnc: Hnc;
const cleanup: string[] = [];

beforeAll(async () => {
  cluster = await TestCluster.connect();
  hnc = await startHncWithWebhooks('compat');
});
afterAll(async () => {
  await hnc?.stop();
  await removeWebhookConfigurations();
  for (const ns of cleanup) await cluster.admin.delete(`/api/v1/namespaces/${ns}`).catch(() => undefined);
  await cluster.cleanup();
});

/** Runs `kubectl ARGS` as admin and expects it to succeed. */
async function ok(...args: string[]): Promise<KubectlResult> {
  const result = await kubectl(cluster.kubeconfigPath, args);
  if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited with ${result.code}: ${result.stderr}`);
  return result;
}

const hns = (...args: string[]) => ok('hns', ...args);
const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => TestCluster.uniqueName(`${prefix}${i + 1}`));
const jsonpath = async (args: string[], path: string) => (await ok(...args, '-o', `jsonpath=${path}`)).stdout;

describe('HNC users’ command sequences', () => {
  it('stamps every condition, AncestorHaltActivities too, with the time it became true', async () => {
    const [gone, mid, leaf] = names('ts', 3) as [string, string, string];
    cleanup.push(mid, leaf);
    await ok('create', 'ns', gone);
    await ok('create', 'ns', mid);
    await ok('create', 'ns', leaf);
    await hns('set', mid, '--parent', gone);
    await hns('set', leaf, '--parent', mid);
    const before = Date.now() - 1000; // timestamps have a resolution of one second
    await ok('delete', 'ns', gone);
    const reasons = () => jsonpath(['get', 'hierarchyconfiguration', 'hierarchy', '-n', leaf], '{.status.conditions[*].reason}');
    await eventuallyEqual(reasons, 'AncestorHaltActivities', 'AncestorHaltActivities below the orphan', 2000);
    const at = await jsonpath(['get', 'hierarchyconfiguration', 'hierarchy', '-n', leaf], '{.status.conditions[0].lastTransitionTime}');
    expect(Date.parse(at)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(at)).toBeLessThanOrEqual(Date.now());
    const parentMissingAt = await jsonpath(
      ['get', 'hierarchyconfiguration', 'hierarchy', '-n', mid],
      '{.status.conditions[0].lastTransitionTime}',
    );
    expect(Date.parse(parentMissingAt)).toBeGreaterThanOrEqual(before);
  });

  it('keeps a detached subnamespace detached: it and its old parent can be deleted, and it never comes back', async () => {
    const [parent, child] = names('det', 2) as [string, string];
    cleanup.push(parent, child);
    await ok('create', 'ns', parent);
    await hns('create', child, '-n', parent);
    await eventuallyEqual(() => namespaceExists(cluster.admin, child), true, 'the subnamespace', 5000);
    await ok('annotate', 'ns', child, 'hnc.x-k8s.io/subnamespace-of-');
    await eventuallyEqual(
      () => jsonpath(['get', 'subnamespaceanchor', child, '-n', parent], '{.status.status}'),
      'Conflict',
      'the anchor in Conflict',
      2000,
    );
    await ok('delete', 'ns', child); // waits until it is gone
    // From here on, the namespace must never exist again.
    let cameBack = false;
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        if (await namespaceExists(cluster.admin, child)) cameBack = true;
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    try {
      expect(await jsonpath(['get', 'subnamespaceanchor', child, '-n', parent], '{.status.status}')).toBe('Conflict');
      await ok('delete', 'ns', parent); // no allowCascadingDeletion needed; waits until it is gone
    } finally {
      watching = false;
      await watcher;
    }
    expect(cameBack).toBe(false);
    expect(await namespaceExists(cluster.admin, parent)).toBe(false);
    expect(await namespaceExists(cluster.admin, child)).toBe(false);
  });

  it('refuses a graft by someone who may only patch namespaces, and never deletes a grafted namespace with its anchor', async () => {
    const team = await cluster.namespace('graft-team');
    const other = await cluster.namespace('graft-other');
    const mallory = TestCluster.uniqueName('mallory');
    const role = { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'patch'] };
    await cluster.admin.create('/apis/rbac.authorization.k8s.io/v1/clusterroles', { metadata: { name: mallory }, rules: [role] });
    await cluster.admin.create('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      metadata: { name: mallory },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: mallory },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: mallory }],
    });
    try {
      const asMallory = (await cluster.user(mallory)).kubeconfigPath;
      const graft = await kubectl(asMallory, ['annotate', 'ns', other, `hnc.x-k8s.io/subnamespace-of=${team}`]);
      expect(graft.code).toBe(1);
      expect(graft.stderr).toContain(`User ${mallory} is not authorized to modify the subtree of ${team}, which is the proposed parent`);
      // An admin may graft; the graft is recorded, and the anchor then adopts the namespace.
      await ok('annotate', 'ns', other, `hnc.x-k8s.io/subnamespace-of=${team}`);
      expect(await jsonpath(['get', 'ns', other], '{.metadata.annotations.hnc\\.x-k8s\\.io/grafted-by}')).not.toBe('');
      // Removing that record needs permission to delete the namespace: mallory may not.
      const unrecord = await kubectl(asMallory, ['annotate', 'ns', other, 'hnc.x-k8s.io/grafted-by-']);
      expect(unrecord.code).toBe(1);
      expect(unrecord.stderr).toContain(`only a user who may delete namespace "${other}"`);
      await hns('create', other, '-n', team);
      await eventuallyEqual(
        () => jsonpath(['get', 'subnamespaceanchor', other, '-n', team], '{.status.status}'),
        'Ok',
        'the anchor to adopt the namespace',
        2000,
      );
      await hns('delete', other, '-n', team);
      await eventuallyEqual(
        async () => (await kubectl(cluster.kubeconfigPath, ['get', 'subnamespaceanchor', other, '-n', team])).code,
        1,
        'the anchor to be gone',
        2000,
      );
      expect(await namespaceExists(cluster.admin, other)).toBe(true);
      expect((await ok('get', 'ns', other, '-o', 'jsonpath={.status.phase}')).stdout).toBe('Active');
      await ok('annotate', 'ns', other, 'hnc.x-k8s.io/subnamespace-of-'); // a full namespace again, so team can go
    } finally {
      await cluster.admin.delete(`/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${mallory}`);
      await cluster.admin.delete(`/apis/rbac.authorization.k8s.io/v1/clusterroles/${mallory}`);
    }
  });

  it('says which permission the manager lacks to propagate Secrets, and the fix; propagates within seconds of the grant', async () => {
    const parent = await cluster.namespace('sec');
    const child = TestCluster.uniqueName('sec-child');
    cleanup.push(child);
    await hns('create', child, '-n', parent);
    await eventuallyEqual(() => namespaceExists(cluster.admin, child), true, 'the subnamespace', 5000);
    await ok('create', 'secret', 'generic', 'db-password', '-n', parent, '--from-literal=password=hunter2');
    const lacks =
      "HNC's manager may not get, list, watch, create, update, patch, delete secrets cluster-wide, so they are not propagated; " +
      `to fix: kubectl apply -k ${SECRETS_CONFIGMAPS_GRANT}`;
    try {
      const set = await hns('config', 'set-resource', 'secrets', '--mode', 'Propagate', '--force');
      expect(set.stderr).toBe(`Warning: ${lacks}\n`);
      await eventually(
        async () => ((await hns('config', 'describe')).stdout.includes(`OutOfSync (MissingPermission): ${lacks}\n`) ? true : undefined),
        'the condition in config describe',
        2000,
      );
      expect((await kubectl(cluster.kubeconfigPath, ['get', 'secret', 'db-password', '-n', child])).code).toBe(1);
      await ok('apply', '-k', join(ROOT, SECRETS_CONFIGMAPS_GRANT));
      const granted = Date.now();
      await eventuallyEqual(
        async () => (await kubectl(cluster.kubeconfigPath, ['get', 'secret', 'db-password', '-n', child])).code,
        0,
        'the Secret to be propagated',
        3000,
      );
      console.log(`compat: a Secret was propagated ${((Date.now() - granted) / 1000).toFixed(1)} s after the grant`);
      await eventually(
        async () => (!(await hns('config', 'describe')).stdout.includes('MissingPermission') ? true : undefined),
        'the condition to clear',
        3000,
      );
      expect((await hns('config', 'set-resource', 'secrets', '--mode', 'Propagate')).stderr).toBe('');
    } finally {
      await hns('config', 'delete-type', '--resource', 'secrets');
      await kubectl(cluster.kubeconfigPath, ['delete', '-k', join(ROOT, SECRETS_CONFIGMAPS_GRANT)]);
    }
  });

  it('deletes a subtree of depth 5 quickly, and the tree drops it at once', async () => {
    const team = await cluster.namespace('cascade');
    const levels = names('lvl', 5);
    cleanup.push(...levels);
    let parent = team;
    for (const ns of levels) {
      await hns('create', ns, '-n', parent);
      await eventuallyEqual(() => namespaceExists(cluster.admin, ns), true, `subnamespace ${ns}`, 5000);
      parent = ns;
    }
    await eventually(async () => ((await hns('tree', team)).stdout.includes(levels[4]!) ? true : undefined), 'the whole tree', 2000);
    const start = Date.now();
    await hns('delete', levels[0]!, '-n', team, '--allowCascadingDeletion');
    // The tree stops listing it as soon as its deletion starts.
    await eventuallyEqual(async () => (await hns('tree', team)).stdout, `${team}\n`, 'the tree without the subtree being deleted', 2000);
    const goneAt = await Promise.all(
      levels.map(async (ns) => {
        await eventuallyEqual(() => namespaceExists(cluster.admin, ns), false, `${ns} to be gone`, 20_000);
        return ((Date.now() - start) / 1000).toFixed(1);
      }),
    );
    const seconds = (Date.now() - start) / 1000;
    console.log(`compat: deleting a subtree of depth 5 took ${seconds.toFixed(1)} s (levels gone at ${goneAt.join(', ')} s)`);
    // The levels go together: each namespace's own deletion by Kubernetes' namespace controller
    // takes about 6 s here (more on a busy machine), so one level after another would take 30 s or
    // more. The bound tells the two apart, not how fast this machine is.
    expect(seconds).toBeLessThan(20);
  });
});
