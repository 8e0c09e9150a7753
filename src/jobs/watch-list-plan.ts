// What an import of a watch list will do: lines naming one page merged into one watch, each watch a new schedule or tags added to the page's schedule, within the limits.
import { normalizeTags } from '../tags/tag-schema.js';
import { canonicalUrl } from '../url-identity/url-key.js';
import type { JobRequest } from './job-schema.js';
import type { ScheduleStore } from './schedule-store.js';
import type { LineError, WatchLine } from './watch-list-import.js';

/** The most tags a schedule's job carries (as the schedule schema allows). */
export const MAX_TAGS = 50;

/** A page's schedule as it is, the one an import adds tags to. */
export interface ExistingWatch {
  id: string;
  /** The job as sent (passwords in URLs included), which an update keeps. */
  job: JobRequest;
}

export interface PlannedWatch {
  /** The first line naming the page: its name, calendar and job make a new schedule. */
  first: WatchLine;
  /** Every line's tags (and, for an existing schedule, its own first). */
  tags: string[];
  existing: ExistingWatch | undefined;
}

/**
 * The schedules already watching the lines' pages, by canonical URL (so a re-spelled URL, with a
 * tracking parameter or another case of host, finds its schedule): the oldest one of a page.
 */
export async function existingWatches(lines: readonly WatchLine[], schedules: Pick<ScheduleStore, 'jobUrls' | 'jobToRun'>): Promise<Map<string, ExistingWatch>> {
  const wanted = new Set(lines.map((line) => line.key));
  const found = new Map<string, string>();
  for (const { id, url } of await schedules.jobUrls()) {
    const key = url === null ? null : (canonicalUrl(url) ?? url);
    if (key !== null && wanted.has(key) && !found.has(key)) found.set(key, id);
  }
  const existing = new Map<string, ExistingWatch>();
  for (const [key, id] of found) {
    const job = await schedules.jobToRun(id);
    if (job !== undefined) existing.set(key, { id, job });
  }
  return existing;
}

/**
 * One watch per page, in the order of first mention, with every line's tags; a watch whose tags,
 * merged across its lines and with its schedule's, would pass MAX_TAGS is an error of the line that
 * passed it (nothing of the import is done then).
 */
export function planWatches(lines: readonly WatchLine[], existing: ReadonlyMap<string, ExistingWatch>): { watches: PlannedWatch[]; errors: LineError[] } {
  const watches = new Map<string, PlannedWatch>();
  const errors: LineError[] = [];
  for (const line of lines) {
    let watch = watches.get(line.key);
    if (watch === undefined) {
      const schedule = existing.get(line.key);
      watch = { first: line, tags: schedule?.job.tags ?? [], existing: schedule };
      watches.set(line.key, watch);
    }
    const tags = normalizeTags([...watch.tags, ...(line.job.tags ?? [])]);
    if (tags.length > MAX_TAGS) {
      const where = watch.existing !== undefined ? "with its page's schedule" : watch.first === line ? 'alone' : `with line ${watch.first.line} (the same page)`;
      errors.push({ line: line.line, column: 'tags', message: `${where}, the page's watch would carry ${tags.length} tags; at most ${MAX_TAGS}` });
      continue;
    }
    watch.tags = tags;
  }
  return { watches: [...watches.values()], errors };
}
