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
  /** Its start time (clock ticks since boot, /proc/<pid>/stat): a reused pid is not the owner. */
  pidStart?: string;
  /** The node's state folder: every process and mount under it is the node's. */
  stateDir: string;
  bridge: string;
  sysctls: Record<string, string>;
  /** Network namespaces present before the node started (the runtime's new ones are removed). */
  netnsBefore: string[];
  netnsDirExisted: boolean;
  runContainerdExisted: boolean;
  /**
   * Whether these existed before the node started (absent in a journal of an older version: taken
   * as existing, so nothing is removed). The kubelet's device manager makes its socket folder at a
   * fixed path, whatever its root folder.
   */
  varLibKubeletExisted?: boolean;
  devicePluginsExisted?: boolean;
}

const VAR_LIB_KUBELET = '/var/lib/kubelet';
const DEVICE_PLUGINS = '/var/lib/kubelet/device-plugins';

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

/** A process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat), if it exists. */
export function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** The journal's owner still runs: the same pid, started at the same moment (not a reused pid). */
function ownerRuns(j: HostJournal): boolean {
  if (j.pid === process.pid || !alive(j.pid)) return false;
  if (j.pidStart !== undefined) return processStart(j.pid) === j.pidStart;
  try {
    return readFileSync(`/proc/${j.pid}/cmdline`, 'utf8').includes('node');
  } catch {
    return false;
  }
}

export class HostChangeError extends Error {
  override name = 'HostChangeError';
}

/**
 * Refuses if a local node runs on this host, and undoes what one that ended without stopping left
 * (its journal). Returns what was undone (empty: there was no such run, or it left nothing).
 */
export function recoverHost(log: (l: string) => void): string[] {
  const old = readJournal();
  if (!old) return [];
  if (ownerRuns(old)) {
    throw new HostChangeError(`a local node is already running (process ${old.pid}, state in ${old.stateDir}); stop it first`);
  }
  log(`local node: a previous run (process ${old.pid}) ended without stopping; undoing what it left on this host`);
  const t0 = Date.now();
  const undone = undoHostChanges(old, log);
  log(`local node: undone in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${undone.length ? undone.join('; ') : 'nothing was left'}`);
  return undone;
}

