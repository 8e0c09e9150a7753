// Other answers than JSON for exports: CSV (RFC 4180) and NDJSON, chosen by Accept and written as streams.
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';

export type ExportFormat = 'json' | 'csv' | 'ndjson';

const MEDIA: Record<Exclude<ExportFormat, 'json'>, string> = {
  csv: 'text/csv; charset=utf-8',
  ndjson: 'application/x-ndjson; charset=utf-8',
};

/** What the client's Accept asks for first among JSON, CSV and NDJSON; JSON when it names none of them. */
export function exportFormat(request: FastifyRequest): ExportFormat {
  const accept = (request.headers.accept ?? '').toLowerCase();
  const ranked = accept
    .split(',')
    .map((part, index) => {
      const [type = '', ...params] = part.trim().split(';');
      const q = Number(
        params
          .map((p) => p.trim())
          .find((p) => p.startsWith('q='))
          ?.slice(2) ?? '1',
      );
      return { type: type.trim(), q: Number.isFinite(q) ? q : 0, index };
    })
    .filter((entry) => entry.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const { type } of ranked) {
    if (type === 'text/csv') return 'csv';
    if (type === 'application/x-ndjson' || type === 'application/ndjson' || type === 'application/jsonl') return 'ndjson';
    if (type === 'application/json' || type === '*/*' || type === 'application/*') return 'json';
  }
  return 'json';
}

/**
 * One CSV cell. Quoted when it holds a comma, quote or line break; text a spreadsheet would run as
 * a formula (= + - @ at the start) gets a leading apostrophe, so an export cannot carry code.
 */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  let text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvRow(values: readonly unknown[]): string {
  return `${values.map(csvCell).join(',')}\r\n`;
}

/** Sends rows as CSV (a header line first) or NDJSON, batch by batch: only one batch is held at a time. */
export function sendExport<T>(
  reply: FastifyReply,
  format: Exclude<ExportFormat, 'json'>,
  columns: readonly (keyof T & string)[],
  batches: AsyncIterable<readonly T[]> | Iterable<readonly T[]>,
  filename: string,
): FastifyReply {
  async function* lines(): AsyncGenerator<string> {
    if (format === 'csv') yield csvRow(columns);
    for await (const batch of batches) {
      let chunk = '';
      for (const row of batch) chunk += format === 'csv' ? csvRow(columns.map((c) => row[c])) : `${JSON.stringify(row)}\n`;
      if (chunk !== '') yield chunk;
    }
  }
  return reply
    .type(MEDIA[format])
    .header('content-disposition', `inline; filename="${filename}.${format === 'csv' ? 'csv' : 'ndjson'}"`)
    .send(Readable.from(lines()));
}
