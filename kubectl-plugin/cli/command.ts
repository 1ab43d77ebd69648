// What a `kubectl hns` subcommand declares about itself: its name, help texts, flags and action.
// Each subcommand lives in its own file under commands/ and exports one of these; program.ts only
// lists them. Flags follow cobra/pflag, as HNC's plugin does (see parse.ts).
import type { Session } from '../api.js';
import type { FlagSpec, FlagValues } from './flag-spec.js';
import type { GlobalFlags } from './global-flags.js';
import type { Io } from '../io.js';

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
  /** Resolves to the exit code when it is not 0 without an error (`migrate --check`: an action is needed). */
  run?: (ctx: CommandContext) => Promise<number | void>;
}

export const defineCommand = (spec: CommandSpec): CommandSpec => spec;
