import { describe, expect, it } from 'vitest';
import { hierarchy, tree, updateHierarchy, updateNamespace } from '../hierarchy/testing.js';
import { validateNamespace } from './namespace.js';
import { create, del, denied, empty, INCLUDED, namespace, refusal, update } from './testing.js';

const ALLOWED = { allowed: true };
const DOC = 'https://github.com/kubernetes-sigs/hierarchical-namespaces/blob/master/docs/user-guide/concepts.md#included-namespace-label';
const forbidden = (ns: string, msg: string) => denied(403, 'Forbidden', `namespaces "${ns}" is forbidden: ${msg}`);
const unmanagedWithLabel = (ns: string) =>
  forbidden(
    ns,
    `you cannot enforce webhook rules on this unmanaged namespace using the "hnc.x-k8s.io/included-namespace" label. See ${DOC} for detail`,
  );
const wrongLabelValue = (ns: string) =>
  forbidden(
    ns,
    `you cannot change the value of the "hnc.x-k8s.io/included-namespace" label. It has to be set as true on all managed namespaces. See ${DOC} for detail`,
  );
const setTreeLabel = (ns: string, key: string) =>
  forbidden(ns, `cannot set or modify tree label "${key}" in namespace "${ns}"; these can only be managed by HNC`);
const removeTreeLabel = (ns: string, key: string) =>
  forbidden(ns, `cannot remove tree label "${key}" in namespace "${ns}"; these can only be managed by HNC`);
const MANAGED_BY = 'hnc.x-k8s.io/managed-by';

/** `ext` is managed by another tool that has put it below `corp` and `org` in its own tree. */
function withExternal(text = 'a -> b, ext') {
  const h = hierarchy(text);
  updateNamespace(h, 'ext', { annotations: { [MANAGED_BY]: 'argo' }, labels: tree({ ext: 0, corp: 1, org: 2 }) });
  return h;
}

describe('namespace validator: CREATE (docs/behaviour.md §7.7)', () => {
  const h = hierarchy('a');

  it('allows a managed namespace with the included label', () => {
    expect(validateNamespace(h, create(namespace('new', { labels: INCLUDED })))).toEqual(ALLOWED);
  });

  it('allows an unmanaged namespace without the label', () => {
    expect(validateNamespace(h, create(namespace('kube-system')))).toEqual(ALLOWED);
  });

  it('refuses the included label on an unmanaged namespace', () => {
    expect(validateNamespace(h, create(namespace('kube-system', { labels: INCLUDED })))).toEqual(unmanagedWithLabel('kube-system'));
    const regex = hierarchy('a', { policy: { includedNamespaceRegex: 'team-.*' } });
    expect(validateNamespace(regex, create(namespace('other', { labels: { 'hnc.x-k8s.io/included-namespace': 'false' } })))).toEqual(
      unmanagedWithLabel('other'),
    );
  });

  it('refuses a managed namespace whose label is not "true", or missing (when the mutator did not run)', () => {
    expect(validateNamespace(h, create(namespace('new', { labels: { 'hnc.x-k8s.io/included-namespace': 'yes' } })))).toEqual(
      wrongLabelValue('new'),
    );
    expect(validateNamespace(h, create(namespace('new')))).toEqual(wrongLabelValue('new'));
  });

  it("refuses (Conflict) a name that an external namespace's tree labels reserve", () => {
    const ext = withExternal();
    const reserved = denied(
      409,
      'Conflict',
      'Operation cannot be fulfilled on namespaces "corp": is reserved by the external hierarchy manager "argo"',
    );
    expect(validateNamespace(ext, create(namespace('corp', { labels: INCLUDED })))).toEqual(reserved);
    expect(validateNamespace(ext, create(namespace('org', { labels: INCLUDED }))).allowed).toBe(false);
    expect(validateNamespace(ext, create(namespace('other', { labels: INCLUDED })))).toEqual(ALLOWED);
  });

  it('only reserves names for external namespaces', () => {
    const h2 = hierarchy('a');
    updateNamespace(h2, 'a', { labels: tree({ a: 0, corp: 1 }) }); // stray labels on an HNC namespace
    expect(validateNamespace(h2, create(namespace('corp', { labels: INCLUDED })))).toEqual(ALLOWED);
  });

  it('refuses tree labels on a new namespace', () => {
    const key = 'a.tree.hnc.x-k8s.io/depth';
    expect(validateNamespace(h, create(namespace('new', { labels: { ...INCLUDED, [key]: '1' } })))).toEqual(setTreeLabel('new', key));
    // Even its own depth-0 label: only HNC writes those.
    expect(validateNamespace(h, create(namespace('new', { labels: { ...INCLUDED, ...tree({ new: 0 }) } })))).toEqual(
      setTreeLabel('new', 'new.tree.hnc.x-k8s.io/depth'),
    );
  });

  it('checks the included label, then reserved names, then tree labels', () => {
    const ext = withExternal();
    const all = { labels: { 'hnc.x-k8s.io/included-namespace': 'no', ...tree({ x: 1 }) } };
    expect(validateNamespace(ext, create(namespace('corp', all)))).toEqual(wrongLabelValue('corp'));
    expect(refusal(validateNamespace(ext, create(namespace('corp', { labels: { ...INCLUDED, ...tree({ x: 1 }) } })))).reason).toBe(
      'Conflict',
    );
  });

  it('exempts HNC', () => {
    expect(
      validateNamespace(withExternal(), create(namespace('corp', { labels: { ...tree({ corp: 0 }) } }), { hncServiceAccount: true })),
    ).toEqual(ALLOWED);
  });
});

