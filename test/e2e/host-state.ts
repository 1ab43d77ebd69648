// The host state the local node touches (docs/real-node.md, "What it changes on the host"), read
// from the kernel and the filesystem, not from the node's own journal: the iptables rules of both
// families, the sysctls it or its daemons set, network interfaces, addresses, routes, network
// namespaces, mounts, ipsets, the pods' cgroups, its daemons' processes and the files it may
// create. Two snapshots are compared to prove a crashed node's leftovers exist and that the next
// run leaves the host exactly as it found it.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { WATCHED_SYSCTLS } from '../../local-cluster/node/host.js';

export interface HostState {
  /** Normalized iptables-save lines ("ipv4 nat -A PREROUTING ..."), counters left out; tables holding nothing left out. */
  iptables: string[];
  sysctls: Record<string, string>;
  links: string[];
  addresses: string[];
  routes: string[];
  netns: string[];
  mounts: string[];
  ipsets: string[];
  cgroups: string[];
  /** "<pid> <command>" of the node's kinds of processes (containerd, its shims, the Kubernetes daemons, runc). */
  processes: string[];
  /** Files and folders the node may create or change: their content hash, "dir", or absent. */
  files: Record<string, string>;
}

/** Processes of these names are the node's kind (comm is at most 15 characters). */
const DAEMONS = /^(containerd|containerd-shim.*|kubelet|kube-proxy|kube-router|kube-scheduler|runc|pause)$/;
const FILES = ['/etc/hosts', '/etc/resolv.conf', '/run/containerd', '/run/hnc-ts-node', '/run/netns', '/etc/cni', '/var/lib/kubelet'];
/** Beyond the node's watched sysctls: forwarding and the like, per family and for every interface. */
const MORE_SYSCTLS = [
  'net.ipv4.conf.all.forwarding',
  'net.ipv4.conf.default.forwarding',
  'net.ipv4.conf.default.route_localnet',
  'net.ipv4.conf.all.rp_filter',
  'net.ipv4.conf.default.rp_filter',
  'net.ipv6.conf.all.forwarding',
  'net.ipv6.conf.default.forwarding',
  'net.bridge.bridge-nf-call-arptables',
  'net.ipv4.vs.conntrack',
  'net.netfilter.nf_conntrack_tcp_timeout_established',
  'net.netfilter.nf_conntrack_tcp_timeout_close_wait',
  'net.netfilter.nf_conntrack_tcp_be_liberal',
  'net.core.somaxconn',
  'fs.inotify.max_user_instances',
  'fs.inotify.max_user_watches',
  'kernel.pid_max',
  'user.max_user_namespaces',
];

function out(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return r.status === 0 ? r.stdout : '';
}

/** iptables-save output without comments and counters, tables that hold only built-in chains accepting everything left out. */
export function normalizeIptables(family: string, dump: string): string[] {
  const tables = new Map<string, string[]>();
  let table = '';
  for (const line of dump.split('\n')) {
    if (!line || line.startsWith('#') || line === 'COMMIT') continue;
    if (line.startsWith('*')) {
      table = line.slice(1);
      tables.set(table, []);
      continue;
    }
    tables.get(table)?.push(line.replace(/ \[\d+:\d+\]$/, ''));
  }
  // A table appears once its kernel module is loaded (a module stays loaded): empty, it changes nothing.
  return [...tables].flatMap(([t, lines]) =>
    lines.every((l) => /^:[A-Z]+ ACCEPT$/.test(l)) ? [] : lines.map((l) => `${family} ${t} ${l}`),
  );
}

function readSysctl(key: string): string | undefined {
  try {
    return readFileSync(join('/proc/sys', ...key.split('.')), 'utf8')
      .trim()
      .replace(/\s+/g, ' ');
  } catch {
    return undefined;
  }
}

function fileState(path: string): string {
  try {
    if (!existsSync(path)) return 'absent';
    if (statSync(path).isDirectory()) return `folder of ${readdirSync(path).sort().join(', ') || 'nothing'}`;
    return createHash('sha256').update(readFileSync(path)).digest('hex').slice(0, 16);
  } catch (err) {
    return `unreadable: ${(err as Error).message}`;
  }
}

