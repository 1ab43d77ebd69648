import { describe, expect, it } from 'vitest';
import type { AnyObject } from '../api.js';
import type { ExplainView, FoundObject } from '../model.js';
import { explainObject, selectorReason } from './explain-text.js';

// dev is a child of team-a, itself a child of org; its labels as the controller sets them.
const labels = {
  'dev.tree.hnc.x-k8s.io/depth': '0',
  'team-a.tree.hnc.x-k8s.io/depth': '1',
  'org.tree.hnc.x-k8s.io/depth': '2',
  env: 'dev',
};
const RBAC = 'rbac.authorization.k8s.io';

const role = (meta: Partial<AnyObject['metadata']> = {}): AnyObject => ({ kind: 'Role', metadata: { name: 'reader', ...meta } });
const copyFrom = (ns: string): AnyObject => role({ labels: { 'hnc.x-k8s.io/inherited-from': ns } });
const at = (namespace: string, object?: AnyObject): FoundObject => ({ namespace, ...(object ? { object } : {}) });
const view = (o: Partial<ExplainView> = {}): ExplainView => ({
  namespace: 'dev',
  labels,
  name: 'reader',
  type: { group: RBAC, resource: 'roles', kind: 'Role', mode: 'Propagate' },
  ancestors: [at('org'), at('team-a', role())],
  local: at('dev', copyFrom('team-a')),
  notes: [],
  ...o,
});
const lines = (...l: string[]) => l.map((x) => `${x}\n`).join('');

const WINS = 'source, propagates to dev: it wins (the highest ancestor whose source does)';

