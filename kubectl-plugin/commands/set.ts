// `kubectl hns set NAMESPACE [--root | --parent P] [--allowCascadingDeletion | --forbidCascadingDeletion] [--dry-run[=server|client]]`
import type { HncApi } from '../api.js';
import { defineCommand } from '../cli/command.js';
import { boolFlag, stringFlag } from '../cli/flag-spec.js';
import { CliError } from '../errors.js';
import type { Io } from '../io.js';
import { readHierarchy, writeHierarchy, type LoadedHierarchy } from './hierarchy.js';
import { DRY_RUN_FLAG, OUTPUT_FLAG, previewFlags, runPreview, type PreviewFlags } from './preview.js';

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

/** The new spec and HNC's line for each property (changed or not); `changes` counts the changed ones. */
export function planSet(
  ns: string,
  loaded: LoadedHierarchy,
  flags: SetFlags,
): { spec: NonNullable<LoadedHierarchy['hc']['spec']>; lines: string[]; changes: number } {
  const spec = { ...(loaded.hc.spec ?? {}) };
  const oldParent = spec.parent ?? '';
  const lines: string[] = [];
  let changes = 0;

  if (flags.root) {
    if (oldParent === '') {
      lines.push(`${ns} is already a root namespace; unchanged `);
    } else {
      delete spec.parent;
      lines.push(`Unsetting the parent of ${ns} (was previously ${oldParent})`);
      changes++;
    }
  }

  if (flags.parent) {
    if (oldParent === flags.parent) {
      lines.push(`Parent of ${ns} is already ${flags.parent}; unchanged`);
    } else {
      spec.parent = flags.parent;
      lines.push(
        oldParent === ''
          ? `Setting the parent of ${ns} to ${flags.parent}`
          : `Changing the parent of ${ns} from ${oldParent} to ${flags.parent}`,
      );
      changes++;
    }
  }

  if (flags.allowCascadingDeletion || flags.forbidCascadingDeletion) {
    const want = !!flags.allowCascadingDeletion;
    if ((spec.allowCascadingDeletion ?? false) === want) {
      lines.push(`Cascading deletion for '${ns}' is already set to ${want}; unchanged`);
    } else {
      if (want) spec.allowCascadingDeletion = true;
      else delete spec.allowCascadingDeletion;
      lines.push(want ? `Allowing cascading deletion on '${ns}'` : `Forbidding cascading deletion on '${ns}'`);
      changes++;
    }
  }
  return { spec, lines, changes };
}

export async function runSet(
  api: HncApi,
  io: Io,
  ns: string,
  flags: SetFlags,
  preview: PreviewFlags = { dryRun: 'none', output: 'text' },
): Promise<void> {
  validateSet(flags);
  const loaded = await readHierarchy(api, ns);
  const { spec, lines, changes } = planSet(ns, loaded, flags);

  if (preview.dryRun !== 'none') {
    if (changes === 0) {
      io.out([...lines, 'No changes made', ''].join('\n'));
      return;
    }
    const hc = { ...loaded.hc, spec };
    await runPreview(api, io, preview, {
      change: {
        op: 'set-parent',
        namespace: ns,
        parent: spec.parent || undefined,
        allowCascadingDeletion: spec.allowCascadingDeletion === true,
      },
      summary: lines.filter((l) => !/unchanged\s*$/.test(l)).join('; '),
      writes: [
        {
          request: `${loaded.exists ? 'update' : 'create'} HierarchyConfiguration ${ns}/hierarchy`,
          send: () => (loaded.exists ? api.replaceHierarchy(hc, { dryRun: true }) : api.createHierarchy(hc, { dryRun: true })),
        },
      ],
      focus: { subtrees: [ns], others: [loaded.hc.spec?.parent ?? '', spec.parent ?? ''].filter((p) => p !== '') },
    });
    return;
  }

  for (const line of lines) io.out(`${line}\n`);
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
    '',
    "  # Show what moving 'bar' under 'foo' would do (copies, tree labels, access), and whether it is allowed; write nothing",
    '  kubectl hns set bar --parent foo --dry-run',
  ].join('\n'),
  args: { min: 1, max: 1, names: 'NAMESPACE' },
  flags: [
    { name: 'root', short: 'r', kind: 'bool', description: 'Removes the current parent namespace, making this namespace a root' },
    { name: 'parent', short: 'p', kind: 'string', value: 'string', description: 'Sets the parent namespace' },
    { name: 'allowCascadingDeletion', short: 'a', kind: 'bool', description: 'Allows cascading deletion of its subnamespaces.' },
    { name: 'forbidCascadingDeletion', short: 'f', kind: 'bool', description: 'Protects cascading deletion of its subnamespaces.' },
    DRY_RUN_FLAG,
    OUTPUT_FLAG,
  ],
  async run({ args, flags, io, connect }) {
    const set: SetFlags = {
      root: boolFlag(flags, 'root'),
      parent: stringFlag(flags, 'parent'),
      allowCascadingDeletion: boolFlag(flags, 'allowCascadingDeletion'),
      forbidCascadingDeletion: boolFlag(flags, 'forbidCascadingDeletion'),
    };
    validateSet(set);
    const preview = previewFlags(flags);
    const session = await connect();
    await runSet(session.api, io, args[0] ?? '', set, preview);
  },
});
