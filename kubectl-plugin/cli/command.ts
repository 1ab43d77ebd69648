// What a `kubectl hns` subcommand declares about itself: its name, help texts, flags and action.
// Each subcommand lives in its own file under commands/ and exports one of these; program.ts only
// lists them. Flags follow cobra/pflag, as HNC's plugin does (see parse.ts).
import type { Session } from '../api.js';
import type { GlobalFlags } from '../connection.js';
import type { Io } from '../io.js';

export type FlagKind =
  /** `--x`, `--x=true`, `--x=false`, `-x`; never takes the next argument. */
  | 'bool'
  /** `--x V`, `--x=V`, `-x V`, `-xV`, `-x=V`; the last occurrence wins. */
  | 'string'
  /** As 'string', every occurrence kept (pflag's stringArray). */
  | 'array';

export interface FlagSpec {
  /** The long name, without dashes. */
  name: string;
  /** One letter, without the dash. */
  short?: string;
  kind: FlagKind;
  /** The value's name in help, e.g. "string", "PARENT". */
  value?: string;
  description: string;
  /** Shown in help as (default "..."). */
  defaultText?: string;
  /** The only values allowed (string flags). */
  choices?: readonly string[];
  /**
   * pflag's NoOptDefVal (string flags): the value of the flag given alone (`--dry-run`), which
   * then never takes the next argument; a value must be given as `--dry-run=server`.
   */
  noOptValue?: string;
}

export type FlagValue = string | boolean | string[];
export type FlagValues = Readonly<Record<string, FlagValue | undefined>>;

/** What an action gets. */
export interface CommandContext {
  args: readonly string[];
  /** The command's own flags and the global ones, by long name. */
  flags: FlagValues;
  /** The global (kubectl) flags, typed. */
  global: GlobalFlags;
  io: Io;
  /** Connects with the global flags; call it only after the command's own checks passed. */
  connect(): Promise<Session>;
  now(): Date;
}

export interface CommandSpec {
  name: string;
  /** One line, for the list of commands. */
  summary: string;
  /** Longer text at the top of the command's help; the summary if absent. */
  description?: string;
  /** What follows the command's name in its usage line, e.g. "NAMESPACE [flags]". */
  usage?: string;
  examples?: string;
  flags?: readonly FlagSpec[];
  /** Positional arguments: at least `min`, at most `max` (undefined: any number). */
  args?: { min: number; max?: number; names: string };
  subcommands?: readonly CommandSpec[];
  run?: (ctx: CommandContext) => Promise<void>;
}

export const defineCommand = (spec: CommandSpec): CommandSpec => spec;

/** The string value of a flag, if given. */
export const stringFlag = (flags: FlagValues, name: string): string | undefined => {
  const v = flags[name];
  return typeof v === 'string' ? v : undefined;
};

/** Whether a bool flag is true. */
export const boolFlag = (flags: FlagValues, name: string): boolean => flags[name] === true;

/** Every value of an array flag. */
export const arrayFlag = (flags: FlagValues, name: string): string[] => {
  const v = flags[name];
  return Array.isArray(v) ? v : [];
};
