// Every flag of every command, in every way kubectl users type it (cobra/pflag's forms): parsed to
// the right value, with the positional arguments intact, wherever it stands; and every global
// flag reaches the connection.
import { describe, expect, it } from 'vitest';
import type { GlobalFlags } from './global-flags.js';
import { GLOBAL_FLAGS } from './global-flags.js';
import type { CommandSpec } from './command.js';
import type { FlagSpec, FlagValue } from './flag-spec.js';
import { parseCommandLine } from './parse.js';
import { ROOT_COMMAND, runCli } from '../program.js';
import { captureIo } from '../io.js';
import { CliError } from '../errors.js';

/** Every command that runs, with its path. */
function leaves(cmd: CommandSpec, path: CommandSpec[] = []): CommandSpec[][] {
  if (cmd.run) return [path];
  return (cmd.subcommands ?? []).flatMap((c) => leaves(c, [...path, c]));
}

/** Arguments (and flags) each command needs to get as far as connecting. */
const NEEDS: Record<string, string[]> = {
  access: ['team'],
  'config describe': [],
  'config set-resource': ['secrets', '--mode', 'Propagate'],
  'config delete-type': [],
  create: ['dev', '-n', 'parent'],
  delete: ['dev'],
  describe: ['team'],
  get: ['secrets'],
  hrq: [],
  migrate: ['--check'],
  set: ['team'],
  tree: ['team'],
  version: [],
};

const sample = (f: FlagSpec): string =>
  f.choices?.[0] ??
  (
    {
      object: 'role/admin',
      mode: 'Remove',
      labels: 'k=v',
      annotations: 'k=v',
      'request-timeout': '7s',
      subject: 'user:alice',
      'dry-run': 'server',
      v: '4',
    } as Record<string, string>
  )[f.name] ??
  'v-1';

/** The ways to write a flag, each with the value it must parse to. */
function forms(f: FlagSpec): Array<{ how: string; argv: string[]; value: FlagValue }> {
  if (f.kind === 'bool') {
    const out = [
      { how: `--${f.name}`, argv: [`--${f.name}`], value: true },
      { how: `--${f.name}=true`, argv: [`--${f.name}=true`], value: true },
      { how: `--${f.name}=false`, argv: [`--${f.name}=false`], value: false },
    ];
    if (f.short)
      out.push(
        { how: `-${f.short}`, argv: [`-${f.short}`], value: true },
        { how: `-${f.short}=false`, argv: [`-${f.short}=false`], value: false },
      );
    return out;
  }
  const v = sample(f);
  const value = f.kind === 'array' ? [v] : v;
  if (f.noOptValue !== undefined) {
    // pflag's NoOptDefVal: alone it has that value, and never takes the next word.
    return [
      { how: `--${f.name}`, argv: [`--${f.name}`], value: f.noOptValue },
      { how: `--${f.name}=V`, argv: [`--${f.name}=${v}`], value },
    ];
  }
  const out = [
    { how: `--${f.name} V`, argv: [`--${f.name}`, v], value },
    { how: `--${f.name}=V`, argv: [`--${f.name}=${v}`], value },
  ];
  if (f.short) {
    out.push(
      { how: `-${f.short} V`, argv: [`-${f.short}`, v], value },
      { how: `-${f.short}V`, argv: [`-${f.short}${v}`], value },
      { how: `-${f.short}=V`, argv: [`-${f.short}=${v}`], value },
    );
  }
  return out;
}

const camel = (name: string): string => name.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());

const rows = leaves(ROOT_COMMAND).flatMap((path) => {
  const cmd = path[path.length - 1] as CommandSpec;
  const words = path.map((c) => c.name);
  const key = words.join(' ');
  const needs = NEEDS[key];
  if (!needs) throw new Error(`the table misses the command "${key}"`);
  const positional = needs.filter((a, i) => !a.startsWith('-') && !needs[i - 1]?.startsWith('-'));
  // A flag the command needs anyway is left out of `needs` while it is the one tested.
  const without = (f: FlagSpec): string[] => {
    const i = needs.findIndex((a) => a === `--${f.name}` || (f.short !== undefined && a === `-${f.short}`));
    return i < 0 ? needs : [...needs.slice(0, i), ...needs.slice(i + 2)];
  };
  return [...(cmd.flags ?? []), ...GLOBAL_FLAGS].flatMap((f) =>
    forms(f).map((form) => ({ key, words, needs: without(f), positional, flag: f, ...form, global: GLOBAL_FLAGS.includes(f) })),
  );
});

describe('every flag of every command', () => {
  it('covers every command', () => {
    expect(new Set(rows.map((r) => r.key))).toEqual(new Set(Object.keys(NEEDS)));
  });

  it.each(rows.map((r) => [`${r.key} ${r.how}`, r] as const))('%s', (_name, r) => {
    const places: Array<[string, string[]]> = [
      ['after the arguments', [...r.words, ...r.needs, ...r.argv]],
      ['before the arguments', [...r.words, ...r.argv, ...r.needs]],
    ];
    if (r.global) places.push(['before the command', [...r.argv, ...r.words, ...r.needs]]);
    for (const [where, argv] of places) {
      const parsed = parseCommandLine(argv, ROOT_COMMAND, GLOBAL_FLAGS);
      expect(
        parsed.path.map((c) => c.name),
        where,
      ).toEqual(r.words);
      expect(parsed.args, where).toEqual(r.positional);
      expect(parsed.flags[r.flag.name], `${r.how} ${where}`).toEqual(r.value);
    }
  });
});

describe('every global flag reaches the connection', () => {
  const globalRows = rows.filter((r) => r.global && r.key !== 'version' && !r.how.endsWith('=false'));
  it.each(globalRows.map((r) => [`${r.key} ${r.how}`, r] as const))('%s', async (_name, r) => {
    const seen: GlobalFlags[] = [];
    const argv = [...r.argv, ...r.words, ...r.needs];
    // --as-group and --as-uid need --as.
    if (r.flag.name === 'as-group' || r.flag.name === 'as-uid') argv.push('--as', 'someone');
    const io = captureIo();
    const code = await runCli(argv, {
      io,
      connect: (flags) => {
        seen.push(flags);
        throw new CliError('Error: stop here');
      },
    });
    expect([code, io.stderr]).toEqual([1, 'Error: stop here\n']);
    const got = (seen[0] as Record<string, unknown> | undefined)?.[camel(r.flag.name)];
    // The log level reaches it as a number.
    expect(got).toEqual(r.flag.name === 'v' ? Number(r.value) : r.value);
  });
});
