// HNC v1.1.0's Go manager (built from the Go module proxy by bench/hnc-go-build.sh, cached) as a
// migration test runs it: out of the cluster, as HNC's default install runs it (the service account
// `default` of hnc-system, bound to a cluster-wide role of every verb on every resource, as HNC's
// manager-role), with HNC's webhook configurations as its release manifest declares them (read from
// the module's config/, pointed at its port by URL instead of its Service) applied with kubectl.
import { freePort } from '../../local-cluster/control-plane.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, closeSync, copyFileSync, cpSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { parseAllDocuments } from 'yaml';
import { inject } from 'vitest';
import { KubeClient } from '../../kube/client.js';
import { lastLine, runScript } from '../../kube/script.js';
import { InternalCertificates } from '../../webhooks/certs.js';
import { mintUser } from '../../local-cluster/index.js';
import { eventually, kubectl } from './cluster.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const HNC_GO_VERSION = 'v1.1.0';
export const HNC_GO_NAMESPACE = 'hnc-system';
/** HNC's default install runs its manager as this namespace's `default` service account. */
export const HNC_GO_USER = `system:serviceaccount:${HNC_GO_NAMESPACE}:default`;
const HNC_GO_GROUPS = ['system:serviceaccounts', `system:serviceaccounts:${HNC_GO_NAMESPACE}`];
/** The ClusterRoleBinding standing in for HNC's manager-rolebinding (every verb on every resource). */
export const HNC_GO_BINDING = 'hnc-go-manager-rolebinding';
/** As HNC's Deployment passes them. */
export const HNC_GO_EXCLUDED = ['kube-system', 'kube-public', HNC_GO_NAMESPACE, 'kube-node-lease'];

/** The cached manager binary (a cold build takes about 10 minutes on 2 cores). */
export async function hncGoBinary(): Promise<string> {
  const out = await runScript(join(ROOT, 'bench', 'hnc-go-build.sh'), [], (l) => process.stderr.write(l));
  return lastLine(out);
}

/** HNC's module in the Go module cache (the build above fetched it). */
export async function hncGoModule(): Promise<string> {
  const cache = await new Promise<string>((resolve, reject) => {
    const p = spawn('go', ['env', 'GOMODCACHE'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.once('error', reject);
    p.once('exit', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`go env GOMODCACHE exited ${code}`))));
  });
  return join(cache, 'sigs.k8s.io', `hierarchical-namespaces@${HNC_GO_VERSION}`);
}

interface WebhookEntry {
  name: string;
  clientConfig: { service?: { path?: string }; url?: string; caBundle?: string };
  [k: string]: unknown;
}
interface WebhookConfiguration {
  apiVersion: string;
  kind: string;
  metadata: { name: string; [k: string]: unknown };
  webhooks: WebhookEntry[];
}

const readYaml = (file: string) =>
  parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => d.toJSON() as WebhookConfiguration | null)
    .filter((d): d is WebhookConfiguration => d !== null);

/**
 * HNC's webhook configurations as its release (with --enable-hrq, its hrq variant) declares them:
 * config/webhook/manifests.yaml, its webhook_patch.yaml, the hrq variant's patch, the `hnc-` name
 * prefix; each webhook's Service replaced by a URL on 127.0.0.1:port with the given CA.
 */
export async function hncGoWebhookConfigurations(port: number, caBundle: string, hrq: boolean): Promise<WebhookConfiguration[]> {
  const config = join(await hncGoModule(), 'config');
  const base = readYaml(join(config, 'webhook', 'manifests.yaml'));
  const patches = [
    ...readYaml(join(config, 'webhook', 'webhook_patch.yaml')),
    ...(hrq ? readYaml(join(config, 'variants', 'hrq', 'webhook_patch.yaml')) : []),
  ];
  // A strategic merge by webhook name (the only merge these patches use): fields replace, new names append.
  for (const patch of patches) {
    const target = base.find((c) => c.kind === patch.kind && c.metadata.name === patch.metadata.name);
    if (!target) throw new Error(`HNC's webhook patch names no configuration: ${patch.kind} ${patch.metadata.name}`);
    for (const w of patch.webhooks) {
      const i = target.webhooks.findIndex((x) => x.name === w.name);
      if (i >= 0) target.webhooks[i] = { ...target.webhooks[i]!, ...w };
      else target.webhooks.push(w);
    }
  }
  return base.map((c) => ({
    apiVersion: c.apiVersion,
    kind: c.kind,
    metadata: { name: `hnc-${c.metadata.name}` },
    webhooks: c.webhooks.map((w) => ({
      ...w,
      clientConfig: {
        url: `https://127.0.0.1:${port}${w.clientConfig.service?.path ?? ''}`,
        caBundle: Buffer.from(caBundle).toString('base64'),
      },
    })),
  }));
}