describe('namespace validator: UPDATE (docs/behaviour.md §7.7)', () => {
  it('allows ordinary edits', () => {
    const h = hierarchy('a -> b');
    const before = namespace('b', { labels: { ...INCLUDED, ...tree({ b: 0, a: 1 }) } });
    const after = namespace('b', { labels: { ...INCLUDED, ...tree({ b: 0, a: 1 }), env: 'dev' } });
    expect(validateNamespace(h, update(before, after))).toEqual(ALLOWED);
  });

  it('only checks the included label when it changes', () => {
    const h = hierarchy('a');
    // An excluded namespace that already carries the label (from before it was excluded) can still be edited.
    const old = namespace('kube-system', { labels: INCLUDED });
    expect(validateNamespace(h, update(old, namespace('kube-system', { labels: { ...INCLUDED, x: 'y' } })))).toEqual(ALLOWED);
    expect(validateNamespace(h, update(old, namespace('kube-system', { labels: { 'hnc.x-k8s.io/included-namespace': 'false' } })))).toEqual(
      unmanagedWithLabel('kube-system'),
    );
  });

  it('refuses adding the label to an unmanaged namespace', () => {
    expect(validateNamespace(hierarchy('a'), update(namespace('kube-public'), namespace('kube-public', { labels: INCLUDED })))).toEqual(
      unmanagedWithLabel('kube-public'),
    );
  });

  it('refuses changing or removing the label of a managed namespace', () => {
    const h = hierarchy('a');
    const old = namespace('a', { labels: INCLUDED });
    expect(validateNamespace(h, update(old, namespace('a', { labels: { 'hnc.x-k8s.io/included-namespace': 'false' } })))).toEqual(
      wrongLabelValue('a'),
    );
    expect(validateNamespace(h, update(old, namespace('a')))).toEqual(wrongLabelValue('a'));
  });

  it('allows removing the label from an unmanaged namespace', () => {
    expect(validateNamespace(hierarchy('a'), update(namespace('kube-system', { labels: INCLUDED }), namespace('kube-system')))).toEqual(
      ALLOWED,
    );
  });

  it('refuses making a child external', () => {
    const h = hierarchy('a -> b');
    const d = validateNamespace(
      h,
      update(namespace('b', { labels: INCLUDED }), namespace('b', { labels: INCLUDED, annotations: { [MANAGED_BY]: 'argo' } })),
    );
    expect(d).toEqual(
      forbidden(
        'b',
        'is a child of "a". Namespaces with parents defined by HNC cannot also be managed externally. To manage this namespace with "argo", first make it a root in HNC',
      ),
    );
  });

  it('allows making a root external, and "managed by HNC" anywhere', () => {
    const h = hierarchy('a -> b');
    expect(
      validateNamespace(
        h,
        update(namespace('a', { labels: INCLUDED }), namespace('a', { labels: INCLUDED, annotations: { [MANAGED_BY]: 'argo' } })),
      ),
    ).toEqual(ALLOWED);
    expect(
      validateNamespace(
        h,
        update(namespace('b', { labels: INCLUDED }), namespace('b', { labels: INCLUDED, annotations: { [MANAGED_BY]: 'hnc.x-k8s.io' } })),
      ),
    ).toEqual(ALLOWED);
    expect(
      validateNamespace(
        h,
        update(namespace('b', { labels: INCLUDED }), namespace('b', { labels: INCLUDED, annotations: { [MANAGED_BY]: '' } })),
      ),
    ).toEqual(ALLOWED);
  });

  it('judges the parent from the forest, whatever the HC says now', () => {
    // An orphan still has its (missing) parent in the forest.
    const h = hierarchy('gone? -> b');
    const d = validateNamespace(
      h,
      update(namespace('b', { labels: INCLUDED }), namespace('b', { labels: INCLUDED, annotations: { [MANAGED_BY]: 'argo' } })),
    );
    expect(d.allowed).toBe(false);
  });

  it('refuses adding, changing or removing tree labels', () => {
    const h = hierarchy('a -> b');
    const labels: Record<string, string> = { ...INCLUDED, ...tree({ b: 0, a: 1 }) };
    const old = namespace('b', { labels });
    expect(validateNamespace(h, update(old, namespace('b', { labels: { ...labels, ...tree({ x: 2 }) } })))).toEqual(
      setTreeLabel('b', 'x.tree.hnc.x-k8s.io/depth'),
    );
    expect(validateNamespace(h, update(old, namespace('b', { labels: { ...labels, ...tree({ a: 5 }) } })))).toEqual(
      setTreeLabel('b', 'a.tree.hnc.x-k8s.io/depth'),
    );
    const { ['a.tree.hnc.x-k8s.io/depth']: _gone, ...withoutA } = labels;
    expect(validateNamespace(h, update(old, namespace('b', { labels: withoutA })))).toEqual(
      removeTreeLabel('b', 'a.tree.hnc.x-k8s.io/depth'),
    );
  });

  it('reports tree label changes in key order, additions before removals', () => {
    const h = hierarchy('a -> b');
    const old = namespace('b', { labels: { ...INCLUDED, ...tree({ b: 0, a: 1 }) } });
    const now = namespace('b', { labels: { ...INCLUDED, ...tree({ z: 1, y: 2 }) } });
    expect(validateNamespace(h, update(old, now))).toEqual(setTreeLabel('b', 'y.tree.hnc.x-k8s.io/depth'));
  });

  it('checks the included label, then the external manager, then tree labels', () => {
    const h = hierarchy('a -> b');
    const old = namespace('b', { labels: INCLUDED });
    const bad = (labels: Record<string, string>) =>
      namespace('b', { labels: { ...labels, ...tree({ q: 1 }) }, annotations: { [MANAGED_BY]: 'argo' } });
    expect(validateNamespace(h, update(old, bad({})))).toEqual(wrongLabelValue('b'));
    expect(refusal(validateNamespace(h, update(old, bad(INCLUDED)))).message).toContain('is a child of "a"');
  });

  it('exempts HNC', () => {
    const h = hierarchy('a -> b');
    const d = validateNamespace(
      h,
      update(namespace('b', { labels: INCLUDED }), namespace('b', { labels: tree({ b: 0 }), annotations: { [MANAGED_BY]: 'argo' } }), {
        hncServiceAccount: true,
      }),
    );
    expect(d).toEqual(ALLOWED);
  });
});

