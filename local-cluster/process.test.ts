// Process handling of the local control plane, proven on real child processes.
import { afterEach, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Component, formatReport, reapStale, RestartBudget, type ComponentReport } from './process.js';

const here = dirname(fileURLToPath(import.meta.url));
let dir: string;
const dirs = () => {
  dir = mkdtempSync(join(tmpdir(), 'hnc-proc-'));
  const d = { logs: join(dir, 'logs'), pids: join(dir, 'pids') };
  mkdirSync(d.logs);
  mkdirSync(d.pids);
  return d;
};
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[2]!.startsWith('Z');
  } catch {
    return false;
  }
};
const waitUntil = async (cond: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  return cond();
};

afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('Component', () => {
  it('keeps the log and the pid file, and stops by SIGTERM', async () => {
    const d = dirs();
    const c = new Component('talker', 'sh', ['-c', 'echo hello from talker; exec sleep 60'], d);
    c.start();
    expect(await waitUntil(() => c.tail().includes('hello from talker'))).toBe(true);
    expect(readFileSync(join(d.pids, 'talker.pid'), 'utf8')).toBe(String(c.pid));
    await c.stop(2000);
    expect(c.exit?.signal).toBe('SIGTERM');
    expect(alive(c.pid!)).toBe(false);
    expect(existsSync(join(d.pids, 'talker.pid'))).toBe(false);
  });

  it('falls back to SIGKILL when SIGTERM is ignored', async () => {
    const d = dirs();
    const c = new Component('stubborn', 'sh', ['-c', "trap '' TERM; echo ready; while :; do sleep 1; done"], d);
    c.start();
    expect(await waitUntil(() => c.tail().includes('ready'))).toBe(true);
    await c.stop(300);
    expect(c.exit?.signal).toBe('SIGKILL');
  });

  it('keeps its ends, a kill as unexpected and a stop as expected', async () => {
    const c = new Component('twice', 'sleep', ['60'], dirs());
    c.start();
    process.kill(c.pid!, 'SIGKILL');
    expect(await waitUntil(() => c.exit !== undefined)).toBe(true);
    c.start();
    await c.stop(2000);
    expect(c.exits.map((e) => [e.signal, e.expected])).toEqual([
      ['SIGKILL', false],
      ['SIGTERM', true],
    ]);
  });

  it('reports an early exit with its code', async () => {
    const c = new Component('crasher', 'sh', ['-c', 'echo "listen tcp 127.0.0.1:1: bind: address already in use" >&2; exit 3'], dirs());
    c.start();
    expect(await waitUntil(() => c.exit !== undefined)).toBe(true);
    expect(c.exit?.code).toBe(3);
    expect(c.tail()).toContain('address already in use');
  });

  it('dies with its parent when the parent is killed (no orphans)', async () => {
    const d = dirs();
    // A parent process that starts a Component, prints its pid, then is SIGKILLed by us.
    const script = `import { Component } from ${JSON.stringify(join(here, 'process.ts'))};
      const c = new Component('orphan', 'sleep', ['60'], ${JSON.stringify(d)}); c.start(); console.log(c.pid);`;
    const parent = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script + 'setInterval(()=>{},1000);'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const childPid = await new Promise<number>((resolve) =>
      parent.stdout.once('data', (b: Buffer) => resolve(Number(b.toString().trim()))),
    );
    expect(alive(childPid)).toBe(true);
    parent.kill('SIGKILL');
    expect(await waitUntil(() => !alive(childPid))).toBe(true);
  });

  it('reaps stale children of the same state folder only', async () => {
    const d = dirs();
    const ours = new Component('ours', process.execPath, ['-e', 'setTimeout(() => {}, 60000)', '--', `--state=${dir}`], d);
    ours.start();
    expect(await waitUntil(() => alive(ours.pid!))).toBe(true);
    // A pid file pointing at a process of another state folder is dropped, the process spared.
    const theirs = new Component('theirs', process.execPath, ['-e', 'setTimeout(() => {}, 60000)', '--', '--state=/some/other/state'], d);
    theirs.start();
    expect(await waitUntil(() => alive(theirs.pid!))).toBe(true);
    // A process that would die at once (say, of a bad argument) must not let this test pass.
    await new Promise((r) => setTimeout(r, 200));
    expect([alive(ours.pid!), alive(theirs.pid!)]).toEqual([true, true]);
    reapStale(d.pids, dir);
    expect(await waitUntil(() => !alive(ours.pid!))).toBe(true);
    expect(alive(theirs.pid!)).toBe(true);
    await theirs.stop(0);
  });
});

