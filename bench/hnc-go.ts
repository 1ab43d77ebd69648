// HNC's Go manager (sigs.k8s.io/hierarchical-namespaces, built from the Go module proxy by
// bench/hnc-go-build.sh) driven through the same interface as our child (bench/hnc-process.ts), so
// that `npm run bench -- --controller hnc-go` runs the same phases and prints the same rows for it.
// It runs out of cluster as HNC's own service account against the local control plane, leader
// election off, its internal certificate management off: the benchmark gives it a serving
// certificate for 127.0.0.1 (the same Secret and CA ours uses) in the folder controller-runtime
// reads (under $TMPDIR), and registers the webhook configurations ours writes, pointed at its port,
// minus the one path only ours serves. Its flags: HNC's user guide,
// https://github.com/kubernetes-sigs/hierarchical-namespaces/tree/master/docs/user-guide/how-to.md.
import { freePort } from '../local-cluster/control-plane.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { KubeClient } from '../kube/client.js';
import { applyManifests } from '../kube/apply.js';
import { lastLine, runScript } from '../kube/script.js';
import { MANAGER_SERVICE_ACCOUNT } from '../kube/install.js';
import { DEFAULT_EXCLUDED_NAMESPACES, Webhook } from '../core/api/constants.js';
import { hncConfigurationPath } from '../core/api/paths.js';
import { InternalCertificates } from '../webhooks/certs.js';
import { mutatingConfiguration, validatingConfiguration, type ConfigurationInput, type ObjectRule } from '../webhooks/configurations.js';
import type { ChildStats, StartRequest } from './hnc-child.js';
import type { Controller, StartResult } from './hnc-process.js';
import { sleep } from './util.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const NAMESPACE = MANAGER_SERVICE_ACCOUNT.namespace;
/** As HNC's own Deployment passes them (its config/manager manifest). */
const EXCLUDED = [...DEFAULT_EXCLUDED_NAMESPACES, NAMESPACE];
/** The admission paths HNC's Go manager serves (those of ours it does not, e.g. excluded namespaces' labels, are left out). */
const GO_PATHS = new Set<string>([
  Webhook.namespaces.path,
  Webhook.namespaceMutator.path,
  Webhook.hierarchyConfigurations.path,
  Webhook.subnamespaceAnchors.path,
  Webhook.hncConfigurations.path,
  Webhook.objects.path,
]);
/** Verbs of client-go's request counter that write. */
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

let binary: Promise<string> | undefined;
/** The cached manager binary (built on first use: about 10 minutes cold, then instant). */
export function goManagerBinary(log: (line: string) => void = (l) => process.stderr.write(l)): Promise<string> {
  binary ??= runScript(join(HERE, 'hnc-go-build.sh'), [], log).then(lastLine);
  return binary;
}

/** Prometheus text: the sum of each metric's samples, by name, optionally only those whose labels pass `keep`. */
export function sumMetrics(text: string, names: readonly string[], keep: (name: string, labels: string) => boolean = () => true) {
  const out: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]));
  const present = new Set<string>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const brace = line.indexOf('{');
    const space = line.lastIndexOf(' ');
    const name = brace >= 0 && brace < space ? line.slice(0, brace) : line.slice(0, space);
    if (!(name in out)) continue;
    const labels = brace >= 0 ? line.slice(brace, line.lastIndexOf('}') + 1) : '';
    if (!keep(name, labels)) continue;
    out[name]! += Number(line.slice(space + 1));
    present.add(name);
  }
  return { sums: out, present };
}

/** Peak and current resident memory, CPU microseconds of a process (Linux /proc). */
function procStats(pid: number | undefined): Pick<ChildStats, 'rss' | 'maxRss' | 'rssFile' | 'rssAnon' | 'cpuUser' | 'cpuSystem'> {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const tick = 1e6 / 100; // USER_HZ is 100 on Linux
    return {
      rss: kb('VmRSS'),
      maxRss: kb('VmHWM'),
      rssFile: kb('RssFile'),
      rssAnon: kb('RssAnon'),
      cpuUser: Number(f[11]) * tick,
      cpuSystem: Number(f[12]) * tick,
    };
  } catch {
    return { rss: 0, maxRss: 0, cpuUser: 0, cpuSystem: 0 };
  }
}