describe('namespace validator: DELETE (docs/behaviour.md §7.7, §4.3)', () => {
  const subnsOf = (parent: string) => ({ annotations: { 'hnc.x-k8s.io/subnamespace-of': parent } });

  it('allows deleting a leaf or a namespace with only full children', () => {
    const h = hierarchy('a -> b');
    expect(validateNamespace(h, del(namespace('b')))).toEqual(ALLOWED);
    expect(validateNamespace(h, del(namespace('a')))).toEqual(ALLOWED);
  });

  it('refuses deleting a subnamespace while its anchor exists', () => {
    const h = hierarchy('a -> b', { subns: ['b'] });
    expect(validateNamespace(h, del(namespace('b', subnsOf('a'))))).toEqual(
      forbidden('b', 'is a subnamespace. Please delete the anchor from the parent namespace a to delete the subnamespace'),
    );
  });

  it('allows deleting a subnamespace whose anchor is gone', () => {
    const h = hierarchy('a -> b');
    updateNamespace(h, 'b', subnsOf('a'));
    expect(validateNamespace(h, del(namespace('b', subnsOf('a'))))).toEqual(ALLOWED);
  });

  it('refuses deleting a namespace that holds subnamespaces without cascading deletion', () => {
    const h = hierarchy('a -> b, a -> c', { subns: ['c'] });
    expect(validateNamespace(h, del(namespace('a')))).toEqual(
      forbidden(
        'a',
        "contains subnamespaces. Please remove all subnamespaces before deleting this namespace, or set 'allowCascadingDeletion' to delete them automatically",
      ),
    );
  });

  it('allows it with allowCascadingDeletion on the namespace or an ancestor', () => {
    const h = hierarchy('root -> a -> c', { subns: ['c'] });
    updateHierarchy(h, 'a', { allowCascadingDeletion: true });
    expect(validateNamespace(h, del(namespace('a')))).toEqual(ALLOWED);
    const h2 = hierarchy('root -> a -> c', { subns: ['c'] });
    updateHierarchy(h2, 'root', { allowCascadingDeletion: true });
    expect(validateNamespace(h2, del(namespace('a')))).toEqual(ALLOWED);
  });

  it('allows deleting namespaces HNC does not know', () => {
    expect(validateNamespace(hierarchy('a'), del(namespace('kube-system')))).toEqual(ALLOWED);
  });

  it('checks the anchor before the subnamespace children', () => {
    const h = hierarchy('a -> b -> c', { subns: ['b', 'c'] });
    expect(refusal(validateNamespace(h, del(namespace('b', subnsOf('a'))))).message).toContain('is a subnamespace');
  });

  it('exempts HNC (the anchor reconciler deletes subnamespaces)', () => {
    const h = hierarchy('a -> b -> c', { subns: ['b', 'c'] });
    expect(validateNamespace(h, del(namespace('b', subnsOf('a')), { hncServiceAccount: true }))).toEqual(ALLOWED);
  });
});

