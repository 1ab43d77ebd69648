// A replica cut off from the API server (a partition, a firewall rule) while the API server still
// reaches its webhooks: its watches hang without an error and its caches stop following, so it
// must not decide from them (found by the soak, docs/reliability.md). HNC runs as a process of its
// own whose every connection to the API server goes through a TCP proxy of this test; cutting the
// proxy drops its traffic silently, as the soak's iptables rule does. Meanwhile the API server
// calls HNC's webhooks directly (registered by URL): they must answer 503 for what needs the
// hierarchy and let the rest through, and /readyz must fail; once the proxy forwards again, all of
// that must end within seconds, and what changed during the cut must reach both its controller and
// its webhooks although the connections opened before the cut still hang (as TCP's backed-off
// retransmissions leave them for tens of seconds after packets were dropped).
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { MANAGER_GROUPS, MANAGER_USER } from '../../kube/install.js';
import { mintUser } from '../../local-cluster/index.js';
import { TestCluster, eventually, eventuallyEqual, kubectl } from '../support/cluster.js';
import { WEBHOOK_PROBE_ANCHOR, setParent, treeDepths } from '../support/hnc.js';
import { removeWebhookConfigurations, spawnHnc, waitForWebhooks, type HncProcess } from '../support/manager.js';
import { freePort } from '../../local-cluster/control-plane.js';

const CUT_OFF = 'this HNC replica cannot reach the API server';

/**
 * A TCP proxy to the API server that can be cut: every byte is then held, as dropped packets are
 * (new connections hang too). When the cut ends, new connections forward and so do open ones that
 * had nothing in flight; one whose bytes were held stays silent until its client writes on it again
 * (as TCP, whose retransmissions back off to tens of seconds during a long drop, resumes at once
 * only when new data carries the acknowledgement), or for a minute: a watch, whose client never
 * writes, stays stalled that long.
 */
class CuttableProxy {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  cut = false;

  constructor(private readonly target: { host: string; port: number }) {
    this.server = createServer((client) => this.accept(client));
  }

  async listen(): Promise<number> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return (this.server.address() as AddressInfo).port;
  }

  private accept(client: Socket): void {
    this.sockets.add(client);
    client.on('close', () => this.sockets.delete(client));
    client.on('error', () => undefined);
    const upstream = connect(this.target.port, this.target.host);
    upstream.on('close', () => client.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    // Bytes held back (in order, each with where it goes) while this connection is stalled.
    let held: Array<[Socket, Buffer]> | undefined;
    const release = () => {
      this.stalled.delete(release);
      for (const [to, d] of held ?? []) to.write(d);
      held = undefined;
    };
    const pass = (to: Socket, d: Buffer, fromClient: boolean) => {
      if (!this.cut && held && fromClient) release();
      if (this.cut || held) {
        held ??= [];
        held.push([to, d]);
        this.stalled.add(release);
        return;
      }
      to.write(d);
    };
    client.on('data', (d: Buffer) => pass(upstream, d, true));
    upstream.on('data', (d: Buffer) => pass(client, d, false));
  }

  /** Connections whose bytes are held, by what releases them. */
  private readonly stalled = new Set<() => void>();

  /** Holds every byte from now on, without closing anything. */
  setCut(): void {
    this.cut = true;
  }

  /** Forwards again: at once on new connections and idle ones, on stalled ones as said above. */
  restore(): void {
    this.cut = false;
    for (const release of this.stalled) setTimeout(release, 60_000).unref();
  }

  close(): Promise<void> {
    this.restore();
    for (const s of this.sockets) s.destroy();
    return new Promise((r) => this.server.close(() => r()));
  }
}

let cluster: TestCluster;
let proxy: CuttableProxy;
let hnc: HncProcess | undefined;
const logFile = () => join(inject('stateDir'), 'logs', 'cut-off.log');
let healthPort: number;
let parent: string;
let child: string;

const ready = () =>
  fetch(`http://127.0.0.1:${healthPort}/readyz`).then(
    (r) => r.status,
    () => 0,
  );
/** A dry-run anchor in an excluded namespace: HNC's fail-closed webhook answers it (and refuses it). */
const anchorProbe = async () =>
  (await kubectl(cluster.kubeconfigPath, ['create', '-f', '-', '--dry-run=server'], WEBHOOK_PROBE_ANCHOR)).stderr;

