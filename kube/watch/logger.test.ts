import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { noopLogger } from './logger.js';
import type { Logger } from './logger.js';

describe('Logger', () => {
  it('accepts a pino logger as is', () => {
    // Compiles only if pino fits the interface; the call checks it works at run time too.
    const log: Logger = pino({ level: 'silent' });
    expect(() => log.error({ err: new Error('x') }, 'message')).not.toThrow();
    expect(() => noopLogger.warn({}, 'ignored')).not.toThrow();
  });
});
