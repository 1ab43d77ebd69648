// Structured logs (pino). Level from HNC_LOG_LEVEL (default info); HNC_LOG_FILE sends them to a file.
import pino, { type Logger } from 'pino';

export type { Logger } from 'pino';

export function createLogger(opts: { name?: string; level?: string; file?: string } = {}): Logger {
  const level = opts.level ?? process.env.HNC_LOG_LEVEL ?? 'info';
  const file = opts.file ?? process.env.HNC_LOG_FILE;
  const dest = file ? pino.destination({ dest: file, sync: false, mkdir: true }) : pino.destination(2);
  return pino({ name: opts.name ?? 'hnc', level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime }, dest);
}