function processes(): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const comm = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
      const inPod = /kubepods/.test(readFileSync(`/proc/${pid}/cgroup`, 'utf8'));
      if (DAEMONS.test(comm) || inPod) found.push(`${pid} ${comm}${inPod ? ' (in a pod cgroup)' : ''}`);
    } catch {
      // gone
    }
  }
  return found.sort();
}

function podCgroups(): string[] {
  const root = '/sys/fs/cgroup';
  const found: string[] = [];
  for (const dir of [root, ...(existsSync(root) ? readdirSync(root).map((h) => join(root, h)) : [])]) {
    if (existsSync(join(dir, 'kubepods'))) found.push(join(dir, 'kubepods'));
  }
  return found.sort();
}

export function snapshotHost(): HostState {
  const ifaceSysctls = existsSync('/proc/sys/net/ipv4/conf')
    ? readdirSync('/proc/sys/net/ipv4/conf').flatMap((i) => [`net.ipv4.conf.${i}.route_localnet`, `net.ipv4.conf.${i}.forwarding`])
    : [];
  const sysctls: Record<string, string> = {};
  for (const k of [...new Set([...WATCHED_SYSCTLS, ...MORE_SYSCTLS, ...ifaceSysctls])]) {
    const v = readSysctl(k);
    if (v !== undefined) sysctls[k] = v;
  }
  return {
    iptables: [...normalizeIptables('ipv4', out('iptables-save', [])), ...normalizeIptables('ipv6', out('ip6tables-save', []))].sort(),
    sysctls,
    links: out('ip', ['-o', 'link', 'show'])
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split(': ')[1]!.split('@')[0]!)
      .sort(),
    addresses: out('ip', ['-o', 'addr', 'show'])
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split(/\s+/).slice(1, 4).join(' '))
      .sort(),
    routes: [...out('ip', ['route', 'show', 'table', 'all']).split('\n'), ...out('ip', ['-6', 'route', 'show', 'table', 'all']).split('\n')]
      .filter(Boolean)
      .map((l) => l.replace(/ expires \S+/, '').trim())
      .sort(),
    netns: existsSync('/run/netns') ? readdirSync('/run/netns').sort() : [],
    mounts: [
      ...new Set(
        readFileSync('/proc/self/mountinfo', 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => {
            const f = l.split(' ');
            return `${f[4]} (${f[f.indexOf('-') + 1]})`;
          }),
      ),
    ].sort(),
    ipsets: out('ipset', ['list', '-n']).split('\n').filter(Boolean).sort(),
    cgroups: podCgroups(),
    processes: processes(),
    files: Object.fromEntries(FILES.map((f) => [f, fileState(f)])),
  };
}

/** What differs from `before`, one line each ("+" appeared, "-" disappeared, "~" changed); empty when the same. */
export function hostDiff(before: HostState, after: HostState): string[] {
  const lines: string[] = [];
  const sets: Array<keyof HostState> = ['iptables', 'links', 'addresses', 'routes', 'netns', 'mounts', 'ipsets', 'cgroups', 'processes'];
  for (const key of sets) {
    const b = new Set(before[key] as string[]);
    const a = new Set(after[key] as string[]);
    for (const x of a) if (!b.has(x)) lines.push(`${key} + ${x}`);
    // A process that ended on its own is no change of the node's.
    if (key !== 'processes') for (const x of b) if (!a.has(x)) lines.push(`${key} - ${x}`);
  }
  // A sysctl that appears with a kernel module (br_netfilter) cannot be taken back: only changed values count.
  for (const [k, v] of Object.entries(before.sysctls)) {
    if (after.sysctls[k] !== undefined && after.sysctls[k] !== v) lines.push(`sysctl ~ ${k}: ${v} → ${after.sysctls[k]}`);
  }
  for (const [f, v] of Object.entries(before.files)) if (after.files[f] !== v) lines.push(`file ~ ${f}: ${v} → ${after.files[f]}`);
  return lines;
}
