import { describe, expect, it, vi } from 'vitest';
import type { Hierarchy } from '../hierarchy/hierarchy.js';
import { hierarchy, kvs, updateHierarchy, updateNamespace } from '../hierarchy/testing.js';
import type { Decision } from './decision.js';
import {
  accessReview,
  completeServerChecks,
  isPending,
  validateHierarchyConfiguration,
  type CheckAnswer,
  type HierarchyConfigurationOptions,
  type HierarchyVerdict,
  type ServerCheck,
} from './hierarchy-configuration.js';
import { alice, create, del, denied, empty, hc, refusal, update } from './testing.js';

const ALLOWED = { allowed: true };
const forbidden = (msg: string) => denied(403, 'Forbidden', `hierarchyconfigurations.hnc.x-k8s.io "hierarchy" is forbidden: ${msg}`);
const conflict = (msg: string) =>
  denied(409, 'Conflict', `Operation cannot be fulfilled on hierarchyconfigurations.hnc.x-k8s.io "hierarchy": ${msg}`);
const unauthorized = (ns: string, reason: string) =>
  denied(401, 'Unauthorized', `User alice is not authorized to modify the subtree of ${ns}, which is the ${reason}`);

/** Sets `ns`'s parent through an HC update (`undefined` makes it a root). */
function setParent(
  h: Hierarchy,
  ns: string,
  parent: string | undefined,
  opts: HierarchyConfigurationOptions & { hncServiceAccount?: boolean } = {},
): HierarchyVerdict {
  const spec = parent === undefined ? {} : { parent };
  return validateHierarchyConfiguration(h, update(hc(ns), hc(ns, spec), { hncServiceAccount: opts.hncServiceAccount ?? false }), opts);
}

/** The namespaces and reasons of the server checks a verdict asks for. */
function checksOf(v: HierarchyVerdict): Array<[string, string, string]> {
  if (!isPending(v)) throw new Error(`expected pending server checks, got ${JSON.stringify(v)}`);
  return v.checks.map((c) => [c.kind, c.namespace, c.reason]);
}

/** Completes a pending verdict with the given answers. */
function answer(v: HierarchyVerdict, ...answers: CheckAnswer[]): Decision {
  if (!isPending(v)) throw new Error(`expected pending server checks, got ${JSON.stringify(v)}`);
  return v.complete(answers);
}

describe('HC validator: who and what is checked', () => {
  it('exempts HNC entirely, even in an unmanaged namespace', () => {
    expect(setParent(hierarchy('a'), 'kube-system', 'a', { hncServiceAccount: true })).toEqual(ALLOWED);
  });

  it('checks CREATE like UPDATE (the old object is ignored)', () => {
    const h = hierarchy('a, b');
    expect(checksOf(validateHierarchyConfiguration(h, create(hc('b', { parent: 'a' }))))).toEqual([['authorize', 'a', 'proposed parent']]);
  });

  it('has nothing to check on DELETE', () => {
    expect(validateHierarchyConfiguration(hierarchy('a'), del(hc('a')))).toEqual(ALLOWED);
  });

  it('answers 400 without an object', () => {
    expect(validateHierarchyConfiguration(hierarchy('a'), empty('UPDATE'))).toEqual(
      denied(400, 'BadRequest', 'there is no content to decode'),
    );
  });
});

describe('HC validator: steps 1-2, managed namespaces only', () => {
  it('1. refuses an HC in an excluded namespace', () => {
    expect(setParent(hierarchy('a'), 'kube-system', 'a')).toEqual(
      forbidden(
        'namespace "kube-system" is not managed by HNC (excluded by the HNC administrator) and cannot be set as a child of another namespace',
      ),
    );
  });

  it('1. refuses an HC in a namespace outside the included regex', () => {
    const h = hierarchy('team-a', { policy: { includedNamespaceRegex: 'team-.*' } });
    expect(setParent(h, 'other', 'team-a')).toEqual(
      forbidden(
        'namespace "other" is not managed by HNC (does not match the regex set by the HNC administrator: `^team-.*$`) and cannot be set as a child of another namespace',
      ),
    );
  });

  it('2. refuses an unmanaged parent', () => {
    expect(setParent(hierarchy('a'), 'a', 'kube-public')).toEqual(
      forbidden(
        'namespace "kube-public" is not managed by HNC (excluded by the HNC administrator) and cannot be set as the parent of another namespace',
      ),
    );
  });

  it('checks the namespace before the parent', () => {
    expect(refusal(setParent(hierarchy('a'), 'kube-system', 'kube-public')).message).toContain('namespace "kube-system" is not managed');
  });
});

