// A CSV list of URLs to watch, read and checked line by line (pure but for the guard's checks): each line a schedule to be, or the reasons it cannot be.
import { parse } from 'csv-parse';
import { HttpProblem, ValidationFailed, type FieldError } from '../problems.js';
import { checkScrapeRequest } from '../scraping/scrape-request.js';
import { checkedTags } from '../tags/tag-schema.js';
import { canonicalUrl } from '../url-identity/url-key.js';
import type { JobRequest } from './job-schema.js';

/** The most URLs one import takes. */
export const MAX_WATCH_LINES = 1000;

export const WATCH_COLUMNS = ['url', 'tags', 'name', 'every_minutes', 'cron', 'timezone', 'max_pages', 'use_selenium'] as const;
type Column = (typeof WATCH_COLUMNS)[number];

/** Defaults for every line (the query string of the import). */
export interface WatchDefaults {
  tags: string[];
  every_minutes?: number | undefined;
  cron?: string | undefined;
  timezone?: string | undefined;
}

/** One line that can become a schedule. */
export interface WatchLine {
  line: number;
  url: string;
  /** The URL in canonical form: two lines (or a line and a schedule) naming one page are one watch. */
  key: string;
  name: string | null;
  every_minutes: number | null;
  cron: string | null;
  timezone: string;
  job: JobRequest;
}

export interface LineError {
  line: number;
  column?: Column;
  message: string;
}

/** The CSV is parsed this many characters at a time, the event loop let go between them. */
const CHUNK_CHARS = 64 * 1024;
/** Lines checked between two turns of the event loop. */
const LINES_PER_TURN = 100;

export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Reads the CSV: a header line naming the columns (`url` and any of tags, name, every_minutes, cron,
 * timezone, max_pages, use_selenium), or no header and the columns url, tags, name. Tags in a cell
 * are separated by `;`. Blank lines and lines starting with # are skipped. Every line is checked as
 * a schedule would be (the URL against the address guard); all the problems are answered together.
 * A megabyte of CSV is read in slices, other requests answered in between.
 */
export async function readWatchList(csv: string, defaults: WatchDefaults, allowPrivateNetworks: boolean): Promise<{ lines: WatchLine[]; errors: LineError[] }> {
  const records: Array<{ record: string[]; info: { lines: number } }> = [];
  // With `info`, each record comes with where it ended (its line), which the errors name.
  const parser = parse({ info: true, skip_empty_lines: true, relax_column_count: true, trim: true, comment: '#', comment_no_infix: true, bom: true });
  let failure: (Error & { lines?: number }) | undefined;
  parser.on('data', (record) => records.push(record));
  parser.on('error', (error) => {
    failure ??= error;
  });
  const ended = new Promise<void>((resolve) => parser.once('close', resolve));
  // The header and one line too many are enough to refuse it.
  for (let at = 0; at < csv.length && failure === undefined && records.length <= MAX_WATCH_LINES + 1; at += CHUNK_CHARS) {
    if (at > 0) await nextTurn();
    parser.write(csv.slice(at, at + CHUNK_CHARS));
  }
  if (failure === undefined && records.length <= MAX_WATCH_LINES + 1) parser.end();
  else parser.destroy();
  await ended;
  if (failure !== undefined) {
    throw new ValidationFailed([{ path: `/body/line/${failure.lines ?? 1}`, message: `is not valid CSV: ${String(failure.message).replace(/^[A-Z_]+:\s*/, '')}` }]);
  }
  if (records.length === 0) throw new ValidationFailed([{ path: '/body', message: 'holds no URL: send one URL per line (a header line "url,tags,name" is optional)' }]);
  const first = records[0]!.record.map((cell) => cell.toLowerCase());
  const hasHeader = first.includes('url');
  const columns: Array<Column | null> = hasHeader ? first.map((name) => ((WATCH_COLUMNS as readonly string[]).includes(name) ? (name as Column) : null)) : ['url', 'tags', 'name'];
  const errors: LineError[] = [];
  if (hasHeader) {
    first.forEach((name, i) => {
      if (columns[i] === null) errors.push({ line: records[0]!.info.lines, message: `unknown column "${name}"; the columns are ${WATCH_COLUMNS.join(', ')}` });
    });
  }
  const rows = hasHeader ? records.slice(1) : records;
  if (rows.length > MAX_WATCH_LINES) {
    throw new HttpProblem(413, 'payload-too-large', 'Content Too Large', `An import takes at most ${MAX_WATCH_LINES} URLs; this one has more. Split it.`);
  }
  const lines: WatchLine[] = [];
  for (const [i, { record, info }] of rows.entries()) {
    if (i > 0 && i % LINES_PER_TURN === 0) await nextTurn();
    const cells: Partial<Record<Column, string>> = {};
    record.forEach((value, i) => {
      const column = columns[i];
      if (column != null && value !== '') cells[column] = value;
    });
    const line = readLine(info.lines, cells, defaults, allowPrivateNetworks);
    if ('errors' in line) for (const error of line.errors) errors.push(error);
    else lines.push(line);
  }
  return { lines, errors };
}

