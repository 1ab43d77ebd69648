// A real Kubernetes node on this machine, joined to the local control plane: containerd + runc
// with a bridge CNI, the kubelet, kube-proxy (iptables), kube-scheduler and kube-router (its
// NetworkPolicy firewall only). Linux and root only. Every change it makes to the host is written
// down first (host.ts) and undone on stop, or at the next start if this process died.
// See docs/real-node.md.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { KubeClient, isAlreadyExists } from '../../kube/client.js';
import { ControlPlaneError } from '../binaries.js';
import { freePort, loadClusterCa, type LocalControlPlane } from '../control-plane.js';
import { renderKubeconfig } from '../kubeconfig.js';
import { Component } from '../process.js';
import { beginHostChanges, undoHostChanges, writeSysctl, type HostJournal } from './host.js';
import { lastLine, runScript } from '../../kube/script.js';

const here = dirname(fileURLToPath(import.meta.url));

export const NODE_NAME = 'hnc-node';
/** The bridge the pods hang on, and their addresses (the bridge holds the first, the node's address). */
export const BRIDGE = 'hnc0';
export const POD_CIDR = '10.244.0.0/24';
export const NODE_IP = '10.244.0.1';
/** The `kubernetes` Service's address in the control plane's service range (10.0.0.0/24). */
const KUBERNETES_SERVICE_IP = '10.0.0.1';

export interface NodeBinaries {
  kubelet: string;
  kubeProxy: string;
  kubeScheduler: string;
  kubeRouter: string;
}

export interface LocalNodeOptions {
  /** Image archives (docker-archive .tar) to import into the node's containerd. */
  images?: string[];
  /** The sandbox (pause) image's name; it must be among the imported images. */
  pauseImage?: string;
  log?: (line: string) => void;
  readyTimeoutMs?: number;
}

export class NodeError extends ControlPlaneError {
  override name = 'NodeError';
}

function runNodeScript(script: string, args: string[], log: (l: string) => void): Promise<string> {
  return runScript(join(here, script), args, log, (m) => new NodeError(m));
}

/** Installs the system packages the node needs (apt-get, as root) when some are missing. */
export async function ensureNodePackages(log: (l: string) => void = (l) => process.stderr.write(l)): Promise<void> {
  await runNodeScript('packages.sh', [], log);
}

/** Builds (once, cached) the node's binaries from the official Go modules. */
export async function buildNodeBinaries(log: (l: string) => void = (l) => process.stderr.write(l)): Promise<NodeBinaries> {
  const dir = lastLine(await runNodeScript('build.sh', ['--print-dir'], log));
  return {
    kubelet: join(dir, 'kubelet'),
    kubeProxy: join(dir, 'kube-proxy'),
    kubeScheduler: join(dir, 'kube-scheduler'),
    kubeRouter: join(dir, 'kube-router'),
  };
}

/** Builds the pause, busybox and HNC images (buildah, no pulls) into `outDir` as archives. */
export async function buildNodeImages(
  outDir: string,
  hncImage?: string,
  log: (l: string) => void = (l) => process.stderr.write(l),
): Promise<{ pause: string; busybox: string; hnc?: string }> {
  await runNodeScript('images.sh', [outDir, ...(hncImage ? [hncImage] : [])], log);
  return {
    pause: join(outDir, 'pause.tar'),
    busybox: join(outDir, 'busybox.tar'),
    ...(hncImage ? { hnc: join(outDir, 'hnc-ts.tar') } : {}),
  };
}

export const PAUSE_IMAGE = 'localhost/hnc-pause:1';
export const BUSYBOX_IMAGE = 'localhost/hnc-busybox:1';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function sh(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new NodeError(`${cmd} ${args.join(' ')}: ${(r.stderr || String(r.error ?? '')).trim()}`);
  return r.stdout;
}

interface NodeCondition {
  type: string;
  status: string;
  message?: string;
  lastHeartbeatTime?: string;
}

/** What the node needs of the control plane: its folder (the CA), its address and an admin kubeconfig. */
export type NodeControlPlane = Pick<LocalControlPlane, 'stateDir' | 'server' | 'kubeconfigPath'>;
interface NodeObject {
  spec?: { podCIDR?: string; taints?: Array<{ key: string; effect: string }> };
  status?: { conditions?: NodeCondition[] };
}

