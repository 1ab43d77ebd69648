// Structured logs (pino). Level from HNC_LOG_LEVEL (default info); HNC_LOG_FILE sends them to a file.
//
// Lines are buffered (written every 4 KB, and at least once a second): a propagation pass logs a
// line per copy, and one write call per line cost as much CPU as planning the copies. pino flushes
// the buffer synchronously when the process exits.
import pino, { type Logger } from 'pino';

export type { Logger } from 'pino';

const FLUSH_EVERY_MS = 1000;

export function createLogger(opts: { name?: string; level?: string; file?: string } = {}): Logger {
  const level = opts.level ?? process.env.HNC_LOG_LEVEL ?? 'info';
  const file = opts.file ?? process.env.HNC_LOG_FILE;
  const dest = pino.destination({ dest: file ?? 2, sync: false, minLength: 4096, ...(file && { mkdir: true }) });
  setInterval(() => {
    try {
      dest.flush();
    } catch {
      // Destroyed (the process is ending) or not yet open: the next tick or pino's exit flush writes it.
    }
  }, FLUSH_EVERY_MS).unref();
  return pino({ name: opts.name ?? 'hnc', level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime }, dest);
}
