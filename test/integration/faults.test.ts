// Faults, on a control plane of its own (it kills its components): HNC's stop ends every loop within
// seconds whatever the state (a propagated type whose list is refused and retried; a dead API
// server), and the local control plane restarts a crashed etcd, kube-apiserver or
// kube-controller-manager, up to a limit, past which it reports one line.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalControlPlane, MAX_RESTARTS } from '../../local-cluster/index.js';
import { isNotFound, KubeClient } from '../../kube/client.js';
import { Webhook } from '../../core/api/constants.js';
import { CONFIGURATION_PATHS } from '../../webhooks/configurations.js';
import { installCrds, installRbac, MANAGER_GROUPS, MANAGER_SERVICE_ACCOUNT, MANAGER_USER } from '../../kube/install.js';
import { createLogger } from '../../kube/log.js';
import { startHnc, type Hnc } from '../../cmd/hnc.js';
import { HierarchyPolicy } from '../../core/hierarchy/policy.js';
import { eventually } from '../support/cluster.js';

let cp: LocalControlPlane;
let admin: KubeClient;
let managerKubeconfig: string;
const failures: string[] = [];

beforeAll(async () => {
  cp = await LocalControlPlane.start({ log: () => undefined, onFailure: (m) => failures.push(m) });
  admin = await KubeClient.fromKubeconfig(cp.kubeconfigPath);
  await installCrds(admin);
  await installRbac(admin);
  managerKubeconfig = (await cp.mintUser(MANAGER_USER, MANAGER_GROUPS)).kubeconfigPath;
}, 180_000);
afterAll(async () => {
  await cp?.stop();
});

async function hnc(): Promise<Hnc> {
  return startHnc({
    client: await KubeClient.fromKubeconfig(managerKubeconfig),
    policy: new HierarchyPolicy(),
    namespace: MANAGER_SERVICE_ACCOUNT.namespace,
    logger: createLogger({ level: 'silent' }),
    workers: 2,
    webhooks: {
      port: 0,
      host: '127.0.0.1',
      endpoint: (port) => ({ url: `https://127.0.0.1:${port}` }),
      verifyReachable: true,
      removeOnStop: true,
    },
    leaderElection: { id: 'faults', leaseDurationMs: 4000, renewDeadlineMs: 2600, retryPeriodMs: 1000 },
  });
}

/** The URL of the namespace webhook HNC registers, if it is registered. */
async function namespaceWebhookUrl(): Promise<string | undefined> {
  type Live = { webhooks?: Array<{ name: string; clientConfig: { url?: string } }> };
  const live = await admin.get<Live>(CONFIGURATION_PATHS.validating).catch((err: unknown) => {
    if (isNotFound(err)) return {} as Live;
    throw err;
  });
  return live.webhooks?.find((w) => w.name === Webhook.namespaces.name)?.clientConfig.url;
}

const timed = async (fn: () => Promise<void>) => {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
};

