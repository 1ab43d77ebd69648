// The command line as cobra and pflag read it, as HNC's plugin does; pure.
//
// * The subcommand is found first, skipping flags wherever they are (so global flags may come
//   before it: `kubectl hns --namespace X get secret`); then every flag is parsed with the
//   command's own flags and the global ones, before or after positional arguments.
// * Long flags: `--name value`, `--name=value`; bool flags `--name`, `--name=true|false` (and
//   Go's other spellings: 1, t, T, TRUE, True, 0, f, F, FALSE, False), never the next argument.
// * Short flags: `-p value`, `-pvalue`, `-p=value`, bool groups such as `-ra`, and a group ending
//   in a flag that takes a value (`-ap PARENT`).
// * A string flag with a value for its bare form (pflag's NoOptDefVal, as kubectl's `--dry-run`)
//   takes a value only as `--name=value`.
// * `--` ends the flags; `-` alone is an argument. `-h/--help` asks for help.
import type { CommandSpec } from './command.js';
import type { FlagSpec, FlagValue } from './flag-spec.js';
import { CliError } from '../errors.js';

export interface Parsed {
  /** The commands named, outermost first (the root excluded). */
  path: CommandSpec[];
  args: string[];
  flags: Record<string, FlagValue>;
  help: boolean;
  version: boolean;
}

const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

export const flagLabel = (f: FlagSpec): string => (f.short ? `-${f.short}, --${f.name}` : `--${f.name}`);

function parseBool(f: FlagSpec, value: string): boolean {
  if (TRUE.has(value)) return true;
  if (FALSE.has(value)) return false;
  throw new CliError(`Error: invalid argument "${value}" for "${flagLabel(f)}" flag: use true or false`);
}

/** Finds a flag by long or short name among the command's and the global ones. */
class FlagSet {
  constructor(private readonly specs: readonly FlagSpec[]) {}
  long(name: string): FlagSpec | undefined {
    return this.specs.find((f) => f.name === name);
  }
  short(letter: string): FlagSpec | undefined {
    return this.specs.find((f) => f.short === letter);
  }
}

function subcommand(cmd: CommandSpec, name: string): CommandSpec | undefined {
  return cmd.subcommands?.find((c) => c.name === name);
}

/**
 * The command path, found as cobra does: words that are not flags (nor a flag's value) name
 * subcommands as long as one matches. A flag unknown at this point is assumed to take no value.
 */
function findCommand(argv: readonly string[], root: CommandSpec, globals: readonly FlagSpec[]): { path: CommandSpec[]; used: Set<number> } {
  const path: CommandSpec[] = [];
  const used = new Set<number>();
  let cmd = root;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? '';
    if (a === '--') break;
    const flags = new FlagSet([...globals, ...(cmd.flags ?? [])]);
    if (a.startsWith('--')) {
      const f = flags.long(a.slice(2));
      if (!a.includes('=') && f && f.kind !== 'bool' && f.noOptValue === undefined) i++;
      continue;
    }
    if (a.startsWith('-') && a.length > 1) {
      // A group of short flags: the first that takes a value ends it, taking the rest or the next word.
      for (let j = 1; j < a.length; j++) {
        const f = flags.short(a[j] ?? '');
        if (f && f.kind !== 'bool') {
          if (j === a.length - 1) i++;
          break;
        }
      }
      continue;
    }
    const sub = subcommand(cmd, a);
    if (!sub) break;
    path.push(sub);
    used.add(i);
    cmd = sub;
  }
  return { path, used };
}

export function parseCommandLine(argv: readonly string[], root: CommandSpec, globals: readonly FlagSpec[]): Parsed {
  const { path, used } = findCommand(argv, root, globals);
  const cmd = path[path.length - 1] ?? root;
  const flags = new FlagSet([...globals, ...(cmd.flags ?? [])]);
  const values: Record<string, FlagValue> = {};
  const args: string[] = [];
  let help = false;
  let version = false;

  const set = (f: FlagSpec, value: string | undefined, asShort = false): void => {
    if (f.kind === 'bool') {
      values[f.name] = value === undefined ? true : parseBool(f, value);
      return;
    }
    if (value === undefined)
      throw new CliError(`Error: flag needs an argument: ${asShort ? `'${f.short}' in -${f.short}` : `--${f.name}`}`);
    if (f.choices && !f.choices.includes(value)) {
      throw new CliError(`Error: invalid argument "${value}" for "${flagLabel(f)}" flag: must be one of ${f.choices.join(', ')}`);
    }
    if (f.kind === 'array') values[f.name] = [...((values[f.name] as string[] | undefined) ?? []), value];
    else values[f.name] = value;
  };

  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? '';
    if (used.has(i)) continue;
    if (a === '--') {
      args.push(...argv.slice(i + 1));
      break;
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = eq < 0 ? a.slice(2) : a.slice(2, eq);
      const inline = eq < 0 ? undefined : a.slice(eq + 1);
      if (name === 'help') {
        help = inline === undefined || TRUE.has(inline);
        continue;
      }
      if (name === 'version' && cmd === root) {
        version = inline === undefined || TRUE.has(inline);
        continue;
      }
      const f = flags.long(name);
      if (!f) throw new CliError(`Error: unknown flag: --${name}`);
      if (inline !== undefined || f.kind === 'bool') set(f, inline);
      else if (f.noOptValue !== undefined) set(f, f.noOptValue);
      else {
        if (i + 1 >= argv.length) set(f, undefined);
        set(f, argv[++i]);
      }
      continue;
    }
    if (a.startsWith('-') && a.length > 1) {
      for (let j = 1; j < a.length; j++) {
        const letter = a[j] ?? '';
        if (letter === 'h') {
          help = true;
          continue;
        }
        const f = flags.short(letter);
        if (!f) throw new CliError(`Error: unknown shorthand flag: '${letter}' in ${a}`);
        const rest = a.slice(j + 1);
        if (f.kind === 'bool') {
          // `-a=false`: the rest of the group is the value.
          if (rest.startsWith('=')) {
            set(f, rest.slice(1));
            break;
          }
          set(f, undefined);
          continue;
        }
        if (rest !== '') set(f, rest.startsWith('=') ? rest.slice(1) : rest);
        else {
          if (i + 1 >= argv.length) set(f, undefined, true);
          set(f, argv[++i]);
        }
        break;
      }
      continue;
    }
    args.push(a);
  }
  return { path, args, flags: values, help, version };
}
