// `kubectl hns hrq [NAME…] [-n NS] [-A] [--show-labels]`: HierarchicalResourceQuotas as a table,
// NAME, AGE, REQUEST, LIMIT (NAMESPACE first with -A; LABELS last with --show-labels), the
// request and limit columns computed from each HRQ's status.hard and status.used.
import { GROUP, Plural, VERSION } from '../../core/api/constants.js';
import type { HierarchicalResourceQuota } from '../../core/api/types.js';
import { parseResourceList, summaries } from '../../core/hrq/hrq.js';
import type { AnyObject, HncApi, ResourceType } from '../api.js';
import { defineCommand } from '../cli/command.js';
import { boolFlag } from '../cli/flag-spec.js';
import { CliError, isNotFound } from '../errors.js';
import type { Io } from '../io.js';
import { alignColumns } from '../render/columns.js';
import { humanDuration } from '../render/duration.js';

const HRQ_TYPE: ResourceType = {
  group: GROUP,
  version: VERSION,
  resource: Plural.HierarchicalResourceQuota,
  kind: 'HierarchicalResourceQuota',
};

export interface HrqFlags {
  names: readonly string[];
  namespace: string;
  allNamespaces: boolean;
  showLabels: boolean;
}

/** The table's lines, or undefined when there is nothing to show. */
export function hrqTable(
  hrqs: readonly HierarchicalResourceQuota[],
  flags: Pick<HrqFlags, 'allNamespaces' | 'showLabels'>,
  now: Date,
): string[] | undefined {
  if (hrqs.length === 0) return undefined;
  const header = [
    ...(flags.allNamespaces ? ['NAMESPACE'] : []),
    'NAME',
    'AGE',
    'REQUEST',
    'LIMIT',
    ...(flags.showLabels ? ['LABELS'] : []),
  ];
  const rows = hrqs.map((h) => {
    const { requestsSummary, limitsSummary } = summaries(
      parseResourceList(h.status?.hard).quantities,
      parseResourceList(h.status?.used).quantities,
    );
    const created = h.metadata.creationTimestamp;
    const labels = Object.entries(h.metadata.labels ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .sort()
      .join(',');
    return [
      ...(flags.allNamespaces ? [h.metadata.namespace ?? ''] : []),
      h.metadata.name ?? '',
      created ? humanDuration(now.getTime() - Date.parse(created)) : '<unknown>',
      requestsSummary,
      limitsSummary,
      ...(flags.showLabels ? [labels || '<none>'] : []),
    ];
  });
  return alignColumns([header, ...rows], 3).map((l) => l.trimEnd());
}

export async function runHrq(api: HncApi, io: Io, flags: HrqFlags, now: Date): Promise<void> {
  let hrqs: HierarchicalResourceQuota[];
  if (flags.allNamespaces) {
    // As HNC: with -A, names are ignored.
    hrqs = (await api.listAll(HRQ_TYPE, undefined)).items as unknown as HierarchicalResourceQuota[];
  } else if (flags.names.length > 0) {
    hrqs = [];
    for (const name of flags.names) {
      const found = await api
        .getObject(flags.namespace, HRQ_TYPE, name)
        .catch((e: unknown) => (isNotFound(e) ? undefined : Promise.reject(e)));
      if (!found) throw new CliError(`Error from server (NotFound): hierarchicalresourcequotas.hnc.x-k8s.io "${name}" not found`);
      hrqs.push(found as unknown as HierarchicalResourceQuota);
    }
  } else {
    hrqs = (await api.listObjects(flags.namespace, HRQ_TYPE)) as unknown as HierarchicalResourceQuota[];
  }
  const sorted = [...hrqs].sort((a, b) => key(a).localeCompare(key(b)));
  const lines = hrqTable(sorted, flags, now);
  if (!lines) throw new CliError(flags.allNamespaces ? 'No resources found' : `No resources found in ${flags.namespace} namespace.`);
  io.out(`${lines.join('\n')}\n`);
}

const key = (h: AnyObject | HierarchicalResourceQuota): string => `${h.metadata?.namespace ?? ''}/${h.metadata?.name ?? ''}`;

export const hrqCommand = defineCommand({
  name: 'hrq',
  summary: 'Display one or more HierarchicalResourceQuota',
  usage: '[NAME] [flags]',
  examples: `  # List all HierarchicalResourceQuotas in the current namespace
  kubectl hns hrq

  # List all HierarchicalResourceQuotas in all namespaces
  kubectl hns hrq --all-namespaces

  # Show one HierarchicalResourceQuota in namespace team-a
  kubectl hns hrq team -n team-a`,
  flags: [
    { name: 'all-namespaces', short: 'A', kind: 'bool', description: 'Show HierarchicalResourceQuotas in all namespaces' },
    { name: 'show-labels', kind: 'bool', description: 'When printing, show all labels as the last column' },
  ],
  args: { min: 0, names: 'NAME' },
  async run({ args, flags, global, io, connect, now }) {
    const session = await connect();
    await runHrq(
      session.api,
      io,
      {
        names: args,
        namespace: global.namespace ?? session.namespace,
        allNamespaces: boolFlag(flags, 'all-namespaces'),
        showLabels: boolFlag(flags, 'show-labels'),
      },
      now(),
    );
  },
});
