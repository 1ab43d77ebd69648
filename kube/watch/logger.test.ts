import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { noopLogger } from './logger.js';
import type { Logger } from './logger.js';

/** A pino logger as the manager makes one (JSON lines), writing into `lines`. */
function recording(level: string): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const log: Logger = pino({ level }, { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) });
  return { log, lines };
}

describe('Logger', () => {
  it('takes a pino logger as is: the object becomes the line fields, the message its msg, an Error its err', () => {
    const { log, lines } = recording('info');
    log.warn({ namespace: 'a', reason: 'Conflict' }, 'could not record an event');
    log.error({ err: new Error('boom') }, 'watch failed');
    log.debug({ skipped: true }, 'below the level');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ level: 40, namespace: 'a', reason: 'Conflict', msg: 'could not record an event' });
    expect(lines[1]).toMatchObject({ level: 50, msg: 'watch failed', err: { type: 'Error', message: 'boom' } });
    expect((lines[1]!.err as { stack?: string }).stack).toContain('boom');
  });

  it('the default (noopLogger) has every level and records nothing', () => {
    // Its methods are the same do-nothing function: nothing kept, nothing returned.
    expect(new Set([noopLogger.debug, noopLogger.warn, noopLogger.error]).size).toBe(1);
    expect(noopLogger.warn({ x: 1 }, 'ignored')).toBeUndefined();
  });
});
