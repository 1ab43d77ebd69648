// Machine-readable forms of `kubectl hns tree`: JSON, YAML and Graphviz DOT.
import { stringify } from 'yaml';
import type { TreeNode } from '../model.js';
import { conditionText } from './footnotes.js';
import { problemText } from './tree-text.js';

/** The document `-o json` and `-o yaml` print: `{trees: [...]}`, fields in a fixed order. */
export interface TreeDocument {
  trees: TreeNode[];
}

function normalize(node: TreeNode): TreeNode {
  return {
    name: node.name,
    subnamespace: node.subnamespace,
    ...(node.problem ? { problem: node.problem } : {}),
    conditions: node.conditions.map((c) => ({ type: c.type, reason: c.reason, message: c.message })),
    children: node.children.map(normalize),
  };
}

export function treeDocument(trees: readonly TreeNode[]): TreeDocument {
  return { trees: trees.map(normalize) };
}

export function renderTreeJson(trees: readonly TreeNode[]): string {
  return `${JSON.stringify(treeDocument(trees), null, 2)}\n`;
}

export function renderTreeYaml(trees: readonly TreeNode[]): string {
  return stringify(treeDocument(trees));
}

/** A DOT string literal. */
export function dotString(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

/**
 * A Graphviz digraph, parent -> child. Subnamespaces are dashed, namespaces with conditions red
 * (the conditions are the tooltip), namespaces that could not be read dotted. Each namespace and
 * edge appears once even if several trees share it.
 */
export function renderTreeDot(trees: readonly TreeNode[]): string {
  const nodes: string[] = [];
  const edges: string[] = [];
  const seenNodes = new Set<string>();
  const seenEdges = new Set<string>();

  const visit = (node: TreeNode, parent: string | undefined): void => {
    if (parent !== undefined) {
      const edge = `${dotString(parent)} -> ${dotString(node.name)}`;
      if (!seenEdges.has(edge)) {
        seenEdges.add(edge);
        edges.push(`  ${edge};`);
      }
    }
    if (!seenNodes.has(node.name)) {
      seenNodes.add(node.name);
      const attrs: string[] = [];
      const styles = ['rounded'];
      if (node.subnamespace) styles.push('dashed');
      if (node.problem) styles.push('dotted');
      if (styles.length > 1) attrs.push(`style=${dotString(styles.join(','))}`);
      if (node.problem) attrs.push(`label=${dotString(`${node.name}\n(${problemText(node.name, node.problem)})`)}`);
      if (node.conditions.length > 0) {
        attrs.push('color="red"');
        attrs.push(`tooltip=${dotString(node.conditions.map(conditionText).join('\n'))}`);
      }
      nodes.push(`  ${dotString(node.name)}${attrs.length ? ` [${attrs.join(', ')}]` : ''};`);
    }
    for (const child of node.children) visit(child, node.name);
  };
  for (const root of trees) visit(root, undefined);

  return [
    'digraph hierarchy {',
    '  // dashed: subnamespace; red: has conditions (see tooltip); dotted: could not be read',
    '  node [shape=box, style="rounded"];',
    ...nodes,
    ...edges,
    '}',
    '',
  ].join('\n');
}
