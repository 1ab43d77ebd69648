import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger, logFormat, prettyLines, type LogFormat } from './log.js';
import { newRequestId } from './log-context.js';

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

describe('request ids', () => {
  it('makes ids that differ: 8 hex digits, none twice, not alike one after another', () => {
    const ids = Array.from({ length: 100_000 }, newRequestId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids.slice(0, 1000)) expect(id).toMatch(/^[0-9a-f]{8}$/);
    // Consecutive ids differ in more than their last digits (a plain counter would share 6 or 7).
    const shared = (a: string, b: string) => [...a].findIndex((c, i) => c !== b[i]);
    const alike = ids.slice(1, 1000).filter((id, i) => shared(id, ids[i]!) >= 4).length;
    expect(alike).toBeLessThan(10);
  });

  it('is a field the caller passes, on that line only: the logger adds no context of its own', async () => {
    const { logger, lines } = capture('json');
    const child = logger.child({ reconciler: 'hierarchy' });
    await Promise.all(
      ['r1', 'r2'].map(async (rid) => {
        child.info({ rid, namespace: rid }, 'start');
        await tick();
        logger.info('unrelated, meanwhile');
        child.info({ rid, namespace: rid }, 'end');
      }),
    );
    const records = lines.map((l) => JSON.parse(l) as { msg: string; rid?: string; namespace?: string; reconciler?: string });
    expect(records.filter((r) => r.rid !== undefined).map((r) => [r.rid, r.namespace, r.reconciler])).toEqual([
      ['r1', 'r1', 'hierarchy'],
      ['r2', 'r2', 'hierarchy'],
      ['r1', 'r1', 'hierarchy'],
      ['r2', 'r2', 'hierarchy'],
    ]);
    expect(records.filter((r) => r.msg === 'unrelated, meanwhile').every((r) => !('rid' in r))).toBe(true);
  });
});

describe('the rid without AsyncLocalStorage', () => {
  it('is not carried by async hooks anywhere in the production code: on Node 20 they hook every promise of the process', () => {
    const root = join(import.meta.dirname, '..');
    const offenders: string[] = [];
    for (const dir of ['core', 'kube', 'controller', 'webhooks', 'cmd', 'kubectl-plugin']) {
      for (const f of readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })) {
        if (!f.endsWith('.ts') || f.endsWith('.test.ts')) continue;
        const code = readFileSync(join(root, dir, f), 'utf8');
        if (/from '(node:)?async_hooks'|new AsyncLocalStorage\b|createHook\(/.test(code)) offenders.push(`${dir}/${f}`);
      }
    }
    expect(offenders).toEqual([]);
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
    logger.info({ rid: 'feedbeef', namespace: 'a' }, 'updated namespace metadata');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}test: updated namespace metadata rid=feedbeef namespace=a$/);
  });
});
