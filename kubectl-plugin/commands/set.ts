// `kubectl hns set NAMESPACE [--root | --parent P] [--allowCascadingDeletion | --forbidCascadingDeletion]`
import type { HncApi } from '../api.js';
import { boolFlag, defineCommand, stringFlag } from '../cli/command.js';
import { CliError } from '../errors.js';
import type { Io } from '../io.js';
import { readHierarchy, writeHierarchy } from './hierarchy.js';

export interface SetFlags {
  root?: boolean;
  parent?: string;
  allowCascadingDeletion?: boolean;
  forbidCascadingDeletion?: boolean;
}

/** Checks the flags before anything is read. */
export function validateSet(flags: SetFlags): void {
  if (flags.root && flags.parent) throw new CliError('Cannot give the namespace a parent and make it a root at the same time');
  if (flags.allowCascadingDeletion && flags.forbidCascadingDeletion) {
    throw new CliError('Cannot set both --allowCascadingDeletion and --forbidCascadingDeletion');
  }
}

export async function runSet(api: HncApi, io: Io, ns: string, flags: SetFlags): Promise<void> {
  validateSet(flags);
  const loaded = await readHierarchy(api, ns);
  const spec = { ...(loaded.hc.spec ?? {}) };
  const oldParent = spec.parent ?? '';
  let changes = 0;

  if (flags.root) {
    if (oldParent === '') {
      io.out(`${ns} is already a root namespace; unchanged \n`);
    } else {
      delete spec.parent;
      io.out(`Unsetting the parent of ${ns} (was previously ${oldParent})\n`);
      changes++;
    }
  }

  if (flags.parent) {
    if (oldParent === flags.parent) {
      io.out(`Parent of ${ns} is already ${flags.parent}; unchanged\n`);
    } else {
      spec.parent = flags.parent;
      io.out(
        oldParent === ''
          ? `Setting the parent of ${ns} to ${flags.parent}\n`
          : `Changing the parent of ${ns} from ${oldParent} to ${flags.parent}\n`,
      );
      changes++;
    }
  }

  if (flags.allowCascadingDeletion || flags.forbidCascadingDeletion) {
    const want = !!flags.allowCascadingDeletion;
    if ((spec.allowCascadingDeletion ?? false) === want) {
      io.out(`Cascading deletion for '${ns}' is already set to ${want}; unchanged\n`);
    } else {
      if (want) spec.allowCascadingDeletion = true;
      else delete spec.allowCascadingDeletion;
      io.out(want ? `Allowing cascading deletion on '${ns}'\n` : `Forbidding cascading deletion on '${ns}'\n`);
      changes++;
    }
  }

  if (changes === 0) {
    io.out('No changes made\n');
    return;
  }
  await writeHierarchy(api, { ...loaded, hc: { ...loaded.hc, spec } });
  // "Succesfully" (sic) is HNC's spelling; scripts may match it.
  io.out(`Succesfully updated ${changes} ${changes > 1 ? 'properties' : 'property'} of the hierarchical configuration of ${ns}\n`);
}

export const setCommand = defineCommand({
  name: 'set',
  summary: 'Sets hierarchical properties of the given namespace',
  usage: 'NAMESPACE [flags]',
  examples: [
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
  ].join('\n'),
  args: { min: 1, max: 1, names: 'NAMESPACE' },
  flags: [
    { name: 'root', short: 'r', kind: 'bool', description: 'Removes the current parent namespace, making this namespace a root' },
    { name: 'parent', short: 'p', kind: 'string', value: 'string', description: 'Sets the parent namespace' },
    { name: 'allowCascadingDeletion', short: 'a', kind: 'bool', description: 'Allows cascading deletion of its subnamespaces.' },
    { name: 'forbidCascadingDeletion', short: 'f', kind: 'bool', description: 'Protects cascading deletion of its subnamespaces.' },
  ],
  async run({ args, flags, io, connect }) {
    const set: SetFlags = {
      root: boolFlag(flags, 'root'),
      parent: stringFlag(flags, 'parent'),
      allowCascadingDeletion: boolFlag(flags, 'allowCascadingDeletion'),
      forbidCascadingDeletion: boolFlag(flags, 'forbidCascadingDeletion'),
    };
    validateSet(set);
    const session = await connect();
    await runSet(session.api, io, args[0] ?? '', set);
  },
});
