// `npm run bench -- --cgroups`: each kind of process in a CPU group of its own, as on a node.
//
// Without it every process of the benchmark runs flat in one group, so the scheduler shares the cores
// per thread: the API server's dozens of runnable threads each weigh as much as HNC's one admission
// thread. On a node, kubelet gives every pod a cgroup whose cpu.shares come from its CPU request, and
// the API server and etcd are pods (static pods) of their own; under contention each group gets its
// share, whatever its number of threads. This models that, on cgroup v1's cpu controller (docs/benchmarks.md,
// "The webhook tail while one Role propagates"). It is opt-in: it needs a writable cpu hierarchy (root),
// and the flat figures stay the benchmark's default.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The control plane (etcd, kube-apiserver, kube-controller-manager), the controller under test, the load generator, the harness. */
export const GROUPS = ['control-plane', 'controller', 'load', 'harness'] as const;
export type GroupName = (typeof GROUPS)[number];
export type Shares = Record<GroupName, number>;

/** One share each (1024, a whole core's request): the baseline. */
export const EQUAL_SHARES: Shares = { 'control-plane': 1024, controller: 1024, load: 1024, harness: 1024 };

/**
 * What kubelet would set from CPU requests (shares = milli-CPU × 1024 / 1000): kubeadm's static pods
 * request 250m (kube-apiserver), 100m (etcd) and 200m (kube-controller-manager), 550m in all; HNC's
 * Deployment requests 100m (deploy/manager/deployment.yaml, as HNC's own). The load generator stands
 * for the API server's calls to the webhook, which on a node are the API server's pod: it gets the
 * API server's 250m. The harness (the benchmark's own process) is no pod: 100m, like a small client.
 */
export const REQUEST_SHARES: Shares = { 'control-plane': 563, controller: 102, load: 256, harness: 102 };

const V1_ROOT = '/sys/fs/cgroup/cpu';
const CPUSET_ROOT = '/sys/fs/cgroup/cpuset';

/** Which CPUs each group may run on (cgroup v1 cpuset, `--cgroup-cpus`): unset groups keep every CPU. */
export type Cpus = Partial<Record<GroupName, string>>;

/** Parses `--cgroup-cpus`: `group=LIST,...` where LIST is a CPU list as cpuset.cpus takes it, `+` for `,` (e.g. `controller=1,load=0`). */
export function parseCpus(spec: string | undefined): Cpus {
  const cpus: Cpus = {};
  if (spec === undefined || spec === '') return cpus;
  for (const part of spec.split(',')) {
    const [name, value] = part.split('=').map((s) => s.trim());
    if (!GROUPS.includes(name as GroupName))
      throw new Error(`--cgroup-cpus: unknown group ${JSON.stringify(name)}; choose from ${GROUPS.join(', ')}`);
    if (!value || !/^\d+(-\d+)?(\+\d+(-\d+)?)*$/.test(value))
      throw new Error(`--cgroup-cpus: ${name} needs a CPU list such as 0, 1-3 or 0+2, not ${JSON.stringify(value)}`);
    cpus[name as GroupName] = value.replace(/\+/g, ',');
  }
  return cpus;
}
const PREFIX = 'hnc-bench-';

export class CgroupsUnavailable extends Error {}

/** Parses `--cgroups` / `--cgroup-shares`: "equal", "requests" or `group=N,...` over the equal ones. */
export function parseShares(spec: string | undefined): Shares {
  if (spec === undefined || spec === '' || spec === 'equal') return { ...EQUAL_SHARES };
  if (spec === 'requests') return { ...REQUEST_SHARES };
  const shares = { ...EQUAL_SHARES };
  for (const part of spec.split(',')) {
    const [name, value] = part.split('=').map((s) => s.trim());
    if (!GROUPS.includes(name as GroupName))
      throw new Error(`--cgroup-shares: unknown group ${JSON.stringify(name)}; choose from ${GROUPS.join(', ')} (or "equal", "requests")`);
    const n = Number(value);
    // The kernel's range for cpu.shares (v1): 2 to 262144.
    if (!Number.isInteger(n) || n < 2 || n > 262_144)
      throw new Error(`--cgroup-shares: ${name} must be a whole number from 2 to 262144, not ${JSON.stringify(value)}`);
    shares[name as GroupName] = n;
  }
  return shares;
}

