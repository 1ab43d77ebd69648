// Structured logs (pino). Level from HNC_LOG_LEVEL (default info); HNC_LOG_FILE sends them to a file.
// Every line written for one reconcile or one admission review carries its id, `rid`, as a field
// its code passes (kube/log-context.ts). Lines are JSON, or, when they go to a terminal, one readable line each
// (HNC_LOG_FORMAT=json|pretty overrides).
//
// JSON lines are buffered (written every 4 KB, and at least once a second): a propagation pass
// logs a line per copy, and one write call per line cost as much CPU as planning the copies. pino
// flushes the buffer synchronously when the process exits.
import { mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import pino, { type Logger } from 'pino';
import pc from 'picocolors';

export type { Logger } from 'pino';

const FLUSH_EVERY_MS = 1000;

export type LogFormat = 'json' | 'pretty';

export interface LoggerOptions {
  name?: string;
  level?: string;
  file?: string;
  format?: LogFormat;
  /** Where lines go instead of the file or stderr (tests). */
  destination?: { write(line: string): unknown };
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  const level = opts.level ?? process.env.HNC_LOG_LEVEL ?? 'info';
  const file = opts.file ?? process.env.HNC_LOG_FILE;
  const format = opts.format ?? logFormat({ env: process.env.HNC_LOG_FORMAT, toFile: !!file, isTTY: process.stderr.isTTY === true });
  const options = {
    name: opts.name ?? 'hnc',
    level,
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  if (format === 'pretty') {
    const out = opts.destination ?? process.stderr;
    const color = !opts.destination && pc.isColorSupported;
    return pino(options, { write: (chunk: string) => out.write(prettyLines(chunk, color)) });
  }
  if (opts.destination) return pino(options, opts.destination);
  // The file is opened here, synchronously: a destination still opening when the process exits
  // (a start-up error) would make pino's exit flush throw "sonic boom is not ready yet".
  let fd = 2;
  if (file) {
    mkdirSync(dirname(file), { recursive: true });
    fd = openSync(file, 'a');
  }
  const dest = pino.destination({ dest: fd, sync: false, minLength: 4096 });
  setInterval(() => {
    try {
      dest.flush();
    } catch {
      // Destroyed (the process is ending) or not yet open: the next tick or pino's exit flush writes it.
    }
  }, FLUSH_EVERY_MS).unref();
  return pino(options, dest);
}

/** JSON for files and pipes (log collectors), pretty for a person at a terminal; HNC_LOG_FORMAT decides if set. */
export function logFormat(where: { env?: string; toFile: boolean; isTTY: boolean }): LogFormat {
  if (where.env === 'json' || where.env === 'pretty') return where.env;
  if (where.env) throw new Error(`HNC_LOG_FORMAT must be json or pretty, not ${JSON.stringify(where.env)}`);
  return !where.toFile && where.isTTY ? 'pretty' : 'json';
}

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

/**
 * pino's JSON lines as one readable line each: `12:00:01.234 INFO  name: message key=value ...`
 * (the time of day, UTC). A line that is not JSON passes as it is.
 */
export function prettyLines(chunk: string, color: boolean): string {
  return chunk
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => `${prettyLine(l, color)}\n`)
    .join('');
}

function prettyLine(line: string, color: boolean): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const { level, time, name, msg, ...fields } = rec;
  const lvl = (LEVELS[level as number] ?? String(level)).padEnd(5);
  const paint = !color
    ? (s: string) => s
    : (level as number) >= 50
      ? pc.red
      : (level as number) >= 40
        ? pc.yellow
        : (level as number) <= 20
          ? pc.gray
          : pc.green;
  const dim = color ? pc.dim : (s: string) => s;
  const clock = typeof time === 'string' ? time.slice(11, 23) : '';
  const kv = Object.entries(fields).map(([k, v]) => `${dim(`${k}=`)}${fieldText(v)}`);
  return [dim(clock), paint(lvl), `${name ? `${String(name)}: ` : ''}${typeof msg === 'string' ? msg : ''}`, ...kv]
    .filter(Boolean)
    .join(' ');
}

function fieldText(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  return JSON.stringify(v) ?? String(v);
}