describe('HC validator: step 3, managed labels and annotations', () => {
  const policy = { managedLabels: ['team'], managedAnnotations: ['owner'] };
  const withMeta = (h: Hierarchy, labels: Record<string, string>, annotations: Record<string, string> = {}, parent?: string) =>
    validateHierarchyConfiguration(
      h,
      update(hc('a'), hc('a', { ...(parent ? { parent } : {}), labels: kvs(labels), annotations: kvs(annotations) })),
    );

  it('allows managed keys', () => {
    expect(withMeta(hierarchy('a', { policy }), { team: 'x' }, { owner: 'anyone at all' })).toEqual(ALLOWED);
  });

  it('refuses unmanaged keys, bad keys and bad label values, all at once (422)', () => {
    const d = refusal(withMeta(hierarchy('a', { policy }), { color: 'red', team: 'a b' }, { 'x/y/z': 'v' }));
    expect(d).toMatchObject({ code: 422, reason: 'Invalid' });
    expect(d.message).toMatch(
      /^HierarchyConfiguration\.hnc\.x-k8s\.io "hierarchy" is invalid: \[spec\.labels: Invalid value: "color": not a managed label and cannot be configured, spec\.labels\[team\]: Invalid value: "a b": a valid label must be .*, spec\.annotations: Invalid value: "x\/y\/z": a qualified name .*\]$/,
    );
  });

  it('words a single problem without brackets', () => {
    expect(withMeta(hierarchy('a', { policy }), {}, { team: 'x' })).toEqual(
      denied(
        422,
        'Invalid',
        'HierarchyConfiguration.hnc.x-k8s.io "hierarchy" is invalid: spec.annotations: Invalid value: "team": not a managed annotation and cannot be configured',
      ),
    );
  });

  it('comes after the managed checks, before anything the forest says', () => {
    expect(refusal(withMeta(hierarchy('a', { policy }), { color: 'red' }, {}, 'kube-system')).code).toBe(403);
    expect(
      refusal(validateHierarchyConfiguration(hierarchy('a', { policy }), create(hc('unsynced', { labels: kvs({ color: 'red' }) })))).code,
    ).toBe(422);
  });
});

