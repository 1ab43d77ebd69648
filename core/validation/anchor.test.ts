import { describe, expect, it } from 'vitest';
import { hierarchy, kvs, updateAnchor, updateHierarchy, updateNamespace } from '../hierarchy/testing.js';
import { validateAnchor } from './anchor.js';
import { anchor, create, del, denied, empty, refusal, update } from './testing.js';

const ALLOWED = { allowed: true };
const forbidden = (name: string, msg: string) =>
  denied(403, 'Forbidden', `subnamespaceanchors.hnc.x-k8s.io "${name}" is forbidden: ${msg}`);
const conflict = (name: string, msg: string) =>
  denied(409, 'Conflict', `Operation cannot be fulfilled on subnamespaceanchors.hnc.x-k8s.io "${name}": ${msg}`);
const LABEL_REGEX =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const NOT_A_LEAF = (c: string) =>
  `subnamespace ${c} is not a leaf and doesn't allow cascading deletion. Please set allowCascadingDeletion flag or make it a leaf first`;

describe('anchor validator: the name (docs/behaviour.md §7.4)', () => {
  const h = hierarchy('a');

  it('refuses a name that is not a namespace name (422 on metadata.name)', () => {
    expect(validateAnchor(h, create(anchor('a', 'Team_B')))).toEqual(
      denied(
        422,
        'Invalid',
        `SubnamespaceAnchor.hnc.x-k8s.io "Team_B" is invalid: metadata.name: Invalid value: "Team_B": not a valid namespace name: ${LABEL_REGEX}`,
      ),
    );
  });

  it('joins several problems with "; "', () => {
    const long = 'X'.repeat(64);
    expect(refusal(validateAnchor(h, create(anchor('a', long)))).message).toBe(
      `SubnamespaceAnchor.hnc.x-k8s.io "${long}" is invalid: metadata.name: Invalid value: "${long}": not a valid namespace name: must be no more than 63 characters; ${LABEL_REGEX}`,
    );
  });

  it('checks it on UPDATE too, but not on DELETE (so strays can be removed)', () => {
    expect(refusal(validateAnchor(h, update(anchor('a', 'a.b'), anchor('a', 'a.b')))).code).toBe(422);
    expect(validateAnchor(h, del(anchor('a', 'a.b')))).toEqual(ALLOWED);
  });
});

describe('anchor validator: managed labels and annotations (docs/behaviour.md §7.4)', () => {
  const h = hierarchy('a', { policy: { managedLabels: ['team'] } });
  const spec = { labels: kvs({ color: 'red' }) };
  const invalid = denied(
    422,
    'Invalid',
    'SubnamespaceAnchor.hnc.x-k8s.io "b" is invalid: spec.labels: Invalid value: "color": not a managed label and cannot be configured',
  );

  it('refuses unmanaged keys on every operation (DELETE reads the old object)', () => {
    expect(validateAnchor(h, create(anchor('a', 'b', { spec })))).toEqual(invalid);
    expect(validateAnchor(h, update(anchor('a', 'b'), anchor('a', 'b', { spec })))).toEqual(invalid);
    expect(validateAnchor(h, del(anchor('a', 'b', { spec })))).toEqual(invalid);
  });

  it('allows managed ones, and then nothing more is checked on UPDATE', () => {
    expect(validateAnchor(h, update(anchor('a', 'b'), anchor('a', 'b', { spec: { labels: kvs({ team: 'x' }) } })))).toEqual(ALLOWED);
  });

  it('checks the name first', () => {
    expect(refusal(validateAnchor(h, create(anchor('a', 'B', { spec })))).message).toContain('metadata.name');
  });
});

