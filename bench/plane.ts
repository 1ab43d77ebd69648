// The control plane a run measures on: HNC's CRDs and RBAC installed, HNC's identity minted, and
// the write floor measured on the empty cluster, as HNC's identity: the API server's best write
// rate, against which every time of HNC's is a ratio.
import { cpSync, mkdirSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { LocalControlPlane } from '../local-cluster/index.js';
import { KubeClient } from '../kube/client.js';
import { installCrds, installRbac, MANAGER_GROUPS, MANAGER_USER } from '../kube/install.js';
import { hncConfigurationPath } from '../core/api/paths.js';
import { waitQuiet } from './metrics.js';
import { collection } from './tracker.js';
import { SOURCE_KINDS, sourceBody } from './topology.js';
import { cpuDelta, log, pool, round, sampleCpu, sleep } from './util.js';

export interface FloorOptions {
  /** Writes per concurrency level. */
  floorWrites: number;
  floorConcurrency: number[];
}

export interface FloorResult {
  /** Writes per second at each concurrency. */
  byConcurrency: Record<string, number>;
  /** The best of them: the floor's write rate. */
  writesPerSecond: number;
  concurrency: number;
  writes: number;
  cpu: Record<string, number>;
}

async function measureFloor(
  admin: KubeClient,
  writer: KubeClient,
  opts: FloorOptions,
  pids: Record<string, number | undefined>,
): Promise<FloorResult> {
  const ns = 'bench-floor';
  await admin.create('/api/v1/namespaces', { metadata: { name: ns } });
  let n = 0;
  const one = () => {
    const i = n++;
    const kind = SOURCE_KINDS[i % 3]!;
    return writer.create(collection(kind, ns), sourceBody(kind, `floor-${i}`));
  };
  // Warm-up: connections, the apiserver's caches, etcd.
  await pool(Array.from({ length: Math.min(300, Math.round(opts.floorWrites / 2)) }), 16, one);
  const byConcurrency: Record<string, number> = {};
  const cpu0 = sampleCpu(pids);
  let writes = 0;
  let wall = 0;
  for (const c of opts.floorConcurrency) {
    const t0 = performance.now();
    await pool(Array.from({ length: opts.floorWrites }), c, one);
    const s = (performance.now() - t0) / 1000;
    byConcurrency[String(c)] = round(opts.floorWrites / s, 0);
    writes += opts.floorWrites;
    wall += s;
    log(`floor: ${byConcurrency[String(c)]} writes/s at concurrency ${c}`);
  }
  const cpu = cpuDelta(cpu0, sampleCpu(pids));
  for (const k of Object.keys(cpu)) cpu[k] = round(cpu[k]! / wall, 2); // cores busy on average
  const best = Object.entries(byConcurrency).sort((a, b) => b[1] - a[1])[0]!;
  // Empty the namespace (one DELETECOLLECTION per kind); the namespace itself stays, a root HNC labels.
  for (const kind of SOURCE_KINDS) await admin.delete(collection(kind, ns));
  return { byConcurrency, writesPerSecond: best[1], concurrency: Number(best[0]), writes, cpu };
}

function alive(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** A control plane with HNC's CRDs and RBAC installed and its floor measured. */
export class Plane {
  private constructor(
    readonly cp: LocalControlPlane,
    readonly admin: KubeClient,
    readonly identity: { kubeconfigPath: string },
    readonly asManager: KubeClient,
    readonly version: string,
    readonly floor: FloorResult,
    /** A fixed port for HNC's webhook server, as in a deployment (a new port would rewrite the configurations). */
    readonly webhookPort: number,
  ) {}

  topologies = 0;

  static async start(opts: FloorOptions): Promise<Plane> {
    const cp = await LocalControlPlane.start({ log: () => undefined });
    try {
      const admin = await KubeClient.fromKubeconfig(cp.kubeconfigPath);
      await installCrds(admin);
      await installRbac(admin);
      const identity = await cp.mintUser(MANAGER_USER, MANAGER_GROUPS);
      const asManager = await KubeClient.fromKubeconfig(identity.kubeconfigPath);
      const version = (await admin.get<{ gitVersion: string }>('/version')).gitVersion;
      await admin.create(hncConfigurationPath(), {
        apiVersion: 'hnc.x-k8s.io/v1alpha2',
        kind: 'HNCConfiguration',
        metadata: { name: 'config' },
        spec: { resources: [{ group: 'networking.k8s.io', resource: 'networkpolicies', mode: 'Propagate' }] },
      });
      // The floor, on the empty cluster, as HNC's own identity.
      await waitQuiet(admin, 1500);
      const floor = await measureFloor(admin, asManager, opts, Plane.pidsOf(cp));
      return new Plane(cp, admin, identity, asManager, version, floor, await freePort());
    } catch (err) {
      await cp.stop();
      throw err;
    }
  }

  static pidsOf(cp: LocalControlPlane): Record<string, number | undefined> {
    const p = cp.pids();
    return { etcd: p.etcd, 'kube-apiserver': p['kube-apiserver'], 'kube-controller-manager': p['kube-controller-manager'] };
  }

  /** Stops the control plane; returns the processes still alive after (there should be none). */
  async stop(logDir?: string): Promise<string[]> {
    const pids = this.cp.pids();
    if (logDir) {
      mkdirSync(logDir, { recursive: true });
      cpSync(join(this.cp.stateDir, 'logs'), logDir, { recursive: true });
    }
    await this.cp.stop();
    await sleep(200);
    return Object.entries(pids)
      .filter(([, pid]) => alive(pid))
      .map(([n, pid]) => `${n} (${pid})`);
  }
}
