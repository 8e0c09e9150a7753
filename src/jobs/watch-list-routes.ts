// POST /watch-lists/import: a CSV list of URLs to watch, each a scheduled scrape with its tags; nothing is created unless every line is good and all fit.
import { Type } from 'typebox';
import type { App } from '../http/base-app.js';
import { Nullable } from '../http/schemas.js';
import type { Database, Queryable } from '../db/queryable.js';
import { LimitReached, ValidationFailed, type FieldError } from '../problems.js';
import { normalizeTags } from '../tags/tag-schema.js';
import type { JobService } from './job-service.js';
import type { ScheduleStore } from './schedule-store.js';
import { lineProblem, MAX_WATCH_LINES, nextTurn, readWatchList, type LineError } from './watch-list-import.js';
import { existingWatches, planWatches } from './watch-list-plan.js';

export interface WatchListRoutesDeps {
  db: Database;
  service: Pick<JobService, 'createSchedule' | 'checkCalendar' | 'updateSchedule'>;
  schedules: Pick<ScheduleStore, 'jobUrls' | 'jobToRun' | 'count'>;
  allowPrivateNetworks: boolean;
  /** Schedules in all (SCHEDULES_MAX). */
  schedulesMax: number;
}

/** The 422 of an import that would pass SCHEDULES_MAX: nothing of it was done. */
function tooMany(creating: number, count: number, max: number): LimitReached {
  return new LimitReached(
    `Nothing was imported: it would add ${creating} schedule${creating === 1 ? '' : 's'} to the ${count} there are, and SCHEDULES_MAX allows ${max}. ` +
      'Import fewer URLs, or delete schedules first.',
  );
}

/** The field errors a check throws (none when it passes). */
function calendarProblems(check: () => void): FieldError[] {
  try {
    check();
    return [];
  } catch (error) {
    if (!(error instanceof ValidationFailed)) throw error;
    return [...(error.errors ?? [])];
  }
}

const ImportQuery = Type.Object(
  {
    tags: Type.Optional(Type.String({ maxLength: 2000, description: 'Comma-separated tags given to every line, besides its own' })),
    every_minutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 525_600, description: 'How often each URL is scraped, unless its line says (default 1440: daily)' })),
    cron: Type.Optional(Type.String({ minLength: 9, maxLength: 120, description: 'Instead of every_minutes: a five-field cron for every line' })),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone of the cron (default UTC)' })),
    dry_run: Type.Optional(Type.Boolean({ default: false, description: 'Check the list and answer what would be done, creating nothing' })),
  },
  { additionalProperties: false },
);

const Imported = Type.Object({ line: Type.Integer(), url: Type.String(), schedule_id: Nullable(Type.String({ format: 'uuid' })), tags: Type.Array(Type.String()) });

const ImportAnswer = Type.Object(
  {
    dry_run: Type.Boolean(),
    created: Type.Array(Imported, { description: 'Lines that became a new schedule (schedule_id null in a dry run)' }),
    updated: Type.Array(Imported, { description: 'Lines whose URL already had a schedule: its tags were added to it' }),
  },
  { $id: 'WatchListImport' },
);

const DESCRIPTION =
  'The body is CSV (`Content-Type: text/csv`), one URL per line: either a header line naming the columns (`url` and any of `tags`, ' +
  '`name`, `every_minutes`, `cron`, `timezone`, `max_pages`, `use_selenium`), or no header and the columns `url,tags,name`. Tags in a cell ' +
  'are separated by `;`. Blank lines and lines starting with `#` are skipped. Each URL becomes a schedule (daily unless said otherwise) ' +
  'whose scrapes give its tags to every product they collect; a page that already has a schedule (the same canonical URL, however ' +
  'spelled) gets the tags added instead, so an import can be sent again. Lines naming one page are one watch with all their tags. ' +
  `Every line is checked first (its URL against the address guard, its tags, at most 50 a page, its calendar): if any is bad ` +
  `the answer is a 422 listing each bad line as \`/body/line/{n}/{column}\`, and nothing is created. An import that would pass ` +
  `SCHEDULES_MAX is a 422 \`limit-reached\` and creates nothing either: its schedules are created together or not at all. At most ${MAX_WATCH_LINES} URLs per import.`;

