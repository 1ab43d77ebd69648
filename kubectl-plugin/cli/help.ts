// Help texts laid out as cobra lays them out (HNC's plugin is a cobra program); pure.
import type { CommandSpec } from './command.js';
import type { FlagSpec } from './flag-spec.js';

const ROOT = 'kubectl-hns';

function flagLines(flags: readonly FlagSpec[], extra: FlagSpec[] = []): string {
  const all = [...flags, ...extra];
  const left = (f: FlagSpec): string => {
    const names = f.short ? `-${f.short}, --${f.name}` : `    --${f.name}`;
    if (f.kind === 'bool') return names;
    const noOpt = f.noOptValue !== undefined ? `[="${f.noOptValue}"]` : '';
    return `${names} ${f.value ?? (f.kind === 'array' ? 'stringArray' : 'string')}${noOpt}`;
  };
  const width = Math.max(...all.map((f) => left(f).length));
  return all
    .map((f) => {
      const def = f.defaultText !== undefined ? ` (default "${f.defaultText}")` : '';
      return `  ${left(f).padEnd(width)}   ${f.description}${def}`;
    })
    .join('\n');
}

/** The help of `cmd`, reached through `path` (outermost first, the root excluded). */
export function helpText(root: CommandSpec, path: readonly CommandSpec[], globals: readonly FlagSpec[]): string {
  const cmd = path[path.length - 1] ?? root;
  const name = [ROOT, ...path.map((c) => c.name)].join(' ');
  const isRoot = path.length === 0;
  const parts: string[] = [cmd.description ?? cmd.summary, ''];
  parts.push('Usage:');
  if (cmd.run) parts.push(`  ${name} ${cmd.usage ?? '[flags]'}`);
  if (cmd.subcommands?.length) parts.push(`  ${name} [command]`);
  parts.push('');
  if (cmd.examples) parts.push('Examples:', cmd.examples.replace(/\n+$/, ''), '');
  if (cmd.subcommands?.length) {
    const width = Math.max(...cmd.subcommands.map((c) => c.name.length));
    parts.push('Available Commands:', ...cmd.subcommands.map((c) => `  ${c.name.padEnd(width)}   ${c.summary}`), '');
  }
  const help: FlagSpec = { name: 'help', short: 'h', kind: 'bool', description: `help for ${isRoot ? ROOT : cmd.name}` };
  const version: FlagSpec = { name: 'version', kind: 'bool', description: `version for ${ROOT}` };
  if (isRoot) {
    parts.push('Flags:', flagLines(globals, [help, version]), '');
  } else {
    parts.push('Flags:', flagLines(cmd.flags ?? [], [help]), '', 'Global Flags:', flagLines(globals), '');
  }
  if (cmd.subcommands?.length) parts.push(`Use "${name} [command] --help" for more information about a command.`, '');
  return parts.join('\n');
}