/** The errors as one 422, each naming its line (and column). */
export function lineProblem(errors: readonly LineError[]): ValidationFailed {
  const fields: FieldError[] = errors.map((e) => ({ path: `/body/line/${e.line}${e.column === undefined ? '' : `/${e.column}`}`, message: e.message }));
  return new ValidationFailed(
    fields,
    `Nothing was imported: ${errors.length} problem${errors.length === 1 ? '' : 's'} in the list (${fields
      .slice(0, 5)
      .map((f) => `${f.path.replace('/body/', '')} ${f.message}`)
      .join('; ')}${errors.length > 5 ? '; …' : ''}). Fix them and send the list again.`,
  );
}

function readLine(line: number, cells: Partial<Record<Column, string>>, defaults: WatchDefaults, allowPrivate: boolean): WatchLine | { errors: LineError[] } {
  const errors: LineError[] = [];
  const fail = (column: Column, message: string) => errors.push({ line, column, message });
  const url = cells.url;
  let key = '';
  if (url === undefined) fail('url', 'is missing');
  else if (!/^https?:\/\//i.test(url) || url.length > 2048) fail('url', 'must be an http or https URL of at most 2048 characters');
  else {
    try {
      checkScrapeRequest({ url }, allowPrivate);
      key = canonicalUrl(url) ?? url;
    } catch (error) {
      fail('url', (error as Error).message);
    }
  }
  let tags: string[] = [];
  try {
    const given = [...defaults.tags, ...(cells.tags ?? '').split(';').map((t) => t.trim())].filter((t) => t !== '');
    const bad = given.find((t) => t.length > 64 || /[,\u0000-\u001f\u007f]/.test(t));
    if (bad !== undefined) fail('tags', `"${bad.slice(0, 70)}" is not a tag (at most 64 characters, no comma or control character)`);
    else tags = checkedTags(given, `/body/line/${line}/tags`);
    if (tags.length > 50) fail('tags', 'at most 50 tags');
  } catch (error) {
    fail('tags', (error as Error).message);
  }
  const name = cells.name ?? null;
  if (name !== null && name.length > 200) fail('name', 'is longer than 200 characters');
  const cron = cells.cron ?? (cells.every_minutes === undefined ? (defaults.cron ?? null) : null);
  const every = integer(cells.every_minutes, 1, 525_600) ?? (cron === null ? (defaults.every_minutes ?? 1440) : null);
  if (cells.every_minutes !== undefined && integer(cells.every_minutes, 1, 525_600) === null) fail('every_minutes', 'must be a whole number of minutes from 1 to 525600');
  if (cells.every_minutes !== undefined && cells.cron !== undefined) fail('cron', 'give cron or every_minutes, not both');
  const maxPages = cells.max_pages === undefined ? undefined : integer(cells.max_pages, 1, 100);
  if (maxPages === null) fail('max_pages', 'must be a whole number from 1 to 100');
  const selenium = cells.use_selenium === undefined ? undefined : /^(?:true|yes|1)$/i.test(cells.use_selenium) ? true : /^(?:false|no|0)$/i.test(cells.use_selenium) ? false : null;
  if (selenium === null) fail('use_selenium', 'must be true or false');
  if (errors.length > 0 || url === undefined) return { errors };
  const job: JobRequest = {
    url,
    ...(tags.length > 0 ? { tags } : {}),
    ...(maxPages === undefined || maxPages === null ? {} : { max_pages: maxPages }),
    ...(selenium === undefined || selenium === null ? {} : { use_selenium: selenium }),
  };
  return { line, url, key, name, every_minutes: every, cron, timezone: cells.timezone ?? defaults.timezone ?? 'UTC', job };
}

function integer(text: string | undefined, min: number, max: number): number | null {
  if (text === undefined || !/^\d+$/.test(text)) return null;
  const n = Number(text);
  return n >= min && n <= max ? n : null;
}
