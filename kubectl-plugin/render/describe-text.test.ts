import { describe, expect, it } from 'vitest';
import type { DescribeView } from '../model.js';
import { alignColumns } from './columns.js';
import { eventsText, inheritedText, renderDescribe } from './describe-text.js';
import { humanDuration } from './duration.js';

const now = new Date('2025-06-01T12:00:00Z');
const noInherited = { objects: [], notes: [], checked: ['roles', 'rolebindings'] };

describe('renderDescribe', () => {
  it('prints HNC’s block for a plain root namespace', () => {
    const view: DescribeView = {
      namespace: 'team-a',
      hierarchy: { children: [], allowCascadingDeletion: false, conditions: [] },
      inherited: noInherited,
      events: [],
    };
    expect(renderDescribe(view, now)).toBe(
      [
        'Hierarchy configuration for namespace team-a',
        '  No parent',
        '  No children',
        '  Allows Cascading Deletion: false',
        '  No conditions',
        '',
        'No inherited objects (looked at roles, rolebindings)',
        '',
        'No recent HNC events for objects in this namespace',
        '',
      ].join('\n'),
    );
  });

  it('lists children (sorted) with their subnamespace state, conditions, inherited objects and events', () => {
    const view: DescribeView = {
      namespace: 'dev',
      hierarchy: {
        parent: 'team-a',
        children: [
          { name: 'full', isChild: true },
          { name: 'missing', isChild: false, anchorState: 'Missing' },
          { name: 'conflict', isChild: false, anchorState: 'Conflict' },
          { name: 'fresh', isChild: false, anchorState: '' },
          { name: 'bound', isChild: true, anchorState: 'Ok' },
        ],
        allowCascadingDeletion: true,
        conditions: [
          { type: 'BadConfiguration', reason: 'SubnamespaceAnchorMissing', message: 'The anchor is missing in the parent namespace' },
        ],
      },
      inherited: {
        objects: [
          { kind: 'RoleBinding', name: 'admins', from: 'team-a' },
          { kind: 'Role', name: 'reader', from: 'org' },
          { kind: 'Role', name: 'admin', from: 'team-a' },
        ],
        notes: [],
        checked: ['roles', 'rolebindings'],
      },
      events: [
        {
          lastSeen: '2025-06-01T11:59:15Z',
          reason: 'CannotPropagateObject',
          object: 'Role:team-a/admin',
          message: 'Objects with finalizers cannot be propagated ',
        },
        {
          lastSeen: '2025-06-01T09:00:00Z',
          reason: 'CannotUpdateObject',
          object: 'RoleBinding:dev/admins',
          message: 'Could not write from source namespace "team-a": boom.',
        },
      ],
    };
    expect(renderDescribe(view, now)).toBe(
      [
        'Hierarchy configuration for namespace dev',
        '  Parent: team-a',
        '  Children:',
        '  - bound (subnamespace)',
        '  - conflict (Conflict subnamespace)',
        '  - fresh (Missing subnamespace)',
        '  - full',
        '  - missing (Missing subnamespace)',
        '  Allows Cascading Deletion: true',
        '  Conditions:',
        '  - BadConfiguration (SubnamespaceAnchorMissing): The anchor is missing in the parent namespace',
        '',
        'Inherited objects:',
        '  - Role/admin (from team-a)',
        '  - Role/reader (from org)',
        '  - RoleBinding/admins (from team-a)',
        '',
        'Events from the objects in namespace dev',
        'Last Seen Reason                Object                 Message',
        '45s       CannotPropagateObject Role:team-a/admin      Objects with finalizers cannot be propagated',
        '3h        CannotUpdateObject    RoleBinding:dev/admins Could not write from source namespace "team-a": boom.',
        '',
      ].join('\n'),
    );
  });

  it('says plainly what it could not read instead of failing', () => {
    const view: DescribeView = {
      namespace: 'dev',
      hierarchyNote: 'no permission to read the hierarchy configuration of dev',
      inherited: {
        objects: [{ kind: 'Role', name: 'admin', from: 'team-a' }],
        notes: ['no permission to list rolebindings in dev'],
        checked: ['roles', 'rolebindings'],
      },
      eventsNote: 'no permission to list the events in dev',
    };
    expect(renderDescribe(view, now)).toBe(
      [
        'Hierarchy configuration for namespace dev',
        '  (no permission to read the hierarchy configuration of dev)',
        '',
        'Inherited objects:',
        '  - Role/admin (from team-a)',
        '  (no permission to list rolebindings in dev)',
        '',
        '(no permission to list the events in dev)',
        '',
      ].join('\n'),
    );
  });

  it('notes anchors it could not list under the children', () => {
    const view: DescribeView = {
      namespace: 'a',
      hierarchy: { children: [{ name: 'b', isChild: true }], allowCascadingDeletion: false, conditions: [] },
      childrenNote: 'no permission to list the subnamespace anchors in a',
      inherited: noInherited,
      events: [],
    };
    expect(renderDescribe(view, now)).toContain(
      '  Children:\n  - b\n  (no permission to list the subnamespace anchors in a)\n  Allows Cascading Deletion: false\n',
    );
  });
});

describe('eventsText', () => {
  it('shows the newest event per reason and object, newest first', () => {
    const text = eventsText(
      'ns',
      [
        { lastSeen: '2025-06-01T10:00:00Z', reason: 'R', object: 'Role:ns/a', message: 'old' },
        { lastSeen: '2025-06-01T11:00:00Z', reason: 'R', object: 'Role:ns/a', message: 'new' },
        { reason: 'R', object: 'Role:ns/b', message: 'undated' },
      ],
      now,
    );
    expect(text).toBe(
      '\nEvents from the objects in namespace ns\nLast Seen Reason Object    Message\n60m       R      Role:ns/a new\n<unknown> R      Role:ns/b undated\n',
    );
  });
});

describe('inheritedText', () => {
  it('says which types it looked at when it found nothing', () => {
    expect(inheritedText({ objects: [], notes: [], checked: ['roles'] })).toBe('\nNo inherited objects (looked at roles)\n');
  });
});

describe('alignColumns', () => {
  it('pads every cell but the last to its column width plus one', () => {
    expect(
      alignColumns([
        ['a', 'bb', 'c'],
        ['ccc', 'd', 'eeee'],
      ]),
    ).toEqual(['a   bb c', 'ccc d  eeee']);
  });
});

describe('humanDuration', () => {
  it.each([
    [-5000, '<invalid>'],
    [-500, '0s'],
    [0, '0s'],
    [119_000, '119s'],
    [120_000, '2m'],
    [200_000, '3m20s'],
    [11 * 60_000, '11m'],
    [179 * 60_000, '179m'],
    [3 * 3_600_000, '3h'],
    [(3 * 60 + 25) * 60_000, '3h25m'],
    [47 * 3_600_000, '47h'],
    [50 * 3_600_000, '2d2h'],
    [7 * 86_400_000, '7d'],
    [30 * 86_400_000, '30d'],
    [(3 * 365 + 10) * 86_400_000, '3y10d'],
    [10 * 365 * 86_400_000, '10y'],
  ])('%d ms is %s', (ms, text) => {
    expect(humanDuration(ms)).toBe(text);
  });
});
