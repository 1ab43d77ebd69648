// A real Kubernetes control plane on 127.0.0.1: etcd, kube-apiserver and
// kube-controller-manager, TLS everywhere, RBAC on, anonymous auth off.
import { mkdirSync, mkdtempSync, existsSync, readFileSync, writeFileSync, rmSync, chmodSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import { tmpdir, homedir } from 'node:os';
import { join } from 'node:path';
import { CertificateAuthority, newSigningKeyPair, type PemPair } from '../kube/pki.js';
import { findBinaries, ControlPlaneError, type Binaries } from './binaries.js';
import { Component, formatReport, reapStale, RestartBudget, type ComponentReport } from './process.js';
import { renderKubeconfig } from './kubeconfig.js';

export { ControlPlaneError } from './binaries.js';

export interface ControlPlaneOptions {
  /** Where state lives. Default: a new temporary folder, removed on stop. */
  stateDir?: string;
  /** Keep etcd's data and the CA across runs (the local default for `npm start`). */
  persistent?: boolean;
  /** Run kube-controller-manager (default true). */
  controllerManager?: boolean;
  /**
   * Ready the control plane for a local node (local-cluster/node/): the controllers that run pods
   * (deployments, replica sets, endpoint slices, node lifecycle, ...) and a client certificate
   * for the API server to reach the kubelet (logs, exec), by the node's address.
   */
  withNode?: boolean;
  /** Further kube-apiserver flags (a test's authenticator, e.g. `--oidc-issuer-url=…`). */
  apiserverFlags?: readonly string[];
  /** Progress lines (default: stderr). */
  log?: (line: string) => void;
  /** How long the processes may take to start and become ready (default 3 minutes); a build before is not counted. */
  startTimeoutMs?: number;
  /** Where the binaries come from (default: findBinaries, which builds them when the cache is cold). */
  findBinaries?: (log: (line: string) => void) => Promise<Binaries>;
  /**
   * Called once, with one line saying why, when a component that crashed could not be brought
   * back (it failed to restart, or crashed more than MAX_RESTARTS times in RESTART_WINDOW_MS).
   * Until then a crashed etcd, kube-apiserver or kube-controller-manager is restarted.
   */
  onFailure?: (message: string) => void;
}

/** A crashed component is restarted at most this often within the window; then the control plane gives up. */
export const MAX_RESTARTS = 3;
export const RESTART_WINDOW_MS = 10 * 60_000;

export interface Ports {
  etcdClient: number;
  etcdPeer: number;
  apiserver: number;
  controllerManager: number;
}

export interface MintedUser {
  user: string;
  groups: string[];
  kubeconfigPath: string;
  kubeconfig: string;
}

// The controllers tests and the product rely on (see docs/control-plane.md for why each is here).
const CONTROLLERS = [
  'serviceaccount-token-controller',
  'serviceaccount-controller',
  'namespace-controller',
  'garbage-collector-controller',
  'resourcequota-controller',
  'clusterrole-aggregation-controller',
  'root-ca-certificate-publisher-controller',
  // The API server puts a protection finalizer on every PVC and PV: without these a deleted PVC,
  // and the namespace holding it, never goes (HNC's quota walk-throughs count PVCs).
  'persistentvolumeclaim-protection-controller',
  'persistentvolume-protection-controller',
];

// With a node: what makes Deployments become pods and Services reach them, and (node lifecycle)
// what takes the node's not-ready taint off once the kubelet reports Ready.
const NODE_CONTROLLERS = [
  'deployment-controller',
  'replicaset-controller',
  'endpoints-controller',
  'endpointslice-controller',
  'pod-garbage-collector-controller',
  'node-lifecycle-controller',
  'taint-eviction-controller',
  'disruption-controller',
  'daemonset-controller',
  'job-controller',
];

/**
 * Mints a user of a running control plane from its state folder alone, so that test workers
 * (other processes than the one that started it) can act as any user.
 */
export async function mintUser(stateDir: string, user: string, groups: string[] = []): Promise<MintedUser> {
  const ca = await loadClusterCa(stateDir);
  const { server } = JSON.parse(readFileSync(join(stateDir, 'state.json'), 'utf8')) as { server: string };
  const pair = await ca.issue({ commonName: user, organizations: groups, usage: 'client', days: 30 });
  const kubeconfig = renderKubeconfig({ server, caPem: ca.certPem, user, certPem: pair.cert, keyPem: pair.key });
  const kubeconfigPath = join(
    stateDir,
    'users',
    `${user.replace(/[^A-Za-z0-9_.-]/g, '_')}-${groups.join('_').replace(/[^A-Za-z0-9_.-]/g, '_')}.kubeconfig`,
  );
  writeFileSync(kubeconfigPath, kubeconfig, { mode: 0o600 });
  return { user, groups, kubeconfigPath, kubeconfig };
}

/** The cluster CA of a running control plane, from its state folder. */
export async function loadClusterCa(stateDir: string): Promise<CertificateAuthority> {
  const pki = join(stateDir, 'pki');
  return CertificateAuthority.load(readFileSync(join(pki, 'ca.crt'), 'utf8'), readFileSync(join(pki, 'ca.key'), 'utf8'));
}

export function defaultStateDir(): string {
  const data = process.env.XDG_DATA_HOME || join(homedir(), '.local', 'share');
  return join(data, 'hnc-ts', 'cluster');
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface TlsIdentity {
  ca: string;
  cert?: string;
  key?: string;
  insecure?: boolean;
}

function httpsGet(url: string, id: TlsIdentity, timeoutMs = 2000): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { ca: id.ca, cert: id.cert, key: id.key, rejectUnauthorized: !id.insecure, timeout: timeoutMs }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

class StartFailure extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

export class LocalControlPlane {
  readonly stateDir: string;
  readonly kubeconfigPath: string;
  private readonly dirs: { pki: string; logs: string; pids: string; etcd: string; users: string; kcm: string };
  private readonly log: (line: string) => void;
  private components: Component[] = [];
  private ca!: CertificateAuthority;
  private adminCert!: PemPair;
  private bins!: Binaries;
  ports!: Ports;
  private stopped = false;
  private readonly budget = new RestartBudget(MAX_RESTARTS, RESTART_WINDOW_MS);
  /** Per component: its restarts, whether its last start passed its readiness check, why its last restart failed. */
  private readonly supervised = new Map<Component, { restarts: number; ready: boolean; restartError?: string }>();
  /** The line given to onFailure, once given. */
  private failure?: string;
  /** Restarts of crashed components so far (each one logged). */
  restartCount = 0;
  /** Seconds from the call of start() until every check passed. */
  startSeconds = 0;

  private constructor(private readonly opts: ControlPlaneOptions) {
    this.stateDir = opts.stateDir ?? mkdtempSync(join(tmpdir(), 'hnc-k8s-'));
    mkdirSync(this.stateDir, { recursive: true, mode: 0o700 });
    const d = (name: string) => join(this.stateDir, name);
    this.dirs = { pki: d('pki'), logs: d('logs'), pids: d('pids'), etcd: d('etcd'), users: d('users'), kcm: d('kcm') };
    for (const dir of Object.values(this.dirs)) mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.kubeconfigPath = join(this.stateDir, 'admin.kubeconfig');
    this.log = opts.log ?? ((l) => process.stderr.write(l.endsWith('\n') ? l : l + '\n'));
  }

  static async start(opts: ControlPlaneOptions = {}): Promise<LocalControlPlane> {
    const cp = new LocalControlPlane(opts);
    try {
      await cp.boot();
    } catch (err) {
      await cp.stop();
      throw err;
    }
    for (const c of cp.components) c.onUnexpectedExit = (exit) => void cp.recover(c, exit);
    return cp;
  }

  get server(): string {
    return `https://127.0.0.1:${this.ports.apiserver}`;
  }

  get caPem(): string {
    return this.ca.certPem;
  }

  get binaries(): Binaries {
    return this.bins;
  }

  pids(): Record<string, number | undefined> {
    return Object.fromEntries(this.components.map((c) => [c.name, c.pid]));
  }

  /** A kubeconfig for any user name and groups, by a client certificate the cluster CA signs. */
  mintUser(user: string, groups: string[] = []): Promise<MintedUser> {
    return mintUser(this.stateDir, user, groups);
  }

  /** A serving certificate the apiserver trusts (signed by the cluster CA), for webhooks on 127.0.0.1. */
  async issueServingCert(ips: string[] = ['127.0.0.1'], dnsNames: string[] = ['localhost']): Promise<PemPair> {
    return this.ca.issue({ commonName: 'hnc-local-webhook', usage: 'server', ips, dnsNames, days: 30 });
  }

  /** The clientConfig for registering an admission webhook by URL on 127.0.0.1. */
  webhookClientConfig(port: number, path: string): { url: string; caBundle: string } {
    return { url: `https://127.0.0.1:${port}${path}`, caBundle: Buffer.from(this.ca.certPem).toString('base64') };
  }

  /** What the supervisor knows of each component: state, restarts, exits, last log lines. */
  supervision(): { restartCount: number; failure?: string; components: ComponentReport[] } {
    return {
      restartCount: this.restartCount,
      failure: this.failure,
      components: this.components.map((c) => {
        const s = this.record(c);
        return {
          name: c.name,
          pid: c.pid,
          state: c.exit ? 'down' : s.ready ? 'up' : 'starting',
          restarts: s.restarts,
          exits: [...c.exits],
          restartError: s.restartError,
          logFile: c.logFile,
          tail: c.tail(12),
        };
      }),
    };
  }

  /** supervision() as lines, for a failure message. */
  report(): string {
    return formatReport(this.supervision());
  }

  private record(c: Component): { restarts: number; ready: boolean; restartError?: string } {
    let r = this.supervised.get(c);
    if (!r) this.supervised.set(c, (r = { restarts: 0, ready: false }));
    return r;
  }

  /** Sends a signal to one component as a crash would (tests of supervision). */
  kill(name: 'etcd' | 'kube-apiserver' | 'kube-controller-manager', signal: NodeJS.Signals = 'SIGKILL'): void {
    const pid = this.components.find((c) => c.name === name)?.pid;
    if (pid === undefined) throw new ControlPlaneError(`${name} is not running`);
    process.kill(pid, signal);
  }

  /** Stops one component for good, not restarted (tests of a dead API server). */
  async stopComponent(name: 'etcd' | 'kube-apiserver' | 'kube-controller-manager'): Promise<void> {
    await this.components.find((c) => c.name === name)?.stop(0);
  }

  /** Restarts a component that ended by itself, within the limit; else reports one line and gives up. */
  private async recover(c: Component, exit: { code: number | null; signal: NodeJS.Signals | null }): Promise<void> {
    if (this.stopped || this.failure !== undefined) return;
    const what = `${c.name} exited unexpectedly (${exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`})`;
    const rec = this.record(c);
    rec.ready = false;
    if (!this.budget.take(Date.now())) {
      return this.fail(`${what} after ${MAX_RESTARTS} restarts within ${RESTART_WINDOW_MS / 60_000} minutes; see ${c.logFile}`);
    }
    this.restartCount++;
    rec.restarts++;
    rec.restartError = undefined;
    this.log(`control plane: ${what}; restarting it`);
    c.start();
    // A crash of this process while we wait starts another recover(): only the latest one reports.
    const pid = c.pid;
    try {
      await this.waitReady(c, Date.now() + (this.opts.startTimeoutMs ?? 120_000));
      if (c.pid !== pid) return;
      rec.ready = true;
      this.log(`control plane: ${c.name} is running again`);
    } catch (err) {
      if (this.stopped || c.pid !== pid) return;
      rec.restartError = (err as Error).message.split('\n')[0];
      this.fail(`${what} and could not be restarted: ${rec.restartError}`);
    }
  }

  private fail(message: string): void {
    if (this.failure !== undefined || this.stopped) return;
    this.failure = message;
    if (this.opts.onFailure) this.opts.onFailure(`the local control plane failed: ${message}`);
    else this.log(`control plane: ${message}`);
  }

  private async waitReady(c: Component, deadline: number): Promise<void> {
    if (c.name === 'kube-apiserver') return this.waitApiServer(c, deadline);
    if (c.name === 'etcd')
      return this.waitFor(
        c,
        deadline,
        async () => (await httpsGet(`https://127.0.0.1:${this.ports.etcdClient}/readyz`, this.etcdClientIdentity())).status === 200,
      );
    return this.waitFor(
      c,
      deadline,
      async () => (await httpsGet(`https://127.0.0.1:${this.ports.controllerManager}/healthz`, { ca: '', insecure: true })).status === 200,
    );
  }

  /** Stops and starts kube-apiserver on the same port and data (to prove clients recover). */
  async restartApiServer(): Promise<void> {
    const api = this.components.find((c) => c.name === 'kube-apiserver');
    if (!api) throw new ControlPlaneError('kube-apiserver is not running');
    const rec = this.record(api);
    rec.ready = false;
    await api.stop();
    api.start();
    await this.waitApiServer(api, Date.now() + (this.opts.startTimeoutMs ?? 120_000));
    rec.ready = true;
  }

  /** For a process about to exit without stop(): kills the components and removes a throwaway state folder. */
  abandon(): void {
    this.stopped = true;
    for (const c of this.components) c.kill();
    if (!this.opts.persistent) rmSync(this.stateDir, { recursive: true, force: true });
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    // Reverse start order: controller-manager, apiserver (drains), then etcd.
    for (const c of [...this.components].reverse()) await c.stop(this.opts.persistent ? 15_000 : 3_000);
    this.components = [];
    if (!this.opts.persistent) rmSync(this.stateDir, { recursive: true, force: true });
  }

  // --- start-up ---------------------------------------------------------------------------------

  private async boot(): Promise<void> {
    reapStale(this.dirs.pids, this.stateDir);
    // Finding the binaries may build them (10-25 minutes the first time): not part of the start.
    this.bins = await (this.opts.findBinaries ?? findBinaries)(this.log);
    const t0 = Date.now();
    await this.writePki();
    for (let attempt = 1; ; attempt++) {
      try {
        // Each attempt gets the whole start budget: a retry on new ports is a new start.
        await this.bootOnce(Date.now() + (this.opts.startTimeoutMs ?? 180_000));
        break;
      } catch (err) {
        for (const c of [...this.components].reverse()) await c.stop(0);
        this.components = [];
        if (err instanceof StartFailure && err.retryable && attempt < 4) {
          this.log(`control plane: ${err.message}; retrying with new ports (attempt ${attempt + 1})`);
          continue;
        }
        throw err instanceof StartFailure ? new ControlPlaneError(err.message) : err;
      }
    }
    for (const c of this.components) this.record(c).ready = true;
    this.startSeconds = (Date.now() - t0) / 1000;
    writeFileSync(
      join(this.stateDir, 'state.json'),
      JSON.stringify(
        { server: this.server, ports: this.ports, pids: this.pids(), binaries: this.bins, startSeconds: this.startSeconds },
        null,
        2,
      ),
    );
  }

  private async bootOnce(deadline: number): Promise<void> {
    this.ports = {
      etcdClient: await freePort(),
      etcdPeer: await freePort(),
      apiserver: await freePort(),
      controllerManager: await freePort(),
    };
    this.writeKubeconfigs();
    const etcd = this.component('etcd', this.bins.etcd, this.etcdArgs());
    await this.waitFor(etcd, deadline, async () => {
      const r = await httpsGet(`https://127.0.0.1:${this.ports.etcdClient}/readyz`, this.etcdClientIdentity());
      return r.status === 200;
    });
    const api = this.component('kube-apiserver', this.bins.apiserver, this.apiserverArgs());
    await this.waitApiServer(api, deadline);
    if (this.opts.controllerManager !== false && this.bins.controllerManager) {
      const kcm = this.component('kube-controller-manager', this.bins.controllerManager, this.kcmArgs());
      await this.waitFor(kcm, deadline, async () => {
        const r = await httpsGet(`https://127.0.0.1:${this.ports.controllerManager}/healthz`, { ca: '', insecure: true });
        return r.status === 200;
      });
      // Healthy is not working: wait until the controllers have done their first jobs.
      await this.waitFor(kcm, deadline, async () => {
        const sa = await this.adminGet('/api/v1/namespaces/default/serviceaccounts/default');
        const admin = await this.adminGet('/apis/rbac.authorization.k8s.io/v1/clusterroles/admin');
        return sa.status === 200 && admin.status === 200 && (JSON.parse(admin.body).rules ?? []).length > 0;
      });
    } else if (this.opts.controllerManager !== false) {
      this.log('control plane: no kube-controller-manager binary; namespaces will not finish deleting');
    }
  }

  private async waitApiServer(api: Component, deadline: number): Promise<void> {
    await this.waitFor(api, deadline, async () => {
      const r = await this.adminGet('/readyz');
      return r.status === 200 && r.body.trim() === 'ok';
    });
    // The system namespaces are created asynchronously after readyz.
    await this.waitFor(api, deadline, async () => {
      for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
        if ((await this.adminGet(`/api/v1/namespaces/${ns}`)).status !== 200) return false;
      }
      return true;
    });
  }

  private component(name: string, bin: string, args: string[]): Component {
    const c = new Component(name, bin, args, this.dirs);
    this.log(`control plane: starting ${name}`);
    c.start();
    this.components.push(c);
    return c;
  }

  private async waitFor(c: Component, deadline: number, ready: () => Promise<boolean>): Promise<void> {
    for (;;) {
      if (c.exit) {
        const tail = c.tail();
        const retryable = /address already in use|bind: address/i.test(tail);
        throw new StartFailure(
          `${c.name} exited during start (code ${c.exit.code}, signal ${c.exit.signal}); last lines of ${c.logFile}:\n${tail}`,
          retryable,
        );
      }
      if (Date.now() > deadline) {
        throw new StartFailure(`${c.name} was not ready in time; last lines of ${c.logFile}:\n${c.tail()}`, false);
      }
      if (await ready().catch(() => false)) return;
      await sleep(150);
    }
  }

  private adminGet(path: string): Promise<{ status: number; body: string }> {
    return httpsGet(`${this.server}${path}`, { ca: this.ca.certPem, cert: this.adminCert.cert, key: this.adminCert.key });
  }

  // --- PKI and configuration ------------------------------------------------------------------------

  private pki(name: string): string {
    return join(this.dirs.pki, name);
  }

  private write(name: string, content: string): void {
    writeFileSync(this.pki(name), content, { mode: 0o600 });
    chmodSync(this.pki(name), 0o600);
  }

  private etcdClientIdentity(): TlsIdentity {
    return {
      ca: this.ca.certPem,
      cert: readFileSync(this.pki('apiserver-etcd-client.crt'), 'utf8'),
      key: readFileSync(this.pki('apiserver-etcd-client.key'), 'utf8'),
    };
  }

  private async writePki(): Promise<void> {
    // The CA (and the token signing key) outlive restarts of a persistent cluster, so minted
    // kubeconfigs and service-account tokens stay valid; a CA near expiry is replaced.
    const caCrt = this.pki('ca.crt');
    const caKey = this.pki('ca.key');
    let ca: CertificateAuthority | undefined;
    if (this.opts.persistent && existsSync(caCrt) && existsSync(caKey)) {
      ca = await CertificateAuthority.load(readFileSync(caCrt, 'utf8'), readFileSync(caKey, 'utf8'));
      if (ca.daysLeft() < 30) ca = undefined;
    }
    if (!ca) {
      ca = await CertificateAuthority.create('hnc-local-ca', 3650);
      this.write('ca.crt', ca.certPem);
      this.write('ca.key', ca.keyPem);
    }
    this.ca = ca;
    if (!existsSync(this.pki('sa.key')) || !this.opts.persistent) {
      const sa = await newSigningKeyPair();
      this.write('sa.key', sa.privateKey);
      this.write('sa.pub', sa.publicKey);
    }
    const certs: Array<[string, Parameters<CertificateAuthority['issue']>[0]]> = [
      [
        'apiserver',
        {
          commonName: 'kube-apiserver',
          usage: 'server',
          ips: ['127.0.0.1', '10.0.0.1'],
          dnsNames: ['localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local'],
        },
      ],
      ['admin', { commonName: 'admin', organizations: ['system:masters'], usage: 'client' }],
      ['kcm', { commonName: 'system:kube-controller-manager', usage: 'client' }],
      ['etcd-server', { commonName: 'etcd', usage: 'server', ips: ['127.0.0.1'], dnsNames: ['localhost'] }],
      ['apiserver-etcd-client', { commonName: 'kube-apiserver-etcd-client', usage: 'client' }],
      ['apiserver-kubelet-client', { commonName: 'kube-apiserver-kubelet-client', organizations: ['system:masters'], usage: 'client' }],
    ];
    const issued = await Promise.all(certs.map(([, req]) => ca.issue(req)));
    certs.forEach(([name], i) => {
      this.write(`${name}.crt`, issued[i]!.cert);
      this.write(`${name}.key`, issued[i]!.key);
    });
    this.adminCert = issued[1]!;
  }

  private writeKubeconfigs(): void {
    const kcm = { cert: readFileSync(this.pki('kcm.crt'), 'utf8'), key: readFileSync(this.pki('kcm.key'), 'utf8') };
    writeFileSync(
      this.kubeconfigPath,
      renderKubeconfig({
        server: this.server,
        caPem: this.ca.certPem,
        user: 'admin',
        certPem: this.adminCert.cert,
        keyPem: this.adminCert.key,
      }),
      { mode: 0o600 },
    );
    writeFileSync(
      join(this.stateDir, 'kcm.kubeconfig'),
      renderKubeconfig({ server: this.server, caPem: this.ca.certPem, user: 'kcm', certPem: kcm.cert, keyPem: kcm.key }),
      { mode: 0o600 },
    );
  }

  private etcdArgs(): string[] {
    const { etcdClient: c, etcdPeer: p } = this.ports;
    return [
      '--name=default',
      `--data-dir=${this.dirs.etcd}`,
      `--listen-client-urls=https://127.0.0.1:${c}`,
      `--advertise-client-urls=https://127.0.0.1:${c}`,
      `--listen-peer-urls=http://127.0.0.1:${p}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${p}`,
      `--initial-cluster=default=http://127.0.0.1:${p}`,
      '--client-cert-auth',
      `--trusted-ca-file=${this.pki('ca.crt')}`,
      `--cert-file=${this.pki('etcd-server.crt')}`,
      `--key-file=${this.pki('etcd-server.key')}`,
      '--log-level=warn',
      // Throwaway test data needs no fsync; a persistent cluster keeps it.
      ...(this.opts.persistent ? [] : ['--unsafe-no-fsync=true']),
    ];
  }

  private apiserverArgs(): string[] {
    return [
      `--etcd-servers=https://127.0.0.1:${this.ports.etcdClient}`,
      `--etcd-cafile=${this.pki('ca.crt')}`,
      `--etcd-certfile=${this.pki('apiserver-etcd-client.crt')}`,
      `--etcd-keyfile=${this.pki('apiserver-etcd-client.key')}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${this.ports.apiserver}`,
      `--cert-dir=${this.dirs.pki}`,
      `--tls-cert-file=${this.pki('apiserver.crt')}`,
      `--tls-private-key-file=${this.pki('apiserver.key')}`,
      `--client-ca-file=${this.pki('ca.crt')}`,
      // A loopback advertise address is legal only without an endpoint reconciler.
      '--advertise-address=127.0.0.1',
      '--endpoint-reconciler-type=none',
      '--service-cluster-ip-range=10.0.0.0/24',
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${this.pki('sa.pub')}`,
      `--service-account-signing-key-file=${this.pki('sa.key')}`,
      '--authorization-mode=RBAC',
      '--anonymous-auth=false',
      '--profiling=false',
      '--enable-admission-plugins=NamespaceLifecycle,ServiceAccount,ResourceQuota,MutatingAdmissionWebhook,ValidatingAdmissionWebhook',
      ...(this.opts.withNode
        ? [
            `--kubelet-client-certificate=${this.pki('apiserver-kubelet-client.crt')}`,
            `--kubelet-client-key=${this.pki('apiserver-kubelet-client.key')}`,
            // The node's name resolves nowhere: reach the kubelet by its address.
            '--kubelet-preferred-address-types=InternalIP',
          ]
        : []),
      ...(this.opts.apiserverFlags ?? []),
      '--v=1',
    ];
  }

  private kcmArgs(): string[] {
    const kubeconfig = join(this.stateDir, 'kcm.kubeconfig');
    return [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${this.ports.controllerManager}`,
      `--cert-dir=${this.dirs.kcm}`,
      '--leader-elect=false',
      '--use-service-account-credentials=true',
      `--service-account-private-key-file=${this.pki('sa.key')}`,
      `--root-ca-file=${this.pki('ca.crt')}`,
      `--controllers=${[...CONTROLLERS, ...(this.opts.withNode ? NODE_CONTROLLERS : [])].join(',')}`,
      // The namespace controller deletes content type by type: the default QPS makes that slow.
      '--kube-api-qps=100',
      '--kube-api-burst=200',
      '--profiling=false',
      '--v=1',
    ];
  }
}
