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
