// `kubectl hns tree` as text, in HNC's layout:
//
//   team-a (1)
//   ├── [s] dev
//   │   └── [s] dev-x
//   └── prod
//
//   [s] indicates subnamespaces
//
//   Conditions:
//   1) ActivitiesHalted (ParentMissing): Parent "gone" does not exist
import type { ReadProblem, TreeNode } from '../model.js';
import { Footnotes } from './footnotes.js';

export function problemText(name: string, problem: ReadProblem): string {
  return problem === 'forbidden' ? `no permission to read ${name}` : `namespace ${name} not found`;
}

/** `suffixes`: text printed after a namespace's name (tree --quota: its quota usage). */
export function renderTreeText(trees: readonly TreeNode[], suffixes?: ReadonlyMap<string, string>): string {
  const notes = new Footnotes();
  const lines: string[] = [];
  let anySubnamespace = false;

  const label = (node: TreeNode, isRoot: boolean): string => {
    let text = notes.label(node.name, node.conditions);
    if (node.problem) text += ` (${problemText(node.name, node.problem)})`;
    const suffix = suffixes?.get(node.name);
    if (suffix) text += ` ${suffix}`;
    if (!isRoot && node.subnamespace) {
      anySubnamespace = true;
      text = `[s] ${text}`;
    }
    return text;
  };

  const walk = (node: TreeNode, prefix: string): void => {
    node.children.forEach((child, i) => {
      const last = i === node.children.length - 1;
      lines.push(`${prefix}${last ? '└── ' : '├── '}${label(child, false)}`);
      walk(child, prefix + (last ? '    ' : '│   '));
    });
  };

  for (const root of trees) {
    lines.push(label(root, true));
    walk(root, '');
  }

  let text = lines.map((l) => `${l}\n`).join('');
  if (anySubnamespace) text += '\n[s] indicates subnamespaces\n';
  return text + notes.render();
}
