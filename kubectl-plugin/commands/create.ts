// `kubectl hns create CHILD -n PARENT [-l key=value,...] [-a key=value,...]`.
import { defineCommand } from '../cli/command.js';
import { arrayFlag } from '../cli/flag-spec.js';
import { parseKeyValues } from '../flags.js';
import { requireParent, runCreate } from './anchors.js';
import { DRY_RUN_FLAG, OUTPUT_FLAG, previewFlags } from './preview.js';

export const createCommand = defineCommand({
  name: 'create',
  summary: 'Creates a subnamespace under the given parent.',
  description: 'Creates a subnamespace under the given parent: a SubnamespaceAnchor named CHILD in PARENT.',
  usage: 'CHILD -n PARENT [-l key=value,...] [-a key=value,...]',
  examples: [
    '  # Create the subnamespace "dev" in "team-a"',
    '  kubectl hns create dev -n team-a',
    '',
    '  # Show what creating it would do (copies it would receive, access), and whether it is allowed; write nothing',
    '  kubectl hns create dev -n team-a --dry-run',
  ].join('\n'),
  args: { min: 1, max: 1, names: 'CHILD' },
  flags: [
    { name: 'labels', short: 'l', kind: 'array', value: 'key=value,...', description: 'Managed labels for the subnamespace' },
    { name: 'annotations', short: 'a', kind: 'array', value: 'key=value,...', description: 'Managed annotations for the subnamespace' },
    DRY_RUN_FLAG,
    OUTPUT_FLAG,
  ],
  async run({ args, flags, global, io, connect }) {
    // HNC's create takes the parent from -n only, never from the kubeconfig context.
    const parent = requireParent(global.namespace);
    const labels = parseKeyValues(arrayFlag(flags, 'labels'), '--labels');
    const annotations = parseKeyValues(arrayFlag(flags, 'annotations'), '--annotations');
    const preview = previewFlags(flags);
    const session = await connect();
    await runCreate(session.api, io, args[0] ?? '', parent, { labels, annotations }, preview);
  },
});
