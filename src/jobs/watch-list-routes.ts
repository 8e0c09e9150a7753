// POST /watch-lists/import: a CSV list of URLs to watch, each a scheduled scrape with its tags; nothing is created unless every line is good.
import { Type } from 'typebox';
import type { App } from '../http/base-app.js';
import { Nullable, problemResponses } from '../http/schemas.js';
import { ValidationFailed } from '../problems.js';
import { normalizeTags } from '../tags/tag-schema.js';
import type { JobService } from './job-service.js';
import type { ScheduleStore } from './schedule-store.js';
import { lineProblem, MAX_WATCH_LINES, readWatchList, type LineError } from './watch-list-import.js';

export interface WatchListRoutesDeps {
  service: Pick<JobService, 'createSchedule' | 'checkSchedule' | 'updateSchedule'>;
  schedules: Pick<ScheduleStore, 'withJobUrls' | 'jobToRun'>;
  allowPrivateNetworks: boolean;
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
  'whose scrapes give its tags to every product they collect; a URL that already has a schedule gets the tags added instead (so an ' +
  `import can be sent again). Every line is checked first (its URL against the address guard, its tags, its calendar): if any is bad ` +
  `the answer is a 422 listing each bad line as \`/body/line/{n}/{column}\`, and nothing is created. At most ${MAX_WATCH_LINES} URLs per import.`;

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
          response: { 200: ImportAnswer, 201: ImportAnswer, ...problemResponses(400, 413, 415, 422, 503) },
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
        const { lines, errors } = readWatchList(request.body, defaults, deps.allowPrivateNetworks);
        // The calendar as a schedule reads it: a cron the queue cannot run is that line's error too.
        for (const line of lines) {
          try {
            deps.service.checkSchedule({
              ...(line.cron === null ? { every_minutes: line.every_minutes ?? 1440 } : { cron: line.cron }),
              timezone: line.timezone,
              job: line.job,
            });
          } catch (error) {
            if (!(error instanceof ValidationFailed)) throw error;
            for (const e of error.errors ?? []) errors.push({ line: line.line, message: `${e.path.replace('/body/', '')} ${e.message}` } satisfies LineError);
          }
        }
        if (errors.length > 0) throw lineProblem(errors.sort((a, b) => a.line - b.line));

        const existing = await deps.schedules.withJobUrls([...new Set(lines.map((l) => l.url))]);
        const scheduleOf = new Map(existing.map((s) => [s.job.url ?? '', s]));
        const created: Array<{ line: number; url: string; schedule_id: string | null; tags: string[] }> = [];
        const updated: typeof created = [];
        // Two lines naming one page are one watch: the first line's schedule, every line's tags.
        const byKey = new Map<string, { line: number; url: string; tags: string[]; first: (typeof lines)[number] }>();
        for (const line of lines) {
          const seen = byKey.get(line.key);
          if (seen === undefined) byKey.set(line.key, { line: line.line, url: line.url, tags: [...(line.job.tags ?? [])], first: line });
          else seen.tags = normalizeTags([...seen.tags, ...(line.job.tags ?? [])]);
        }
        for (const watch of byKey.values()) {
          const schedule = scheduleOf.get(watch.url);
          if (schedule !== undefined) {
            const job = (await deps.schedules.jobToRun(schedule.id)) ?? schedule.job;
            const tags = normalizeTags([...(job.tags ?? []), ...watch.tags]);
            if (!query.dry_run && tags.length !== (job.tags ?? []).length) await deps.service.updateSchedule(schedule.id, { job: { ...job, tags } });
            updated.push({ line: watch.line, url: watch.url, schedule_id: schedule.id, tags });
            continue;
          }
          const line = watch.first;
          const input = {
            ...(line.name === null ? {} : { name: line.name }),
            ...(line.cron === null ? { every_minutes: line.every_minutes ?? 1440 } : { cron: line.cron }),
            timezone: line.timezone,
            job: { ...line.job, ...(watch.tags.length > 0 ? { tags: watch.tags } : {}) },
          };
          const schedule_id = query.dry_run ? null : (await deps.service.createSchedule(input)).id;
          created.push({ line: watch.line, url: watch.url, schedule_id, tags: watch.tags });
        }
        return reply.code(created.length > 0 && !query.dry_run ? 201 : 200).send({ dry_run: query.dry_run ?? false, created, updated });
      },
    );
  });
}
