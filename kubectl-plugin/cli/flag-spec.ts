// A flag as a command declares it (cobra/pflag's kinds, see parse.ts) and the accessors for the
// values parsed from the command line. Below command.ts and global-flags.ts, which both use them.

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