/** Takes the host for a new node: refuses if one runs, undoes what a crashed one left, writes the new journal. */
export function beginHostChanges(stateDir: string, bridge: string, log: (l: string) => void): HostJournal {
  recoverHost(log);
  mkdirSync(JOURNAL_DIR, { recursive: true, mode: 0o700 });
  const journal: HostJournal = {
    pid: process.pid,
    pidStart: processStart(process.pid),
    stateDir,
    bridge,
    sysctls: Object.fromEntries(WATCHED_SYSCTLS.flatMap((k) => (readSysctl(k) === undefined ? [] : [[k, readSysctl(k)!]]))),
    netnsBefore: existsSync(NETNS_DIR) ? readdirSync(NETNS_DIR) : [],
    netnsDirExisted: existsSync(NETNS_DIR),
    runContainerdExisted: existsSync('/run/containerd'),
    varLibKubeletExisted: existsSync(VAR_LIB_KUBELET),
    devicePluginsExisted: existsSync(DEVICE_PLUGINS),
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

/**
 * Undoes everything the journal covers; each step goes on when another fails, and failures are
 * logged. Returns what was undone, one phrase per kind of change (empty: nothing was left).
 */
export function undoHostChanges(j: HostJournal, log: (l: string) => void): string[] {
  const undone: string[] = [];
  const step = (what: string, fn: () => string | undefined | void) => {
    try {
      const done = fn();
      if (done) undone.push(done);
    } catch (err) {
      log(`local node: cleanup: ${what} failed: ${(err as Error).message}`);
    }
  };
  step('killing the node processes', () => {
    const killed = killUnder(j.stateDir);
    return killed.length ? `killed ${plural(killed.length, 'process', 'processes')} (${summarize(killed)})` : undefined;
  });
  step('killing the pods', () => {
    const killed = killPods();
    return killed ? `killed ${plural(killed, 'pod process', 'pod processes')}` : undefined;
  });
  step('unmounting', () => {
    const n = unmountUnder(j.stateDir);
    return n ? `unmounted ${plural(n, 'mount', 'mounts')}` : undefined;
  });
  step('removing pod network namespaces', () => {
    if (!existsSync(NETNS_DIR)) return;
    let removed = 0;
    for (const ns of readdirSync(NETNS_DIR)) {
      if (j.netnsBefore.includes(ns) || !ns.startsWith('cni-')) continue;
      if (!run('ip', ['netns', 'delete', ns]).ok) {
        run('umount', ['-l', join(NETNS_DIR, ns)]);
        rmSync(join(NETNS_DIR, ns), { force: true });
      }
      removed++;
    }
    if (!j.netnsDirExisted && readdirSync(NETNS_DIR).length === 0) rmdirSync(NETNS_DIR);
    return removed ? `removed ${plural(removed, 'pod network namespace', 'pod network namespaces')}` : undefined;
  });
  step('removing the pods cgroups', () => {
    const n = removePodCgroups();
    return n ? `removed ${plural(n, 'pod cgroup', 'pod cgroups')}` : undefined;
  });
  step('removing iptables rules', () => {
    const chains = cleanIptables();
    return chains.length
      ? `removed ${plural(chains.length, 'iptables chain', 'iptables chains')} and the rules into them (${summarize(chains)})`
      : undefined;
  });
  step('removing ipsets', () => {
    const sets = run('ipset', ['list', '-n']);
    if (!sets.ok) return;
    const ours = sets.out.split('\n').filter((n) => OUR_IPSETS.test(n));
    for (const s of ours) run('ipset', ['destroy', s]);
    return ours.length ? `destroyed ${plural(ours.length, 'ipset', 'ipsets')}` : undefined;
  });
  step(`deleting the bridge ${j.bridge}`, () => {
    if (!existsSync(`/sys/class/net/${j.bridge}`)) return;
    execFileSync('ip', ['link', 'delete', j.bridge]);
    return `deleted the bridge ${j.bridge}`;
  });
  step('restoring sysctls', () => {
    const restored: string[] = [];
    for (const [k, v] of Object.entries(j.sysctls)) {
      const now = readSysctl(k);
      if (now === undefined || now === v) continue;
      writeSysctl(k, v);
      restored.push(`${k} ${now} → ${v}`);
    }
    return restored.length ? `restored ${restored.join(', ')}` : undefined;
  });
  step('removing /run/containerd', () => {
    if (j.runContainerdExisted || !existsSync('/run/containerd')) return;
    rmSync('/run/containerd', { recursive: true, force: true });
    return 'removed /run/containerd';
  });
  step(`removing ${DEVICE_PLUGINS}`, () => {
    if (j.devicePluginsExisted !== false || !existsSync(DEVICE_PLUGINS)) return;
    // The kubelet's own socket, or a device plugin's of this node: nothing else was there.
    rmSync(DEVICE_PLUGINS, { recursive: true, force: true });
    if (j.varLibKubeletExisted === false && readdirSync(VAR_LIB_KUBELET).length === 0) rmdirSync(VAR_LIB_KUBELET);
    return `removed ${DEVICE_PLUGINS}`;
  });
  step('removing the state folder', () => {
    if (!existsSync(j.stateDir)) return;
    rmSync(j.stateDir, { recursive: true, force: true });
    return `removed ${j.stateDir}`;
  });
  rmSync(JOURNAL_DIR, { recursive: true, force: true });
  return undone;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** "a, b ×3, c": names in first-seen order with their counts. */
function summarize(names: string[]): string {
  const counts = new Map<string, number>();
  for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1);
  return [...counts].map(([n, c]) => (c > 1 ? `${n} ×${c}` : n)).join(', ');
}

/** The parent of each running process, by pid. */
function parents(): Map<number, number> {
  const out = new Map<number, number>();
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      out.set(Number(pid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone
    }
  }
  return out;
}

function commandName(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '?';
  }
}

/**
 * SIGKILLs every process whose command line names the state folder (daemons, container shims,
 * whether our children or orphans of a run that died) and their descendants (an iptables-restore
 * kube-proxy started must not commit after the clean-up), then waits until they are gone.
 * Returns their command names.
 */
function killUnder(stateDir: string): string[] {
  const tree = parents();
  const doomed = new Set<number>();
  for (const pid of tree.keys()) {
    if (pid === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(stateDir)) doomed.add(pid);
    } catch {
      // gone
    }
  }
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, parent] of tree) {
      if (doomed.has(parent) && !doomed.has(pid) && pid !== process.pid) {
        doomed.add(pid);
        grew = true;
      }
    }
  }
  const names = [...doomed].map(commandName);
  for (const pid of doomed) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  // A SIGKILLed process may take a moment to leave; one of ours stays a zombie until reaped.
  const deadline = Date.now() + 5_000;
  const running = (pid: number) => {
    try {
      return !/^[ZX]$/.test(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] ?? 'X');
    } catch {
      return false;
    }
  };
  while ([...doomed].some(running) && Date.now() < deadline) spawnSync('sleep', ['0.05']);
  return names;
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

