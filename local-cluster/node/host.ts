// What the local node changes on the host, written down before it changes it, so that stop() and
// the next start after a crash undo exactly that: sysctls (their old values), the bridge and its
// pod network namespaces, the iptables rules and ipsets of kube-proxy, kube-router and our own
// (every chain named KUBE-*, HNC-NODE-* or CNI-*, nothing else), the pods' cgroups, the mounts and
// processes under the node's state folder. See docs/real-node.md.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const JOURNAL_DIR = '/run/hnc-ts-node';
const JOURNAL = join(JOURNAL_DIR, 'host.json');
const NETNS_DIR = '/run/netns';
const CGROUP_ROOT = '/sys/fs/cgroup';
/** The folder the kubelet makes in every cgroup hierarchy for the pods (its cgroupRoot is /). */
const POD_CGROUP = 'kubepods';
/** iptables chains and ipsets that are the node's: kube-proxy's and kube-router's, the CNI's, ours. */
const OUR_CHAINS = /\b(KUBE-[A-Z0-9-]*|HNC-NODE[A-Z0-9-]*|CNI-[A-Za-z0-9-]*)\b/;
const OUR_IPSETS = /^(inet6:)?(KUBE-|kube-router)/;

/**
 * Sysctls that the node sets itself (forwarding, the bridge's netfilter hooks) or that its
 * daemons set (the kubelet's kernel tunables, kube-proxy's conntrack limits): their values before
 * the node started are restored when it stops.
 */
export const WATCHED_SYSCTLS = [
  'net.ipv4.ip_forward',
  'net.ipv4.conf.all.route_localnet',
  'net.bridge.bridge-nf-call-iptables',
  'net.bridge.bridge-nf-call-ip6tables',
  'vm.overcommit_memory',
  'vm.panic_on_oom',
  'kernel.panic',
  'kernel.panic_on_oops',
  'kernel.keys.root_maxkeys',
  'kernel.keys.root_maxbytes',
  'net.netfilter.nf_conntrack_max',
];

export interface HostJournal {
  /** The process that owns the node while it runs. */
  pid: number;
  /** The node's state folder: every process and mount under it is the node's. */
  stateDir: string;
  bridge: string;
  sysctls: Record<string, string>;
  /** Network namespaces present before the node started (the runtime's new ones are removed). */
  netnsBefore: string[];
  netnsDirExisted: boolean;
  runContainerdExisted: boolean;
}

const sysctlPath = (key: string): string => join('/proc/sys', ...key.split('.'));

export function readSysctl(key: string): string | undefined {
  try {
    return readFileSync(sysctlPath(key), 'utf8').trim();
  } catch {
    return undefined;
  }
}

export function writeSysctl(key: string, value: string): void {
  writeFileSync(sysctlPath(key), value);
}

function run(cmd: string, args: string[], input?: string): { ok: boolean; out: string; err: string } {
  const r = spawnSync(cmd, args, { input, encoding: 'utf8' });
  return { ok: r.status === 0, out: r.stdout ?? '', err: r.stderr ?? String(r.error ?? '') };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export class HostChangeError extends Error {
  override name = 'HostChangeError';
}

/** Takes the host for a new node: refuses if one runs, undoes what a crashed one left, writes the new journal. */
export function beginHostChanges(stateDir: string, bridge: string, log: (l: string) => void): HostJournal {
  mkdirSync(JOURNAL_DIR, { recursive: true, mode: 0o700 });
  const old = readJournal();
  if (old) {
    if (old.pid !== process.pid && alive(old.pid) && readFileSync(`/proc/${old.pid}/cmdline`, 'utf8').includes('node')) {
      throw new HostChangeError(`a local node is already running (process ${old.pid}, state in ${old.stateDir}); stop it first`);
    }
    log(`local node: undoing what a previous run (process ${old.pid}) left on this host`);
    undoHostChanges(old, log);
  }
  const journal: HostJournal = {
    pid: process.pid,
    stateDir,
    bridge,
    sysctls: Object.fromEntries(WATCHED_SYSCTLS.flatMap((k) => (readSysctl(k) === undefined ? [] : [[k, readSysctl(k)!]]))),
    netnsBefore: existsSync(NETNS_DIR) ? readdirSync(NETNS_DIR) : [],
    netnsDirExisted: existsSync(NETNS_DIR),
    runContainerdExisted: existsSync('/run/containerd'),
  };
  writeFileSync(JOURNAL, JSON.stringify(journal, null, 2));
  return journal;
}

export function readJournal(): HostJournal | undefined {
  try {
    return JSON.parse(readFileSync(JOURNAL, 'utf8')) as HostJournal;
  } catch {
    return undefined;
  }
}

/** Undoes everything the journal covers; each step goes on when another fails, and failures are logged. */
export function undoHostChanges(j: HostJournal, log: (l: string) => void): void {
  const step = (what: string, fn: () => void) => {
    try {
      fn();
    } catch (err) {
      log(`local node: cleanup: ${what} failed: ${(err as Error).message}`);
    }
  };
  step('killing the node processes', () => killUnder(j.stateDir));
  step('killing the pods', () => killPods());
  step('unmounting', () => unmountUnder(j.stateDir));
  step('removing pod network namespaces', () => {
    if (!existsSync(NETNS_DIR)) return;
    for (const ns of readdirSync(NETNS_DIR)) {
      if (j.netnsBefore.includes(ns) || !ns.startsWith('cni-')) continue;
      if (!run('ip', ['netns', 'delete', ns]).ok) {
        run('umount', ['-l', join(NETNS_DIR, ns)]);
        rmSync(join(NETNS_DIR, ns), { force: true });
      }
    }
    if (!j.netnsDirExisted && readdirSync(NETNS_DIR).length === 0) rmdirSync(NETNS_DIR);
  });
  step('removing the pods cgroups', () => removePodCgroups());
  step('removing iptables rules', () => cleanIptables());
  step('removing ipsets', () => {
    const sets = run('ipset', ['list', '-n']);
    if (!sets.ok) return;
    for (const s of sets.out.split('\n').filter((n) => OUR_IPSETS.test(n))) run('ipset', ['destroy', s]);
  });
  step(`deleting the bridge ${j.bridge}`, () => {
    if (existsSync(`/sys/class/net/${j.bridge}`)) execFileSync('ip', ['link', 'delete', j.bridge]);
  });
  step('restoring sysctls', () => {
    for (const [k, v] of Object.entries(j.sysctls)) if (readSysctl(k) !== v) writeSysctl(k, v);
  });
  step('removing /run/containerd', () => {
    if (!j.runContainerdExisted) rmSync('/run/containerd', { recursive: true, force: true });
  });
  step('removing the state folder', () => rmSync(j.stateDir, { recursive: true, force: true }));
  rmSync(JOURNAL, { force: true });
  rmSync(JOURNAL_DIR, { recursive: true, force: true });
}

/** SIGKILLs every process whose command line names the state folder (daemons, container shims). */
function killUnder(stateDir: string): void {
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    if (Number(pid) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(stateDir)) process.kill(Number(pid), 'SIGKILL');
    } catch {
      // gone
    }
  }
}

