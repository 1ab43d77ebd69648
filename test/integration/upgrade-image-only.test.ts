// An install upgraded by its image alone (`kubectl set image`), its manifests left at an earlier
// release: the manager's Role then lacks `list`/`watch` on its certificate Secret, which this
// release uses to take up a rotation at once (docs/deploy.md, "Upgrade"). The manager must still
// start, serve its webhooks and reconcile, and say in its log what it cannot do.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Hnc } from '../../cmd/hnc.js';
import { installRbac } from '../../kube/install.js';
import { TestCluster, eventually, eventuallyEqual } from '../support/cluster.js';
import { setParent, treeDepths } from '../support/hnc.js';
import { removeWebhookConfigurations, startHncWithWebhooks, waitForWebhooks } from '../support/manager.js';

const ROLE = '/apis/rbac.authorization.k8s.io/v1/namespaces/hnc-system/roles/hnc-webhook-certs';
const NAME = 'upgrade-image-only';

let cluster: TestCluster;
let hnc: Hnc | undefined;

beforeAll(async () => {
  cluster = await TestCluster.connect();
  // The Role as releases before the Secret's watch granted it.
  const role = await cluster.admin.get<{ rules: Array<{ verbs: string[]; resourceNames?: string[] }> }>(ROLE);
  const earlier = role.rules.map((r) => (r.resourceNames ? { ...r, verbs: r.verbs.filter((v) => v !== 'list' && v !== 'watch') } : r));
  await cluster.admin.replace(ROLE, { ...role, rules: earlier });
});

afterAll(async () => {
  await hnc?.stop();
  await removeWebhookConfigurations();
  await installRbac(cluster.admin);
  await cluster.cleanup();
}, 120_000);

describe('a new image under an earlier release’s RBAC', () => {
  it('starts, judges and reconciles without the Secret’s watch, and logs that it is refused', async () => {
    hnc = await startHncWithWebhooks(NAME);
    await waitForWebhooks(cluster.kubeconfigPath);
    const parent = await cluster.namespace('upgrade-parent');
    const child = await cluster.namespace('upgrade-child');
    await setParent(cluster.admin, child, parent);
    await eventuallyEqual(() => treeDepths(cluster.admin, child), { [child]: 0, [parent]: 1 }, 'the child’s tree labels');
    const log = () => readFileSync(join(inject('stateDir'), 'logs', `hnc-${NAME}.log`), 'utf8');
    await eventually(
      async () =>
        log()
          .split('\n')
          .some((l) => l.includes('list/watch failed') && l.includes('secrets') && l.includes('403'))
          ? true
          : undefined,
      'the refused watch in the log',
    );
    expect(hnc.webhooks?.ca).toBeTruthy();
  });
});