describe('HC validator: steps 4-6, the namespace itself', () => {
  it('4. answers 503 for a namespace HNC has not reconciled yet', () => {
    expect(setParent(hierarchy('a'), 'new', 'a')).toEqual(
      denied(503, 'ServiceUnavailable', 'HNC has not reconciled namespace "new" yet - please try again in a few moments.'),
    );
  });

  it('5. refuses any change below a halted ancestor', () => {
    const h = hierarchy('gone? -> b -> c -> d, x');
    const halted = forbidden(
      'ancestor "b" of namespace "d" has a critical condition, which must be resolved before any changes can be made to the hierarchy configuration',
    );
    expect(setParent(h, 'd', 'x')).toEqual(halted);
    expect(setParent(h, 'd', 'c')).toEqual(halted); // even an edit that keeps the parent
  });

  it('5. names the nearest halted ancestor', () => {
    const h = hierarchy('gone? -> b -> c -> d');
    // b is an orphan (ParentMissing); c's HC is being deleted along with the HC CRD (DeletingCRD).
    updateHierarchy(h, 'c', { deleting: true });
    h.setCrdsDeleting({ hierarchy: true, anchor: false });
    expect(h.isHalted('b') && h.isHalted('c') && !h.isHalted('d')).toBe(true);
    expect(refusal(setParent(h, 'd', 'c')).message).toContain('ancestor "c" of namespace "d"');
  });

  it('5. is not fooled by a condition that does not halt', () => {
    const h = hierarchy('a -> b -> c');
    updateHierarchy(h, 'b', { parent: 'a', labels: kvs({ color: 'red' }) });
    expect(h.ownConditions('b').map((c) => c.reason)).toEqual(['IllegalManagedLabel']); // BadConfiguration only
    expect(setParent(h, 'c', 'b')).toEqual(ALLOWED);
  });

  it('5. lets a halted namespace itself be edited, to fix it', () => {
    const h = hierarchy('gone? -> b, a');
    expect(checksOf(setParent(h, 'b', 'a'))).toEqual([['absent', 'gone', 'current missing parent']]);
  });

  it('6. refuses a parent for an external namespace', () => {
    const h = hierarchy('a, ext');
    updateNamespace(h, 'ext', { annotations: { 'hnc.x-k8s.io/managed-by': 'argo' } });
    expect(setParent(h, 'ext', 'a')).toEqual(forbidden('namespace "ext" is managed by "argo", not HNC, so it cannot have a parent in HNC'));
    expect(setParent(h, 'ext', undefined)).toEqual(ALLOWED);
  });
});

describe('HC validator: step 7, unchanged parent', () => {
  it('allows edits that keep the parent without asking for authorization', () => {
    const h = hierarchy('a -> b');
    const d = validateHierarchyConfiguration(h, update(hc('b', { parent: 'a' }), hc('b', { parent: 'a', allowCascadingDeletion: true })));
    expect(d).toEqual(ALLOWED);
    expect(setParent(hierarchy('a'), 'a', undefined)).toEqual(ALLOWED);
  });

  it("compares with the forest: a subnamespace keeps its anchor's namespace as parent", () => {
    const h = hierarchy('a -> b', { subns: ['b'] });
    expect(setParent(h, 'b', 'a')).toEqual(ALLOWED);
  });
});

describe('HC validator: steps 8-10, a legal new parent', () => {
  it('8. refuses moving a subnamespace (Conflict)', () => {
    const h = hierarchy('a -> b, x', { subns: ['b'] });
    expect(setParent(h, 'b', 'x')).toEqual(
      conflict('illegal parent: Cannot set the parent of "b" to "x" because it\'s a subnamespace of "a"'),
    );
    expect(setParent(h, 'b', undefined)).toEqual(
      conflict('illegal parent: Cannot set the parent of "b" to "" because it\'s a subnamespace of "a"'),
    );
  });

  it('9. refuses a parent that does not exist', () => {
    const h = hierarchy('a, gone? -> orphan');
    expect(setParent(h, 'a', 'nowhere')).toEqual(forbidden('requested parent "nowhere" does not exist'));
    expect(setParent(h, 'a', 'gone')).toEqual(forbidden('requested parent "gone" does not exist'));
  });

  it('10. refuses a namespace as its own parent', () => {
    expect(setParent(hierarchy('a'), 'a', 'a')).toEqual(conflict('illegal parent: "a" cannot be set as its own parent'));
  });

  it('10. refuses a cycle, showing the ancestry from the new parent up', () => {
    const h = hierarchy('a -> b -> c');
    expect(setParent(h, 'a', 'c')).toEqual(
      conflict('illegal parent: cycle when making "c" the parent of "a": current ancestry is c -> b -> a'),
    );
    expect(setParent(h, 'a', 'b')).toEqual(conflict('illegal parent: cycle when making "b" the parent of "a": current ancestry is b -> a'));
  });

  it('checks subnamespace, then existence, then cycles', () => {
    const h = hierarchy('a -> b', { subns: ['b'] });
    expect(refusal(setParent(h, 'b', 'nowhere')).code).toBe(409);
    expect(refusal(setParent(hierarchy('a -> b'), 'a', 'nowhere')).code).toBe(403);
  });
});

