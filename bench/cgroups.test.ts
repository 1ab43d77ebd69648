import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CgroupsUnavailable, CpuGroups, EQUAL_SHARES, parseCpus, parseShares, REQUEST_SHARES, unavailableReason } from './cgroups.js';

describe('--cgroup-shares', () => {
  it('reads equal, requests, and group=N over the equal shares; refuses unknown groups and values off the kernel range', () => {
    expect(parseShares(undefined)).toEqual(EQUAL_SHARES);
    expect(parseShares('equal')).toEqual(EQUAL_SHARES);
    expect(parseShares('requests')).toEqual(REQUEST_SHARES);
    expect(parseShares('controller=2048, load=512')).toEqual({ ...EQUAL_SHARES, controller: 2048, load: 512 });
    expect(() => parseShares('apiserver=10')).toThrow(
      '--cgroup-shares: unknown group "apiserver"; choose from control-plane, controller, load, harness',
    );
    expect(() => parseShares('controller=1')).toThrow('--cgroup-shares: controller must be a whole number from 2 to 262144, not "1"');
    expect(() => parseShares('load=')).toThrow('not ""');
  });
});

describe('--cgroup-cpus', () => {
  it('reads group=LIST with + between CPUs, and refuses unknown groups and what is no CPU list', () => {
    expect(parseCpus(undefined)).toEqual({});
    expect(parseCpus('controller=1, control-plane=0+2-3')).toEqual({ controller: '1', 'control-plane': '0,2-3' });
    expect(() => parseCpus('hnc=1')).toThrow('--cgroup-cpus: unknown group "hnc"');
    expect(() => parseCpus('load=first')).toThrow('--cgroup-cpus: load needs a CPU list such as 0, 1-3 or 0+2, not "first"');
  });
});

describe('CPU groups', () => {
  const cleanup: Array<() => void> = [];
  afterEach(() => {
    for (const c of cleanup.splice(0)) c();
  });

  it('says why a folder that is no cgroup v1 cpu hierarchy cannot hold groups', () => {
    const dir = mkdtempSync(join(tmpdir(), 'not-a-cgroup-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    expect(unavailableReason(dir)).toBe(
      `no cgroup v1 cpu controller at ${dir} (cpu.shares and cgroup.procs not found; cgroup v2 is not supported by --cgroups)`,
    );
    expect(() => CpuGroups.create(EQUAL_SHARES, dir)).toThrow(CgroupsUnavailable);
  });

  // On this machine's real hierarchy: where it is writable the groups are made, used and removed;
  // where it is not, creating them fails with the reason (the benchmark then runs flat and says so).
  it('places a process in its group with the shares asked for, and removes the groups with the process moved back', async () => {
    const reason = unavailableReason();
    if (reason !== undefined) {
      expect(() => CpuGroups.create(EQUAL_SHARES)).toThrow(`--cgroups: ${reason}`);
      return;
    }
    const groups = CpuGroups.create({ ...EQUAL_SHARES, controller: 512 });
    cleanup.push(() => groups.remove());
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    cleanup.push(() => child.kill('SIGKILL'));
    await new Promise((r) => child.once('spawn', r));
    expect(groups.groupOf(child.pid!)).toBeUndefined();
    groups.place('controller', child.pid);
    expect(groups.groupOf(child.pid!)).toBe('controller');
    expect(readFileSync(join(groups.dir, 'controller', 'cpu.shares'), 'utf8').trim()).toBe('512');
    expect(readFileSync(join(groups.dir, 'load', 'cpu.shares'), 'utf8').trim()).toBe('1024');
    expect(groups.remove()).toEqual([]);
    expect(existsSync(groups.dir)).toBe(false);
    // Back in the hierarchy's root group, still running.
    expect(groups.groupOf(child.pid!)).toBeUndefined();
    expect(child.exitCode).toBeNull();
    // Placing after removal does nothing (a process started late in the benchmark's exit).
    expect(() => groups.place('load', child.pid)).not.toThrow();
    expect(groups.remove()).toEqual([]);
  });

  it('lets a SCHED_FIFO load generator into its group only with a real-time budget there', async () => {
    if (unavailableReason() !== undefined || process.getuid?.() !== 0) return;
    const groups = CpuGroups.create(EQUAL_SHARES);
    cleanup.push(() => groups.remove());
    const sleeper = async () => {
      const child = spawn('sleep', ['30'], { stdio: 'ignore' });
      cleanup.push(() => child.kill('SIGKILL'));
      await new Promise((r) => child.once('spawn', r));
      groups.place('load', child.pid);
      return child.pid!;
    };
    const fifo = (pid: number) => spawnSync('chrt', ['--fifo', '--pid', '1', String(pid)], { encoding: 'utf8' });
    // A new group's budget is 0: the kernel refuses the policy.
    expect(fifo(await sleeper()).stderr).toContain('Operation not permitted');
    groups.allowRealtime('load', 500_000);
    expect(readFileSync(join(groups.dir, 'load', 'cpu.rt_runtime_us'), 'utf8').trim()).toBe('500000');
    const pid = await sleeper();
    expect(fifo(pid).status).toBe(0);
    expect(spawnSync('chrt', ['--pid', String(pid)], { encoding: 'utf8' }).stdout).toContain('SCHED_FIFO');
    expect(groups.describe()).toContain('load may run real-time 500000 µs per period');
  });

  it('with CPUs asked for, places the process in a cpuset group on those CPUs too, and removes both', async () => {
    const reason = unavailableReason() ?? (existsSync('/sys/fs/cgroup/cpuset/cpuset.cpus') ? undefined : 'no cpuset');
    if (reason !== undefined) {
      expect(() => CpuGroups.create(EQUAL_SHARES, undefined, { controller: '0' })).toThrow(CgroupsUnavailable);
      return;
    }
    const groups = CpuGroups.create(EQUAL_SHARES, undefined, { controller: '0' });
    cleanup.push(() => groups.remove());
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    cleanup.push(() => child.kill('SIGKILL'));
    await new Promise((r) => child.once('spawn', r));
    groups.place('controller', child.pid);
    expect(readFileSync(join(groups.cpuset!.dir, 'controller', 'cpuset.cpus'), 'utf8').trim()).toBe('0');
    expect(readFileSync(join(groups.cpuset!.dir, 'controller', 'cgroup.procs'), 'utf8').split('\n')).toContain(String(child.pid));
    // The kernel's own view: the process may run on CPU 0 only.
    expect(/^Cpus_allowed_list:\s*(\S+)$/m.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1]).toBe('0');
    expect(groups.describe()).toContain('cpuset.cpus control-plane');
    expect(groups.remove()).toEqual([]);
    expect(existsSync(groups.cpuset!.dir)).toBe(false);
  });
});