describe('stopping', () => {
  it('ends within seconds while a propagated type the manager may not list is being retried', async () => {
    const h = await hnc();
    // Secrets: the manager's RBAC does not let it list them, so the type's watch retries a 403.
    await eventually(() => admin.get('/apis/hnc.x-k8s.io/v1alpha2/hncconfigurations/config').catch(() => undefined), 'the config');
    await admin.mergePatch('/apis/hnc.x-k8s.io/v1alpha2/hncconfigurations/config', {
      spec: { resources: [{ resource: 'secrets', mode: 'Propagate' }] },
    });
    // Retried either way: the propagator's list, or the access check that holds it back.
    await eventually(async () => {
      const cfg = await admin.get<{ status?: { conditions?: Array<{ message?: string }> } }>(
        '/apis/hnc.x-k8s.io/v1alpha2/hncconfigurations/config',
      );
      return h.manager.config.propagators.has('secrets') || cfg.status?.conditions?.some((c) => c.message?.includes('secrets'))
        ? true
        : undefined;
    }, 'the secrets type to be failing');
    expect(await timed(() => h.stop())).toBeLessThan(5000);
    await admin.mergePatch('/apis/hnc.x-k8s.io/v1alpha2/hncconfigurations/config', { spec: { resources: [] } });
  });

  it('ends within seconds with the API server dead', async () => {
    const h = await hnc();
    await eventually(async () => (h.leader?.isLeader ? true : undefined), 'the lease');
    // Its full webhook configuration written (it comes once the propagated types are known, in a
    // race with the lease), so that every run stops the same HNC: one with webhooks to remove.
    await eventually(
      async () => ((await namespaceWebhookUrl())?.startsWith(`https://127.0.0.1:${h.webhooks!.port}/`) ? true : undefined),
      "HNC's namespace webhook",
    );
    await cp.stopComponent('kube-apiserver');
    expect(await timed(() => h.stop())).toBeLessThan(8000);
    await cp.restartApiServer();
    // What this stop could not remove: a namespace webhook that fails closed, pointing at a port
    // nobody serves, would refuse every namespace written from here on.
    expect(await namespaceWebhookUrl()).toBeDefined();
    for (const path of Object.values(CONFIGURATION_PATHS))
      await admin.delete(path).catch((err: unknown) => {
        // The mutating one may not have been written yet when the API server went.
        if (!isNotFound(err)) throw err;
      });
  });
});

describe('the local control plane under supervision', () => {
  /** A wait that, when it times out, says what the supervisor last saw of every component. */
  const reporting = <T>(wait: Promise<T>, after: string): Promise<T> =>
    wait.catch((err: unknown) => {
      throw new Error(`${(err as Error).message} (after ${after})\n${cp.report()}`);
    });
  const healthy = (after: string) =>
    reporting(
      eventually(
        // Its own timeout: a write that hangs on an API server whose etcd is away must not use up the wait.
        () =>
          admin.request('POST', '/api/v1/namespaces', {
            body: { metadata: { name: `alive-${Math.random().toString(36).slice(2, 8)}` } },
            timeoutMs: 10_000,
          }),
        'the cluster to serve writes',
        90_000,
      ),
      after,
    );
  type Name = 'kube-apiserver' | 'etcd' | 'kube-controller-manager';
  /** Kills one component and waits until its supervisor has restarted it and seen it ready. */
  const crash = async (name: Name) => {
    const component = () => cp.supervision().components.find((c) => c.name === name)!;
    const { pid, restarts } = component();
    cp.kill(name);
    await reporting(
      eventually(
        async () => {
          const c = component();
          return c.pid !== pid && c.restarts === restarts + 1 && c.state === 'up' ? true : undefined;
        },
        `${name} restarted and ready`,
        90_000,
      ),
      `killing ${name}`,
    );
  };

  it('restarts a crashed kube-apiserver, etcd and kube-controller-manager', async () => {
    const restartsBefore = cp.restartCount;
    for (const name of ['kube-apiserver', 'etcd', 'kube-controller-manager'] as const) {
      await crash(name);
      await healthy(`killing ${name}`);
    }
    // Only the killed components were restarted.
    expect(cp.restartCount - restartsBefore).toBe(3);
    expect(failures).toEqual([]);
    // Three restarts, each waited for (up to 90 s apiece above): more than the suite's 60 s default.
  }, 300_000);

  it(`gives up with one line after ${MAX_RESTARTS} restarts`, async () => {
    // Uses up what the restart budget has left (all of it when the test above did its part).
    while (cp.restartCount < MAX_RESTARTS) await crash('kube-controller-manager');
    cp.kill('kube-controller-manager');
    const [line] = await reporting(
      eventually(async () => (failures.length ? failures : undefined), 'the failure report'),
      `${MAX_RESTARTS} restarts`,
    );
    expect(failures).toHaveLength(1);
    expect(line).toMatch(
      new RegExp(
        `^the local control plane failed: kube-controller-manager exited unexpectedly \\(signal SIGKILL\\) after ${MAX_RESTARTS} restarts`,
      ),
    );
    // Restarts the test above did not get to, each waited for up to 90 s.
  }, 300_000);
});