/** The kinds HNCConfiguration propagates (RBAC's two always): the objects webhook's rules, as ours derives them. */
async function objectRules(client: KubeClient): Promise<ObjectRule[]> {
  const byGroup = new Map<string, Set<string>>([['rbac.authorization.k8s.io', new Set(['roles', 'rolebindings'])]]);
  const config = await client.get<{ spec?: { resources?: Array<{ group?: string; resource: string; mode?: string }> } }>(
    hncConfigurationPath(),
  );
  for (const r of config.spec?.resources ?? [])
    if ((r.mode ?? 'Propagate') === 'Propagate') byGroup.set(r.group ?? '', (byGroup.get(r.group ?? '') ?? new Set()).add(r.resource));
  return [...byGroup].map(([group, resources]) => ({ group, resources: [...resources] }));
}

const EMPTY: ChildStats = {
  rss: 0,
  heapUsed: 0,
  heapTotal: 0,
  external: 0,
  arrayBuffers: 0,
  cpuUser: 0,
  cpuSystem: 0,
  maxRss: 0,
  writes: {},
  writesTotal: 0,
  namespaces: 0,
  // No event loop, no V8 collector: not measured (the report prints what it gets).
  eventLoop: { p50: NaN, p99: NaN, max: NaN },
  gc: { count: 0, totalMs: NaN, maxMs: NaN, minorMs: NaN },
};

/** HNC's Go manager as one benchmarked process: started by start(), ended by stop() or kill(). */
export class GoHncProcess implements Controller {
  private child?: ChildProcess;
  private exited?: Promise<void>;
  private metricsPort = 0;
  private certDir?: string;
  /** There is no process before start() (a Go binary starts at once): its "baseline" is nothing. */
  readonly baseline: ChildStats = EMPTY;

  private constructor(private readonly binary: string) {}