function podCgroupDirs(): string[] {
  if (!existsSync(CGROUP_ROOT)) return [];
  const roots = [join(CGROUP_ROOT, POD_CGROUP)];
  for (const h of readdirSync(CGROUP_ROOT)) roots.push(join(CGROUP_ROOT, h, POD_CGROUP));
  const out: string[] = [];
  const walk = (d: string) => {
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) if (e.isDirectory()) walk(join(d, e.name));
    out.push(d); // children before parents
  };
  for (const r of roots) if (existsSync(r)) walk(r);
  return out;
}

/** SIGKILLs every process in the pods' cgroups (containers outlive the kubelet and containerd). */
function killPods(): void {
  for (const d of podCgroupDirs()) {
    let procs: string[] = [];
    try {
      procs = readFileSync(join(d, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean);
    } catch {
      continue;
    }
    for (const p of procs) {
      try {
        process.kill(Number(p), 'SIGKILL');
      } catch {
        // gone
      }
    }
  }
}

function removePodCgroups(): void {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const left = podCgroupDirs().filter((d) => {
      try {
        rmdirSync(d);
        return false;
      } catch {
        return existsSync(d);
      }
    });
    if (!left.length) return;
    if (Date.now() > deadline) throw new HostChangeError(`cgroups still busy: ${left.slice(0, 3).join(', ')}`);
    killPods();
    spawnSync('sleep', ['0.2']);
  }
}

/** Unmounts every mount at or under the folder, deepest first. */
function unmountUnder(dir: string): void {
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4])
    .filter((m): m is string => !!m && (m === dir || m.startsWith(dir + '/')))
    .map((m) => m.replace(/\\040/g, ' '));
  for (const m of [...new Set(mounts)].sort((a, b) => b.length - a.length)) run('umount', ['-l', m]);
}

/**
 * An iptables-save dump without the node's chains (their declarations and rules) and without any
 * rule that jumps to one: what iptables-restore then puts back, everything else as it was.
 */
export function withoutNodeRules(dump: string): string {
  const kept = dump
    .split('\n')
    .filter((l) => !OUR_CHAINS.test(l))
    .join('\n');
  return kept.endsWith('\n') ? kept : kept + '\n';
}

/** Removes the chains named as the node's, and every rule that jumps to one, table by table. */
export function cleanIptables(): void {
  for (const [save, restore] of [
    ['iptables-save', 'iptables-restore'],
    ['ip6tables-save', 'ip6tables-restore'],
  ] as const) {
    for (const table of ['filter', 'nat', 'mangle', 'raw']) {
      const dump = run(save, ['-t', table]);
      if (!dump.ok || !OUR_CHAINS.test(dump.out)) continue;
      const r = run(restore, ['-w', '5'], withoutNodeRules(dump.out));
      if (!r.ok) throw new HostChangeError(`${restore} (table ${table}): ${r.err.trim()}`);
    }
  }
}
