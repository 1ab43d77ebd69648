import { describe, expect, it } from 'vitest';
import { Annotation, Label, PropagationMode, RBAC_GROUP, treeLabel } from '../api/constants.js';
import type { HierarchyConfiguration, NamespaceObject, SubnamespaceAnchor } from '../api/types.js';
import { HierarchyPolicy } from '../hierarchy/policy.js';
import { describeAccessChange } from '../access/access.js';
import type { PropagatableObject } from '../propagation/copy.js';
import type { HierarchyChange } from './model.js';
import { labelSelectorFromObject, previewChange, startPreview, type NetworkPolicyObject, type PreviewInput } from './preview.js';

// org ─┬─ team-a ── service-1 ── svc-1-sub [s]
//      └─ team-b
const ns = (name: string, extra: { subOf?: string; labels?: Record<string, string> } = {}): NamespaceObject => ({
  metadata: {
    name,
    labels: { [Label.includedNamespace]: 'true', ...extra.labels },
    ...(extra.subOf && { annotations: { [Annotation.subnamespaceOf]: extra.subOf } }),
  },
});
const hc = (namespace: string, parent?: string, acd = false): HierarchyConfiguration => ({
  metadata: { name: 'hierarchy', namespace },
  spec: { ...(parent && { parent }), ...(acd && { allowCascadingDeletion: true }) },
});
const anchor = (namespace: string, name: string): SubnamespaceAnchor => ({ metadata: { namespace, name }, status: { status: 'Ok' } });
const rb = (namespace: string, name: string, from?: string, roleRef = 'admin'): PropagatableObject =>
  ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { namespace, name, ...(from && { labels: { [Label.inheritedFrom]: from } }) },
    roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: roleRef },
    subjects: [{ kind: 'Group', apiGroup: RBAC_GROUP, name: name.replace(/-admins$/, '') }],
  }) as PropagatableObject;

const RB = { group: RBAC_GROUP, kind: 'RoleBinding', resource: 'rolebindings', mode: PropagationMode.Propagate };

function cluster(objects: PropagatableObject[], networkPolicies: NetworkPolicyObject[] = []): PreviewInput {
  return {
    policy: new HierarchyPolicy(),
    namespaces: [ns('org'), ns('team-a'), ns('team-b'), ns('service-1'), ns('svc-1-sub', { subOf: 'service-1' })],
    hierarchies: [hc('team-a', 'org'), hc('team-b', 'org'), hc('service-1', 'team-a')],
    anchors: [anchor('service-1', 'svc-1-sub')],
    types: [{ type: RB, objects }],
    networkPolicies,
  };
}

// Every copy in place: team-a's binding in service-1 and below, org's everywhere.
const settled = (): PropagatableObject[] => [
  rb('org', 'org-admins'),
  rb('team-a', 'team-a-admins'),
  rb('team-b', 'team-b-admins'),
  ...['team-a', 'team-b', 'service-1', 'svc-1-sub'].map((n) => rb(n, 'org-admins', 'org')),
  ...['service-1', 'svc-1-sub'].map((n) => rb(n, 'team-a-admins', 'team-a')),
];

