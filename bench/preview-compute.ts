// `npx tsx bench/preview-compute.ts [--size 1000] [--objects 10] [--runs 5] [--in-sync]`
//
// The computing half of `kubectl hns set sub --parent team-b --dry-run` (bench/preview.ts), in
// process and without a cluster, so it can be profiled (`node --cpu-prof --import tsx ...`): the
// same forest and RoleBindings as bench/preview.ts builds, as the API server lists them (server
// metadata and managedFields included), parsed from JSON text and read as the plugin reads them, then
// previewChange (core/preview) run on them. Prints the median time of the parse and of the
// computation. With --in-sync, only the sources are parsed and the copies are made from them
// (StartedPreview.inSync), as the plugin does when the counts say the cluster is in sync, and the
// CPU time of each part is printed, the text the plugin would print included (and counted in the
// computation's time). See docs/benchmarks.md.
import { checkedPreviewCounts, previewForest } from './preview-forest.js';
import { parseArgs } from 'node:util';
import { API_VERSION, Label, treeLabel } from '../core/api/constants.js';
import type { HierarchyConfiguration, NamespaceObject } from '../core/api/types.js';
import { desiredCopy, type PropagatableObject } from '../core/propagation/copy.js';
import { previewChange, startPreview, type PreviewInput } from '../core/preview/index.js';
import type { AnyObject } from '../kubectl-plugin/api.js';
import { policyFromLabels, withoutManagedFields } from '../kubectl-plugin/commands/preview.js';
import { renderPreviewText } from '../kubectl-plugin/render/preview-text.js';
import { median } from './commands.js';

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: '1000' },
    objects: { type: 'string', default: '10' },
    runs: { type: 'string', default: '5' },
    'in-sync': { type: 'boolean', default: false },
  },
});
const size = Number(values.size);
const perNamespace = Number(values.objects);
const runs = Number(values.runs);

const { parents, moved, others, ancestry } = previewForest(size);

let rv = 1000;
/** What the API server adds to an object it stores. */
const served = <T extends { metadata: object }>(o: T, manager: string): T => ({
  ...o,
  metadata: {
    ...o.metadata,
    uid: `00000000-0000-4000-8000-${String(rv).padStart(12, '0')}`,
    resourceVersion: String(rv++),
    creationTimestamp: '2026-12-01T17:00:00Z',
    managedFields: [
      {
        manager,
        operation: 'Update',
        apiVersion: 'v1',
        time: '2026-12-01T17:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:metadata': { 'f:labels': { '.': {} } }, 'f:roleRef': {}, 'f:subjects': {} },
      },
    ],
  },
});

const namespaces: NamespaceObject[] = [];
const hierarchies: HierarchyConfiguration[] = [];
for (const name of parents.keys()) {
  const labels: Record<string, string> = { [Label.includedNamespace]: 'true', 'kubernetes.io/metadata.name': name };
  ancestry(name).forEach((a, depth) => (labels[treeLabel(a)] = String(depth)));
  namespaces.push(
    served({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels }, spec: { finalizers: ['kubernetes'] } }, 'bench'),
  );
  const parent = parents.get(name);
  const children = [...parents].filter(([, p]) => p === name).map(([c]) => c);
  if (parent || children.length)
    hierarchies.push(
      served(
        {
          apiVersion: API_VERSION,
          kind: 'HierarchyConfiguration',
          metadata: { name: 'hierarchy', namespace: name },
          spec: parent ? { parent } : {},
          status: { children },
        },
        'bench',
      ),
    );
}
const bindings: PropagatableObject[] = [];
for (const [team, below] of [
  ['team-a', moved],
  ['team-b', others],
] as const) {
  for (let i = 0; i < perNamespace; i++) {
    const src = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: `${team}-rb-${i}`, namespace: team },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: i % 2 ? 'view' : 'edit' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: `${team}-group-${i}` }],
    };
    bindings.push(served(src, 'bench'));
    for (const ns of below) bindings.push(served(desiredCopy(src, team, ns) as typeof src, 'hnc'));
  }
}
for (const ns of parents.keys())
  bindings.push(
    served(
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'lead', namespace: ns },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'lead' }],
      },
      'bench',
    ),
  );
