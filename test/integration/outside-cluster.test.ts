// `npm start -- --kubeconfig K` against an existing cluster (here a second local control plane of
// its own): HNC runs outside that cluster, so it must never register a webhook the API server
// cannot reach (failing closed, it would refuse every namespace change in the cluster). It
// registers a URL only after proving the API server reaches it, and removes it when it stops.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LocalControlPlane } from '../../local-cluster/index.js';
import { KubeClient, isNotFound } from '../../kube/client.js';
import { installCrds, installRbac, MANAGER_GROUPS, MANAGER_USER } from '../../kube/install.js';
import { eventually, kubectl } from '../support/cluster.js';
import { createAnchor, setParent, treeDepths } from '../support/hnc.js';

const root = join(import.meta.dirname, '..', '..');
const VALIDATING = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/hnc-validating-webhook-configuration';
const MUTATING = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/hnc-mutating-webhook-configuration';

let cp: LocalControlPlane;
let admin: KubeClient;
let managerKubeconfig: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  cp = await LocalControlPlane.start({ log: () => undefined });
  admin = await KubeClient.fromKubeconfig(cp.kubeconfigPath);
  await installCrds(admin);
  await installRbac(admin);
  managerKubeconfig = (await cp.mintUser(MANAGER_USER, MANAGER_GROUPS)).kubeconfigPath;
}, 180_000);
afterEach(async () => {
  // A test that failed midway leaves its HNC running: stop it (it removes its configurations).
  for (const c of children)
    if (c.exitCode === null && c.signalCode === null) {
      c.kill('SIGINT');
      await new Promise((resolve) => c.once('exit', resolve));
    }
});
afterAll(async () => {
  await cp?.stop();
});

interface Run {
  proc: ChildProcess;
  stderr: () => string;
  /** The exit code. */
  exited: Promise<number | null>;
  /** HNC's log. */
  logFile: string;
}