  static async spawn(): Promise<GoHncProcess> {
    return new GoHncProcess(await goManagerBinary());
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  async start(s: StartRequest): Promise<StartResult> {
    if (this.child) throw new Error("HNC's Go manager was started already");
    if (s.hrq || s.leaderElection || s.registerPort)
      throw new Error("the benchmark runs HNC's Go manager without HRQ, leader election or replicas");
    const client = await KubeClient.fromKubeconfig(s.kubeconfig);
    this.metricsPort = await freePort();
    const probePort = await freePort();
    const args = [
      `--kubeconfig=${s.kubeconfig}`,
      `--metrics-addr=127.0.0.1:${this.metricsPort}`,
      `--health-probe-bind-address=127.0.0.1:${probePort}`,
      `--apiserver-qps-throttle=${s.qps}`,
      `--max-reconciles=${s.workers}`,
      '--enable-stackdriver=false',
      ...EXCLUDED.map((ns) => `--excluded-namespace=${ns}`),
    ];
    // controller-runtime reads the serving certificate from $TMPDIR/k8s-webhook-server/serving-certs.
    this.certDir = mkdtempSync(join(tmpdir(), 'hnc-go-'));
    let ca: string | undefined;
    if (s.webhooks) {
      const certs = await new InternalCertificates({
        client,
        namespace: NAMESPACE,
        dnsNames: [`hnc-webhook-service.${NAMESPACE}.svc`, `hnc-webhook-service.${NAMESPACE}.svc.cluster.local`],
        ips: ['127.0.0.1'],
        logger: pino({ level: 'silent' }),
      }).ensure();
      const dir = join(this.certDir, 'k8s-webhook-server', 'serving-certs');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'tls.crt'), certs.cert);
      writeFileSync(join(dir, 'tls.key'), certs.key, { mode: 0o600 });
      ca = certs.ca;
      args.push(`--webhook-server-port=${s.webhookPort}`);
    } else args.push('--no-webhooks');
    mkdirSync(dirname(s.logFile), { recursive: true });
    const out = openSync(s.logFile, 'a');
    const t0 = performance.now();
    const child = spawn('setpriv', ['--pdeathsig', 'SIGKILL', '--', this.binary, ...args], {
      stdio: ['ignore', out, out],
      env: { ...process.env, TMPDIR: this.certDir },
    });
    closeSync(out);
    this.child = child;
    this.exited = new Promise((r) => child.once('exit', () => r()));
    let gone = false;
    void this.exited.then(() => (gone = true));
    // Ready: its probe answers (with webhooks, once its webhook server is serving).
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (gone) throw new Error(`HNC's Go manager exited during start-up (exit ${child.exitCode}); see ${s.logFile}`);
      const ok = await fetch(`http://127.0.0.1:${probePort}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      if (Date.now() > deadline) throw new Error(`HNC's Go manager was not ready after 120 s; see ${s.logFile}`);
      await sleep(50);
    }
    if (s.webhooks) {
      const input: ConfigurationInput = {
        endpoint: { url: `https://127.0.0.1:${s.webhookPort}` },
        caBundle: ca,
        excludedNamespaces: EXCLUDED,
        objectRules: await objectRules(client),
        manager: { namespace: NAMESPACE },
      };
      const served = (m: ReturnType<typeof validatingConfiguration>) => ({
        ...m,
        webhooks: (m.webhooks as Array<{ clientConfig: { url: string } }>).filter((w) =>
          GO_PATHS.has(new URL(w.clientConfig.url).pathname),
        ),
      });
      await applyManifests(client, [served(mutatingConfiguration(input)), served(validatingConfiguration(input))]);
    }
    return { startedMs: performance.now() - t0, ...(await this.stats()) };
  }

  private async scrape(): Promise<string> {
    const res = await fetch(`http://127.0.0.1:${this.metricsPort}/metrics`);
    return res.text();
  }

  /**
   * Idle: nothing queued or being reconciled (controller-runtime's work queues and workers) and no
   * write sent, for a second on end. HNC has no "idle" of its own to ask.
   */
  async idle(timeoutMs = 600_000): Promise<ChildStats> {
    const deadline = Date.now() + timeoutMs;
    let since = Date.now();
    let lastWrites = -1;
    for (;;) {
      const { sums } = sumMetrics(await this.scrape(), ['workqueue_depth', 'controller_runtime_active_workers']);
      const writes = (await this.stats()).writesTotal;
      const busy = sums.workqueue_depth! > 0 || sums.controller_runtime_active_workers! > 0 || writes !== lastWrites;
      lastWrites = writes;
      if (busy) since = Date.now();
      else if (Date.now() - since >= 1000) return this.stats();
      if (Date.now() > deadline) throw new Error(`HNC's Go manager not idle after ${timeoutMs} ms`);
      await sleep(100);
    }
  }

  /** Memory and CPU from /proc, writes and Go's heap from its metrics (there is no event loop to report). */
  async stats(): Promise<ChildStats> {
    const proc = procStats(this.child?.pid);
    if (!this.child || this.child.exitCode !== null) return { ...EMPTY, ...proc };
    const text = await this.scrape().catch(() => '');
    const { sums } = sumMetrics(text, ['rest_client_requests_total'], (_, labels) =>
      WRITE_METHODS.has(/method="([A-Z]+)"/.exec(labels)?.[1] ?? ''),
    );
    const heap = sumMetrics(text, ['go_memstats_heap_alloc_bytes', 'go_memstats_heap_sys_bytes']).sums;
    return {
      ...EMPTY,
      ...proc,
      heapUsed: heap.go_memstats_heap_alloc_bytes!,
      heapTotal: heap.go_memstats_heap_sys_bytes!,
      // SubjectAccessReviews (its hierarchy webhook's) are POSTs too: counted here, as client-go counts them.
      writesTotal: sums.rest_client_requests_total!,
    };
  }

  /** Go collects on its own schedule: the same figures as stats() (heapUsed is Go's live heap as last collected). */
  collected(): Promise<ChildStats> {
    return this.stats();
  }

  heapSnapshot(): Promise<{ file: string }> {
    return Promise.reject(new Error("no heap snapshot of HNC's Go manager (--profile is for hnc-ts)"));
  }

  /** SIGTERM (controller-runtime stops its controllers), SIGKILL after graceMs. */
  async stop(graceMs = 30_000): Promise<ChildStats | undefined> {
    if (!this.child || this.child.exitCode !== null) return undefined;
    const last = await this.stats();
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child?.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
    if (this.certDir) rmSync(this.certDir, { recursive: true, force: true });
    return last;
  }

  kill(): Promise<void> {
    return this.stop(5_000).then(() => undefined);
  }
}