// The lists as text, as the plugin receives them.
const texts = {
  namespaces: JSON.stringify({ kind: 'NamespaceList', items: namespaces }),
  hierarchies: JSON.stringify({ kind: 'HierarchyConfigurationList', items: hierarchies }),
  bindings: JSON.stringify({ kind: 'RoleBindingList', items: bindings }),
  sources: JSON.stringify({
    kind: 'RoleBindingList',
    items: bindings.filter((b) => b.metadata?.labels?.[Label.inheritedFrom] === undefined),
  }),
};
console.error(
  `${namespaces.length} namespaces, ${bindings.length} RoleBindings, ${(texts.bindings.length / 1e6).toFixed(1)} MB of RoleBindings`,
);

const parseMs: number[] = [];
const computeMs: number[] = [];
const computeCpuMs: number[] = [];
for (let r = 0; r < runs; r++) {
  const t0 = performance.now();
  const ns = (JSON.parse(texts.namespaces) as { items: NamespaceObject[] }).items;
  const hcs = (JSON.parse(texts.hierarchies) as { items: HierarchyConfiguration[] }).items;
  // As the plugin's list reads hand them on (kubectl-plugin/kube-api.ts listAll, commands/preview.ts).
  const rbList = JSON.parse(values['in-sync'] ? texts.sources : texts.bindings) as {
    apiVersion?: string;
    kind: string;
    items: AnyObject[];
  };
  const rbs = withoutManagedFields(rbList.items.map((o) => ({ apiVersion: rbList.apiVersion, kind: 'RoleBinding', ...o })));
  const t1 = performance.now();
  const cpu1 = process.cpuUsage();
  const input: PreviewInput = {
    policy: policyFromLabels(ns),
    namespaces: ns,
    hierarchies: hcs,
    anchors: [],
    types: [
      { type: { group: 'rbac.authorization.k8s.io', kind: 'Role', resource: 'roles', mode: 'Propagate' }, objects: [] },
      { type: { group: 'rbac.authorization.k8s.io', kind: 'RoleBinding', resource: 'rolebindings', mode: 'Propagate' }, objects: rbs },
    ],
    networkPolicies: [],
    clusterRoles: ['admin', 'edit', 'view'],
  };
  const change = { op: 'set-parent', namespace: 'sub', parent: 'team-b' } as const;
  let preview;
  if (values['in-sync']) {
    const cpu = () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    };
    const c0 = cpu();
    const started = startPreview(input, change);
    const c1 = cpu();
    const synthesized = started.inSync({ sources: input.types, unkeptCopies: input.types.map(() => []) });
    const c2 = cpu();
    preview = started.finish({ ...input, types: synthesized.types });
    const c3 = cpu();
    // The text as the plugin prints it with --dry-run=client (kubectl-plugin/commands/preview.ts runPreview).
    const text = renderPreviewText({
      kind: 'HierarchyChangePreview',
      apiVersion: API_VERSION,
      summary: 'set the parent of sub to team-b',
      dryRun: 'client',
      admission: { checked: false, allowed: true, checks: [] },
      ...preview,
      notes: [],
    });
    console.error(
      `CPU: startPreview ${Math.round(c1 - c0)} ms, inSync ${Math.round(c2 - c1)} ms, finish ${Math.round(c3 - c2)} ms, text ${Math.round(cpu() - c3)} ms (${text.length} characters)`,
    );
  } else preview = previewChange(input, change);
  const t2 = performance.now();
  const cpu = process.cpuUsage(cpu1);
  parseMs.push(t1 - t0);
  computeMs.push(t2 - t1);
  computeCpuMs.push((cpu.user + cpu.system) / 1000);
  const counts = checkedPreviewCounts(preview, size, perNamespace);
  console.error(
    `run ${r + 1}: parse ${Math.round(t1 - t0)} ms, compute ${Math.round(t2 - t1)} ms (CPU ${Math.round(computeCpuMs.at(-1)!)} ms) ${JSON.stringify(counts)}`,
  );
}
console.log(
  JSON.stringify({
    size,
    objectsPerNamespace: perNamespace,
    runs,
    parseMs: Math.round(median(parseMs)),
    computeMs: Math.round(median(computeMs)),
    computeCpuMs: Math.round(median(computeCpuMs)),
  }),
);
