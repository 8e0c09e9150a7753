// Plain-text tables for the terminal, and the list of targets each figure is judged against.

export interface TargetCheck {
  section: string;
  name: string;
  value: number;
  unit: string;
  /** Human wording of the target, e.g. ">= 0.80" or "< 15 ms". */
  target: string;
  pass: boolean;
}

export const mark = (pass: boolean | undefined): string => (pass === undefined ? ' ' : pass ? '✓' : '✗');

export function num(value: number | undefined, digits = 1): string {
  if (value === undefined || Number.isNaN(value)) return '—';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** Columns are right-aligned except the first; a row that is a single string is a sub-heading. */
export function table(header: string[], rows: Array<string[] | string>): string {
  const widths = header.map((h, i) => Math.max([...h].length, ...rows.filter((r): r is string[] => Array.isArray(r)).map((r) => [...(r[i] ?? '')].length)));
  const pad = (cells: string[]) =>
    cells
      .map((cell, i) => {
        const gap = ' '.repeat(Math.max(0, widths[i]! - [...cell].length));
        return i === 0 ? cell + gap : gap + cell;
      })
      .join('  ');
  const rule = widths.map((w) => '─'.repeat(w)).join('  ');
  return [pad(header), rule, ...rows.map((r) => (Array.isArray(r) ? pad(r) : r))].join('\n');
}

export function section(title: string, note: string | undefined, body: string): string {
  return `\n## ${title}\n${note === undefined ? '' : `${note}\n`}\n${body}\n`;
}