describe('previewChange', () => {
  it('a move: tree labels, copies created and deleted in the whole subtree, nothing pending counted', () => {
    const p = previewChange(cluster(settled()), { op: 'set-parent', namespace: 'service-1', parent: 'team-b' });
    expect(p.affectedNamespaces).toEqual(['service-1', 'svc-1-sub']);
    expect(p.labels.find((l) => l.namespace === 'service-1')?.treeLabels).toEqual([
      { key: treeLabel('team-a'), before: '1' },
      { key: treeLabel('team-b'), after: '1' },
    ]);
    const names = (xs: { namespace: string; name: string; source: string }[]) => xs.map((x) => `${x.namespace}/${x.name}<${x.source}`);
    expect(names(p.copies.create)).toEqual(['service-1/team-b-admins<team-b', 'svc-1-sub/team-b-admins<team-b']);
    expect(names(p.copies.delete)).toEqual(['service-1/team-a-admins<team-a', 'svc-1-sub/team-a-admins<team-a']);
    expect(p.copies.update).toEqual([]);
    expect(p.halted).toEqual([]);
    expect(p.access.map(describeAccessChange)).toEqual([
      'group team-a: loses admin in service-1 (was inherited from team-a)',
      'group team-b: gains admin in service-1 (inherited from team-b)',
      'group team-a: loses admin in svc-1-sub (was inherited from team-a)',
      'group team-b: gains admin in svc-1-sub (inherited from team-b)',
    ]);
  });

  it('access: a deleted namespace takes every role held there with it, its own bindings too', () => {
    const p = previewChange(cluster([...settled(), rb('svc-1-sub', 'dev-admins')]), {
      op: 'delete-subnamespace',
      parent: 'service-1',
      child: 'svc-1-sub',
    });
    expect(p.access.map(describeAccessChange)).toEqual([
      'group dev: loses admin in svc-1-sub (was its own RoleBinding dev-admins)',
      'group org: loses admin in svc-1-sub (was inherited from org)',
      'group team-a: loses admin in svc-1-sub (was inherited from team-a)',
    ]);
  });

  it('work the controller has pending anyway is not put down to the change', () => {
    // team-b lacks org's copy: creating it is pending before and after the move of service-1.
    const objects = settled().filter((o) => !(o.metadata?.namespace === 'team-b' && o.metadata.name === 'org-admins'));
    const p = previewChange(cluster(objects), { op: 'set-parent', namespace: 'service-1', parent: 'team-b' });
    expect(p.copies.create.map((c) => c.namespace)).toEqual(['service-1', 'svc-1-sub']);
  });

  it("a user's object of a source's name is a conflict, never an update", () => {
    const objects = [...settled(), rb('service-1', 'team-b-admins', undefined, 'view')];
    const p = previewChange(cluster(objects), { op: 'set-parent', namespace: 'service-1', parent: 'team-b' });
    expect(p.copies.conflicts.map((c) => `${c.namespace}/${c.name}<${c.source}`)).toEqual(['service-1/team-b-admins<team-b']);
    expect(p.copies.create.map((c) => c.namespace)).toEqual(['svc-1-sub']);
  });

  it("--root: the subtree loses every inherited copy and its ancestors' tree labels", () => {
    const p = previewChange(cluster(settled()), { op: 'set-parent', namespace: 'service-1', parent: undefined });
    expect(p.copies.delete.map((c) => `${c.namespace}/${c.name}`)).toEqual([
      'service-1/org-admins',
      'service-1/team-a-admins',
      'svc-1-sub/org-admins',
      'svc-1-sub/team-a-admins',
    ]);
    expect(p.labels.find((l) => l.namespace === 'svc-1-sub')?.treeLabels).toEqual([
      { key: treeLabel('org'), before: '3' },
      { key: treeLabel('team-a'), before: '2' },
    ]);
  });

  it('a parent that does not exist halts the subtree: nothing is written there', () => {
    const p = previewChange(cluster(settled()), { op: 'set-parent', namespace: 'service-1', parent: 'nowhere' });
    expect(p.halted.map((h) => [h.namespace, h.haltedAt])).toEqual([
      ['service-1', 'service-1'],
      ['svc-1-sub', 'service-1'],
    ]);
    expect(p.halted[0]?.message).toBe('Parent "nowhere" does not exist');
    expect(p.copies).toEqual({ create: [], update: [], delete: [], conflicts: [] });
  });

  it('creating a subnamespace: it gets every copy from its new ancestors', () => {
    const p = previewChange(cluster(settled()), { op: 'create-subnamespace', parent: 'team-b', child: 'dev' });
    expect(p.createdNamespaces).toEqual(['dev']);
    expect(p.copies.create.map((c) => `${c.namespace}/${c.name}<${c.source}`)).toEqual(['dev/org-admins<org', 'dev/team-b-admins<team-b']);
    expect(p.labels).toEqual([
      {
        namespace: 'dev',
        treeLabels: [
          { key: treeLabel('dev'), after: '0' },
          { key: treeLabel('org'), after: '2' },
          { key: treeLabel('team-b'), after: '1' },
        ],
      },
    ]);
  });

  it('deleting a subnamespace: it and the subnamespaces below it go, with their copies', () => {
    const input = cluster(settled());
    const p = previewChange(
      {
        ...input,
        namespaces: [...input.namespaces, ns('deep', { subOf: 'svc-1-sub' })],
        anchors: [...input.anchors, anchor('svc-1-sub', 'deep')],
      },
      { op: 'delete-subnamespace', parent: 'service-1', child: 'svc-1-sub' },
    );
    expect(p.deletedNamespaces).toEqual(['deep', 'svc-1-sub']);
    expect(p.copies.delete.filter((c) => c.reason === 'namespace-deleted').map((c) => `${c.namespace}/${c.name}`)).toEqual([
      'svc-1-sub/org-admins',
      'svc-1-sub/team-a-admins',
    ]);
  });

  it('NetworkPolicies selecting on tree labels start and stop matching', () => {
    const np = (namespace: string, name: string, team: string): NetworkPolicyObject => ({
      metadata: { namespace, name },
      spec: { ingress: [{ from: [{ namespaceSelector: { matchExpressions: [{ key: treeLabel(team), operator: 'Exists' }] } }] }] },
    });
    const p = previewChange(
      cluster(settled(), [np('team-a', 'from-team-a', 'team-a'), np('team-b', 'from-team-b', 'team-b'), np('org', 'from-org', 'org')]),
      {
        op: 'set-parent',
        namespace: 'service-1',
        parent: 'team-b',
      },
    );
    expect(p.networkPolicies).toEqual([
      { namespace: 'team-a', name: 'from-team-a', startsMatching: [], stopsMatching: ['service-1', 'svc-1-sub'] },
      { namespace: 'team-b', name: 'from-team-b', startsMatching: ['service-1', 'svc-1-sub'], stopsMatching: [] },
    ]);
  });

  it('label selector objects: matchLabels and the four operators; an unknown operator selects nothing', () => {
    expect(
      labelSelectorFromObject({ matchLabels: { a: '1' }, matchExpressions: [{ key: 'b', operator: 'NotIn', values: ['y', 'x', 'x'] }] }),
    ).toEqual({
      requirements: [
        { key: 'a', operator: '=', values: ['1'] },
        { key: 'b', operator: 'notin', values: ['x', 'y'] },
      ],
    });
    expect(labelSelectorFromObject({ matchExpressions: [{ key: 'b', operator: 'Gt' }] })).toBeUndefined();
  });
});