/**
 * HNC's released `default.yaml` with `image` as its manager's image: what its Makefile's `manifests`
 * target does, with the same tool. The module ships the kustomize it pins (hack/kustomize-3.8.1, a
 * static binary, not executable in the read-only module cache: it is copied out), and
 * config/variants/default-cc is the variant published as default.yaml; `kustomize edit set image
 * controller=IMAGE` is the kustomization's `images` entry. kustomize 3.8.1 refuses a base outside
 * its root, so config/ is copied beside the kustomization.
 */
export async function hncGoDefaultManifest(image: string): Promise<string> {
  const module = await hncGoModule();
  const work = mkdtempSync(join(tmpdir(), 'hnc-go-manifest-'));
  try {
    const kustomize = join(work, 'kustomize');
    copyFileSync(join(module, 'hack', 'kustomize-3.8.1'), kustomize);
    chmodSync(kustomize, 0o755);
    cpSync(join(module, 'config'), join(work, 'config'), { recursive: true });
    mkdirSync(join(work, 'manifests'));
    const at = image.lastIndexOf(':');
    const [newName, newTag] = at > image.lastIndexOf('/') ? [image.slice(0, at), image.slice(at + 1)] : [image, 'latest'];
    writeFileSync(
      join(work, 'manifests', 'kustomization.yaml'),
      `resources:\n- ../config/variants/default-cc\nimages:\n- name: controller\n  newName: ${newName}\n  newTag: ${newTag}\n`,
    );
    const out = await new Promise<string>((resolve, reject) => {
      const p = spawn(kustomize, ['build', join(work, 'manifests')], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      p.once('error', reject);
      p.once('exit', (code) =>
        code === 0 ? resolve(stdout) : reject(new Error(`kustomize build of HNC's default-cc failed (${code}): ${stderr}`)),
      );
    });
    return out;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Prometheus text: the sum of a metric's samples whose labels pass `keep`. */
export function sum(text: string, name: string, keep: (labels: string) => boolean = () => true): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name) || (line[name.length] !== '{' && line[name.length] !== ' ')) continue;
    const labels = line[name.length] === '{' ? line.slice(name.length, line.lastIndexOf('}') + 1) : '';
    if (keep(labels)) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/**
 * Waits until a manager is idle as its /metrics tells: `busy(text)` false and the count of writes
 * unchanged, on every look (each 100 ms) for `quietMs` on end.
 */
export async function idleByMetrics(
  scrape: () => Promise<string>,
  busy: (text: string) => boolean,
  writes: (text: string) => number,
  quietMs: number,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let since = Date.now();
  let lastWrites = -1;
  for (;;) {
    const text = await scrape();
    const w = writes(text);
    if (busy(text) || w !== lastWrites) since = Date.now();
    else if (Date.now() - since >= quietMs) return;
    lastWrites = w;
    if (Date.now() > deadline) throw new Error(`the manager was not idle after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** HNC's Go manager idle: nothing queued or being reconciled (controller-runtime's metrics) and no write sent for a second. */
export const hncGoIdle = (scrape: () => Promise<string>, timeoutMs = 300_000): Promise<void> =>
  idleByMetrics(
    scrape,
    (t) => sum(t, 'workqueue_depth') > 0 || sum(t, 'controller_runtime_active_workers') > 0,
    (t) => sum(t, 'rest_client_requests_total', (l) => /method="(POST|PUT|PATCH|DELETE)"/.test(l)),
    1000,
    timeoutMs,
  );

export interface HncGoOptions {
  /** --enable-hrq */
  hrq?: boolean;
  /** --managed-namespace-label (regexes) */
  managedLabels?: string[];
  logFile: string;
}

/** One run of HNC's Go manager; stop() ends the process and leaves its webhook configurations as they are. */
export class HncGo {
  private exited!: Promise<void>;
  private constructor(
    private readonly child: ChildProcess,
    private readonly metricsPort: number,
    private readonly certDir: string,
    readonly args: string[],
  ) {}

  /** Grants HNC's manager its install's rights (every verb on every resource), as applying HNC's manifest does. */
  static async grant(admin: KubeClient): Promise<void> {
    const path = `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${HNC_GO_BINDING}`;
    await admin.delete(path).catch(() => undefined);
    await admin.create('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      metadata: { name: HNC_GO_BINDING },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'ServiceAccount', name: 'default', namespace: HNC_GO_NAMESPACE }],
    });
  }

  static async revoke(admin: KubeClient): Promise<void> {
    await admin.delete(`/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${HNC_GO_BINDING}`).catch(() => undefined);
  }

  /**
   * Starts it (webhooks on a free port of 127.0.0.1, serving a certificate of the Secret
   * hnc-webhook-server-cert, as HNC's internal certificate management keeps it) and, once its probe
   * answers, applies HNC's webhook configurations with kubectl; returns when the API server calls them.
   */
  static async start(opts: HncGoOptions): Promise<HncGo> {
    const binary = await hncGoBinary();
    const stateDir = inject('stateDir');
    const identity = await mintUser(stateDir, HNC_GO_USER, HNC_GO_GROUPS);
    const admin = await KubeClient.fromKubeconfig(inject('kubeconfig'));
    const [metricsPort, probePort, webhookPort] = [await freePort(), await freePort(), await freePort()];
    const certs = await new InternalCertificates({
      client: admin,
      namespace: HNC_GO_NAMESPACE,
      dnsNames: [`hnc-webhook-service.${HNC_GO_NAMESPACE}.svc`, `hnc-webhook-service.${HNC_GO_NAMESPACE}.svc.cluster.local`],
      ips: ['127.0.0.1'],
      logger: pino({ level: 'silent' }),
    }).ensure();
    // controller-runtime reads the serving certificate from $TMPDIR/k8s-webhook-server/serving-certs.
    const certDir = mkdtempSync(join(tmpdir(), 'hnc-go-'));
    const dir = join(certDir, 'k8s-webhook-server', 'serving-certs');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'tls.crt'), certs.cert);
    writeFileSync(join(dir, 'tls.key'), certs.key, { mode: 0o600 });
    const args = [
      `--kubeconfig=${identity.kubeconfigPath}`,
      `--metrics-addr=127.0.0.1:${metricsPort}`,
      `--health-probe-bind-address=127.0.0.1:${probePort}`,
      `--webhook-server-port=${webhookPort}`,
      '--enable-stackdriver=false',
      '--max-reconciles=10',
      '--apiserver-qps-throttle=50',
      ...HNC_GO_EXCLUDED.map((ns) => `--excluded-namespace=${ns}`),
      '--nopropagation-label=cattle.io/creator=norman',
      ...(opts.hrq ? ['--enable-hrq'] : []),
      ...(opts.managedLabels ?? []).map((l) => `--managed-namespace-label=${l}`),
    ];
    mkdirSync(dirname(opts.logFile), { recursive: true });
    const out = openSync(opts.logFile, 'a');
    const child = spawn('setpriv', ['--pdeathsig', 'SIGKILL', '--', binary, ...args], {
      stdio: ['ignore', out, out],
      env: { ...process.env, TMPDIR: certDir },
    });
    closeSync(out);
    const hnc = new HncGo(child, metricsPort, certDir, args);
    hnc.exited = new Promise((r) => child.once('exit', () => r()));
    await eventually(
      async () => {
        if (child.exitCode !== null) throw new Error(`HNC's Go manager exited (${child.exitCode}); see ${opts.logFile}`);
        const r = await fetch(`http://127.0.0.1:${probePort}/readyz`);
        return r.ok ? true : undefined;
      },
      "HNC's Go manager to be ready",
      120_000,
    );
    const configurations = await hncGoWebhookConfigurations(webhookPort, certs.ca ?? '', opts.hrq ?? false);
    const r = await kubectl(
      inject('kubeconfig'),
      ['apply', '-f', '-'],
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items: configurations }),
    );
    if (r.code !== 0) throw new Error(`kubectl apply of HNC's webhook configurations failed: ${r.stderr}`);
    return hnc;
  }

  private async scrape(): Promise<string> {
    return (await fetch(`http://127.0.0.1:${this.metricsPort}/metrics`)).text();
  }

  /** Idle: nothing queued or being reconciled, and no write sent, for a second on end (HNC has no "idle" to ask). */
  async idle(timeoutMs = 300_000): Promise<void> {
    await hncGoIdle(() => this.scrape(), timeoutMs);
  }

  /** SIGTERM, as a Deployment's pod is stopped (SIGKILL after 30 s); its webhook configurations stay. */
  async stop(): Promise<void> {
    if (this.child.exitCode === null) {
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 30_000);
      await this.exited;
      clearTimeout(timer);
    }
    rmSync(this.certDir, { recursive: true, force: true });
  }
}