describe('RestartBudget', () => {
  it('allows max restarts within the window, then refuses until the oldest leaves it', () => {
    const b = new RestartBudget(3, 1000);
    expect([b.take(0), b.take(10), b.take(20), b.take(30)]).toEqual([true, true, true, false]);
    // A refusal takes nothing: the window still holds 0, 10 and 20.
    expect(b.take(1000)).toBe(false);
    expect(b.take(1001)).toBe(true);
    expect(b.take(1002)).toBe(false);
  });
});

describe('formatReport', () => {
  const component = (over: Partial<ComponentReport>): ComponentReport => ({
    name: 'etcd',
    pid: 42,
    state: 'up',
    restarts: 0,
    exits: [],
    logFile: '/state/logs/etcd.log',
    tail: 'line 1\nline 2',
    ...over,
  });

  it('names each component with its state, restarts and exits; log lines only of those that were not simply up', () => {
    const at = Date.UTC(2026, 0, 1, 12, 0, 1, 250);
    const text = formatReport({
      restartCount: 2,
      components: [
        component({ restarts: 1, exits: [{ code: null, signal: 'SIGKILL', at, expected: false }] }),
        component({
          name: 'kube-apiserver',
          pid: 43,
          state: 'starting',
          restarts: 1,
          logFile: '/state/logs/kube-apiserver.log',
          tail: 'dial tcp: connection refused',
        }),
        component({ name: 'kube-controller-manager', pid: 44 }),
      ],
    });
    expect(text.split('\n')).toEqual([
      'control plane supervision: 2 restart(s)',
      '- etcd (pid 42): up; restarted 1 time(s); exits: signal SIGKILL at 12:00:01.250',
      '  last lines of /state/logs/etcd.log:',
      '    line 1',
      '    line 2',
      '- kube-apiserver (pid 43): starting; restarted 1 time(s)',
      '  last lines of /state/logs/kube-apiserver.log:',
      '    dial tcp: connection refused',
      '- kube-controller-manager (pid 44): up; restarted 0 time(s)',
    ]);
  });

  it('says why it gave up, and why a restart failed', () => {
    const text = formatReport({
      restartCount: 3,
      failure: 'etcd exited unexpectedly (code 1) and could not be restarted: etcd exited during start',
      components: [
        component({
          state: 'down',
          restarts: 3,
          restartError: 'etcd exited during start (code 1, signal null); last lines of /state/logs/etcd.log:',
          exits: [{ code: 1, signal: null, at: Date.UTC(2026, 0, 1), expected: false }],
        }),
      ],
    });
    expect(text).toContain('gave up: etcd exited unexpectedly (code 1) and could not be restarted');
    expect(text).toContain('- etcd (pid 42): down; restarted 3 time(s); exits: code 1 at 00:00:00.000');
    expect(text).toContain('  last restart failed: etcd exited during start');
    expect(text).toContain('    line 2');
  });
});

describe('build.sh', () => {
  it('says what is missing, not a stack trace, when Go is not installed', () => {
    const cache = mkdtempSync(join(tmpdir(), 'hnc-nogo-'));
    dir = cache;
    const r = spawnSync('bash', [join(here, 'build.sh')], {
      env: { PATH: '/usr/bin:/bin', HOME: cache, HNC_CACHE_DIR: cache },
      encoding: 'utf8',
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('Go is not installed');
    expect(r.stderr).toContain('KUBEBUILDER_ASSETS');
  });
});
