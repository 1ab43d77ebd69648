// `kubectl hns get` output as kubectl prints a Table: a NAMESPACE column, then the server's own
// columns (priority 0; all of them with -o wide), headers in capitals, columns three spaces apart.
// Watch rows are printed one at a time, so widths only grow (as kubectl's own -w output). Pure.
import type { TableColumn } from '../api.js';

export interface GetRow {
  namespace: string;
  cells: readonly unknown[];
}

/** A cell as kubectl prints it: text up to its first line break, `<none>` for null. */
export function formatCell(value: unknown): string {
  if (value === null || value === undefined) return '<none>';
  if (typeof value === 'string') return value.split(/[\r\n\f]/)[0] ?? '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

export class TablePrinter {
  private readonly shown: number[];
  private readonly widths: number[];

  constructor(
    private readonly columns: readonly TableColumn[],
    wide: boolean,
  ) {
    this.shown = columns.flatMap((c, i) => (wide || !c.priority ? [i] : []));
    this.widths = this.texts(this.headerCells()).map((t) => t.length);
  }

  private headerCells(): string[] {
    return ['NAMESPACE', ...this.shown.map((i) => (this.columns[i]?.name ?? '').toUpperCase())];
  }

  private texts(cells: readonly string[]): string[] {
    return [...cells];
  }

  private cellsOf(row: GetRow): string[] {
    return [row.namespace, ...this.shown.map((i) => formatCell(row.cells[i]))];
  }

  private layout(cells: readonly string[]): string {
    return cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(this.widths[i] ?? 0)))
      .join('   ')
      .trimEnd();
  }

  private grow(cells: readonly string[]): void {
    cells.forEach((c, i) => (this.widths[i] = Math.max(this.widths[i] ?? 0, c.length)));
  }

  /** The header and these rows, aligned together. */
  lines(rows: readonly GetRow[]): string[] {
    const cells = rows.map((r) => this.cellsOf(r));
    for (const c of cells) this.grow(c);
    return [this.layout(this.headerCells()), ...cells.map((c) => this.layout(c))];
  }

  /** The header alone. */
  header(): string {
    return this.layout(this.headerCells());
  }

  /** One more row (a watch event), aligned with what was printed before. */
  line(row: GetRow): string {
    const cells = this.cellsOf(row);
    this.grow(cells);
    return this.layout(cells);
  }
}
