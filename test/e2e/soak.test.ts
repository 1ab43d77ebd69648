// The soak (issue #30, docs/reliability.md): users at work, seeded faults and the independent
// checker on the real node, with HNC installed as in production (two replicas, the image,
// dist/install-hrq.yaml). `npm run soak -- --minutes N [--seed S]` runs this file alone; by
// default it runs 5 minutes. It fails on any lost object, any quiet point that did not settle
// and any HRQ over-admission.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isNotFound } from '../../kube/client.js';
import { renderInstall, DEPLOY_HRQ_KUSTOMIZATION } from '../../scripts/build-install.js';
import { runSoak, inScope } from '../../soak/soak.js';
import { FAULT_KINDS, type FaultKind, type ManagerPod } from '../../soak/faults.js';
import { hncObject } from '../../soak/kinds.js';
import { TestCluster, eventually, update } from '../support/cluster.js';
import { HNC_IMAGE } from './global-setup.js';
import {
  DEPLOYMENT,
  HNC_NAMESPACE,
  admin,
  configureResources,
  ensureInstalled,
  leaseHolder,
  managerPods,
  waitForWebhooksThroughService,
  waitRolledOut,
} from './support.js';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 5);
const SEED = Number(process.env.SOAK_SEED ?? 30);
const OUT = process.env.SOAK_OUT ?? `/tmp/hnc-soak-${new Date().toISOString().replace(/[:.]/g, '-')}`;
/** Fault kinds to inject first, in order (comma-separated), before the seeded choice. */
const FAULT_ORDER = (process.env.SOAK_FAULTS ?? '').split(',').filter(Boolean) as FaultKind[];
const SECRETS_CONFIGMAPS_GRANT = 'deploy/optional/propagate-secrets-configmaps';

let cluster: TestCluster;
/** The HNCConfiguration's kinds before the soak, put back after it (the next files expect theirs). */
let resourcesBefore: Array<{ group?: string; resource: string; mode: string }> | undefined;

/** HNC as in production with hierarchical quotas on: dist/install-hrq.yaml of the image under test, and the grant for ConfigMaps. */
async function installWithHrq(): Promise<void> {
  const file = join(OUT, 'install-hrq.yaml');
  writeFileSync(file, renderInstall({ kustomization: DEPLOY_HRQ_KUSTOMIZATION, image: HNC_IMAGE }).yaml);
  for (const args of [
    ['-f', file],
    ['-k', SECRETS_CONFIGMAPS_GRANT],
  ]) {
    const r = await admin(cluster, ['apply', '--server-side', '--force-conflicts', ...args]);
    if (r.code !== 0) throw new Error(`kubectl apply ${args.join(' ')} failed: ${r.stderr}`);
  }
  await waitRolledOut(cluster.admin);
  await eventually(() => leaseHolder(cluster.admin), 'a leader');
  await waitForWebhooksThroughService(cluster);
  const config = await eventually(
    () => cluster.admin.get<{ spec?: { resources?: typeof resourcesBefore } }>('/apis/hnc.x-k8s.io/v1alpha2/hncconfigurations/config'),
    'the HNCConfiguration',
  );
  resourcesBefore = config.spec?.resources ?? [];
  await configureResources(cluster, [
    { group: 'networking.k8s.io', resource: 'networkpolicies', mode: 'Propagate' },
    { resource: 'configmaps', mode: 'Propagate' },
  ]);
}

/**
 * The soak's full namespaces go (the roots allowing cascading deletion first, so that no anchor's
 * deletion is refused); their subnamespaces go with their anchors.
 */