describe('explainObject', () => {
  it('says where a propagated object comes from', () => {
    expect(explainObject(view())).toBe(
      lines(
        'Role reader in namespace dev: propagated from team-a',
        '  Type: roles (mode Propagate)',
        '  Ancestors, highest first: org, team-a',
        `  - team-a: ${WINS}`,
        '  In dev: a copy from team-a (hnc.x-k8s.io/inherited-from=team-a)',
      ),
    );
  });

  it('names the selector annotation that keeps a source out', () => {
    const none = view({
      ancestors: [at('org'), at('team-a', role({ annotations: { 'propagate.hnc.x-k8s.io/none': 'true' } }))],
      local: at('dev'),
    });
    expect(explainObject(none)).toBe(
      lines(
        'Role reader in namespace dev: not propagated',
        '  Type: roles (mode Propagate)',
        '  Ancestors, highest first: org, team-a',
        '  - team-a: source, not propagated to dev: propagate.hnc.x-k8s.io/none is "true"',
        '  In dev: no Role of that name',
      ),
    );
    const selectors = view({
      ancestors: [
        at('org', role({ annotations: { 'propagate.hnc.x-k8s.io/select': 'env=prod' } })),
        at('team-a', role({ annotations: { 'propagate.hnc.x-k8s.io/treeSelect': '!dev' } })),
      ],
      local: at('dev'),
    });
    expect(explainObject(selectors)).toBe(
      lines(
        'Role reader in namespace dev: not propagated',
        '  Type: roles (mode Propagate)',
        '  Ancestors, highest first: org, team-a',
        '  - org: source, not propagated to dev: propagate.hnc.x-k8s.io/select "env=prod" does not match the labels of dev',
        '  - team-a: source, not propagated to dev: propagate.hnc.x-k8s.io/treeSelect "!dev": dev is in the subtree of dev, which it excludes',
        '  In dev: no Role of that name',
      ),
    );
  });

  it('lets the highest ancestor win, and says the copy from a lower one is replaced', () => {
    expect(explainObject(view({ ancestors: [at('org', role()), at('team-a', role())] }))).toBe(
      lines(
        'Role reader in namespace dev: to be propagated from org, replacing the copy from team-a',
        '  Type: roles (mode Propagate)',
        '  Ancestors, highest first: org, team-a',
        `  - org: ${WINS}`,
        '  - team-a: source, propagates to dev, but the one in org wins (higher)',
        '  In dev: a copy from team-a (hnc.x-k8s.io/inherited-from=team-a): HNC replaces it with the copy from org',
      ),
    );
  });

  it('follows AllowPropagate: only a selector or all=true lets a source in', () => {
    const allow = view({
      type: { group: RBAC, resource: 'roles', kind: 'Role', mode: 'AllowPropagate' },
      ancestors: [at('org', role()), at('team-a', role({ annotations: { 'propagate.hnc.x-k8s.io/all': 'true' } }))],
    });
    expect(explainObject(allow)).toBe(
      lines(
        'Role reader in namespace dev: propagated from team-a',
        '  Type: roles (mode AllowPropagate)',
        '  Ancestors, highest first: org, team-a',
        '  - org: source, not propagated to dev: mode AllowPropagate propagates only objects with a select or treeSelect annotation, or all=true',
        '  - team-a: source, propagates to dev (all "true"): it wins (the highest ancestor whose source does)',
        '  In dev: a copy from team-a (hnc.x-k8s.io/inherited-from=team-a)',
      ),
    );
  });

  it('says a user’s own object blocks the copy', () => {
    expect(explainObject(view({ local: at('dev', role()) }))).toBe(
      lines(
        'Role reader in namespace dev: blocked: dev has its own Role of that name',
        '  Type: roles (mode Propagate)',
        '  Ancestors, highest first: org, team-a',
        `  - team-a: ${WINS}`,
        '  In dev: its own Role, not a copy (no hnc.x-k8s.io/inherited-from label)',
        '  HNC never overwrites it, so the copy from team-a is not made (condition ObjectConflict): rename or remove it to receive the copy',
      ),
    );
  });

  it('gives the built-in exclusions', () => {
    expect(
      explainObject(view({ ancestors: [at('org'), at('team-a', role({ finalizers: ['example.com/keep'] }))], local: at('dev') })),
    ).toContain('  - team-a: source, not propagated to dev: objects with finalizers cannot be propagated\n');
    const token = view({
      type: { group: '', resource: 'secrets', kind: 'Secret', mode: 'Propagate' },
      name: 'tok',
      ancestors: [at('team-a', { kind: 'Secret', metadata: { name: 'tok' }, type: 'kubernetes.io/service-account-token' })],
      local: at('dev'),
    });
    expect(explainObject(token)).toBe(
      lines(
        'Secret tok in namespace dev: not propagated',
        '  Type: secrets (mode Propagate)',
        '  Ancestors, highest first: team-a',
        '  - team-a: source, not propagated to dev: service account token Secrets are never propagated',
        '  In dev: no Secret of that name',
      ),
    );
  });

  it('says a selector that does not parse propagates nowhere, and that a left-over copy is deleted', () => {
    const bad = view({
      ancestors: [at('org', role({ annotations: { 'propagate.hnc.x-k8s.io/none': 'maybe' } })), at('team-a', copyFrom('org'))],
      local: at('dev', copyFrom('org')),
    });
    expect(explainObject(bad)).toBe(
      lines(
        'Role reader in namespace dev: not propagated',
        '  Type: roles (mode Propagate)',
        '  Ancestors, highest first: org, team-a',
        '  - org: source, not propagated to dev: its propagate.hnc.x-k8s.io/none annotation does not parse, so it is propagated nowhere: invalid propagate.hnc.x-k8s.io/none value: strconv.ParseBool: parsing "maybe": invalid syntax',
        '  - team-a: a copy from org, not a source',
        '  In dev: a copy from org (hnc.x-k8s.io/inherited-from=org), left over: HNC deletes it',
      ),
    );
  });

  it('explains the modes that do not propagate', () => {
    const cronTab = (labels?: Record<string, string>): AnyObject => ({
      kind: 'CronTab',
      metadata: { name: 'reader', ...(labels ? { labels } : {}) },
    });
    const ignored = view({
      type: { group: 'stable.example.com', resource: 'crontabs', kind: 'CronTab', mode: 'Ignore' },
      ancestors: [at('team-a', cronTab())],
      local: at('dev', cronTab({ 'hnc.x-k8s.io/inherited-from': 'team-a' })),
    });
    expect(explainObject(ignored)).toBe(
      lines(
        'CronTab reader in namespace dev: not propagated (mode Ignore)',
        '  Type: crontabs.stable.example.com (mode Ignore): HNC does not propagate this type',
        '  Ancestors, highest first: team-a',
        '  - team-a: source, not propagated to dev: mode Ignore',
        '  In dev: a copy from team-a (hnc.x-k8s.io/inherited-from=team-a), left as it is in mode Ignore',
      ),
    );
    const removed = view({
      type: { group: '', resource: 'secrets', kind: 'Secret', mode: 'Remove' },
      ancestors: [at('team-a')],
      local: at('dev'),
    });
    expect(explainObject(removed)).toBe(
      lines(
        'Secret reader in namespace dev: not propagated (mode Remove)',
        '  Type: secrets (mode Remove): HNC deletes every copy of this type',
        '  Ancestors, highest first: team-a',
        '  No ancestor has a Secret named reader',
        '  In dev: no Secret of that name',
      ),
    );
  });

  it('says nothing changes in a halted namespace', () => {
    const halted = view({
      halted: {
        type: 'ActivitiesHalted',
        reason: 'AncestorHaltActivities',
        message: 'Propagation paused in "dev" and its descendants due to ActivitiesHalted condition on ancestor "team-a"',
      },
      ancestors: [at('org'), at('team-a')],
    });
    expect(explainObject(halted)).toBe(
      lines(
        'Role reader in namespace dev: nothing changes while dev is halted',
        '  Type: roles (mode Propagate)',
        '  dev is halted: ActivitiesHalted (AncestorHaltActivities): Propagation paused in "dev" and its descendants due to ActivitiesHalted condition on ancestor "team-a"',
        '  HNC creates, updates and deletes no copies in dev until that is resolved',
        '  Ancestors, highest first: org, team-a',
        '  No ancestor has a Role named reader',
        '  In dev: a copy from team-a (hnc.x-k8s.io/inherited-from=team-a), kept as it is while dev is halted',
      ),
    );
  });

  it('handles a root, and a copy not there yet', () => {
    expect(explainObject(view({ ancestors: [], local: at('dev') }))).toBe(
      lines(
        'Role reader in namespace dev: not propagated',
        '  Type: roles (mode Propagate)',
        '  Ancestors: none (dev is a root)',
        '  In dev: no Role of that name',
      ),
    );
    expect(explainObject(view({ local: at('dev') }))).toMatch(
      /^Role reader in namespace dev: should be propagated from team-a, but dev has no copy yet\n/,
    );
  });

  it('says what it could not read, and when that leaves the answer open', () => {
    const partial = view({
      ancestors: [{ namespace: 'org', forbidden: true }, at('team-a', role())],
      notes: ['no permission to read the hierarchy configuration of team-a: the ancestors above it come from the tree labels of dev'],
    });
    expect(explainObject(partial)).toBe(
      lines(
        'Role reader in namespace dev: propagated from team-a',
        '  Type: roles (mode Propagate)',
        '  Ancestors, highest first: org, team-a',
        '  - org: could not be read (no permission to read roles in org)',
        `  - team-a: ${WINS}`,
        '  In dev: a copy from team-a (hnc.x-k8s.io/inherited-from=team-a)',
        '  (no permission to read the hierarchy configuration of team-a: the ancestors above it come from the tree labels of dev)',
        '  (some ancestors could not be read, so a source there could win instead)',
      ),
    );
    // The copy's label names an ancestor the user may not read: that is where it comes from.
    const hidden = view({ ancestors: [{ namespace: 'org', forbidden: true }, at('team-a')], local: at('dev', copyFrom('org')) });
    expect(explainObject(hidden)).toMatch(/^Role reader in namespace dev: propagated from org \(whose Role could not be read\)\n/);
    expect(explainObject(view({ local: { namespace: 'dev', forbidden: true } }))).toBe(
      lines(
        'Role reader in namespace dev: should be propagated from team-a',
        '  Type: roles (mode Propagate)',
        '  Ancestors, highest first: org, team-a',
        `  - team-a: ${WINS}`,
        '  In dev: could not be read (no permission to read roles in dev)',
      ),
    );
  });
});