/** Why processes cannot be placed in CPU groups here, or undefined if they can (under `root`). */
export function unavailableReason(root = V1_ROOT): string | undefined {
  if (process.platform !== 'linux') return `CPU groups are Linux only (this is ${process.platform})`;
  if (!existsSync(join(root, 'cpu.shares')) || !existsSync(join(root, 'cgroup.procs')))
    return `no cgroup v1 cpu controller at ${root} (cpu.shares and cgroup.procs not found; cgroup v2 is not supported by --cgroups)`;
  const probe = join(root, `${PREFIX}probe-${process.pid}`);
  try {
    mkdirSync(probe);
    rmdirSync(probe);
  } catch (err) {
    return `cannot create a CPU group under ${root} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}; it needs root or a delegated hierarchy)`;
  }
  return undefined;
}

function pidsIn(dir: string): number[] {
  try {
    return readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Moves every process of `dir`'s groups back to `root`, then removes them (and `dir`). Returns what could not be removed. */
function removeTree(root: string, dir: string): string[] {
  const failed: string[] = [];
  const children = existsSync(dir)
    ? readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => join(dir, e.name))
    : [];
  for (const group of [...children, dir]) {
    if (!existsSync(group)) continue;
    for (const pid of pidsIn(group)) {
      try {
        writeFileSync(join(root, 'cgroup.procs'), String(pid));
      } catch {
        // Gone meanwhile: nothing to move.
      }
    }
    try {
      rmdirSync(group);
    } catch (err) {
      failed.push(`${group} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
  }
  return failed;
}

/** The benchmark's CPU groups: /sys/fs/cgroup/cpu/hnc-bench-<pid>/<group>, removed when the benchmark ends. */
export class CpuGroups {
  private removed = false;
  private readonly placed = new Map<number, GroupName>();

  private constructor(
    private readonly root: string,
    readonly dir: string,
    readonly shares: Shares,
    /** With `--cgroup-cpus`: the cpuset groups (same names) and what each may run on. */
    readonly cpuset?: { root: string; dir: string; cpus: Record<GroupName, string> },
  ) {}

  /** Creates the groups (removing those of benchmarks no longer running); throws CgroupsUnavailable with the reason. */
  static create(shares: Shares, root = V1_ROOT, cpus: Cpus = {}, cpusetRoot = CPUSET_ROOT): CpuGroups {
    const reason = unavailableReason(root);
    if (reason) throw new CgroupsUnavailable(`--cgroups: ${reason}`);
    const pinned = Object.keys(cpus).length > 0;
    if (pinned && !existsSync(join(cpusetRoot, 'cpuset.cpus')))
      throw new CgroupsUnavailable(`--cgroup-cpus: no cgroup v1 cpuset controller at ${cpusetRoot}`);
    for (const r of pinned ? [root, cpusetRoot] : [root])
      for (const e of readdirSync(r, { withFileTypes: true })) {
        const owner = e.isDirectory() && e.name.startsWith(PREFIX) ? Number(e.name.slice(PREFIX.length)) : NaN;
        if (Number.isInteger(owner) && !alive(owner)) removeTree(r, join(r, e.name));
      }
    const dir = join(root, `${PREFIX}${process.pid}`);
    let cpuset: CpuGroups['cpuset'];
    if (pinned) {
      const all = readFileSync(join(cpusetRoot, 'cpuset.cpus'), 'utf8').trim();
      const every = Object.fromEntries(GROUPS.map((g) => [g, cpus[g] ?? all])) as Record<GroupName, string>;
      cpuset = { root: cpusetRoot, dir: join(cpusetRoot, `${PREFIX}${process.pid}`), cpus: every };
    }
    const groups = new CpuGroups(root, dir, shares, cpuset);
    try {
      mkdirSync(dir, { recursive: true });
      for (const g of GROUPS) {
        mkdirSync(join(dir, g), { recursive: true });
        writeFileSync(join(dir, g, 'cpu.shares'), String(shares[g]));
      }
      if (cpuset) {
        // A cpuset takes tasks only once it has CPUs and memory nodes; the parent needs them first.
        const mems = readFileSync(join(cpuset.root, 'cpuset.mems'), 'utf8').trim();
        const all = readFileSync(join(cpuset.root, 'cpuset.cpus'), 'utf8').trim();
        mkdirSync(cpuset.dir, { recursive: true });
        writeFileSync(join(cpuset.dir, 'cpuset.cpus'), all);
        writeFileSync(join(cpuset.dir, 'cpuset.mems'), mems);
        for (const g of GROUPS) {
          mkdirSync(join(cpuset.dir, g), { recursive: true });
          writeFileSync(join(cpuset.dir, g, 'cpuset.cpus'), cpuset.cpus[g]);
          writeFileSync(join(cpuset.dir, g, 'cpuset.mems'), mems);
        }
      }
    } catch (err) {
      groups.remove();
      throw new CgroupsUnavailable(`--cgroups: could not set up ${dir}: ${(err as Error).message}`);
    }
    return groups;
  }

  /**
   * Lets `group`'s tasks run at a real-time policy for `runtimeUs` of each period (cpu.rt_runtime_us,
   * 0 in a new group, where sched_setscheduler(SCHED_FIFO) then fails with EPERM). The bench's own
   * folder gets the same budget first: a group's budget must fit in its parent's.
   */
  allowRealtime(group: GroupName, runtimeUs: number): void {
    for (const d of [this.dir, join(this.dir, group)]) writeFileSync(join(d, 'cpu.rt_runtime_us'), String(runtimeUs));
    this.realtime = { group, runtimeUs };
  }
  private realtime?: { group: GroupName; runtimeUs: number };

  /** Moves the process (all its threads; its children started later follow it) into `group`. */
  place(group: GroupName, pid: number | undefined): void {
    if (pid === undefined || this.removed) return;
    writeFileSync(join(this.dir, group, 'cgroup.procs'), String(pid));
    if (this.cpuset) writeFileSync(join(this.cpuset.dir, group, 'cgroup.procs'), String(pid));
    this.placed.set(pid, group);
  }

  /** The group a process is in now, by /proc (undefined if it is in none of ours). */
  groupOf(pid: number): GroupName | undefined {
    try {
      const line = readFileSync(`/proc/${pid}/cgroup`, 'utf8')
        .split('\n')
        .find((l) => /^\d+:([^:]*,)?cpu(,[^:]*)?:/.test(l));
      const path = line?.split(':')[2] ?? '';
      const name = path.split('/').pop();
      return path.startsWith(`/${PREFIX}${process.pid}/`) && GROUPS.includes(name as GroupName) ? (name as GroupName) : undefined;
    } catch {
      return undefined;
    }
  }

  /** One line for the report. */
  describe(): string {
    const cpus = this.cpuset ? `; cpuset.cpus ${GROUPS.map((g) => `${g} ${this.cpuset!.cpus[g]}`).join(', ')}` : '';
    const rt = this.realtime ? `; ${this.realtime.group} may run real-time ${this.realtime.runtimeUs} µs per period` : '';
    return `cgroup v1 cpu groups, cpu.shares ${GROUPS.map((g) => `${g} ${this.shares[g]}`).join(', ')}${cpus}${rt}`;
  }

  /** Moves what is left back to the root group and removes the groups; idempotent. Returns what could not be removed. */
  remove(): string[] {
    if (this.removed) return [];
    this.removed = true;
    return [...removeTree(this.root, this.dir), ...(this.cpuset ? removeTree(this.cpuset.root, this.cpuset.dir) : [])];
  }
}

/** The benchmark's groups, when `--cgroups` made them; the places that start processes put them in. */
let active: CpuGroups | undefined;

export function activateCpuGroups(groups: CpuGroups): void {
  active = groups;
  // Synchronously on every way out: a group with no process left is only a directory, but one per run would pile up.
  process.on('exit', () => groups.remove());
}

/** Puts `pid` into `group` if the benchmark runs with --cgroups (nothing otherwise). */
export function placeInCpuGroup(group: GroupName, pid: number | undefined): void {
  active?.place(group, pid);
}

export function activeCpuGroups(): CpuGroups | undefined {
  return active;
}