beforeAll(async () => {
  cluster = await TestCluster.connect();
  const manager = await mintUser(inject('stateDir'), MANAGER_USER, MANAGER_GROUPS);
  const config = parse(readFileSync(manager.kubeconfigPath, 'utf8')) as { clusters: Array<{ cluster: { server: string } }> };
  const api = new URL(config.clusters[0]!.cluster.server);
  proxy = new CuttableProxy({ host: api.hostname, port: Number(api.port) });
  const proxyPort = await proxy.listen();
  for (const c of config.clusters) c.cluster.server = `https://127.0.0.1:${proxyPort}`;
  const kubeconfig = join(inject('stateDir'), 'cut-off.kubeconfig');
  writeFileSync(kubeconfig, stringify(config), { mode: 0o600 });
  healthPort = await freePort();
  // As in the Deployment: leader election, whose Lease is renewed (or watched) every 2 s.
  const args = ['--enable-leader-election', '--leader-election-id', 'cut-off-test', '--webhook-server-port', '0', '--metrics-addr='];
  hnc = await spawnHnc(kubeconfig, [...args, `--health-probe-bind-address=127.0.0.1:${healthPort}`], logFile());
  await waitForWebhooks(cluster.kubeconfigPath);
  parent = await cluster.namespace('cut');
  child = await cluster.namespace('cut-child');
  await setParent(cluster.admin, child, parent);
  await eventuallyEqual(() => treeDepths(cluster.admin, child), { [child]: 0, [parent]: 1 }, 'the namespaces reconciled');
  await eventuallyEqual(ready, 200, 'HNC ready');
}, 180_000);

afterAll(async () => {
  proxy?.restore();
  if (hnc && hnc.proc.exitCode === null) {
    hnc.proc.kill('SIGINT'); // outside a cluster it removes its configurations and policies when it stops
    await hnc.exited;
  }
  await proxy?.close();
  await removeWebhookConfigurations();
  await cluster?.cleanup();
}, 120_000);

describe('HNC cut off from the API server', () => {
  it('turns unready and answers 503 for what needs its hierarchy, lets the rest through, and recovers when it hears again', async () => {
    const t0 = Date.now();
    proxy.setCut();
    await eventuallyEqual(ready, 503, 'HNC not ready while cut off', 30_000);
    const unready = (Date.now() - t0) / 1000;
    // 4 s without an answer, a probe's 1 s timeout, 3 s of failed probes, each looked at once a
    // second (8-11 s), far from the Lease's 10 s renew deadline plus a readiness timeout.
    expect(unready).toBeLessThan(15);
    expect(await anchorProbe()).toContain(`admission webhook "subnamespaceanchors.hnc.x-k8s.io" denied the request: ${CUT_OFF}`);
    // A source (the objects webhook fails open anyway): allowed without judging, at once.
    const s0 = performance.now();
    await cluster.admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${parent}/rolebindings`, {
      metadata: { name: 'while-cut' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'dave' }],
    });
    expect(performance.now() - s0).toBeLessThan(1000);
    // A namespace HNC's webhooks have not seen (they must, to let it be given a parent).
    const late = await cluster.namespace('cut-late');

    const t1 = Date.now();
    proxy.restore();
    await eventuallyEqual(ready, 200, 'HNC ready again', 30_000);
    const back = (Date.now() - t1) / 1000;
    await eventually(async () => ((await anchorProbe()).includes(CUT_OFF) ? undefined : true), 'the webhooks to judge again');
    expect(await anchorProbe()).toContain('subnamespaceanchors.hnc.x-k8s.io');
    console.log(`cut off: not ready after ${unready.toFixed(1)} s; ready again ${back.toFixed(1)} s after the cut ended`);
    expect(back).toBeLessThan(5);
    // What changed during the cut, seen within seconds: by the controller (the RoleBinding copied)
    // and by the admission thread (the new namespace may be given a parent).
    const t2 = Date.now();
    await eventually(
      () => cluster.admin.get(`/apis/rbac.authorization.k8s.io/v1/namespaces/${child}/rolebindings/while-cut`),
      'the RoleBinding created during the cut copied to the child',
      10_000,
    );
    await eventually(
      () => setParent(cluster.admin, late, parent).then(() => true),
      'the namespace created during the cut given a parent',
      10_000,
    );
    console.log(`cut off: what changed during the cut seen ${((Date.now() - t2) / 1000).toFixed(1)} s after ready`);
    const log = () => readFileSync(logFile(), 'utf8');
    expect(log()).toContain('cannot reach the API server: not ready');
    await eventually(async () => (log().includes('the API server answers again') ? true : undefined), 'the log to say it hears again');
  }, 120_000);
});