export class LocalNode {
  readonly name = NODE_NAME;
  readonly stateDir: string;
  private readonly dirs: { logs: string; pids: string };
  private readonly log: (line: string) => void;
  private components: Component[] = [];
  private journal?: HostJournal;
  private stopped = false;
  /** containerd's socket, for `ctr -a`. */
  readonly containerdSocket: string;
  /** Seconds from start() until the node was Ready. */
  startSeconds = 0;

  private constructor(
    private readonly cp: NodeControlPlane,
    private readonly bins: NodeBinaries,
    private readonly opts: LocalNodeOptions,
  ) {
    this.stateDir = join(cp.stateDir, 'node');
    this.dirs = { logs: join(this.stateDir, 'logs'), pids: join(this.stateDir, 'pids') };
    this.containerdSocket = join(this.stateDir, 'containerd', 'containerd.sock');
    this.log = opts.log ?? ((l) => process.stderr.write(l.endsWith('\n') ? l : l + '\n'));
  }

  /**
   * Starts a node on the control plane (which must have been started with `withNode: true`) and
   * waits until it is Ready. The packages and binaries must be in place (ensureNodePackages,
   * buildNodeBinaries).
   */
  static async start(cp: NodeControlPlane, bins: NodeBinaries, opts: LocalNodeOptions = {}): Promise<LocalNode> {
    if (process.platform !== 'linux') throw new NodeError('the local node runs on Linux only');
    if (process.getuid?.() !== 0) throw new NodeError('the local node needs root (it runs containerd, the kubelet and changes iptables)');
    const node = new LocalNode(cp, bins, opts);
    try {
      await node.boot();
    } catch (err) {
      await node.stop();
      throw err;
    }
    return node;
  }

  logFile(component: string): string {
    return join(this.dirs.logs, `${component}.log`);
  }

  /** `ctr` against the node's containerd, in the Kubernetes namespace. */
  ctr(args: string[]): string {
    return sh('ctr', ['-a', this.containerdSocket, '-n', 'k8s.io', ...args]);
  }

