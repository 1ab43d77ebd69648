// The command line: finds the subcommand, parses the flags as kubectl's own (cobra/pflag) parser
// does, checks the arguments, and runs it. Each subcommand declares itself in its own file under
// commands/; this file only lists them, in the order help shows them.
import type { Session } from './api.js';
import type { CommandSpec } from './cli/command.js';
import { GLOBAL_FLAGS, globalFlags, type GlobalFlags } from './cli/global-flags.js';
import { helpText } from './cli/help.js';
import { parseCommandLine } from './cli/parse.js';
import { accessCommand } from './commands/access.js';
import { configCommand } from './commands/config.js';
import { createCommand } from './commands/create.js';
import { deleteCommand } from './commands/delete.js';
import { describeCommand } from './commands/describe.js';
import { getCommand } from './commands/get.js';
import { hrqCommand } from './commands/hrq.js';
import { migrateCommand } from './commands/migrate.js';
import { setCommand } from './commands/set.js';
import { treeCommand } from './commands/tree.js';
import { versionCommand } from './commands/version.js';
import { CliError, describeError } from './errors.js';
import type { Io } from './io.js';
import { versionText } from './version.js';

export interface CliDeps {
  io: Io;
  /** Builds the session from kubectl's flags (the real one reads the kubeconfig). */
  connect(flags: GlobalFlags): Promise<Session>;
  /** Decorates the `Error:` prefix (colour); identity by default. */
  errorPrefix?: (s: string) => string;
  now?: () => Date;
}

export const ROOT_COMMAND: CommandSpec = {
  name: 'kubectl-hns',
  summary: 'Manipulates hierarchical namespaces provided by HNC',
  subcommands: [
    accessCommand,
    configCommand,
    createCommand,
    deleteCommand,
    describeCommand,
    getCommand,
    hrqCommand,
    migrateCommand,
    setCommand,
    treeCommand,
    versionCommand,
  ],
};

function checkArgs(cmd: CommandSpec, path: readonly CommandSpec[], args: readonly string[]): void {
  if (!cmd.run) {
    // A command group (the root, `config`) with an argument that names no subcommand.
    const where = path.length ? ` for "kubectl-hns ${path.map((c) => c.name).join(' ')}"` : ' for "kubectl-hns"';
    if (args.length > 0) throw new CliError(`Error: unknown command "${args[0]}"${where}`);
    return;
  }
  const spec = cmd.args;
  if (!spec) return;
  if (spec.max === 0 && args.length > 0)
    throw new CliError(`Error: unknown command "${args[0]}" for "kubectl-hns ${path.map((c) => c.name).join(' ')}"`);
  if (args.length < spec.min || (spec.max !== undefined && args.length > spec.max)) {
    const want = spec.max === spec.min ? `${spec.min}` : spec.max === undefined ? `at least ${spec.min}` : `${spec.min} to ${spec.max}`;
    throw new CliError(`Error: accepts ${want} arg(s) (${spec.names}), received ${args.length}`);
  }
}

/** Runs the plugin with these arguments (without node and the script); returns the exit code. */
export async function runCli(argv: readonly string[], deps: CliDeps): Promise<number> {
  const { io } = deps;
  try {
    const parsed = parseCommandLine(argv, ROOT_COMMAND, GLOBAL_FLAGS);
    const cmd = parsed.path[parsed.path.length - 1] ?? ROOT_COMMAND;
    if (parsed.version) {
      io.out(`${versionText()}\n`);
      return 0;
    }
    if (parsed.help || !cmd.run) {
      if (!parsed.help) checkArgs(cmd, parsed.path, parsed.args);
      io.out(helpText(ROOT_COMMAND, parsed.path, GLOBAL_FLAGS));
      return 0;
    }
    checkArgs(cmd, parsed.path, parsed.args);
    const global = globalFlags(parsed.flags);
    const code = await cmd.run({
      args: parsed.args,
      flags: parsed.flags,
      global,
      io,
      connect: () => deps.connect(global),
      now: deps.now ?? (() => new Date()),
    });
    return code ?? 0;
  } catch (err) {
    const { text, exitCode } = describeError(err);
    const decorated = text.startsWith('Error:') ? `${(deps.errorPrefix ?? ((x) => x))('Error:')}${text.slice('Error:'.length)}` : text;
    io.err(`${decorated}\n`);
    return exitCode;
  }
}
