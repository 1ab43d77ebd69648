import { describe, expect, it } from 'vitest';
import type { ConditionView, TreeNode } from '../model.js';
import { renderTreeText } from './tree-text.js';

const ns = (name: string, children: TreeNode[] = [], extra: Partial<TreeNode> = {}): TreeNode => ({
  name,
  subnamespace: false,
  conditions: [],
  children,
  ...extra,
});
const sub = (name: string, children: TreeNode[] = [], extra: Partial<TreeNode> = {}): TreeNode =>
  ns(name, children, { subnamespace: true, ...extra });
const missingParent: ConditionView = { type: 'ActivitiesHalted', reason: 'ParentMissing', message: 'Parent "gone" does not exist' };
const ancestorHalted: ConditionView = {
  type: 'ActivitiesHalted',
  reason: 'AncestorHaltActivities',
  message: 'Propagation paused in "b" and its descendants due to ActivitiesHalted condition on ancestor "a"',
};
const anchorMissing: ConditionView = {
  type: 'BadConfiguration',
  reason: 'SubnamespaceAnchorMissing',
  message: 'The anchor is missing in the parent namespace',
};

describe('renderTreeText', () => {
  it('prints nothing for no trees', () => {
    expect(renderTreeText([])).toBe('');
  });

  it('prints a lone root as its name', () => {
    expect(renderTreeText([ns('team-a')])).toBe('team-a\n');
  });

  it('draws branches, marks subnamespaces (not roots) and explains the mark', () => {
    const tree = sub('team-a', [sub('dev', [sub('dev-x'), ns('dev-y')]), ns('prod', [sub('prod-1')])]);
    expect(renderTreeText([tree])).toBe(
      [
        'team-a',
        '├── [s] dev',
        '│   ├── [s] dev-x',
        '│   └── dev-y',
        '└── prod',
        '    └── [s] prod-1',
        '',
        '[s] indicates subnamespaces',
        '',
      ].join('\n'),
    );
  });

  it('numbers conditions as footnotes in order of appearance, sharing numbers for equal texts', () => {
    const trees = [
      ns('a', [ns('b', [], { conditions: [ancestorHalted, anchorMissing] }), ns('c', [], { conditions: [anchorMissing] })], {
        conditions: [missingParent],
      }),
      ns('d'),
    ];
    expect(renderTreeText(trees)).toBe(
      [
        'a (1)',
        '├── b (2,3)',
        '└── c (3)',
        'd',
        '',
        'Conditions:',
        '1) ActivitiesHalted (ParentMissing): Parent "gone" does not exist',
        '2) ActivitiesHalted (AncestorHaltActivities): Propagation paused in "b" and its descendants due to ActivitiesHalted condition on ancestor "a"',
        '3) BadConfiguration (SubnamespaceAnchorMissing): The anchor is missing in the parent namespace',
        '',
      ].join('\n'),
    );
  });

  it('lists subnamespaces before conditions in the footer, and notes what could not be read', () => {
    const tree = ns('team-a', [
      sub('dev', [], { conditions: [anchorMissing] }),
      ns('secret', [], { problem: 'forbidden' }),
      ns('gone', [], { problem: 'notFound' }),
    ]);
    expect(renderTreeText([tree])).toBe(
      [
        'team-a',
        '├── [s] dev (1)',
        '├── secret (no permission to read secret)',
        '└── gone (namespace gone not found)',
        '',
        '[s] indicates subnamespaces',
        '',
        'Conditions:',
        '1) BadConfiguration (SubnamespaceAnchorMissing): The anchor is missing in the parent namespace',
        '',
      ].join('\n'),
    );
  });
});
