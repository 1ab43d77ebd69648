// `kubectl hns delete CHILD -n PARENT [-a]`.
import { defineCommand } from '../cli/command.js';
import { boolFlag } from '../cli/flag-spec.js';
import { runDelete } from './anchors.js';
import { DRY_RUN_FLAG, OUTPUT_FLAG, previewFlags } from './preview.js';

export const deleteCommand = defineCommand({
  name: 'delete',
  summary: 'Deletes a subnamespace under the given parent.',
  usage: 'CHILD -n PARENT [-a]',
  examples: [
    "  # Delete the 'foo' anchor in the parent 'bar' namespace",
    '  kubectl hns delete foo -n bar',
    '',
    "  # Allow 'foo' to be cascading deleted and delete it",
    '  kubectl hns delete foo -n bar --allowCascadingDeletion',
    '',
    "  # Show what deleting 'foo' would do (namespaces deleted, access lost), and whether it is allowed; write nothing",
    '  kubectl hns delete foo -n bar --dry-run',
  ].join('\n'),
  args: { min: 1, max: 1, names: 'CHILD' },
  flags: [
    { name: 'allowCascadingDeletion', short: 'a', kind: 'bool', description: 'Allows cascading deletion of its subnamespaces.' },
    DRY_RUN_FLAG,
    OUTPUT_FLAG,
  ],
  async run({ args, flags, global, io, connect }) {
    const preview = previewFlags(flags);
    const session = await connect();
    // As HNC: the parent defaults to the kubeconfig context's namespace.
    await runDelete(
      session.api,
      io,
      args[0] ?? '',
      global.namespace ?? session.namespace,
      boolFlag(flags, 'allowCascadingDeletion'),
      preview,
    );
  },
});