/** SIGKILLs every process in the pods' cgroups (containers outlive the kubelet and containerd); returns how many. */
function killPods(): number {
  let killed = 0;
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
        killed++;
      } catch {
        // gone
      }
    }
  }
  return killed;
}

/** Removes the pods' cgroups (children first), killing what still runs in them; returns how many there were. */
function removePodCgroups(): number {
  const deadline = Date.now() + 10_000;
  const all = podCgroupDirs().length;
  for (;;) {
    const left = podCgroupDirs().filter((d) => {
      try {
        rmdirSync(d);
        return false;
      } catch {
        return existsSync(d);
      }
    });
    if (!left.length) return all;
    if (Date.now() > deadline) throw new HostChangeError(`cgroups still busy: ${left.slice(0, 3).join(', ')}`);
    killPods();
    spawnSync('sleep', ['0.2']);
  }
}

/** Unmounts every mount at or under the folder, deepest first; returns how many. */
function unmountUnder(dir: string): number {
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4])
    .filter((m): m is string => !!m && (m === dir || m.startsWith(dir + '/')))
    .map((m) => m.replace(/\\040/g, ' '));
  const unique = [...new Set(mounts)].sort((a, b) => b.length - a.length);
  for (const m of unique) run('umount', ['-l', m]);
  return unique.length;
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

/** The node's chains an iptables-save dump declares. */
export function nodeChains(dump: string): string[] {
  return dump
    .split('\n')
    .filter((l) => l.startsWith(':') && OUR_CHAINS.test(l.split(' ')[0]!))
    .map((l) => l.slice(1).split(' ')[0]!);
}

/**
 * Removes the chains named as the node's, and every rule that jumps to one, table by table.
 * Returns the table of each chain removed ("nat", "ipv6 filter").
 */
export function cleanIptables(): string[] {
  const removed: string[] = [];
  for (const [save, restore] of [
    ['iptables-save', 'iptables-restore'],
    ['ip6tables-save', 'ip6tables-restore'],
  ] as const) {
    for (const table of ['filter', 'nat', 'mangle', 'raw']) {
      const dump = run(save, ['-t', table]);
      if (!dump.ok || !OUR_CHAINS.test(dump.out)) continue;
      const r = run(restore, ['-w', '5'], withoutNodeRules(dump.out));
      if (!r.ok) throw new HostChangeError(`${restore} (table ${table}): ${r.err.trim()}`);
      removed.push(...nodeChains(dump.out).map(() => `${save.startsWith('ip6') ? 'ipv6 ' : ''}${table}`));
    }
  }
  return removed;
}
