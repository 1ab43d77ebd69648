import { describe, expect, it } from 'vitest';
import type { TreeNode } from '../model.js';
import { dotString, renderTreeDot, renderTreeJson, renderTreeYaml } from './tree-formats.js';

const trees: TreeNode[] = [
  {
    name: 'team-a',
    subnamespace: false,
    conditions: [],
    children: [
      {
        name: 'dev',
        subnamespace: true,
        conditions: [{ type: 'BadConfiguration', reason: 'SubnamespaceAnchorMissing', message: 'The anchor is "missing"' }],
        children: [],
      },
      { name: 'hidden', subnamespace: false, conditions: [], children: [], problem: 'forbidden' },
    ],
  },
];

describe('tree formats', () => {
  it('-o json: {trees}, fixed field order, problem only when set', () => {
    expect(renderTreeJson(trees)).toBe(`{
  "trees": [
    {
      "name": "team-a",
      "subnamespace": false,
      "conditions": [],
      "children": [
        {
          "name": "dev",
          "subnamespace": true,
          "conditions": [
            {
              "type": "BadConfiguration",
              "reason": "SubnamespaceAnchorMissing",
              "message": "The anchor is \\"missing\\""
            }
          ],
          "children": []
        },
        {
          "name": "hidden",
          "subnamespace": false,
          "problem": "forbidden",
          "conditions": [],
          "children": []
        }
      ]
    }
  ]
}
`);
  });

  it('-o yaml: the same document', () => {
    expect(renderTreeYaml(trees)).toBe(`trees:
  - name: team-a
    subnamespace: false
    conditions: []
    children:
      - name: dev
        subnamespace: true
        conditions:
          - type: BadConfiguration
            reason: SubnamespaceAnchorMissing
            message: The anchor is "missing"
        children: []
      - name: hidden
        subnamespace: false
        problem: forbidden
        conditions: []
        children: []
`);
  });

  it('-o dot: one node per namespace, edges parent -> child, styles for subnamespaces, conditions and unreadable ones', () => {
    expect(renderTreeDot(trees)).toBe(`digraph hierarchy {
  // dashed: subnamespace; red: has conditions (see tooltip); dotted: could not be read
  node [shape=box, style="rounded"];
  "team-a";
  "dev" [style="rounded,dashed", color="red", tooltip="BadConfiguration (SubnamespaceAnchorMissing): The anchor is \\"missing\\""];
  "hidden" [style="rounded,dotted", label="hidden\\n(no permission to read hidden)"];
  "team-a" -> "dev";
  "team-a" -> "hidden";
}
`);
  });

  it('-o dot: namespaces shared by several requested trees appear once', () => {
    const b: TreeNode = { name: 'b', subnamespace: false, conditions: [], children: [] };
    const a: TreeNode = { name: 'a', subnamespace: false, conditions: [], children: [b] };
    expect(renderTreeDot([a, b])).toBe(`digraph hierarchy {
  // dashed: subnamespace; red: has conditions (see tooltip); dotted: could not be read
  node [shape=box, style="rounded"];
  "a";
  "b";
  "a" -> "b";
}
`);
  });

  it('escapes DOT strings', () => {
    expect(dotString('a"b\\c\nd')).toBe('"a\\"b\\\\c\\nd"');
  });
});