  /** Imports an image archive into the node's containerd. */
  importImage(archive: string): void {
    this.ctr(['images', 'import', archive]);
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const c of [...this.components].reverse()) await c.stop(c.name === 'containerd' ? 5_000 : 3_000);
    this.components = [];
    if (this.journal) undoHostChanges(this.journal, this.log);
  }

  // --- start-up -----------------------------------------------------------------------------------

  private async boot(): Promise<void> {
    const t0 = Date.now();
    this.journal = beginHostChanges(this.stateDir, BRIDGE, this.log);
    rmSync(this.stateDir, { recursive: true, force: true });
    for (const d of Object.values(this.dirs)) mkdirSync(d, { recursive: true, mode: 0o700 });
    this.hostNetwork();
    await this.startContainerd();
    for (const image of this.opts.images ?? []) this.importImage(image);
    const admin = await KubeClient.fromKubeconfig(this.cp.kubeconfigPath);
    await this.grantRbac(admin);
    const kubeconfigs = await this.writeKubeconfigs();
    const deadline = t0 + (this.opts.readyTimeoutMs ?? 180_000);
    // The Node object may outlive a run (a persistent control plane, a run that died with its
    // kubelet reporting Ready): only a status this kubelet reported counts (second precision).
    const kubeletStart = Math.floor(Date.now() / 1000) * 1000;
    const kubelet = this.component('kubelet', this.bins.kubelet, await this.kubeletArgs(kubeconfigs.kubelet));
    // The pod range is the node's own (one node): the API server's copy of it is what
    // kube-proxy and kube-router read.
    await this.waitFor(kubelet, deadline, 'the node to register', async () => {
      const n = await admin.get<NodeObject>(`/api/v1/nodes/${NODE_NAME}`);
      if (!n.spec?.podCIDR) await admin.mergePatch(`/api/v1/nodes/${NODE_NAME}`, { spec: { podCIDR: POD_CIDR, podCIDRs: [POD_CIDR] } });
      return true;
    });
    const kubeProxy = this.component('kube-proxy', this.bins.kubeProxy, await this.kubeProxyArgs(kubeconfigs.kubeProxy));
    this.component('kube-scheduler', this.bins.kubeScheduler, await this.schedulerArgs(kubeconfigs.scheduler));
    // kube-router writes back the whole filter table from a copy it read a moment before. Started
    // beside kube-proxy, it once erased a chain kube-proxy had just made, kube-proxy's IPv4 sync
    // failed on the jump to it and was not retried: no Service worked on the node. So it starts
    // once kube-proxy's first IPv4 sync is complete (its chains exist from then on).
    await this.waitFor(kubeProxy, deadline, "kube-proxy's first sync (its rules in the nat table)", async () => kubeProxySynced());
    this.component('kube-router', this.bins.kubeRouter, await this.kubeRouterArgs(kubeconfigs.kubeRouter));
    let last = '';
    await this.waitFor(kubelet, deadline, 'the node to be Ready and untainted', async () => {
      const n = await admin.get<NodeObject>(`/api/v1/nodes/${NODE_NAME}`);
      const ready = n.status?.conditions?.find((c) => c.type === 'Ready');
      const taints = (n.spec?.taints ?? []).filter((t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute');
      const fresh = Date.parse(ready?.lastHeartbeatTime ?? '') >= kubeletStart;
      last = `Ready=${ready?.status ?? '?'}${fresh ? '' : ' (reported before this kubelet started)'} (${ready?.message ?? ''}), taints ${JSON.stringify(taints.map((t) => t.key))}`;
      for (const c of this.components) if (c.exit) throw new NodeError(`${c.name} exited; last lines of ${c.logFile}:\n${c.tail()}`);
      return ready?.status === 'True' && fresh && taints.length === 0;
    }).catch((err: unknown) => {
      throw new NodeError(`${(err as Error).message}; last seen: ${last}`);
    });
    this.startSeconds = (Date.now() - t0) / 1000;
  }

  /** The bridge with the node's address, forwarding, and the path from pods to the API server. */
  private hostNetwork(): void {
    if (!existsSync(`/sys/class/net/${BRIDGE}`)) sh('ip', ['link', 'add', BRIDGE, 'type', 'bridge']);
    sh('ip', ['addr', 'replace', `${NODE_IP}/24`, 'dev', BRIDGE]);
    sh('ip', ['link', 'set', BRIDGE, 'up']);
    writeSysctl('net.ipv4.ip_forward', '1');
    writeSysctl('net.bridge.bridge-nf-call-iptables', '1');
    // The API server listens on 127.0.0.1 only: pods reach it at the `kubernetes` Service's
    // address by a DNAT to loopback, which the kernel routes only with route_localnet, set on the
    // bridge alone (its certificate already names that address).
    writeSysctl(`net.ipv4.conf.${BRIDGE}.route_localnet`, '1');
    const apiPort = new URL(this.cp.server).port;
    sh('iptables', ['-w', '5', '-t', 'nat', '-N', 'HNC-NODE-API']);
    sh('iptables', ['-w', '5', '-t', 'nat', '-A', 'HNC-NODE-API', '-p', 'tcp', '-j', 'DNAT', '--to-destination', `127.0.0.1:${apiPort}`]);
    sh('iptables', [
      ...['-w', '5', '-t', 'nat', '-I', 'PREROUTING', '-i', BRIDGE, '-s', POD_CIDR, '-d', `${KUBERNETES_SERVICE_IP}/32`],
      ...['-p', 'tcp', '--dport', '443', '-j', 'HNC-NODE-API'],
    ]);
  }

  private async startContainerd(): Promise<void> {
    const base = join(this.stateDir, 'containerd');
    const cniConf = join(this.stateDir, 'cni', 'net.d');
    mkdirSync(cniConf, { recursive: true });
    mkdirSync(base, { recursive: true });
    writeFileSync(
      join(cniConf, '10-hnc-node.conflist'),
      JSON.stringify(
        {
          cniVersion: '0.4.0',
          name: 'hnc-node',
          plugins: [
            {
              type: 'bridge',
              bridge: BRIDGE,
              isGateway: true,
              // Pods talk to each other and to the host only: no masquerading rules.
              ipMasq: false,
              hairpinMode: true,
              ipam: {
                type: 'host-local',
                ranges: [[{ subnet: POD_CIDR, gateway: NODE_IP }]],
                routes: [{ dst: '0.0.0.0/0' }],
                dataDir: join(this.stateDir, 'cni', 'ipam'),
              },
            },
          ],
        },
        null,
        2,
      ),
    );
    // restrict_oom_score_adj: root may not lower oom_score_adj here, and without it every
    // sandbox fails ("can't get final child's PID from pipe: EOF"). runc, not crun, and
    // cgroupfs: the machine has hybrid cgroup v1 hierarchies and no systemd.
    const config = `version = 2
root = "${join(base, 'root')}"
state = "${join(base, 'state')}"
[grpc]
  address = "${this.containerdSocket}"
[plugins."io.containerd.internal.v1.opt"]
  path = "${join(base, 'opt')}"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${this.opts.pauseImage ?? PAUSE_IMAGE}"
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "/usr/sbin/runc"
        Root = "${join(base, 'runc')}"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${cniConf}"
`;
    writeFileSync(join(base, 'config.toml'), config);
    const c = this.component('containerd', 'containerd', ['--config', join(base, 'config.toml')]);
    await this.waitFor(c, Date.now() + 30_000, 'containerd', async () => {
      if (!existsSync(this.containerdSocket)) return false;
      return spawnSync('ctr', ['-a', this.containerdSocket, 'version'], { stdio: 'ignore' }).status === 0;
    });
  }

  /** The node's identities: the kubelet as system:node, kube-router with a role of its own. */
  private async grantRbac(admin: KubeClient): Promise<void> {
    const create = async (path: string, body: unknown) => {
      await admin.create(path, body).catch((e: unknown) => {
        if (!isAlreadyExists(e)) throw e;
      });
    };
    const rbac = '/apis/rbac.authorization.k8s.io/v1';
    // With no Node authorizer (RBAC only), the kubelet gets the built-in system:node role.
    await create(`${rbac}/clusterrolebindings`, {
      metadata: { name: 'hnc-local-node' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:node' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: `system:node:${NODE_NAME}` }],
    });
    await create(`${rbac}/clusterroles`, {
      metadata: { name: 'hnc-local-kube-router' },
      rules: [
        { apiGroups: [''], resources: ['namespaces', 'pods', 'services', 'endpoints', 'nodes'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: ['networking.k8s.io'], resources: ['networkpolicies'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: [''], resources: ['nodes'], verbs: ['patch', 'update'] },
        { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
      ],
    });
    await create(`${rbac}/clusterrolebindings`, {
      metadata: { name: 'hnc-local-kube-router' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'hnc-local-kube-router' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'hnc-local-kube-router' }],
    });
  }

  private async writeKubeconfigs(): Promise<Record<'kubelet' | 'kubeProxy' | 'scheduler' | 'kubeRouter', string>> {
    const ca = await loadClusterCa(this.cp.stateDir);
    const ids = {
      kubelet: { user: `system:node:${NODE_NAME}`, groups: ['system:nodes'] },
      kubeProxy: { user: 'system:kube-proxy', groups: [] },
      scheduler: { user: 'system:kube-scheduler', groups: [] },
      kubeRouter: { user: 'hnc-local-kube-router', groups: [] },
    };
    const out: Record<string, string> = {};
    for (const [name, id] of Object.entries(ids)) {
      const pair = await ca.issue({ commonName: id.user, organizations: id.groups, usage: 'client', days: 30 });
      const path = join(this.stateDir, `${name}.kubeconfig`);
      writeFileSync(
        path,
        renderKubeconfig({ server: this.cp.server, caPem: ca.certPem, user: id.user, certPem: pair.cert, keyPem: pair.key }),
        {
          mode: 0o600,
        },
      );
      out[name] = path;
    }
    writeFileSync(join(this.stateDir, 'ca.crt'), ca.certPem);
    return out as Record<'kubelet' | 'kubeProxy' | 'scheduler' | 'kubeRouter', string>;
  }

  private async kubeletArgs(kubeconfig: string): Promise<string[]> {
    const root = join(this.stateDir, 'kubelet');
    const config = {
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      address: NODE_IP,
      port: await freePort(),
      readOnlyPort: 0,
      healthzBindAddress: '127.0.0.1',
      healthzPort: await freePort(),
      containerRuntimeEndpoint: `unix://${this.containerdSocket}`,
      // Hybrid cgroup v1 and no systemd on these machines.
      cgroupDriver: 'cgroupfs',
      failCgroupV1: false,
      failSwapOn: false,
      authentication: { anonymous: { enabled: false }, webhook: { enabled: true }, x509: { clientCAFile: join(this.stateDir, 'ca.crt') } },
      authorization: { mode: 'Webhook' },
      // A shared development machine: evict only when it is really out of room.
      evictionHard: { 'memory.available': '50Mi', 'nodefs.available': '1%', 'nodefs.inodesFree': '1%', 'imagefs.available': '1%' },
      imageGCHighThresholdPercent: 99,
      imageGCLowThresholdPercent: 98,
      volumePluginDir: join(this.stateDir, 'volume-plugins'),
      podLogsDir: join(this.stateDir, 'pod-logs'),
      resolvConf: '/etc/resolv.conf',
      registerNode: true,
      serializeImagePulls: false,
      maxPods: 110,
    };
    const path = join(this.stateDir, 'kubelet.yaml');
    writeFileSync(path, stringify(config));
    return [
      `--config=${path}`,
      `--kubeconfig=${kubeconfig}`,
      `--root-dir=${root}`,
      // Its self-signed serving certificate: by default in /var/lib/kubelet/pki, whatever the root.
      `--cert-dir=${join(root, 'pki')}`,
      `--hostname-override=${NODE_NAME}`,
      `--node-ip=${NODE_IP}`,
      '--v=1',
    ];
  }

  private async kubeProxyArgs(kubeconfig: string): Promise<string[]> {
    const config = {
      apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
      kind: 'KubeProxyConfiguration',
      clientConnection: { kubeconfig },
      mode: 'iptables',
      hostnameOverride: NODE_NAME,
      clusterCIDR: POD_CIDR,
      healthzBindAddress: `127.0.0.1:${await freePort()}`,
      metricsBindAddress: `127.0.0.1:${await freePort()}`,
      // Node ports only on the bridge, never on 127.0.0.1 (which would need route_localnet on every interface).
      nodePortAddresses: [`${NODE_IP}/32`],
      iptables: { localhostNodePorts: false },
      // 0: leave the host's conntrack settings alone.
      conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
    };
    const path = join(this.stateDir, 'kube-proxy.yaml');
    writeFileSync(path, stringify(config));
    return [`--config=${path}`, '--v=1'];
  }

  private async schedulerArgs(kubeconfig: string): Promise<string[]> {
    return [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${await freePort()}`,
      `--cert-dir=${join(this.stateDir, 'scheduler')}`,
      '--leader-elect=false',
      '--v=1',
    ];
  }

  private async kubeRouterArgs(kubeconfig: string): Promise<string[]> {
    return [
      `--kubeconfig=${kubeconfig}`,
      `--hostname-override=${NODE_NAME}`,
      // NetworkPolicy enforcement only: kube-proxy serves Services, the bridge CNI routes.
      '--run-router=false',
      '--run-firewall=true',
      '--run-service-proxy=false',
      '--enable-cni=false',
      '--enable-ipv6=false',
      '--metrics-port=0',
      `--health-port=${await freePort()}`,
      `--iptables-sync-period=5m`,
      '--v=1',
    ];
  }

  private component(name: string, bin: string, args: string[]): Component {
    const c = new Component(name, bin, args, this.dirs);
    this.log(`local node: starting ${name}`);
    c.start();
    this.components.push(c);
    return c;
  }

  private async waitFor(c: Component, deadline: number, what: string, ready: () => Promise<boolean>): Promise<void> {
    for (;;) {
      if (c.exit) throw new NodeError(`${c.name} exited while waiting for ${what}; last lines of ${c.logFile}:\n${c.tail()}`);
      if (Date.now() > deadline) throw new NodeError(`timed out waiting for ${what}; last lines of ${c.logFile}:\n${c.tail()}`);
      try {
        if (await ready()) return;
      } catch (err) {
        if (err instanceof NodeError) throw err;
      }
      await sleep(250);
    }
  }
}

/**
 * kube-proxy has completed an IPv4 sync: it makes its chains one command at a time (filter first),
 * then writes all its rules at once, the last service rule of the nat table being the jump to
 * KUBE-NODEPORTS (written with or without services).
 */
export function kubeProxySynced(): boolean {
  const nat = spawnSync('iptables-save', ['-t', 'nat'], { encoding: 'utf8' }).stdout ?? '';
  return /^-A KUBE-SERVICES .* -j KUBE-NODEPORTS$/m.test(nat);
}

/** Lists leftover state (for tests of the cleanup): the node's bridge and chains, if any. */
export function leftovers(): string[] {
  const out: string[] = [];
  if (existsSync(`/sys/class/net/${BRIDGE}`)) out.push(`bridge ${BRIDGE}`);
  const nat = spawnSync('iptables-save', [], { encoding: 'utf8' }).stdout ?? '';
  for (const l of nat.split('\n')) if (/KUBE-|HNC-NODE|CNI-/.test(l)) out.push(`iptables: ${l}`);
  if (existsSync('/run/netns')) for (const ns of readdirSync('/run/netns')) if (ns.startsWith('cni-')) out.push(`netns ${ns}`);
  return out;
}