describe('startPreview: the scope of what a preview reads', () => {
  // Beside the forest above: team-c under org, with its own sources and org's copy, a source in
  // team-c named as team-b's, and a stale copy from team-c in service-1.
  const input = (): PreviewInput => {
    const base = cluster([
      ...settled(),
      rb('org', 'org-viewers', undefined, 'view'),
      rb('team-c', 'team-c-admins'),
      rb('team-c', 'team-b-admins'),
      rb('team-c', 'org-admins', 'org'),
      rb('service-1', 'team-c-admins', 'team-c'),
      rb('svc-1-sub', 'dev-admins'),
    ]);
    return {
      ...base,
      namespaces: [...base.namespaces, ns('team-c'), ns('deep', { subOf: 'svc-1-sub' })],
      hierarchies: [...base.hierarchies, hc('team-c', 'org')],
      anchors: [...base.anchors, anchor('svc-1-sub', 'deep')],
    };
  };
  const changes: HierarchyChange[] = [
    { op: 'set-parent', namespace: 'service-1', parent: 'team-b' },
    { op: 'set-parent', namespace: 'service-1', parent: 'team-c' },
    { op: 'set-parent', namespace: 'service-1', parent: undefined },
    { op: 'set-parent', namespace: 'service-1', parent: 'nowhere' },
    { op: 'set-parent', namespace: 'team-a', parent: 'svc-1-sub' },
    { op: 'set-parent', namespace: 'service-1', parent: 'team-a', allowCascadingDeletion: true },
    { op: 'create-subnamespace', parent: 'team-b', child: 'dev' },
    { op: 'delete-subnamespace', parent: 'service-1', child: 'svc-1-sub' },
    { op: 'delete-subnamespace', parent: 'team-b', child: 'not-there' },
  ];

  for (const change of changes) {
    it(`${JSON.stringify(change)}: the objects outside the scope change nothing`, () => {
      const all = input();
      const started = startPreview(all, change);
      const inScope = all.types.map((t) => ({ ...t, objects: t.objects.filter((o) => started.scope.has(o.metadata?.namespace ?? '')) }));
      expect(started.finish({ ...all, types: inScope })).toEqual(previewChange(all, change));
    });
  }

  it('the scope of a move: the subtree, its ancestors before and after, nothing else', () => {
    const started = startPreview(input(), { op: 'set-parent', namespace: 'service-1', parent: 'team-b' });
    expect([...started.scope].sort()).toEqual(['deep', 'org', 'service-1', 'svc-1-sub', 'team-a', 'team-b']);
    const moved = startPreview(input(), { op: 'set-parent', namespace: 'service-1', parent: 'team-c' });
    expect([...moved.scope].sort()).toEqual(['deep', 'org', 'service-1', 'svc-1-sub', 'team-a', 'team-c']);
  });
});

