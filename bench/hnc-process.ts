// Runs bench/hnc-child.ts as a child process and talks to it. The child is bundled with esbuild
// first (node_modules left external) and run by plain node, as a built HNC would run: no
// TypeScript loader in its memory or CPU figures. If bundling fails it falls back to tsx.
import { execFileSync, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChildCall, ChildStats, StartRequest } from './hnc-child.js';
import { shippedNodeEnv, shippedNodeFlags } from './node-flags.js';
import type { GeneratorStats, LoadGeneratorCall, LoadGeneratorData } from './load-generator.js';
import type { Load, LatencyResult } from './webhook-load.js';

const HERE = dirname(fileURLToPath(import.meta.url));
// Under node_modules/.cache: never linted nor committed, and the bundle's imports resolve from there.
// One folder per benchmark process, so that a run never picks up another run's build; removed on exit.
const BUILD_DIR = join(HERE, '..', 'node_modules', '.cache', 'hnc-bench', String(process.pid));
process.on('exit', () => rmSync(BUILD_DIR, { recursive: true, force: true }));
const built = new Map<string, Promise<{ file: string; execArgv: string[] }>>();

/** Bundles bench/<name>.ts once per benchmark run (esbuild, node_modules external); tsx if that fails. */
export function bundle(name: string): Promise<{ file: string; execArgv: string[] }> {
  let b = built.get(name);
  if (!b) {
    b = (async () => {
      try {
        const esbuild = await import('esbuild');
        mkdirSync(BUILD_DIR, { recursive: true });
        const outfile = join(BUILD_DIR, `${name}.mjs`);
        // HNC's admission worker is started by file, beside its starter's: bundled beside the child (webhooks/admission-thread.ts).
        const worker = name === 'hnc-child' ? [{ in: join(HERE, '..', 'webhooks', 'admission-worker.ts'), out: 'admission-worker' }] : [];
        await esbuild.build({
          entryPoints: [{ in: join(HERE, `${name}.ts`), out: name }, ...worker],
          outdir: BUILD_DIR,
          outExtension: { '.js': '.mjs' },
          bundle: true,
          platform: 'node',
          format: 'esm',
          target: 'node26',
          packages: 'external',
          sourcemap: 'linked',
          logLevel: 'error',
        });
        return { file: outfile, execArgv: ['--enable-source-maps'] };
      } catch (err) {
        process.stderr.write(`bench: could not bundle bench/${name}.ts (${(err as Error).message}); running it with tsx\n`);
        return { file: join(HERE, `${name}.ts`), execArgv: ['--import', 'tsx'] };
      }
    })();
    built.set(name, b);
  }
  return b;
}

/** The HNC process runs with the image's node flags and allocator settings (bench/node-flags.ts). */
export const HNC_NODE_FLAGS = shippedNodeFlags();
export const HNC_NODE_ENV = shippedNodeEnv();

export const buildChild = () => Promise.all([bundle('hnc-child'), bundle('load-generator'), bundle('review-floor-server')]);