export function watchListRoutes(app: App, deps: WatchListRoutesDeps): void {
  // The CSV parser belongs to this route alone: elsewhere text/csv stays a 415.
  void app.register(async (plain) => {
    const scope = plain as unknown as App;
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('text/csv', { parseAs: 'string' }, (_request, body, done) => done(null, body));
    scope.post(
      '/watch-lists/import',
      {
        schema: {
          tags: ['tags'],
          summary: 'Import a CSV list of URLs to watch: each a scheduled scrape with its tags',
          description: DESCRIPTION,
          consumes: ['text/csv'],
          querystring: ImportQuery,
          body: Type.String({ description: 'CSV', examples: ['url,tags,name\nhttps://shop.example/espresso-machine,espresso;kitchen,Espresso machine\n'] }),
          response: { 200: ImportAnswer, 201: ImportAnswer },
        },
      },
      async (request, reply) => {
        const query = request.query;
        const defaults = {
          tags: normalizeTags((query.tags ?? '').split(',')),
          every_minutes: query.every_minutes,
          cron: query.cron,
          timezone: query.timezone,
        };
        const { lines, errors } = await readWatchList(request.body, defaults, deps.allowPrivateNetworks);
        // The calendar as a schedule reads it (a cron the queue cannot run is that line's error too),
        // checked once per distinct calendar: a thousand lines usually share one.
        const calendars = new Map<string, FieldError[]>();
        for (const [i, line] of lines.entries()) {
          if (i > 0 && i % 100 === 0) await nextTurn();
          const calendar = line.cron === null ? { every_minutes: line.every_minutes ?? 1440 } : { cron: line.cron };
          const key = JSON.stringify([calendar, line.timezone]);
          let problems = calendars.get(key);
          if (problems === undefined) {
            problems = calendarProblems(() => deps.service.checkCalendar({ ...calendar, timezone: line.timezone }));
            calendars.set(key, problems);
          }
          for (const e of problems) errors.push({ line: line.line, message: `${e.path.replace('/body/', '')} ${e.message}` } satisfies LineError);
        }
        const existing = await existingWatches(lines, deps.schedules);
        const plan = planWatches(lines, existing);
        errors.push(...plan.errors);
        if (errors.length > 0) throw lineProblem(errors.sort((a, b) => a.line - b.line));

        const creating = plan.watches.filter((w) => w.existing === undefined);
        const count = await deps.schedules.count();
        if (count + creating.length > deps.schedulesMax) throw tooMany(creating.length, count, deps.schedulesMax);
        const created: Array<{ line: number; url: string; schedule_id: string | null; tags: string[] }> = [];
        const updated: typeof created = [];
        // All or nothing: every schedule of the import commits together, or none (another request that
        // took the last places meanwhile makes the whole import a 422, not a part of it).
        const apply = async (tx: Queryable | undefined) => {
          for (const watch of plan.watches) {
            const { first, tags } = watch;
            if (watch.existing !== undefined) {
              const { id, job } = watch.existing;
              if (tx !== undefined && tags.length !== (job.tags ?? []).length) await deps.service.updateSchedule(id, { job: { ...job, tags } }, { tx });
              updated.push({ line: first.line, url: first.url, schedule_id: id, tags });
              continue;
            }
            const input = {
              ...(first.name === null ? {} : { name: first.name }),
              ...(first.cron === null ? { every_minutes: first.every_minutes ?? 1440 } : { cron: first.cron }),
              timezone: first.timezone,
              job: { ...first.job, ...(tags.length > 0 ? { tags } : {}) },
            };
            const schedule_id = tx === undefined ? null : (await deps.service.createSchedule(input, { tx })).id;
            created.push({ line: first.line, url: first.url, schedule_id, tags });
          }
        };
        if (query.dry_run) await apply(undefined);
        else {
          try {
            await deps.db.transaction(apply);
          } catch (error) {
            if (error instanceof LimitReached) throw tooMany(creating.length, await deps.schedules.count(), deps.schedulesMax);
            throw error;
          }
        }
        return reply.code(created.length > 0 && !query.dry_run ? 201 : 200).send({ dry_run: query.dry_run ?? false, created, updated });
      },
    );
  });
}