describe('HC validator: step 11, objects the move would overwrite', () => {
  const gvk = { group: '', version: 'v1', kind: 'Secret' };

  it('refuses with one line per overwritten object (Conflict)', () => {
    const h = hierarchy('a, b -> c');
    const overwriteConflicts = vi.fn(() => [
      { namespace: 'b', name: 'creds', gvk },
      { namespace: 'c', name: 'app', gvk: { group: 'apps', version: 'v1', kind: 'Deployment' } },
    ]);
    expect(setParent(h, 'b', 'a', { overwriteConflicts })).toEqual(
      conflict(
        'Cannot update hierarchy because it would overwrite the following object(s):\n' +
          '  * Namespace "b": creds (/v1, Kind=Secret)\n' +
          '  * Namespace "c": app (apps/v1, Kind=Deployment)\n' +
          'To fix this, please rename or remove the conflicting objects first.',
      ),
    );
    expect(overwriteConflicts).toHaveBeenCalledWith('b', 'a');
  });

  it('goes on to authorization when nothing would be overwritten', () => {
    expect(checksOf(setParent(hierarchy('a, b'), 'b', 'a', { overwriteConflicts: () => [] }))).toEqual([
      ['authorize', 'a', 'proposed parent'],
    ]);
  });

  it('is not asked when the namespace becomes a root, or nothing is legal anyway', () => {
    const overwriteConflicts = vi.fn(() => [{ namespace: 'b', name: 'creds', gvk }]);
    expect(checksOf(setParent(hierarchy('a -> b'), 'b', undefined, { overwriteConflicts }))).toEqual([
      ['authorize', 'a', 'current root ancestor'],
    ]);
    expect(refusal(setParent(hierarchy('a -> b'), 'a', 'b', { overwriteConflicts })).code).toBe(409);
    expect(overwriteConflicts).not.toHaveBeenCalled();
  });
});

describe('HC validator: step 12, which namespaces the user must administer', () => {
  it('a root moving under a parent: the proposed parent', () => {
    expect(checksOf(setParent(hierarchy('a, b'), 'b', 'a'))).toEqual([['authorize', 'a', 'proposed parent']]);
  });

  it('a child of an unmanaged parent: treated as a root', () => {
    const h = hierarchy('kube-system? -> b, a');
    expect(checksOf(setParent(h, 'b', 'a'))).toEqual([['authorize', 'a', 'proposed parent']]);
    expect(setParent(h, 'b', undefined)).toEqual(ALLOWED);
  });

  it('a child of a missing parent: an existence lookup of that parent instead', () => {
    expect(checksOf(setParent(hierarchy('gone? -> b, a'), 'b', undefined))).toEqual([['absent', 'gone', 'current missing parent']]);
  });

  it('becoming a root: the current root ancestor', () => {
    expect(checksOf(setParent(hierarchy('r -> a -> b'), 'b', undefined))).toEqual([['authorize', 'r', 'current root ancestor']]);
  });

  it('moving to another tree: the current root and the proposed parent', () => {
    expect(checksOf(setParent(hierarchy('r -> a -> b, s -> x'), 'b', 'x'))).toEqual([
      ['authorize', 'r', 'current root ancestor'],
      ['authorize', 'x', 'proposed parent'],
    ]);
  });

  it('moving within a tree: the most recent common ancestor of the current and proposed parents', () => {
    const h = hierarchy('r -> m -> a -> b, m -> x -> y, r -> s');
    expect(checksOf(setParent(h, 'b', 'y'))).toEqual([
      ['authorize', 'm', 'most recent common ancestor of current parent "a" and proposed parent "y"'],
    ]);
    expect(checksOf(setParent(h, 'b', 's'))).toEqual([
      ['authorize', 'r', 'most recent common ancestor of current parent "a" and proposed parent "s"'],
    ]);
    // Moving up to an ancestor: that ancestor is the common one.
    expect(checksOf(setParent(h, 'b', 'm'))).toEqual([
      ['authorize', 'm', 'most recent common ancestor of current parent "a" and proposed parent "m"'],
    ]);
  });

  it("asks with the requester's user, groups, uid and extra for update on hierarchyconfigurations", () => {
    const v = setParent(hierarchy('a, b'), 'b', 'a');
    if (!isPending(v)) throw new Error('expected pending');
    expect(v.checks[0]).toEqual({
      kind: 'authorize',
      namespace: 'a',
      reason: 'proposed parent',
      review: {
        user: 'alice',
        groups: ['team-a', 'system:authenticated'],
        uid: 'uid-alice',
        extra: { 'example.com/scope': ['dev'] },
        resourceAttributes: { namespace: 'a', verb: 'update', group: 'hnc.x-k8s.io', version: '*', resource: 'hierarchyconfigurations' },
      },
    });
    expect(accessReview({ username: 'bob' }, 'n')).toEqual({
      user: 'bob',
      resourceAttributes: { namespace: 'n', verb: 'update', group: 'hnc.x-k8s.io', version: '*', resource: 'hierarchyconfigurations' },
    });
  });
});

