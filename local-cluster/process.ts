// One control-plane component as a child process: its log kept in a file, its pid recorded, and
// (through setpriv's parent-death signal) killed with us if we die without stopping it.
import { spawn, type ChildProcess, execFileSync } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync, writeFileSync, rmSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** One end of a component's process: how, when, and whether we asked for it (stop()). */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  at: number;
  expected: boolean;
}

/** How many ends a component keeps for its report. */
const EXITS_KEPT = 5;

const hasSetpriv = (() => {
  try {
    execFileSync('setpriv', ['--help'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

export class Component {
  readonly logFile: string;
  private child?: ChildProcess;
  private exitInfo?: { code: number | null; signal: NodeJS.Signals | null };
  private exited?: Promise<void>;
  private stopping = false;
  private readonly ends: Exit[] = [];
  /** Called when the process ends without stop() having been called: a crash or a kill. */
  onUnexpectedExit?: (exit: { code: number | null; signal: NodeJS.Signals | null }) => void;

  constructor(
    readonly name: string,
    private readonly bin: string,
    private readonly args: string[],
    private readonly dirs: { logs: string; pids: string },
  ) {
    this.logFile = join(dirs.logs, `${name}.log`);
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Set when the process has ended; a component that ends while we wait for it is a failed start. */
  get exit(): { code: number | null; signal: NodeJS.Signals | null } | undefined {
    return this.exitInfo;
  }

  /** The last few ends of this component's processes, oldest first. */
  get exits(): readonly Exit[] {
    return this.ends;
  }

  start(): void {
    const log = createWriteStream(this.logFile, { flags: 'a' });
    const [cmd, argv] = hasSetpriv ? ['setpriv', ['--pdeathsig', 'SIGKILL', '--', this.bin, ...this.args]] : [this.bin, this.args];
    this.exitInfo = undefined;
    this.stopping = false;
    const child = spawn(cmd, argv, {
      // A process group of its own: a terminal's Ctrl-C reaches only us, and we stop it in order
      // (it would otherwise exit at once, and look like a crash). It still dies with us (pdeathsig).
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost' },
    });
    child.stdout!.pipe(log, { end: false });
    child.stderr!.pipe(log, { end: false });
    this.child = child;
    this.exited = new Promise((resolve) => {
      child.on('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        this.ends.push({ code, signal, at: Date.now(), expected: this.stopping });
        if (this.ends.length > EXITS_KEPT) this.ends.shift();
        resolve();
        if (!this.stopping && this.child === child) this.onUnexpectedExit?.(this.exitInfo);
      });
      child.on('error', (err) => {
        log.write(`failed to start ${this.bin}: ${err.message}\n`);
        this.exitInfo = { code: -1, signal: null };
        this.ends.push({ ...this.exitInfo, at: Date.now(), expected: false });
        if (this.ends.length > EXITS_KEPT) this.ends.shift();
        resolve();
      });
    });
    child.on('close', () => log.end());
    if (child.pid) writeFileSync(join(this.dirs.pids, `${this.name}.pid`), String(child.pid));
  }

  /** SIGKILL now, without waiting (a process about to exit). */
  kill(): void {
    this.stopping = true;
    if (this.child && !this.exitInfo) this.child.kill('SIGKILL');
  }

  /** SIGTERM, then SIGKILL after the grace period. */
  async stop(graceMs = 10_000): Promise<void> {
    const child = this.child;
    this.stopping = true;
    if (!child || this.exitInfo) return this.cleanupPid();
    child.kill(graceMs > 0 ? 'SIGTERM' : 'SIGKILL');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
    this.cleanupPid();
  }

  tail(lines = 30): string {
    if (!existsSync(this.logFile)) return '(no log)';
    const all = readFileSync(this.logFile, 'utf8').trimEnd().split('\n');
    return all.slice(-lines).join('\n');
  }

  private cleanupPid(): void {
    rmSync(join(this.dirs.pids, `${this.name}.pid`), { force: true });
  }
}

/**
 * Kills processes left by an earlier run that crashed, but only those whose command line names
 * this state folder: a pid file alone could point at an unrelated process by now.
 */
export function reapStale(pidsDir: string, stateDir: string): void {
  if (!existsSync(pidsDir)) return;
  for (const f of readdirSync(pidsDir)) {
    const pid = Number(readFileSync(join(pidsDir, f), 'utf8'));
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (cmdline.includes(stateDir)) process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
    rmSync(join(pidsDir, f), { force: true });
  }
}

/** A supervisor's restarts: at most `max` within any `windowMs`. */
export class RestartBudget {
  private readonly times: number[] = [];

  constructor(
    readonly max: number,
    readonly windowMs: number,
  ) {}

  /** Takes one restart at `now` if the window has one left; false: give up. */
  take(now: number): boolean {
    while (this.times.length && now - this.times[0]! > this.windowMs) this.times.shift();
    if (this.times.length >= this.max) return false;
    this.times.push(now);
    return true;
  }
}

/** What a supervisor knows of one component (LocalControlPlane.supervision). */
export interface ComponentReport {
  name: string;
  pid?: number;
  /**
   * up: its process runs and passed the readiness check of its last start; starting: it runs but
   * has not passed it yet; down: its process has ended (and was not started again).
   */
  state: 'up' | 'starting' | 'down';
  restarts: number;
  exits: readonly Exit[];
  /** Why its last restart failed, if it did. */
  restartError?: string;
  logFile: string;
  tail: string;
}

const describeExit = (e: Exit) =>
  `${e.signal ? `signal ${e.signal}` : `code ${e.code}`} at ${new Date(e.at).toISOString().slice(11, 23)}${e.expected ? ' (stopped)' : ''}`;

/** The report as lines a failing test or a stuck `npm start` can print. */
export function formatReport(r: { restartCount: number; failure?: string; components: readonly ComponentReport[] }): string {
  const lines = [`control plane supervision: ${r.restartCount} restart(s)${r.failure ? `; gave up: ${r.failure}` : ''}`];
  for (const c of r.components) {
    const exits = c.exits.length ? `; exits: ${c.exits.map(describeExit).join(', ')}` : '';
    lines.push(`- ${c.name} (pid ${c.pid ?? 'none'}): ${c.state}; restarted ${c.restarts} time(s)${exits}`);
    if (c.restartError) lines.push(`  last restart failed: ${c.restartError}`);
    if (c.state !== 'up' || c.restarts > 0 || c.restartError) {
      lines.push(`  last lines of ${c.logFile}:`, ...c.tail.split('\n').map((l) => `    ${l}`));
    }
  }
  return lines.join('\n');
}
