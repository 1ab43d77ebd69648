// Formatting shared by the report's sections: numbers, verdicts, and a table of figures by topology.
export const f = (x: number | undefined, digits = 2): string => (x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(digits));

/** Milliseconds with as many digits as they deserve. */
export const ms = (x: number | undefined): string =>
  x === undefined || !Number.isFinite(x) ? '–' : x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2);

export const pass = (ok: boolean | undefined): string => (ok === undefined ? '' : ok ? ' ✅' : ' ❌');

/** A figure, its target, and one cell per column. */
export type Row = [figure: string, target: string, cells: string[]];

/** Rows of figures, one column per item: `row(figure, target, cell)` adds one. */
export function rowsOf<T>(items: readonly T[]): { rows: Row[]; row: (figure: string, target: string, cell: (item: T) => string) => void } {
  const rows: Row[] = [];
  return { rows, row: (figure, target, cell) => rows.push([figure, target, items.map(cell)]) };
}

export function table(columns: readonly string[], rows: readonly Row[]): string[] {
  return [
    `| figure | target | ${columns.join(' | ')} |`,
    `|---|---|${columns.map(() => '---').join('|')}|`,
    ...rows.map(([figure, target, cells]) => `| ${figure} | ${target} | ${cells.join(' | ')} |`),
  ];
}