/** `npm start` (cmd/start.ts) as a real process, its logs to the control plane's log folder. */
function start(args: string[]): Run {
  const logFile = join(cp.stateDir, 'logs', `hnc-outside-${children.length}.log`);
  const proc = spawn(process.execPath, ['--import', 'tsx', join(root, 'cmd', 'start.ts'), ...args], {
    cwd: root,
    env: { ...process.env, KUBECONFIG: '', HNC_LOG_FILE: logFile },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(proc);
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return { proc, stderr: () => err, exited, logFile };
}

const common = ['--kubeconfig', '', '--webhook-server-port', '0', '--metrics-addr=', '--health-probe-bind-address='];
const args = (...more: string[]) => [...common.map((a) => a || managerKubeconfig), ...more];
const gone = (path: string) =>
  admin.get(path).then(
    () => false,
    (e: unknown) => (isNotFound(e) ? true : Promise.reject(e)),
  );

describe('HNC run outside the cluster it manages', () => {
  it('registers its webhooks by a URL the API server is proven to reach, and removes them when it stops', async () => {
    const run = start(args());
    await eventually(async () => (run.stderr().includes('HNC is running') ? true : undefined), 'HNC to start', 90_000).catch(
      (e: unknown) => {
        throw new Error(`${String(e)}\n${run.stderr()}`);
      },
    );
    expect(run.stderr()).not.toContain('WITHOUT');
    // By URL on 127.0.0.1 (the API server is on this machine), never the in-cluster Service.
    // Registered once the propagated kinds are known (a moment after start-up).
    type Vwc = { webhooks: Array<{ name: string; clientConfig: { url?: string; service?: unknown } }> };
    const vwc = await eventually(async () => {
      const live = await admin.get<Vwc>(VALIDATING).catch(() => undefined);
      return live?.webhooks.some((w) => w.name === 'namespaces.hnc.x-k8s.io') ? live : undefined;
    }, 'the validating configuration');
    for (const w of vwc.webhooks) {
      expect(w.clientConfig.service).toBeUndefined();
      expect(w.clientConfig.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\//);
    }
    // The cluster works, and HNC guards it: a cycle is refused.
    await admin.create('/api/v1/namespaces', { metadata: { name: 'outside-a' } });
    await admin.create('/api/v1/namespaces', { metadata: { name: 'outside-b' } });
    await setParent(admin, 'outside-b', 'outside-a');
    const cycle = JSON.stringify({
      apiVersion: 'hnc.x-k8s.io/v1alpha2',
      kind: 'HierarchyConfiguration',
      metadata: { name: 'hierarchy', namespace: 'outside-a' },
      spec: { parent: 'outside-b' },
    });
    await eventually(
      async () =>
        (await kubectl(cp.kubeconfigPath, ['apply', '--dry-run=server', '-f', '-'], cycle)).stderr.includes('illegal parent: cycle')
          ? true
          : undefined,
      'the cycle to be refused',
    );

    const t0 = performance.now();
    run.proc.kill('SIGINT');
    expect(await run.exited).toBe(0);
    expect(performance.now() - t0).toBeLessThan(10_000);
    // Nothing is left that refuses requests: the cluster works without HNC.
    expect(await gone(VALIDATING)).toBe(true);
    expect(await gone(MUTATING)).toBe(true);
    await admin.create('/api/v1/namespaces', { metadata: { name: 'outside-after' } });
  });

  it('run as an ordinary admin user (not a service account), knows its own writes and still refuses everyone else', async () => {
    // cp.kubeconfigPath is the control plane's admin: user "admin" in system:masters, as an admin's ~/.kube/config.
    const run = start([...common.map((a) => a || cp.kubeconfigPath)]);
    await eventually(async () => (run.stderr().includes('HNC is running') ? true : undefined), 'HNC to start', 90_000).catch(
      (e: unknown) => {
        throw new Error(`${String(e)}\n${run.stderr()}`);
      },
    );
    await eventually(async () => ((await admin.get(VALIDATING).catch(() => undefined)) ? true : undefined), 'the validating configuration');
    // A subnamespace: HNC creates it with its tree labels (its own writes pass its own webhooks).
    await admin.create('/api/v1/namespaces', { metadata: { name: 'as-admin' } });
    await createAnchor(admin, 'as-admin', 'as-admin-dev');
    expect(await eventually(() => treeDepths(admin, 'as-admin-dev'), 'the subnamespace with its tree labels')).toEqual({
      'as-admin': 1,
      'as-admin-dev': 0,
    });
    // Propagation: a RoleBinding in the parent is copied to the subnamespace.
    const binding = {
      metadata: { name: 'leads' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'lead' }],
    };
    await admin.create('/apis/rbac.authorization.k8s.io/v1/namespaces/as-admin/rolebindings', binding);
    const copyPath = '/apis/rbac.authorization.k8s.io/v1/namespaces/as-admin-dev/rolebindings/leads';
    const copy = await eventually(
      () => admin.get<{ metadata: { labels?: Record<string, string> } }>(copyPath).catch(() => undefined),
      'the copy',
    );
    expect(copy.metadata.labels?.['hnc.x-k8s.io/inherited-from']).toBe('as-admin');
    // Another user, admin of both namespaces through that binding, may not delete the copy.
    const lead = await KubeClient.fromKubeconfig((await cp.mintUser('lead')).kubeconfigPath);
    // The API server enforces HNC's policies a moment after HNC writes them: wait for a dry run to be refused.
    await eventually(
      () =>
        lead.delete(copyPath, { dryRun: 'All' }).then(
          () => undefined,
          () => true,
        ),
      'the copies policy to be enforced',
    );
    const refused = await lead.delete(copyPath).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(refused?.message).toMatch(/denied request: cannot delete object propagated from namespace "as-admin"/);
    expect(await admin.get(copyPath)).toBeDefined();

    run.proc.kill('SIGINT');
    expect(await run.exited).toBe(0);
    expect(await gone(VALIDATING)).toBe(true);
    expect(await gone(MUTATING)).toBe(true);
    // The admin is told that its own requests skip HNC's checks too.
    const warned = readFileSync(run.logFile, 'utf8')
      .split('\n')
      .filter((l) => l.includes('acts as a user that is not one of its namespace') && l.includes('"user":"admin"'));
    expect(warned).toHaveLength(1);
  });

  it('given an address the API server cannot reach, exits with one clear line and registers nothing', async () => {
    // A name under .invalid never resolves (RFC 6761): the API server cannot call it, and no
    // traffic leaves this machine.
    const run = start(args('--webhook-host', 'hnc-webhooks.invalid'));
    expect(await run.exited).toBe(1);
    const lines = run
      .stderr()
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('hnc: '));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/did not reach the webhooks at https:\/\/hnc-webhooks\.invalid:\d+ within 10 s.*no webhook was registered/);
    expect(run.stderr()).not.toMatch(/^\s+at /m);
    expect(await gone(VALIDATING)).toBe(true);
    expect(await gone(MUTATING)).toBe(true);
    await admin.create('/api/v1/namespaces', { metadata: { name: 'outside-unreached' } });
  });
});
