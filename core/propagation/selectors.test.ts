import { describe, expect, it } from 'vitest';
import { PropagationMode } from '../api/constants.js';
import { hierarchy, updateNamespace } from '../hierarchy/testing.js';
import { destinationLabels } from './decide.js';
import {
  evaluateSelectors,
  goQuote,
  parseBoolAnnotation,
  parseLabelSelector,
  parseSelect,
  parseSelectors,
  parseTreeSelect,
  selectorMatches,
  selectorString,
  validateSelectorAnnotations,
  type LabelSelector,
} from './selectors.js';

const SELECT = 'propagate.hnc.x-k8s.io/select';
const TREE = 'propagate.hnc.x-k8s.io/treeSelect';
const NONE = 'propagate.hnc.x-k8s.io/none';
const ALL = 'propagate.hnc.x-k8s.io/all';

// Kubernetes' validation texts, spelled out once so every expectation below reads as the user sees it.
const NAME_PART =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const PREFIX_PART =
  "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_VALUE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const DNS_LABEL =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

function parsed(text: string): LabelSelector {
  const r = parseLabelSelector(text);
  if (!r.ok) throw new Error(`expected ${JSON.stringify(text)} to parse, got: ${r.error}`);
  return r.value;
}

function parseError(text: string): string {
  const r = parseLabelSelector(text);
  if (r.ok) throw new Error(`expected ${JSON.stringify(text)} not to parse`);
  return r.error;
}