describe('anchor validator: CREATE (docs/behaviour.md §7.4, §4.1)', () => {
  it('allows a new subnamespace in a managed namespace', () => {
    expect(validateAnchor(hierarchy('a'), create(anchor('a', 'b')))).toEqual(ALLOWED);
  });

  it('refuses an anchor in an unmanaged namespace, naming that namespace', () => {
    expect(validateAnchor(hierarchy('a'), create(anchor('kube-system', 'b')))).toEqual(
      forbidden('kube-system', 'cannot create a subnamespace in the unmanaged namespace "kube-system" (excluded by the HNC administrator)'),
    );
  });

  it('refuses an unmanaged name for the subnamespace', () => {
    const h = hierarchy('team-a', { policy: { includedNamespaceRegex: 'team-.*' } });
    expect(validateAnchor(h, create(anchor('team-a', 'other')))).toEqual(
      forbidden(
        'other',
        'cannot create a subnamespace using the unmanaged namespace name "other" (does not match the regex set by the HNC administrator: `^team-.*$`)',
      ),
    );
    expect(refusal(validateAnchor(hierarchy('a'), create(anchor('a', 'kube-public')))).message).toContain(
      '"kube-public" (excluded by the HNC administrator)',
    );
  });

  it('checks the parent before the child name', () => {
    expect(refusal(validateAnchor(hierarchy('a'), create(anchor('kube-system', 'kube-public')))).message).toContain(
      'in the unmanaged namespace "kube-system"',
    );
  });

  it('refuses an existing namespace (Conflict)', () => {
    const h = hierarchy('a, b, x -> c, a -> d');
    const taken = (c: string) => conflict(c, 'cannot create a subnamespace using an existing namespace');
    expect(validateAnchor(h, create(anchor('a', 'b')))).toEqual(taken('b')); // a root
    expect(validateAnchor(h, create(anchor('a', 'c')))).toEqual(taken('c')); // another parent's child
    expect(validateAnchor(h, create(anchor('a', 'd')))).toEqual(taken('d')); // a's full child
  });

  it("refuses the name of another parent's subnamespace", () => {
    const h = hierarchy('x -> c, a', { subns: ['c'] });
    expect(refusal(validateAnchor(h, create(anchor('a', 'c')))).code).toBe(409);
  });

  it("allows re-creating the missing anchor of this parent's subnamespace", () => {
    const h = hierarchy('a -> b');
    updateNamespace(h, 'b', { annotations: { 'hnc.x-k8s.io/subnamespace-of': 'a' } }); // no anchor
    expect(validateAnchor(h, create(anchor('a', 'b')))).toEqual(ALLOWED);
  });

  it("allows a name only known as somebody's missing parent", () => {
    expect(validateAnchor(hierarchy('gone? -> b, a'), create(anchor('a', 'gone')))).toEqual(ALLOWED);
  });
});

describe('anchor validator: DELETE (docs/behaviour.md §7.4, §4.3)', () => {
  it('allows deleting the anchor of a leaf subnamespace', () => {
    expect(validateAnchor(hierarchy('a -> b', { subns: ['b'] }), del(anchor('a', 'b', { state: 'Ok' })))).toEqual(ALLOWED);
  });

  it('refuses deleting an Ok anchor whose subnamespace has children, without cascading deletion', () => {
    const h = hierarchy('a -> b -> c', { subns: ['b'] }); // c is a full child
    expect(validateAnchor(h, del(anchor('a', 'b', { state: 'Ok' })))).toEqual(forbidden('b', NOT_A_LEAF('b')));
  });

  it('allows it with allowCascadingDeletion on the subnamespace or above', () => {
    const h = hierarchy('a -> b -> c', { subns: ['b', 'c'] });
    updateHierarchy(h, 'b', { parent: 'a', allowCascadingDeletion: true });
    expect(validateAnchor(h, del(anchor('a', 'b', { state: 'Ok' })))).toEqual(ALLOWED);
    const h2 = hierarchy('r -> a -> b -> c', { subns: ['b'] });
    updateHierarchy(h2, 'r', { allowCascadingDeletion: true });
    expect(validateAnchor(h2, del(anchor('a', 'b', { state: 'Ok' })))).toEqual(ALLOWED);
  });

  it('allows deleting an anchor in any other state: it deletes nothing', () => {
    const h = hierarchy('a -> b -> c', { subns: ['b'] });
    for (const state of ['Missing', 'Conflict', 'Forbidden', undefined]) {
      expect(validateAnchor(h, del(anchor('a', 'b', state === undefined ? {} : { state })))).toEqual(ALLOWED);
    }
  });

  it('allows deleting an anchor whose namespace HNC does not know', () => {
    const h = hierarchy('a');
    updateAnchor(h, 'a', 'b');
    expect(validateAnchor(h, del(anchor('a', 'b', { state: 'Ok' })))).toEqual(ALLOWED);
  });
});

describe('anchor validator: who and what', () => {
  it('exempts HNC', () => {
    const h = hierarchy('a -> b -> c', { subns: ['b'] });
    expect(validateAnchor(h, del(anchor('a', 'b', { state: 'Ok' }), { hncServiceAccount: true }))).toEqual(ALLOWED);
    expect(validateAnchor(h, create(anchor('kube-system', 'Bad'), { hncServiceAccount: true }))).toEqual(ALLOWED);
  });

  it('answers 400 without the object', () => {
    expect(validateAnchor(hierarchy('a'), empty('DELETE'))).toEqual(denied(400, 'BadRequest', 'there is no content to decode'));
  });

  it('takes the names from the request when the object lacks them', () => {
    expect(refusal(validateAnchor(hierarchy('a'), create({ metadata: {} }, { namespace: 'kube-system', name: 'b' }))).message).toContain(
      '"kube-system"',
    );
  });
});