describe('HC validator: step 12, answers to the server checks', () => {
  const twoTrees = () => setParent(hierarchy('r -> a -> b, s -> x'), 'b', 'x');

  it('allows when every review allows', () => {
    expect(answer(twoTrees(), { allowed: true }, { allowed: true })).toEqual(ALLOWED);
  });

  it('answers 401 for the first refused review, in order', () => {
    expect(answer(twoTrees(), { allowed: false }, { allowed: false })).toEqual(unauthorized('r', 'current root ancestor'));
    expect(answer(twoTrees(), { allowed: true }, { allowed: false })).toEqual(unauthorized('x', 'proposed parent'));
  });

  it('words the common-ancestor reason in the 401', () => {
    const v = setParent(hierarchy('r -> a -> b, r -> y'), 'b', 'y');
    expect(answer(v, { allowed: false })).toEqual(
      unauthorized('r', 'most recent common ancestor of current parent "a" and proposed parent "y"'),
    );
  });

  it('answers 500 when a review could not be made', () => {
    expect(answer(twoTrees(), { error: 'connection refused' })).toEqual(
      denied(500, 'InternalError', 'Internal error occurred: while checking authz for "r", the current root ancestor: connection refused'),
    );
  });

  it('a missing parent that truly is gone: allowed, so admins can fix orphans', () => {
    expect(answer(setParent(hierarchy('gone? -> b, a'), 'b', 'a'), { exists: false })).toEqual(ALLOWED);
  });

  it('a missing parent that exists: not synced yet, 503', () => {
    expect(answer(setParent(hierarchy('gone? -> b, a'), 'b', 'a'), { exists: true })).toEqual(
      denied(503, 'ServiceUnavailable', 'HNC has not reconciled namespace "gone" yet - please try again in a few moments.'),
    );
  });

  it("a failed existence lookup: 500, in HNC's words", () => {
    expect(answer(setParent(hierarchy('gone? -> b, a'), 'b', 'a'), { error: 'timeout' })).toEqual(
      denied(500, 'InternalError', 'Internal error occurred: while checking existance for "gone", the current missing parent: timeout'),
    );
  });

  it('treats missing or mismatched answers as internal errors', () => {
    expect(answer(twoTrees(), { allowed: true })).toMatchObject({
      code: 500,
      message: 'Internal error occurred: while checking authz for "x", the proposed parent: no answer',
    });
    expect(answer(twoTrees(), { exists: false })).toMatchObject({ code: 500 });
    expect(answer(setParent(hierarchy('gone? -> b, a'), 'b', 'a'), { allowed: true })).toMatchObject({ code: 500 });
  });

  it('completeServerChecks is usable on its own', () => {
    const checks: ServerCheck[] = [{ kind: 'authorize', namespace: 'n', reason: 'proposed parent', review: accessReview(alice, 'n') }];
    expect(completeServerChecks('alice', checks, [{ allowed: false }])).toEqual(unauthorized('n', 'proposed parent'));
    expect(completeServerChecks('alice', [], [])).toEqual(ALLOWED);
  });
});