describe('startPreview.inSync: the copies synthesized from the sources, when the cluster is in sync', () => {
  // org ─┬─ team-a ── service-1 ── svc-1-sub [s] ── deep [s]
  //      ├─ team-b
  //      └─ team-c
  // orphan (its parent "gone" does not exist: halted, its stale copies stay); kube-system (not managed).
  const SELECT = 'propagate.hnc.x-k8s.io/select';
  const TREE_SELECT = 'propagate.hnc.x-k8s.io/treeSelect';
  const NONE = 'propagate.hnc.x-k8s.io/none';
  const annotated = (o: PropagatableObject, annotations: Record<string, string>): PropagatableObject =>
    ({ ...o, metadata: { ...o.metadata, annotations } }) as PropagatableObject;
  const obj = (kind: string, namespace: string, name: string, from?: string, extra: Record<string, unknown> = {}): PropagatableObject =>
    ({
      apiVersion: 'v1',
      kind,
      metadata: { namespace, name, ...(from && { labels: { [Label.inheritedFrom]: from } }) },
      ...extra,
    }) as PropagatableObject;
  const CM = { group: '', kind: 'ConfigMap', resource: 'configmaps', mode: PropagationMode.Remove };
  const SECRET = { group: '', kind: 'Secret', resource: 'secrets', mode: PropagationMode.AllowPropagate };

  // The ClusterRole each of org's bindings grants; copies grant their source's.
  const ROLE: Record<string, string> = {
    'org-admins': 'admin',
    'org-none': 'admin',
    'org-a-only': 'view',
    'org-not-b': 'edit',
    'org-labelled': 'view',
  };
  const rbs = (): PropagatableObject[] => {
    const org = (ns: string, names: string[]) => names.map((n) => rb(ns, n, 'org', ROLE[n]));
    return [
      rb('org', 'org-admins'),
      annotated(rb('org', 'org-none'), { [NONE]: 'true' }),
      annotated(rb('org', 'org-a-only', undefined, 'view'), { [TREE_SELECT]: 'team-a' }),
      annotated(rb('org', 'org-not-b', undefined, 'edit'), { [TREE_SELECT]: '!team-b' }),
      annotated(rb('org', 'org-labelled', undefined, 'view'), { [SELECT]: 'env=prod' }),
      rb('team-a', 'team-a-admins'),
      rb('team-b', 'team-b-admins'),
      rb('team-c', 'team-b-admins', undefined, 'view'),
      rb('service-1', 'org-admins', undefined, 'view'), // a user's object in the way of org's: a conflict
      ...org('team-a', ['org-a-only', 'org-admins', 'org-not-b']),
      ...org('team-b', ['org-admins']),
      ...org('team-c', ['org-admins', 'org-labelled', 'org-not-b']),
      ...org('service-1', ['org-a-only', 'org-not-b']),
      rb('service-1', 'team-a-admins', 'team-a'),
      ...['svc-1-sub', 'deep'].flatMap((ns) => [...org(ns, ['org-a-only', 'org-admins', 'org-not-b']), rb(ns, 'team-a-admins', 'team-a')]),
      // Left as they were: the halted namespace's and an unmanaged namespace's.
      rb('orphan', 'org-admins', 'org'),
      rb('orphan', 'old-admins', 'nowhere'),
      rb('kube-system', 'stray', 'org'),
    ];
  };
  const configMaps = (): PropagatableObject[] => [
    obj('ConfigMap', 'org', 'org-config', undefined, { data: { a: '1' } }),
    obj('ConfigMap', 'orphan', 'org-config', 'org', { data: { a: '1' } }), // Remove mode: none in sync, but a halted namespace keeps its own
  ];
  const secrets = (): PropagatableObject[] => [
    obj('Secret', 'org', 'plain', undefined, { data: { k: 'dg==' } }), // AllowPropagate: not without a selector
    annotated(obj('Secret', 'org', 'shared', undefined, { data: { k: 'dg==' } }), { [TREE_SELECT]: 'team-c' }),
    obj('Secret', 'team-c', 'shared', 'org', { data: { k: 'dg==' } }),
  ];

  const input = (): PreviewInput => ({
    policy: new HierarchyPolicy(),
    namespaces: [
      ns('org'),
      ns('team-a'),
      ns('team-b'),
      ns('team-c', { labels: { env: 'prod' } }),
      ns('service-1'),
      ns('svc-1-sub', { subOf: 'service-1' }),
      ns('deep', { subOf: 'svc-1-sub' }),
      ns('orphan'),
      { metadata: { name: 'kube-system' } },
    ],
    hierarchies: [hc('team-a', 'org'), hc('team-b', 'org'), hc('team-c', 'org'), hc('service-1', 'team-a'), hc('orphan', 'gone')],
    anchors: [anchor('service-1', 'svc-1-sub'), anchor('svc-1-sub', 'deep')],
    types: [
      { type: RB, objects: rbs() },
      { type: CM, objects: configMaps() },
      { type: SECRET, objects: secrets() },
    ],
    networkPolicies: [],
    clusterRoles: ['admin', 'edit', 'view'],
  });

  const nsOf = (o: PropagatableObject) => o.metadata?.namespace ?? '';
  const copiesOf = (all: PreviewInput) =>
    all.types.map((t) => t.objects.filter((o) => o.metadata?.labels?.[Label.inheritedFrom] !== undefined).length);
  /** What the plugin reads on the fast path: the sources, and the copies where the controller keeps none. */
  const fastRead = (all: PreviewInput, unkept: readonly string[]) => ({
    sources: all.types.map((t) => ({ ...t, objects: t.objects.filter((o) => o.metadata?.labels?.[Label.inheritedFrom] === undefined) })),
    unkeptCopies: all.types.map((t) =>
      t.objects.filter((o) => o.metadata?.labels?.[Label.inheritedFrom] !== undefined && unkept.includes(nsOf(o))),
    ),
  });

  const changes: HierarchyChange[] = [
    { op: 'set-parent', namespace: 'service-1', parent: 'team-b' },
    { op: 'set-parent', namespace: 'service-1', parent: 'team-c' },
    { op: 'set-parent', namespace: 'service-1', parent: undefined },
    { op: 'set-parent', namespace: 'service-1', parent: 'nowhere' },
    { op: 'set-parent', namespace: 'team-a', parent: 'deep' },
    { op: 'set-parent', namespace: 'team-c', parent: 'team-a' },
    { op: 'set-parent', namespace: 'team-b', parent: 'team-c' },
    { op: 'set-parent', namespace: 'orphan', parent: 'team-b' },
    { op: 'set-parent', namespace: 'orphan', parent: 'gone' },
    { op: 'set-parent', namespace: 'service-1', parent: 'team-a', allowCascadingDeletion: true },
    { op: 'create-subnamespace', parent: 'team-c', child: 'dev' },
    { op: 'create-subnamespace', parent: 'deep', child: 'deeper' },
    { op: 'delete-subnamespace', parent: 'service-1', child: 'svc-1-sub' },
    { op: 'delete-subnamespace', parent: 'team-b', child: 'not-there' },
  ];

  it('the namespaces where the controller keeps no copy: halted and unmanaged ones', () => {
    expect(startPreview(input(), changes[0]!).unkept).toEqual(['kube-system', 'orphan']);
  });

  for (const change of changes) {
    it(`${JSON.stringify(change)}: the same preview as from every object, and the same number of copies`, () => {
      const all = input();
      const full = previewChange(all, change);
      const started = startPreview(all, change);
      const synthesized = started.inSync(fastRead(all, started.unkept));
      expect(synthesized.copies).toEqual(copiesOf(all));
      // The controller counts neither kube-system's stray copy nor any copy of the Remove mode's but the halted namespace's.
      expect(synthesized.counted).toEqual([copiesOf(all)[0]! - 1, 1, 1]);
      expect(started.finish({ ...all, types: synthesized.types })).toEqual(full);
    });
  }

  it('the fixture is not trivial: moves show conflicts, selectors at work, Remove and AllowPropagate copies', () => {
    const p = previewChange(input(), { op: 'set-parent', namespace: 'team-c', parent: 'team-a' });
    const keys = (xs: { kind: string; namespace: string; name: string; source: string }[]) =>
      xs.map((x) => `${x.kind} ${x.namespace}/${x.name}<${x.source}`);
    expect(keys(p.copies.create)).toEqual(['RoleBinding team-c/org-a-only<org', 'RoleBinding team-c/team-a-admins<team-a']);
    const conflict = previewChange(input(), { op: 'set-parent', namespace: 'team-c', parent: 'team-b' });
    expect(keys(conflict.copies.conflicts)).toEqual(['RoleBinding team-c/team-b-admins<team-b']);
    expect(keys(conflict.copies.delete)).toEqual(['RoleBinding team-c/org-not-b<org']); // treeSelect !team-b
    const cycle = previewChange(input(), { op: 'set-parent', namespace: 'orphan', parent: 'team-b' });
    expect(keys(cycle.copies.delete)).toEqual(['RoleBinding orphan/old-admins<nowhere', 'ConfigMap orphan/org-config<org']);
  });

  it('a copy deleted, or one added, shows in the counts (the plugin then reads every copy)', () => {
    const all = input();
    const missing = {
      ...all,
      types: all.types.map((t, i) =>
        i ? t : { ...t, objects: t.objects.filter((o) => !(nsOf(o) === 'deep' && o.metadata?.name === 'org-admins')) },
      ),
    };
    const started = startPreview(missing, changes[0]!);
    expect(started.inSync(fastRead(missing, started.unkept)).copies[0]).toBe(copiesOf(missing)[0]! + 1);
    const extra = {
      ...all,
      types: all.types.map((t, i) => (i ? t : { ...t, objects: [...t.objects, rb('team-b', 'left-over', 'team-a')] })),
    };
    const again = startPreview(extra, changes[0]!);
    expect(again.inSync(fastRead(extra, again.unkept)).copies[0]).toBe(copiesOf(extra)[0]! - 1);
  });
});