describe('label selector strings (Kubernetes syntax)', () => {
  it.each([
    ['a=b', 'a=b'],
    ['a==b', 'a==b'],
    ['a!=b', 'a!=b'],
    ['a in (y,x)', 'a in (x,y)'],
    ['a notin (x)', 'a notin (x)'],
    ['a', 'a'],
    ['!a', '!a'],
    ['a>1', 'a>1'],
    ['a<10', 'a<10'],
  ])('parses %j', (text, canonical) => {
    expect(selectorString(parsed(text))).toBe(canonical);
  });

  it('reads empty values, keywords as names, spacing and sorting as Kubernetes does', () => {
    expect(selectorString(parsed('x in (foo,,baz),y,z notin ()'))).toBe('x in (,baz,foo),y,z notin ()');
    expect(parsed('in in (in), notin notin (notin)').requirements).toEqual([
      { key: 'in', operator: 'in', values: ['in'] },
      { key: 'notin', operator: 'notin', values: ['notin'] },
    ]);
    expect(parsed('  b = 1 ,\ta\n')).toEqual({
      requirements: [
        { key: 'a', operator: 'exists', values: [] },
        { key: 'b', operator: '=', values: ['1'] },
      ],
    });
    expect(parsed('a=').requirements).toEqual([{ key: 'a', operator: '=', values: [''] }]);
    expect(parsed('a in (,x)').requirements[0]!.values).toEqual(['', 'x']);
    expect(parsed('a in (x,)').requirements[0]!.values).toEqual(['', 'x']);
    expect(parsed('a in (x,x)').requirements[0]!.values).toEqual(['x']);
    expect(parsed('example.com/team-1=A.b_c').requirements[0]).toEqual({ key: 'example.com/team-1', operator: '=', values: ['A.b_c'] });
    expect(parsed('')).toEqual({ requirements: [] });
    expect(parsed('   ')).toEqual({ requirements: [] });
  });

  describe('errors, word for word', () => {
    it.each([
      ['=a', "found '=', expected: !, identifier, or 'end of string'"],
      [',a', "found ',', expected: !, identifier, or 'end of string'"],
      ['a=b=c', "found '=', expected: ',' or 'end of string'"],
      ['!a=b', "found '=', expected: ',' or 'end of string'"],
      ['a,', "found '', expected: identifier after ','"],
      ['a,,b', "found ',', expected: identifier after ','"],
      ['!', "unable to parse requirement: found '', expected: identifier"],
      ['!!a', "unable to parse requirement: found '!', expected: identifier"],
      ['a=(', "unable to parse requirement: found '(', expected: identifier"],
      ['a b', "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"],
      ['e!!!!!ss', "unable to parse requirement: found '!', expected: in, notin, =, ==, !=, gt, lt"],
      ['a in b', "unable to parse requirement: found 'b' expected: '('"],
      ['a in', "unable to parse requirement: found '' expected: '('"],
      ['a in (=)', "unable to parse requirement: found '=', expected: ',', ')' or identifier"],
      ['a in (b c)', "unable to parse requirement: found 'c', expected: ',' or ')'"],
      ['a in (b', "unable to parse requirement: found '', expected: ',' or ')'"],
      ['a in (b,=)', "unable to parse requirement: found '=', expected: ',', or identifier"],
    ])('%j', (text, message) => {
      expect(parseError(text)).toBe(message);
    });

    it('validates keys like Kubernetes (the <nil> path is theirs)', () => {
      expect(parseError('app:')).toBe(`unable to parse requirement: <nil>: Invalid value: "app:": ${NAME_PART}`);
      expect(parseError('a_=b')).toBe(`unable to parse requirement: <nil>: Invalid value: "a_": ${NAME_PART}`);
      expect(parseError('Bad_Prefix/x')).toBe(`unable to parse requirement: <nil>: Invalid value: "Bad_Prefix/x": ${PREFIX_PART}`);
      expect(parseError('/x')).toBe('unable to parse requirement: <nil>: Invalid value: "/x": prefix part must be non-empty');
      expect(parseError('x/')).toBe(`unable to parse requirement: <nil>: Invalid value: "x/": name part must be non-empty; ${NAME_PART}`);
      expect(parseError('a/b/c')).toBe(
        `unable to parse requirement: <nil>: Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
      );
      const long = 'k'.repeat(64);
      expect(parseError(long)).toBe(
        `unable to parse requirement: <nil>: Invalid value: "${long}": name part must be no more than 63 characters`,
      );
      expect(parseError('ключ')).toBe(`unable to parse requirement: <nil>: Invalid value: "ключ": ${NAME_PART}`);
    });

    it('validates values, one error plainly and several as a list', () => {
      expect(parseError('a=b$')).toBe(`unable to parse requirement: values[0][a]: Invalid value: "b$": ${LABEL_VALUE}`);
      expect(parseError('a in (ok, y$, x$)')).toBe(
        `unable to parse requirement: [values[1][a]: Invalid value: "x$": ${LABEL_VALUE}, values[2][a]: Invalid value: "y$": ${LABEL_VALUE}]`,
      );
      expect(parseError(`a=${'v'.repeat(64)}`)).toBe(
        `unable to parse requirement: values[0][a]: Invalid value: "${'v'.repeat(64)}": must be no more than 63 characters`,
      );
      // "-1" is an integer but not a valid label value: Kubernetes refuses it.
      expect(parseError('a<-1')).toBe(`unable to parse requirement: values[0][a]: Invalid value: "-1": ${LABEL_VALUE}`);
      expect(parseError('a>b')).toBe(
        `unable to parse requirement: values[0]: Invalid value: "b": for 'Gt', 'Lt' operators, the value must be an integer`,
      );
      expect(parseError('a>b$')).toBe(
        `unable to parse requirement: [values[0]: Invalid value: "b$": for 'Gt', 'Lt' operators, the value must be an integer, values[0][a]: Invalid value: "b$": ${LABEL_VALUE}]`,
      );
    });
  });

  it('quotes bad values as Go does', () => {
    expect(goQuote('a"b\\c')).toBe('"a\\"b\\\\c"');
    expect(goQuote('tab\there')).toBe('"tab\\there"');
    expect(goQuote('\x01\x7f\u00a0é')).toBe('"\\x01\\x7f\\u00a0é"');
  });

  it('matches label sets with Kubernetes semantics', () => {
    const labels = { env: 'prod', tier: 'web', n: '5' };
    const m = (text: string) => selectorMatches(parsed(text), labels);
    expect(m('')).toBe(true);
    expect(m('env=prod')).toBe(true);
    expect(m('env==dev')).toBe(false);
    expect(m('env!=dev')).toBe(true);
    expect(m('missing!=x')).toBe(true); // absent counts as "different"
    expect(m('env in (dev,prod)')).toBe(true);
    expect(m('env notin (prod)')).toBe(false);
    expect(m('missing notin (x)')).toBe(true);
    expect(m('missing in (x)')).toBe(false);
    expect(m('tier')).toBe(true);
    expect(m('!tier')).toBe(false);
    expect(m('!missing')).toBe(true);
    expect(m('n>4,n<6')).toBe(true);
    expect(m('n>5')).toBe(false);
    expect(m('env>1')).toBe(false); // not an integer: no match
    expect(m('env=prod,tier=db')).toBe(false); // a conjunction
  });
});

describe('the select annotation', () => {
  it('accepts the label-selector syntax, != included', () => {
    const r = parseSelect('env!=dev, team in (a,b)');
    expect(r.ok).toBe(true);
  });

  it('wraps parse errors as HNC does', () => {
    expect(parseSelect('a b')).toEqual({
      ok: false,
      error: `while parsing "${SELECT}": couldn't parse the selector string "a b": unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt`,
    });
    expect(parseSelect('a=b=c')).toEqual({
      ok: false,
      error: `while parsing "${SELECT}": couldn't parse the selector string "a=b=c": found '=', expected: ',' or 'end of string'`,
    });
  });

  it('refuses gt and lt, which label selectors cannot express', () => {
    expect(parseSelect('n>1')).toEqual({ ok: false, error: `while parsing "${SELECT}": "gt" isn't supported in label selectors` });
    expect(parseSelect('n<1')).toEqual({ ok: false, error: `while parsing "${SELECT}": "lt" isn't supported in label selectors` });
  });
});

describe('the treeSelect annotation', () => {
  it('selects one subtree, or everything but some subtrees', () => {
    expect(parseTreeSelect('child')).toMatchObject({ ok: true, value: { include: 'child', exclude: [] } });
    expect(parseTreeSelect(' !a , !b ')).toMatchObject({ ok: true, value: { include: undefined, exclude: ['a', 'b'] } });
    const r = parseTreeSelect('team, !team-dev');
    expect(r.ok && selectorString(r.value.selector)).toBe('!team-dev.tree.hnc.x-k8s.io/depth,team.tree.hnc.x-k8s.io/depth');
  });

  it('refuses more than one non-negated namespace', () => {
    expect(parseTreeSelect('a, !b, c')).toEqual({
      ok: false,
      error: 'should only have one non-negated namespace, but got multiple: [a c]',
    });
  });

  it('refuses names that are not namespace names, empty segments included', () => {
    expect(parseTreeSelect('Team')).toEqual({ ok: false, error: `"Team" is not a valid namespace name: ${DNS_LABEL}` });
    expect(parseTreeSelect('!a.b')).toEqual({ ok: false, error: `"a.b" is not a valid namespace name: ${DNS_LABEL}` });
    expect(parseTreeSelect('a,')).toEqual({ ok: false, error: `"" is not a valid namespace name: ${DNS_LABEL}` });
    expect(parseTreeSelect('!')).toEqual({ ok: false, error: `"" is not a valid namespace name: ${DNS_LABEL}` });
    expect(parseTreeSelect('! a')).toEqual({ ok: false, error: `" a" is not a valid namespace name: ${DNS_LABEL}` });
    expect(parseTreeSelect('n'.repeat(64))).toEqual({
      ok: false,
      error: `"${'n'.repeat(64)}" is not a valid namespace name: must be no more than 63 characters`,
    });
  });
});

describe('the none and all annotations', () => {
  it.each(['1', 't', 'T', 'TRUE', 'true', 'True'])('reads %j as true', (v) => {
    expect(parseBoolAnnotation(NONE, v)).toEqual({ ok: true, value: true });
  });
  it.each(['0', 'f', 'F', 'FALSE', 'false', 'False'])('reads %j as false', (v) => {
    expect(parseBoolAnnotation(ALL, v)).toEqual({ ok: true, value: false });
  });
  it.each(['yes', 'tRUE', ' true', 'on'])('refuses %j', (v) => {
    expect(parseBoolAnnotation(NONE, v)).toEqual({
      ok: false,
      error: `invalid ${NONE} value: strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`,
    });
  });
});

describe('parseSelectors', () => {
  it('treats empty values as not set and collects every error', () => {
    expect(parseSelectors({ [SELECT]: '', [NONE]: '' })).toEqual({
      select: undefined,
      treeSelect: undefined,
      none: false,
      all: false,
      errors: [],
    });
    expect(parseSelectors({ [SELECT]: 'a b', [TREE]: 'A', [NONE]: 'x', [ALL]: 'true' }).errors.map((e) => e.annotation)).toEqual([
      SELECT,
      TREE,
      NONE,
    ]);
  });
});

describe('evaluating selectors against a destination (docs/behaviour.md §5.4)', () => {
  // root -> team -> dev, team -> prod; prod is labelled env=prod.
  const h = hierarchy('root -> team -> dev, team -> prod, root -> other');
  updateNamespace(h, 'prod', { labels: { env: 'prod' } });
  const into = (ns: string, annotations: Record<string, string>, mode: PropagationMode = PropagationMode.Propagate) =>
    evaluateSelectors(annotations, destinationLabels(h, ns), mode);

  it('propagates everywhere without annotations in Propagate mode, nowhere in AllowPropagate', () => {
    expect(into('dev', {})).toEqual({ propagate: true });
    expect(into('dev', {}, PropagationMode.AllowPropagate)).toEqual({ propagate: false });
  });

  it('select matches the destination labels, tree labels included', () => {
    expect(into('prod', { [SELECT]: 'env=prod' })).toEqual({ propagate: true });
    expect(into('dev', { [SELECT]: 'env=prod' })).toEqual({ propagate: false });
    expect(into('dev', { [SELECT]: 'team.tree.hnc.x-k8s.io/depth=1' })).toEqual({ propagate: true });
    expect(into('dev', { [SELECT]: 'env!=prod' })).toEqual({ propagate: true });
  });

  it('treeSelect selects a subtree or excludes subtrees', () => {
    expect(into('dev', { [TREE]: 'team' })).toEqual({ propagate: true });
    expect(into('other', { [TREE]: 'team' })).toEqual({ propagate: false });
    expect(into('dev', { [TREE]: '!dev' })).toEqual({ propagate: false });
    expect(into('prod', { [TREE]: '!dev, !other' })).toEqual({ propagate: true });
  });

  it('none=true stops propagation, all=true opts in', () => {
    expect(into('dev', { [NONE]: 'true' })).toEqual({ propagate: false });
    expect(into('dev', { [NONE]: 'false' })).toEqual({ propagate: true });
    expect(into('dev', { [ALL]: 'true' }, PropagationMode.AllowPropagate)).toEqual({ propagate: true });
    expect(into('dev', { [ALL]: 'false' }, PropagationMode.AllowPropagate)).toEqual({ propagate: false });
  });

  it('AllowPropagate needs a non-empty select or treeSelect, or all=true', () => {
    const allow = PropagationMode.AllowPropagate;
    expect(into('prod', { [SELECT]: 'env=prod' }, allow)).toEqual({ propagate: true });
    expect(into('dev', { [SELECT]: 'env=prod' }, allow)).toEqual({ propagate: false });
    expect(into('dev', { [SELECT]: '  ' }, allow)).toEqual({ propagate: false }); // matches all, selects nothing
    expect(into('dev', { [TREE]: 'team' }, allow)).toEqual({ propagate: true });
    expect(into('dev', { [NONE]: 'false' }, allow)).toEqual({ propagate: false });
  });

  it('an unparsable annotation propagates nowhere and says why', () => {
    expect(into('dev', { [TREE]: 'a,b' })).toEqual({
      propagate: false,
      error: 'should only have one non-negated namespace, but got multiple: [a b]',
    });
    expect(into('dev', { [ALL]: 'yes' })).toEqual({
      propagate: false,
      error: `invalid ${ALL} value: strconv.ParseBool: parsing "yes": invalid syntax`,
    });
  });
});

describe('the objects webhook checks (docs/behaviour.md §7.6)', () => {
  it('accepts valid selectors and plain annotations', () => {
    expect(validateSelectorAnnotations({ [SELECT]: 'env=prod', 'example.com/x': 'y', 'a.tree.hnc.x-k8s.io/depth': '1' })).toBeUndefined();
    expect(validateSelectorAnnotations(undefined)).toBeUndefined();
  });

  it('refuses unknown HNC annotation keys', () => {
    expect(validateSelectorAnnotations({ 'propagate.hnc.x-k8s.io/nonee': 'true' })).toBe(
      `invalid HNC exceptions annotation: propagate.hnc.x-k8s.io/nonee, should be one of the following: ${SELECT}; ${TREE}; ${NONE}; ${ALL}`,
    );
  });

  it('gives each unparsable selector its own message', () => {
    expect(validateSelectorAnnotations({ [SELECT]: 'a b' })).toBe(
      `invalid Kubernetes labelSelector: while parsing "${SELECT}": couldn't parse the selector string "a b": unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt`,
    );
    expect(validateSelectorAnnotations({ [TREE]: 'X' })).toBe(
      `invalid HNC "${TREE}" value: "X" is not a valid namespace name: ${DNS_LABEL}`,
    );
    expect(validateSelectorAnnotations({ [TREE]: 'a, b' })).toBe(
      `invalid HNC "${TREE}" value: should only have one non-negated namespace, but got multiple: [a b]`,
    );
    expect(validateSelectorAnnotations({ [NONE]: 'nope' })).toBe(
      `invalid ${NONE} value: strconv.ParseBool: parsing "nope": invalid syntax`,
    );
    expect(validateSelectorAnnotations({ [ALL]: 'nope' })).toBe(`invalid ${ALL} value: strconv.ParseBool: parsing "nope": invalid syntax`);
  });

  it('refuses two selectors at once when one changes, but leaves old objects editable', () => {
    const both = { [SELECT]: 'a', [ALL]: 'true' };
    expect(validateSelectorAnnotations(both)).toBe(
      `cannot have more than one selector at the same time, but got multiple: ${SELECT}, ${ALL}`,
    );
    expect(validateSelectorAnnotations({ ...both, other: 'x' }, both)).toBeUndefined();
    // An unchanged bad value is not re-checked either.
    expect(validateSelectorAnnotations({ [NONE]: 'nope', other: 'x' }, { [NONE]: 'nope' })).toBeUndefined();
  });
});
