// Conditions shown as numbered footnotes, as HNC's `tree` does: each distinct text gets the next
// number the first time it is met, and a namespace shows the numbers of its conditions.
import type { ConditionView } from '../model.js';

export function conditionText(c: ConditionView): string {
  return `${c.type} (${c.reason}): ${c.message}`;
}

export class Footnotes {
  private readonly numbers = new Map<string, number>();
  private readonly texts: string[] = [];

  /** The (sorted) footnote numbers of these conditions, numbering new texts as they come. */
  refs(conditions: readonly ConditionView[]): number[] {
    const refs = new Set<number>();
    for (const c of conditions) {
      const text = conditionText(c);
      let n = this.numbers.get(text);
      if (n === undefined) {
        this.texts.push(text);
        n = this.texts.length;
        this.numbers.set(text, n);
      }
      refs.add(n);
    }
    return [...refs].sort((a, b) => a - b);
  }

  /** `name (1,2)`, or just `name` without conditions. */
  label(name: string, conditions: readonly ConditionView[]): string {
    const refs = this.refs(conditions);
    return refs.length === 0 ? name : `${name} (${refs.join(',')})`;
  }

  get size(): number {
    return this.texts.length;
  }

  /** The footer: a blank line, `Conditions:` and one `n) text` line per footnote; "" if none. */
  render(): string {
    if (this.texts.length === 0) return '';
    return `\nConditions:\n${this.texts.map((t, i) => `${i + 1}) ${t}\n`).join('')}`;
  }
}
