// Column alignment like Go's tabwriter with padding 1: every cell but the last of a row is padded
// to the widest cell of its column plus `padding` spaces.

export function alignColumns(rows: readonly (readonly string[])[], padding = 1): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      if (i < row.length - 1) widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  return rows.map((row) => row.map((cell, i) => (i < row.length - 1 ? cell.padEnd((widths[i] ?? 0) + padding) : cell)).join(''));
}
