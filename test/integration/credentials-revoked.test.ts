// Issue #31: a replica whose credentials the API server rejects (a force-deleted pod whose process
// still runs, a revoked token) must not go on answering admission reviews from caches it can no
// longer refresh. HNC runs as a process of its own on a control plane of its own, as its service
// account with a token bound to a Secret, as a pod's token is bound to its pod: deleting the Secret
// revokes the token (the API server answers 401). A token rotated on disk first is picked up, and
// the process runs on; once no token it can read is accepted, it exits 1 with a log line naming
// the cause, and the API server gets no answer from it any more.
import type { ChildProcess } from 'node:child_process';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { LocalControlPlane } from '../../local-cluster/index.js';
import { ApiError, KubeClient } from '../../kube/client.js';
import { installCrds, installRbac, MANAGER_SERVICE_ACCOUNT } from '../../kube/install.js';
import { eventually, kubectl } from '../support/cluster.js';
import { WEBHOOK_PROBE_ANCHOR } from '../support/hnc.js';
import { spawnHnc, waitForWebhooks } from '../support/manager.js';

const { namespace, name: serviceAccount } = MANAGER_SERVICE_ACCOUNT;
const LEASE = `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/creds-test`;

let cp: LocalControlPlane;
let admin: KubeClient;
let proc: ChildProcess | undefined;
let exited: Promise<number | null>;
let stderr: () => string;
let tokenFile: string;
let logFile: string;

/** A token of HNC's service account, valid only while the Secret `name` (created here) exists. */
async function boundToken(name: string): Promise<string> {
  const secret = await admin.create<{ metadata: { uid: string } }>(`/api/v1/namespaces/${namespace}/secrets`, {
    metadata: { name },
  });
  const review = await admin.create<{ status: { token: string } }>(
    `/api/v1/namespaces/${namespace}/serviceaccounts/${serviceAccount}/token`,
    {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: 3600, boundObjectRef: { apiVersion: 'v1', kind: 'Secret', name, uid: secret.metadata.uid } },
    },
  );
  return review.status.token;
}

/** Writes the token file as the kubelet does: a new file renamed over the old one. */
function writeToken(token: string): void {
  writeFileSync(`${tokenFile}.new`, token);
  renameSync(`${tokenFile}.new`, tokenFile);
}

/** The control plane's kubeconfig with its user's credentials replaced by `user`. */
function kubeconfigWith(user: { token: string } | { tokenFile: string }, file: string): string {
  const config = parse(readFileSync(cp.kubeconfigPath, 'utf8')) as { users: Array<{ user: unknown }> };
  for (const u of config.users) u.user = user;
  const path = join(cp.stateDir, file);
  writeFileSync(path, stringify(config), { mode: 0o600 });
  return path;
}

/** Whether the API server rejects `token` (a request of our own with it answered 401). */
async function rejected(token: string): Promise<boolean> {
  const probe = await KubeClient.fromKubeconfig(kubeconfigWith({ token }, 'probe.kubeconfig'));
  return probe.get('/version').then(
    () => false,
    (e: unknown) => (e instanceof ApiError && e.code === 401 ? true : Promise.reject(e)),
  );
}

/** A dry-run anchor in an excluded namespace: HNC's webhook refuses it, or the API server cannot call it. */
async function anchorProbe(): Promise<string> {
  const r = await kubectl(cp.kubeconfigPath, ['create', '-f', '-', '--dry-run=server'], WEBHOOK_PROBE_ANCHOR);
  return r.stderr;
}

beforeAll(async () => {
  cp = await LocalControlPlane.start({ log: () => undefined });
  admin = await KubeClient.fromKubeconfig(cp.kubeconfigPath);
  await installCrds(admin);
  await installRbac(admin);
  tokenFile = join(cp.stateDir, 'hnc-token');
  logFile = join(cp.stateDir, 'logs', 'hnc-creds.log');
  writeToken(await boundToken('creds-first'));
  // As in the Deployment: leader election, whose Lease is renewed every 2 s.
  const args = ['--enable-leader-election', '--leader-election-id', 'creds-test', '--webhook-server-port', '0', '--metrics-addr='];
  const hnc = await spawnHnc(kubeconfigWith({ tokenFile }, 'hnc-token.kubeconfig'), [...args, '--health-probe-bind-address='], logFile);
  proc = hnc.proc;
  exited = hnc.exited;
  stderr = hnc.stderr;
  await waitForWebhooks(cp.kubeconfigPath);
}, 180_000);

afterAll(async () => {
  if (proc && proc.exitCode === null && proc.signalCode === null) {
    proc.kill('SIGKILL');
    await exited;
  }
  await cp?.stop();
}, 60_000);

describe('HNC whose credentials the API server rejects', () => {
  it('reads a token rotated on disk when the old one is revoked, and runs on', async () => {
    const first = readFileSync(tokenFile, 'utf8');
    writeToken(await boundToken('creds-second'));
    await admin.delete(`/api/v1/namespaces/${namespace}/secrets/creds-first`);
    // The API server may accept a token it has seen for a few seconds more (its authentication cache).
    await eventually(async () => ((await rejected(first)) ? true : undefined), 'the first token to be rejected');
    const revokedAt = Date.now();
    // Longer than a persistent rejection takes (5 s of 401s), with the leader's renewals every 2 s.
    await new Promise((r) => setTimeout(r, 12_000));
    expect(proc!.exitCode).toBeNull();
    const lease = await admin.get<{ spec: { renewTime: string } }>(LEASE);
    expect(Date.parse(lease.spec.renewTime)).toBeGreaterThan(revokedAt);
    expect(await anchorProbe()).toContain('subnamespaceanchors.hnc.x-k8s.io');
    expect(await anchorProbe()).not.toContain('failed calling webhook');
    // It was refused meanwhile (its client reads the file once a minute otherwise; it started well
    // under a minute ago), read the file anew and was accepted again.
    const log = readFileSync(logFile, 'utf8');
    expect(log).toContain('401 Unauthorized');
    expect(log).not.toContain('credentials rejected');
  }, 60_000);

  it('exits 1 soon after its only token is revoked, saying why, and answers no review after', async () => {
    const t0 = Date.now();
    await admin.delete(`/api/v1/namespaces/${namespace}/secrets/creds-second`);
    const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('still running'), 50_000))]);
    const seconds = (Date.now() - t0) / 1000;
    console.log(`exited ${String(code)} ${seconds.toFixed(1)} s after its token was revoked`);
    expect(code).toBe(1);
    // At most 10 s of the API server's authentication cache, 5 s of 401s, then a stop of a few seconds.
    expect(seconds).toBeLessThan(40);
    const fatal = readFileSync(logFile, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"level":60'))
      .map((l) => JSON.parse(l) as { msg: string; err: string; rejections: number; forMs: number; lastRequest: string });
    expect(fatal).toHaveLength(1);
    expect(fatal[0]!.msg).toBe('credentials rejected by the API server: this replica stops answering admission reviews and exits');
    expect(fatal[0]!.err).toContain("the API server rejects this process's credentials (401 Unauthorized");
    expect(fatal[0]!.rejections).toBeGreaterThanOrEqual(3);
    expect(fatal[0]!.forMs).toBeGreaterThanOrEqual(5_000);
    expect(stderr()).toMatch(/^hnc: the API server rejects this process's credentials .*: stopping \.\.\.$/m);
    // The webhook configurations stay (they could not be removed with a rejected token): the API
    // server calls them and finds nobody answering.
    expect(await anchorProbe()).toContain('failed calling webhook "subnamespaceanchors.hnc.x-k8s.io"');
  }, 60_000);
});