async function removeSoakNamespaces(): Promise<void> {
  const list = await cluster.admin.get<{ items: Array<{ metadata: { name: string; annotations?: Record<string, string> } }> }>(
    '/api/v1/namespaces',
  );
  const full = list.items.filter((n) => inScope(n.metadata.name) && !n.metadata.annotations?.['hnc.x-k8s.io/subnamespace-of']);
  const gone = (e: unknown) => (isNotFound(e) ? undefined : Promise.reject(e));
  for (const { metadata } of full) {
    const path = `/apis/hnc.x-k8s.io/v1alpha2/namespaces/${metadata.name}/hierarchyconfigurations/hierarchy`;
    const allow = { allowCascadingDeletion: true };
    await update<{ spec?: object }>(cluster.admin, path, (hc) => ({ ...hc, spec: { ...hc.spec, ...allow } })).catch((e: unknown) =>
      isNotFound(e)
        ? cluster.admin.create(path.slice(0, path.lastIndexOf('/')), hncObject('HierarchyConfiguration', 'hierarchy', allow))
        : Promise.reject(e),
    );
  }
  await Promise.all(full.map(({ metadata }) => cluster.admin.delete(`/api/v1/namespaces/${metadata.name}`).catch(gone)));
}

beforeAll(async () => {
  const unknown = FAULT_ORDER.filter((k) => !FAULT_KINDS.includes(k));
  if (unknown.length) throw new Error(`SOAK_FAULTS: unknown fault kinds ${unknown.join(', ')} (known: ${FAULT_KINDS.join(', ')})`);
  mkdirSync(OUT, { recursive: true });
  cluster = await TestCluster.connect();
  await ensureInstalled(cluster);
  await installWithHrq();
}, 600_000);

afterAll(async () => {
  if (!cluster) return;
  await removeSoakNamespaces();
  // The kinds before (no ConfigMaps) first, so that the manager stops watching what it is no longer granted.
  if (resourcesBefore) await configureResources(cluster, resourcesBefore);
  await admin(cluster, ['delete', '--ignore-not-found', '-k', SECRETS_CONFIGMAPS_GRANT]);
  await ensureInstalled(cluster);
}, 600_000);

describe('soak', () => {
  it(
    `${MINUTES} minutes of users at work and seeded faults: nothing lost, every quiet point settled, no HRQ over-admission`,
    async () => {
      const f = await runSoak({
        minutes: MINUTES,
        seed: SEED,
        outDir: OUT,
        faultOrder: FAULT_ORDER,
        admin: cluster.admin,
        userClient: async (name) => (await cluster.user(name)).client,
        faults: {
          admin: cluster.admin,
          stateDir: inject('stateDir'),
          containerdSocket: inject('containerdSocket'),
          namespace: HNC_NAMESPACE,
          deployment: DEPLOYMENT,
          // The list's pods carry their container statuses, which support.ts's Pod type leaves out.
          managerPods: () => managerPods(cluster.admin) as Promise<unknown> as Promise<ManagerPod[]>,
          leaseHolder: () => leaseHolder(cluster.admin),
          waitRolledOut: () => waitRolledOut(cluster.admin),
          waitApiServer: async () => {
            await eventually(
              async () => ((await cluster.admin.raw('GET', '/readyz')).statusCode === 200 ? true : undefined),
              'the API server',
              120_000,
            );
          },
          log: (l) => process.stderr.write(`${l}\n`),
        },
        log: (l) => process.stderr.write(`${l}\n`),
        // The kubelet removes a deleted pod's logs: keep a copy of every manager's so far.
        afterQuietPoint: () => {
          spawnSync('sh', [
            '-c',
            `mkdir -p ${OUT}/pod-logs && cp -r ${inject('nodeStateDir')}/pod-logs/hnc-system_* ${OUT}/pod-logs/ 2>/dev/null`,
          ]);
        },
      });
      process.stderr.write(`soak: request log and figures in ${OUT}\n`);
      expect(f.lost).toEqual([]);
      expect(f.divergentQuietPoints, f.divergences.join('\n')).toBe(0);
      expect(f.overAdmissionSamples).toEqual([]);
    },
    (MINUTES + 15) * 60_000,
  );
});
