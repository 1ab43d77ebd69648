// The command line: commander definitions only. Every action loads its command module lazily, so
// `--help` and flag errors stay fast, and connects to the cluster only after its flags check out.
import { Command, CommanderError, Option } from 'commander';
import type { Session } from './api.js';
import type { GlobalFlags } from './connection.js';
import { describeError } from './errors.js';
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

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

function globalFlags(cmd: Command): GlobalFlags {
  const o = cmd.optsWithGlobals<Record<string, unknown>>();
  const str = (k: string): string | undefined => (typeof o[k] === 'string' ? (o[k] as string) : undefined);
  return {
    kubeconfig: str('kubeconfig'),
    context: str('context'),
    cluster: str('cluster'),
    user: str('user'),
    namespace: str('namespace'),
    as: str('as'),
    asGroup: Array.isArray(o.asGroup) ? (o.asGroup as string[]) : undefined,
    requestTimeout: str('requestTimeout'),
  };
}

export function buildProgram(deps: CliDeps): Command {
  const { io } = deps;
  const withApi =
    <A extends unknown[]>(fn: (session: Session, flags: GlobalFlags, cmd: Command, ...args: A) => Promise<void>) =>
    async (...args: unknown[]): Promise<void> => {
      const cmd = args[args.length - 1] as Command;
      const flags = globalFlags(cmd);
      const session = await deps.connect(flags);
      await fn(session, flags, cmd, ...(args.slice(0, -1) as A));
    };

  const program = new Command('kubectl-hns')
    .description('Manipulates hierarchical namespaces provided by HNC')
    .usage('[command] [flags]')
    .version(versionText(), '--version', 'Print the version')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.out(s),
      writeErr: (s) => io.err(s),
      outputError: (s, write) => write(s.replace(/^error: /, `${(deps.errorPrefix ?? ((x) => x))('Error:')} `)),
    })
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .helpCommand(false)
    .option('--kubeconfig <path>', 'Path to the kubeconfig file to use')
    .option('--context <name>', 'The name of the kubeconfig context to use')
    .option('--cluster <name>', 'The name of the kubeconfig cluster to use')
    .option('--user <name>', 'The name of the kubeconfig user to use')
    .option('-n, --namespace <namespace>', 'The namespace (the parent, for create and delete)')
    .option('--as <user>', 'Username to impersonate for the operation')
    .addOption(new Option('--as-group <group>', 'Group to impersonate for the operation; repeat for several').argParser(collect))
    .option('--request-timeout <duration>', 'Time to wait for each API request, e.g. 5s, 1m; 0 means no limit (default "5s")');

  program
    .command('create')
    .summary('Creates a subnamespace under the given parent.')
    .description('Creates a subnamespace under the given parent: a SubnamespaceAnchor named CHILD in PARENT.')
    .argument('<CHILD>')
    .usage('CHILD -n PARENT [-l key=value,...] [-a key=value,...]')
    .addOption(new Option('-l, --labels <key=value,...>', 'Managed labels for the subnamespace').argParser(collect))
    .addOption(new Option('-a, --annotations <key=value,...>', 'Managed annotations for the subnamespace').argParser(collect))
    .addHelpText('after', '\nExamples:\n  # Create the subnamespace "dev" in "team-a"\n  kubectl hns create dev -n team-a\n')
    .action(async (child: string, opts: { labels?: string[]; annotations?: string[] }, cmd: Command): Promise<void> => {
      const { requireParent, runCreate } = await import('./commands/anchors.js');
      const { parseKeyValues } = await import('./flags.js');
      const parent = requireParent(globalFlags(cmd).namespace);
      const labels = parseKeyValues(opts.labels ?? [], '--labels');
      const annotations = parseKeyValues(opts.annotations ?? [], '--annotations');
      const session = await deps.connect(globalFlags(cmd));
      await runCreate(session.api, io, child, parent, { labels, annotations });
    });

  program
    .command('delete')
    .summary('Deletes a subnamespace under the given parent.')
    .argument('<CHILD>')
    .usage('CHILD -n PARENT [-a]')
    .option('-a, --allowCascadingDeletion', 'Allows cascading deletion of its subnamespaces.')
    .addHelpText(
      'after',
      "\nExamples:\n  # Delete the 'foo' anchor in the parent 'bar' namespace\n  kubectl hns delete foo -n bar\n\n  # Allow 'foo' to be cascading deleted and delete it\n  kubectl hns delete foo -n bar --allowCascadingDeletion\n",
    )
    .action(
      withApi(async (session, flags, _cmd, child: string, opts: { allowCascadingDeletion?: boolean }) => {
        const { runDelete } = await import('./commands/anchors.js');
        await runDelete(session.api, io, child, flags.namespace ?? session.namespace, !!opts.allowCascadingDeletion);
      }),
    );

  program
    .command('describe')
    .summary('Displays information about the hierarchy configuration')
    .description(
      'Displays the hierarchy configuration of NAMESPACE, the objects it inherits, and recent HNC events.\n' +
        'With --object, explains instead why the named object is or is not propagated into NAMESPACE.',
    )
    .argument('<NAMESPACE>')
    .usage('NAMESPACE [--object TYPE/NAME]')
    .option('--object <TYPE/NAME>', 'Explain why this object (e.g. role/admin, secrets/db-password) is or is not propagated into NAMESPACE')
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        "  # The hierarchy of 'dev', what it inherits and from where, and HNC's events there",
        '  kubectl hns describe dev',
        '',
        "  # Why the Role 'admin' is, or is not, in 'dev'",
        '  kubectl hns describe dev --object role/admin',
        '',
      ].join('\n'),
    )
    .action(async (ns: string, opts: { object?: string }, cmd: Command): Promise<void> => {
      if (opts.object !== undefined) {
        const { parseObjectRef, runExplain } = await import('./commands/explain.js');
        const ref = parseObjectRef(opts.object);
        const session = await deps.connect(globalFlags(cmd));
        await runExplain(session.api, io, ns, ref);
        return;
      }
      const { runDescribe } = await import('./commands/describe.js');
      const session = await deps.connect(globalFlags(cmd));
      await runDescribe(session.api, io, ns, deps.now?.() ?? new Date());
    });

  program
    .command('set')
    .summary('Sets hierarchical properties of the given namespace')
    .argument('<NAMESPACE>')
    .option('-r, --root', 'Removes the current parent namespace, making this namespace a root')
    .option('-p, --parent <parent>', 'Sets the parent namespace')
    .option('-a, --allowCascadingDeletion', 'Allows cascading deletion of its subnamespaces.')
    .option('-f, --forbidCascadingDeletion', 'Protects cascading deletion of its subnamespaces.')
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        "  # Make 'foo' the parent of 'bar'",
        '  kubectl hns set bar --parent foo',
        '',
        "  # Make 'bar' a root (remove its parent)",
        '  kubectl hns set bar --root',
        '',
        "  # Allow 'foo', or any of its descendants, to be cascading deleted",
        '  kubectl hns set foo --allowCascadingDeletion',
        '',
        "  # Forbid cascading deletion on 'foo' and its subtree (unless allowed on a descendant)",
        '  kubectl hns set foo --forbidCascadingDeletion',
        '',
      ].join('\n'),
    )
    .action(async (ns: string, opts: Record<string, unknown>, cmd: Command): Promise<void> => {
      const { runSet, validateSet } = await import('./commands/set.js');
      const flags = {
        root: opts.root === true,
        parent: typeof opts.parent === 'string' ? opts.parent : undefined,
        allowCascadingDeletion: opts.allowCascadingDeletion === true,
        forbidCascadingDeletion: opts.forbidCascadingDeletion === true,
      };
      validateSet(flags);
      const session = await deps.connect(globalFlags(cmd));
      await runSet(session.api, io, ns, flags);
    });

  program
    .command('tree')
    .summary('Display one or more hierarchy trees')
    .argument('[NAMESPACE...]')
    .option('-A, --all-namespaces', 'Displays all trees on the cluster')
    .addOption(new Option('-o, --output <format>', 'Output format instead of text').choices(['json', 'yaml', 'dot']))
    .addHelpText(
      'after',
      '\nExamples:\n  kubectl hns tree team-a\n  kubectl hns tree -A\n  kubectl hns tree team-a -o dot | dot -Tsvg > team-a.svg\n',
    )
    .action(async (names: string[], opts: { allNamespaces?: boolean; output?: 'json' | 'yaml' | 'dot' }, cmd: Command): Promise<void> => {
      const { runTree, validateTree } = await import('./commands/tree.js');
      const flags = { allNamespaces: !!opts.allNamespaces, ...(opts.output ? { output: opts.output } : {}) };
      validateTree(names, flags);
      const session = await deps.connect(globalFlags(cmd));
      await runTree(session.api, io, names, flags);
    });

  const config = program.command('config').summary('Manipulates the HNC configuration');
  config
    .command('describe')
    .summary('Displays information about the HNC configuration')
    .action(
      withApi(async (session) => {
        const { runConfigDescribe } = await import('./commands/config.js');
        await runConfigDescribe(session.api, io);
      }),
    );
  config
    .command('set-resource')
    .summary('Sets the HNC configuration of a specific resource')
    .argument('<RESOURCE>')
    .usage('RESOURCE [--group GROUP] [--force] --mode <Propagate|Remove|Ignore|AllowPropagate>')
    .option('--group <group>', 'The group of the resource; may be omitted for core resources', '')
    .option('--mode <mode>', 'The synchronization mode: one of Propagate, Remove, Ignore or AllowPropagate')
    .option('-f, --force', 'Allow the synchronization mode to be changed directly from Ignore to Propagate despite the dangers of doing so')
    .addHelpText(
      'after',
      '\nExamples:\n  # Set configuration of a core type\n  kubectl hns config set-resource secrets --mode Ignore\n\n  # Set configuration of a custom type\n  kubectl hns config set-resource crontabs --group stable.example.com --mode Propagate\n',
    )
    .action(async (resource: string, opts: { group?: string; mode?: string; force?: boolean }, cmd: Command): Promise<void> => {
      const { parseMode, runConfigSetResource } = await import('./commands/config.js');
      parseMode(opts.mode);
      const session = await deps.connect(globalFlags(cmd));
      await runConfigSetResource(session.api, io, resource, opts);
    });
  config
    .command('delete-type')
    .summary('Delete the HNC configuration of a specific type')
    .usage('--group X --resource Y')
    .option('--group <group>', 'group of the resource', '')
    .option('--resource <resource>', 'resource to be configured', '')
    .addHelpText(
      'after',
      '\nExamples:\n  # Delete configuration of a core type\n  kubectl hns config delete-type --resource secrets\n\n  # Delete configuration of a custom type\n  kubectl hns config delete-type --group stable.example.com --resource crontabs\n',
    )
    .action(
      withApi(async (session, _flags, _cmd, opts: { group?: string; resource?: string }) => {
        const { runConfigDeleteType } = await import('./commands/config.js');
        await runConfigDeleteType(session.api, io, opts);
      }),
    );

  program
    .command('version')
    .summary('Show version of HNC plugin')
    .action(() => io.out(`${versionText()}\n`));

  return program;
}

/** Runs the plugin with these arguments (without node and the script); returns the exit code. */
export async function runCli(args: readonly string[], deps: CliDeps): Promise<number> {
  const program = buildProgram(deps);
  if (args.length === 0) {
    program.outputHelp();
    return 0;
  }
  try {
    await program.parseAsync([...args], { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and --version end here with code 0; commander already printed its own errors.
      return err.exitCode;
    }
    const { text, exitCode } = describeError(err);
    const decorated = text.startsWith('Error:') ? `${(deps.errorPrefix ?? ((x) => x))('Error:')}${text.slice('Error:'.length)}` : text;
    deps.io.err(`${decorated}\n`);
    return exitCode;
  }
}
