import { describe, expect, it } from 'vitest';
import { createLogger, logFormat, prettyLines, type LogFormat } from './log.js';
import { logContext, newRequestId, withRequestId } from './log-context.js';

function capture(format: LogFormat) {
  const lines: string[] = [];
  const logger = createLogger({
    name: 'test',
    format,
    destination: { write: (s: string) => lines.push(...s.split('\n').filter(Boolean)) },
  });
  return { logger, lines };
}

const tick = () => new Promise((r) => setTimeout(r, 1));

describe('request ids on log lines', () => {
  it('puts the rid of the work in progress on every line it logs, across awaits, and none outside', async () => {
    const { logger, lines } = capture('json');
    const child = logger.child({ reconciler: 'hierarchy' });
    logger.info('before');
    // Two reconciles interleaved: each line carries its own id.
    await Promise.all(
      ['r1', 'r2'].map((rid) =>
        withRequestId(rid, async () => {
          logger.info({ namespace: rid }, 'start');
          await tick();
          child.warn({ namespace: rid }, 'after an await, from a child logger');
          await tick();
          logger.info({ namespace: rid }, 'end');
        }),
      ),
    );
    logger.info('after');
    const records = lines.map((l) => JSON.parse(l) as { msg: string; rid?: string; namespace?: string });
    expect(records[0]).not.toHaveProperty('rid');
    expect(records.at(-1)).not.toHaveProperty('rid');
    const inside = records.slice(1, -1);
    expect(inside).toHaveLength(6);
    for (const r of inside) expect(r.rid).toBe(r.namespace);
  });

  it('makes ids that differ', () => {
    const ids = new Set(Array.from({ length: 1000 }, newRequestId));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}$/);
  });

  it('has no context outside any work', () => {
    expect(logContext()).toEqual({});
    expect(withRequestId('x', () => logContext())).toEqual({ rid: 'x' });
  });
});

describe('log format', () => {
  it('is pretty at a terminal, JSON to a file or a pipe, and HNC_LOG_FORMAT decides when set', () => {
    expect(logFormat({ toFile: false, isTTY: true })).toBe('pretty');
    expect(logFormat({ toFile: false, isTTY: false })).toBe('json');
    expect(logFormat({ toFile: true, isTTY: true })).toBe('json');
    expect(logFormat({ env: 'json', toFile: false, isTTY: true })).toBe('json');
    expect(logFormat({ env: 'pretty', toFile: true, isTTY: false })).toBe('pretty');
    expect(() => logFormat({ env: 'yaml', toFile: false, isTTY: true })).toThrow('HNC_LOG_FORMAT must be json or pretty, not "yaml"');
  });

  it('prints one readable line per record: time of day, level, name, message, then the fields', () => {
    const json = JSON.stringify({
      level: 40,
      time: '2026-12-01T12:00:01.234Z',
      name: 'hnc',
      rid: '0a1b2c3d',
      msg: 'reconcile failed; will retry',
      namespace: 'team-a',
      err: 'the server answered 409 Conflict',
      counts: { create: 1 },
    });
    expect(prettyLines(`${json}\n${json}\n`, false)).toBe(
      '12:00:01.234 WARN  hnc: reconcile failed; will retry rid=0a1b2c3d namespace=team-a err="the server answered 409 Conflict" counts={"create":1}\n'.repeat(
        2,
      ),
    );
  });

  it('passes a line that is not JSON as it is', () => {
    expect(prettyLines('not json\n', false)).toBe('not json\n');
  });

  it('writes pretty lines with the rid when asked', () => {
    const { logger, lines } = capture('pretty');
    withRequestId('feedbeef', () => logger.info({ namespace: 'a' }, 'updated namespace metadata'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}test: updated namespace metadata rid=feedbeef namespace=a$/);
  });
});