const HAS_SETPRIV = (() => {
  try {
    execFileSync('setpriv', ['--help'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** Every HNC child still running, so that an interrupted run can end them. */
const live = new Set<ChildProcess>();
export function killAllChildren(): void {
  for (const c of live) c.kill('SIGKILL');
}

/**
 * Starts one of the benchmark's child processes: through setpriv's parent-death signal (a child
 * busy on its one thread would not notice the benchmark's end, and must not outlive it), tracked
 * so that an interrupted run can end it.
 */
export function spawnChild(argv: string[], options: SpawnOptions): ChildProcess {
  const [cmd, args] = HAS_SETPRIV ? ['setpriv', ['--pdeathsig', 'SIGKILL', '--', process.execPath, ...argv]] : [process.execPath, argv];
  const child = spawn(cmd, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], ...options });
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** Ends a child by closing its IPC channel (each exits on disconnect), killing it if it has not gone after `graceMs`. */
export async function endChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((r) => child.once('exit', () => r()));
  child.disconnect();
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await gone;
  clearTimeout(timer);
}

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void };

/** The direct webhook load, run by a process of its own (see load-generator.ts). */
export class LoadGenerator {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private exited = false;
  private constructor(private readonly child: ChildProcess) {
    child.on('message', (msg: { id: number; ok: boolean; result?: unknown; error?: string }) => {
      const p = this.pending.get(msg.id);
      this.pending.delete(msg.id);
      if (msg.ok) p?.resolve(msg.result);
      else p?.reject(new Error(`load generator: ${msg.error}`));
    });
    child.on('exit', (code, signal) => {
      this.exited = true;
      for (const p of this.pending.values()) p.reject(new Error(`the load generator exited (code ${code}, signal ${signal})`));
      this.pending.clear();
    });
  }

  /** Its process id (for its CPU). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  static async start(data: LoadGeneratorData): Promise<LoadGenerator> {
    const { file, execArgv } = await bundle('load-generator');
    // Structured-clone IPC for the samples.
    const child = spawnChild([...execArgv, file], { serialization: 'advanced' });
    const g = new LoadGenerator(child);
    await g.call({ type: 'init', data });
    return g;
  }

  private call<T>(req: LoadGeneratorCall): Promise<T> {
    if (this.exited) return Promise.reject(new Error('the load generator has exited'));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: (v) => resolve(v as T), reject });
      this.child.send({ ...req, id });
    });
  }

  /** Opens the pool's connections and warms both sides' code (not measured). */
  warm(count: number): Promise<LatencyResult & GeneratorStats> {
    return this.call({ type: 'warm', count });
  }

  run(load: Load, count: number, keepSamples = false): Promise<LatencyResult & GeneratorStats> {
    return this.call({ type: 'run', load, count, keepSamples });
  }

  async stop(): Promise<void> {
    if (!this.exited) await endChild(this.child, 5_000);
  }
}

export interface StartResult extends ChildStats {
  startedMs: number;
}

/** What the scenario drives: our child (HncProcess) or HNC's Go manager (bench/hnc-go.ts, `--controller hnc-go`). */
export interface Controller {
  readonly pid: number | undefined;
  /** The process before HNC started (nothing for the Go manager). */
  readonly baseline?: ChildStats;
  start(start: StartRequest): Promise<StartResult>;
  idle(timeoutMs?: number): Promise<ChildStats>;
  stats(resetEventLoop?: boolean): Promise<ChildStats>;
  collected(): Promise<ChildStats>;
  heapSnapshot(file: string): Promise<{ file: string }>;
  stop(graceMs?: number): Promise<ChildStats | undefined>;
  kill(): Promise<void>;
}

export class HncProcess implements Controller {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private exited = false;
  readonly ready: Promise<ChildStats>;
  /** Resident memory of the bare process (node and the loaded code, before HNC starts). */
  baseline?: ChildStats;

  private constructor(private readonly child: ChildProcess) {
    this.ready = new Promise<ChildStats>((resolve, reject) => {
      this.pending.set(0, { resolve: (v) => resolve(v as ChildStats), reject });
    });
    child.on('message', (msg: { id: number; ok: boolean; result?: unknown; error?: string }) => {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      if (msg.ok) p.resolve(msg.result);
      else p.reject(new Error(`HNC child: ${msg.error}`));
    });
    child.on('exit', (code, signal) => {
      this.exited = true;
      for (const p of this.pending.values()) p.reject(new Error(`the HNC child exited (code ${code}, signal ${signal})`));
      this.pending.clear();
    });
  }

  /** Forks the child and waits until it has loaded its code (not started HNC). */
  static async spawn(opts: { cpuProfileDir?: string } = {}): Promise<HncProcess> {
    const { file, execArgv } = await bundle('hnc-child');
    const extra = opts.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${opts.cpuProfileDir}`] : [];
    // Source maps are in the image's flags too; the bundle's are given by execArgv.
    const argv = [...new Set([...execArgv, ...HNC_NODE_FLAGS]), '--expose-gc', ...extra, file];
    const child = spawnChild(argv, { env: { ...process.env, ...HNC_NODE_ENV } });
    const p = new HncProcess(child);
    p.baseline = await p.ready;
    return p;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  private call<T>(req: ChildCall): Promise<T> {
    if (this.exited) return Promise.reject(new Error('the HNC child has exited'));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: (v) => resolve(v as T), reject });
      this.child.send({ ...req, id });
    });
  }

  start(start: StartRequest): Promise<StartResult> {
    return this.call({ type: 'start', start });
  }

  idle(timeoutMs = 600_000): Promise<ChildStats> {
    return this.call({ type: 'idle', timeoutMs });
  }

  /** Memory, CPU, writes; the event-loop delay since the last reset (and resets it if asked). */
  stats(resetEventLoop = false): Promise<ChildStats> {
    return this.call({ type: 'stats', resetEventLoop });
  }

  /** Memory after a full garbage collection: the live data HNC holds (RSS may stay higher). */
  collected(): Promise<ChildStats> {
    return this.call({ type: 'stats', collect: true });
  }

  /** Writes a V8 heap snapshot of HNC's process to `file`. */
  heapSnapshot(file: string): Promise<{ file: string }> {
    return this.call({ type: 'heap-snapshot', file });
  }

  /** Stops HNC (drains its queues), then ends the process; SIGKILL if it does not go in time. */
  async stop(graceMs = 30_000): Promise<ChildStats | undefined> {
    if (this.exited) return undefined;
    let last: ChildStats | undefined;
    try {
      last = await Promise.race([
        this.call<ChildStats>({ type: 'stop' }),
        new Promise<undefined>((r) => setTimeout(() => r(undefined), graceMs)),
      ]);
    } catch {
      last = undefined;
    }
    await this.kill();
    return last;
  }

  /** Ends the process (SIGTERM, then SIGKILL). Profiles (--cpu-prof) are written on a clean exit only. */
  async kill(): Promise<void> {
    if (!this.exited) await endChild(this.child, 10_000);
  }
}