describe('namespace validator: odd requests', () => {
  it('answers 400 without the object the operation needs', () => {
    expect(validateNamespace(hierarchy('a'), empty('DELETE'))).toEqual(denied(400, 'BadRequest', 'there is no content to decode'));
    expect(validateNamespace(hierarchy('a'), empty('CREATE'))).toEqual(denied(400, 'BadRequest', 'there is no content to decode'));
    const withoutOld = { ...update(namespace('a'), namespace('a', { labels: INCLUDED })), oldObject: undefined };
    expect(validateNamespace(hierarchy('a'), withoutOld)).toEqual(denied(400, 'BadRequest', 'there is no content to decode'));
  });

  it('allows CONNECT', () => {
    expect(validateNamespace(hierarchy('a'), empty('CONNECT'))).toEqual(ALLOWED);
  });

  it('takes the name from the request when the object has none', () => {
    expect(validateNamespace(hierarchy('a'), create({ metadata: { labels: INCLUDED } }, { name: 'kube-system' }))).toEqual(
      unmanagedWithLabel('kube-system'),
    );
  });
});

describe('namespace validator: grafting by the subnamespace-of annotation (beyond HNC)', () => {
  const SUBNS_OF = 'hnc.x-k8s.io/subnamespace-of';
  const GRAFTED_BY = 'hnc.x-k8s.io/grafted-by';
  const pending = (v: ReturnType<typeof validateNamespace>) => {
    if (v.allowed !== 'pending') throw new Error(`expected pending server checks, got ${JSON.stringify(v)}`);
    return v;
  };

  it('needs the permission re-parenting needs on the new parent, with HNC texts', () => {
    const h = hierarchy('team-a, other');
    const before = namespace('other', { labels: INCLUDED });
    const after = namespace('other', { labels: INCLUDED, annotations: { [SUBNS_OF]: 'team-a', [GRAFTED_BY]: 'alice' } });
    const v = pending(validateNamespace(h, update(before, after)));
    expect(v.checks).toMatchObject([
      {
        kind: 'authorize',
        namespace: 'team-a',
        reason: 'proposed parent',
        review: { user: 'alice', resourceAttributes: { verb: 'update' } },
      },
    ]);
    expect(v.complete([{ allowed: true }])).toEqual(ALLOWED);
    expect(v.complete([{ allowed: false }])).toEqual(
      denied(401, 'Unauthorized', 'User alice is not authorized to modify the subtree of team-a, which is the proposed parent'),
    );
    // On creation too; moving it out of a tree also needs that tree's root.
    expect(pending(validateNamespace(h, create(after))).checks).toHaveLength(1);
    const moved = pending(
      validateNamespace(
        hierarchy('r -> a -> b, t'),
        update(namespace('b'), namespace('b', { annotations: { [SUBNS_OF]: 't', [GRAFTED_BY]: 'alice' } })),
      ),
    );
    expect(moved.checks.map((c) => c.namespace)).toEqual(['r', 't']);
  });

  it('refuses a graft the mutator did not record, and exempts HNC creating subnamespaces', () => {
    const h = hierarchy('team-a, other');
    const after = namespace('other', { labels: INCLUDED, annotations: { [SUBNS_OF]: 'team-a' } });
    expect(refusal(validateNamespace(h, update(namespace('other', { labels: INCLUDED }), after))).message).toContain(
      'did not record the graft',
    );
    expect(
      validateNamespace(
        h,
        create(namespace('new', { labels: INCLUDED, annotations: { [SUBNS_OF]: 'team-a' } }), { hncServiceAccount: true }),
      ),
    ).toEqual(ALLOWED);
  });

  it('lets only someone who may delete the namespace remove or change grafted-by; anything else needs nothing', () => {
    const h = hierarchy('team-a -> other');
    const grafted = namespace('other', { labels: INCLUDED, annotations: { [SUBNS_OF]: 'team-a', [GRAFTED_BY]: 'alice' } });
    const v = pending(
      validateNamespace(h, update(grafted, namespace('other', { labels: INCLUDED, annotations: { [SUBNS_OF]: 'team-a' } }))),
    );
    expect(v.checks).toMatchObject([
      { review: { resourceAttributes: { verb: 'delete', resource: 'namespaces', name: 'other', group: '' } } },
    ]);
    expect(v.complete([{ allowed: true }])).toEqual(ALLOWED);
    expect(refusal(v.complete([{ allowed: false }])).message).toContain('only a user who may delete namespace "other"');
    // Unrelated edits, the same parent, or removing the annotation (detaching): no check.
    const relabelled = namespace('other', {
      labels: { ...INCLUDED, x: 'y' },
      annotations: { [SUBNS_OF]: 'team-a', [GRAFTED_BY]: 'alice' },
    });
    expect(validateNamespace(h, update(grafted, relabelled))).toEqual(ALLOWED);
    const detached = namespace('other', { labels: INCLUDED, annotations: { [GRAFTED_BY]: 'alice' } });
    expect(validateNamespace(h, update(grafted, detached))).toEqual(ALLOWED);
  });
});
