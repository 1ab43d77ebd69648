// Parsing of flag values; pure.
import type { MetaKVP } from '../core/api/index.js';
import { CliError } from './errors.js';

/**
 * kubectl's `--request-timeout`: "0" (no timeout), a bare number of seconds, or a Go-style
 * duration such as "500ms", "5s", "1m30s". Returns milliseconds.
 */
export function parseRequestTimeout(value: string): number {
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const unit: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/gy;
  let total = 0;
  let end = 0;
  for (let m = re.exec(v); m; m = re.exec(v)) {
    total += Number(m[1]) * (unit[m[2] ?? ''] ?? 0);
    end = re.lastIndex;
  }
  if (v === '' || end !== v.length) {
    throw new CliError(`Error: invalid argument "${value}" for "--request-timeout": use a duration such as 5s, 1m or 0 for none`);
  }
  return Math.round(total);
}

/**
 * pflag's StringToString as HNC's `create -l/-a` use it: each occurrence is one or more
 * `key=value` pairs separated by commas. Returns the pairs sorted by key, later values winning.
 */
export function parseKeyValues(values: readonly string[], flag: string): MetaKVP[] {
  const out = new Map<string, string>();
  for (const value of values) {
    for (const pair of value.split(',')) {
      if (pair === '') continue;
      const eq = pair.indexOf('=');
      if (eq <= 0) throw new CliError(`Error: invalid argument "${value}" for "${flag}": ${pair} must be formatted as key=value`);
      out.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
  }
  return [...out.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, value]) => ({ key, value }));
}