describe('selectorReason', () => {
  it('agrees with the controller’s evaluation, step by step', () => {
    const reason = (annotations: Record<string, string>, mode = 'Propagate') => selectorReason(annotations, labels, mode, 'dev');
    expect(reason({})).toBeUndefined();
    expect(reason({}, 'AllowPropagate')).toBe(
      'mode AllowPropagate propagates only objects with a select or treeSelect annotation, or all=true',
    );
    expect(reason({ 'propagate.hnc.x-k8s.io/select': 'env=dev' }, 'AllowPropagate')).toBeUndefined();
    expect(reason({ 'propagate.hnc.x-k8s.io/treeSelect': 'team-b' })).toBe(
      'propagate.hnc.x-k8s.io/treeSelect "team-b": dev is not in the subtree of team-b',
    );
    expect(reason({ 'propagate.hnc.x-k8s.io/treeSelect': 'org, !team-a' })).toBe(
      'propagate.hnc.x-k8s.io/treeSelect "org, !team-a": dev is in the subtree of team-a, which it excludes',
    );
    expect(reason({ 'propagate.hnc.x-k8s.io/treeSelect': 'team-a' })).toBeUndefined();
    expect(reason({ 'propagate.hnc.x-k8s.io/select': 'env in (' })).toMatch(
      /^its propagate\.hnc\.x-k8s\.io\/select annotation does not parse, so it is propagated nowhere: while parsing/,
    );
    expect(reason({ 'propagate.hnc.x-k8s.io/none': 'false' })).toBeUndefined();
    expect(reason({ 'propagate.hnc.x-k8s.io/none': '' })).toBeUndefined();
  });
});
