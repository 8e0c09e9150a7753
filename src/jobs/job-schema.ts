// Job and schedule shapes: one TypeBox schema each for validation, serialisation and the OpenAPI document.
import { Type, type Static } from 'typebox';
import { BlockedSchema, NO_NUL, Nullable, UUID_PATTERN } from '../http/schemas.js';
import { ScrapeRequest } from '../scraping/scrape-schema.js';

const Glob = Type.String({ minLength: 1, maxLength: 200, pattern: NO_NUL });

export const CrawlOptions = Type.Object(
  {
    strategy: Type.Optional(
      Type.Union([Type.Literal('same-host'), Type.Literal('same-domain'), Type.Literal('listed')], {
        default: 'same-host',
        description:
          "Which links to follow: same-host (the start URL's host), same-domain (its registrable domain and subdomains), " +
          'listed (no links: only the start URL and the pages the sitemap lists)',
      }),
    ),
    max_pages: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, default: 100, description: 'Pages fetched at most' })),
    max_depth: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, default: 5, description: 'Link hops from the start URL (sitemap pages are depth 1)' })),
    include: Type.Optional(Type.Array(Glob, { maxItems: 20, description: 'Globs over the URL path (and query); a page must match one when given, e.g. "/books/**"' })),
    exclude: Type.Optional(Type.Array(Glob, { maxItems: 20, description: 'Globs over the URL path (and query); a page matching one is skipped' })),
    sitemap: Type.Optional(Type.Boolean({ default: false, description: "Also start from the site's sitemap.xml (and those robots.txt names), indexes and gzip included" })),
  },
  { additionalProperties: false, examples: [{ strategy: 'same-host', max_pages: 500, max_depth: 3, include: ['/catalogue/**'], sitemap: true }] },
);
export type CrawlOptions = Static<typeof CrawlOptions>;

export const JobRequest = Type.Object(
  { ...ScrapeRequest.properties, crawl: Type.Optional(CrawlOptions) },
  {
    additionalProperties: false,
    description: 'The POST /scrape body, plus `crawl` to crawl a whole site from the URL.',
    examples: [{ url: 'https://books.toscrape.com/', crawl: { max_pages: 200, include: ['/catalogue/**'] } }],
  },
);
export type JobRequest = Static<typeof JobRequest>;

export const JOB_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
const JobStatusSchema = Type.Unsafe<JobStatus>({ type: 'string', enum: [...JOB_STATUSES] });

export const Job = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    kind: Type.Union([Type.Literal('scrape'), Type.Literal('crawl')]),
    status: JobStatusSchema,
    source_url: Type.String(),
    request: Type.Unsafe<JobRequest>(Type.Object({}, { additionalProperties: true, description: 'The job request as sent' })),
    schedule_id: Nullable(Type.String({ format: 'uuid' })),
    attempts: Type.Integer({ description: 'Runs started (a retried scrape counts each try)' }),
    progress: Type.Object({
      pages_done: Type.Integer(),
      pages_discovered: Type.Integer(),
      pages_failed: Type.Integer(),
      pages_blocked: Type.Integer({
        description: 'Of the failed pages, those the site answered with a wall (a CAPTCHA, a bot check, a login, a rate limit) instead of their content',
      }),
      products_found: Type.Integer(),
      created: Type.Integer(),
      updated: Type.Integer(),
      articles_found: Type.Integer({ description: "Articles the pages held (their own, and listings' entries)" }),
      articles_created: Type.Integer({ description: 'Articles stored for the first time' }),
      articles_updated: Type.Integer({ description: 'Articles stored again (a re-scrape, or an entry whose page was read)' }),
      links_over_max_pages: Type.Integer({ description: 'A crawl: links found and not followed because max_pages was reached (0: the budget cut nothing)' }),
      links_over_max_depth: Type.Integer({ description: 'A crawl: links found on pages at max_depth, not followed (0: the depth cut nothing)' }),
      reading_sitemaps: Type.Boolean({
        description: 'A crawl: its sitemaps are still being read while its start page and links are crawled; their pages join when read',
      }),
    }),
    log_ids: Type.Array(Type.String({ format: 'uuid' }), { description: 'The scrape-log documents this job wrote' }),
    error: Nullable(
      Type.Object(
        {
          type: Type.String(),
          status: Type.Integer(),
          detail: Type.String(),
          blocked: Type.Optional(BlockedSchema),
        },
        { additionalProperties: true },
      ),
    ),
    created_at: Type.String({ format: 'date-time' }),
    started_at: Nullable(Type.String({ format: 'date-time' })),
    finished_at: Nullable(Type.String({ format: 'date-time' })),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Job' },
);
export type Job = Static<typeof Job>;

export const JobId = Type.Object({
  id: Type.String({ pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$', description: 'UUID of the job' }),
});

export const JobListQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
    offset: Type.Integer({ minimum: 0, maximum: 2_147_483_647, default: 0 }),
    status: Type.Optional(JobStatusSchema),
    source: Type.Optional(Type.String({ maxLength: 2048, pattern: NO_NUL, description: 'The source URL, exactly' })),
    schedule_id: Type.Optional(Type.String({ pattern: UUID_PATTERN, description: 'Jobs a schedule started' })),
  },
  { additionalProperties: false },
);
export type JobListQuery = Static<typeof JobListQuery>;

const Timezone = Type.String({ minLength: 1, maxLength: 64, default: 'UTC', description: 'IANA time zone the schedule is read in', examples: ['Europe/Berlin'] });
const Cron = Type.String({ minLength: 9, maxLength: 120, pattern: NO_NUL, description: 'Five-field cron expression (minute resolution)', examples: ['0 7 * * *'] });
const EveryMinutes = Type.Integer({ minimum: 1, maximum: 525_600, description: 'Run every N minutes (instead of cron)', examples: [60] });

export const ScheduleCreate = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: NO_NUL })),
    cron: Type.Optional(Cron),
    every_minutes: Type.Optional(EveryMinutes),
    timezone: Type.Optional(Timezone),
    job: JobRequest,
    paused: Type.Optional(Type.Boolean({ default: false })),
    allow_overlap: Type.Optional(Type.Boolean({ default: false, description: 'Start a run even while the previous one of this schedule still runs' })),
  },
  {
    additionalProperties: false,
    description: 'Exactly one of `cron` and `every_minutes`.',
    examples: [{ name: 'Books every morning', cron: '0 7 * * *', timezone: 'Europe/London', job: { url: 'https://books.toscrape.com/', max_pages: 50 } }],
  },
);
export type ScheduleCreate = Static<typeof ScheduleCreate>;

export const SchedulePatch = Type.Object(
  {
    name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200, pattern: NO_NUL }))),
    cron: Type.Optional(Cron),
    every_minutes: Type.Optional(EveryMinutes),
    timezone: Type.Optional(Timezone),
    job: Type.Optional(JobRequest),
    paused: Type.Optional(Type.Boolean({ description: 'true pauses, false resumes' })),
    allow_overlap: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1, examples: [{ paused: true }] },
);
export type SchedulePatch = Static<typeof SchedulePatch>;

export const Schedule = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Nullable(Type.String()),
    cron: Nullable(Type.String()),
    every_minutes: Nullable(Type.Integer()),
    timezone: Type.String(),
    job: Type.Object({}, { additionalProperties: true }),
    paused: Type.Boolean(),
    allow_overlap: Type.Boolean(),
    next_run_at: Nullable(Type.String({ format: 'date-time', description: 'When it fires next; null while paused' })),
    runs: Type.Integer({ description: 'Jobs it started' }),
    skipped: Type.Integer({ description: 'Occurrences skipped because the previous run was still going' }),
    last_run_at: Nullable(Type.String({ format: 'date-time' })),
    last_job_id: Nullable(Type.String({ format: 'uuid' })),
    last_skipped_at: Nullable(Type.String({ format: 'date-time' })),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Schedule' },
);
export type Schedule = Static<typeof Schedule>;

export const ScheduleListQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
    offset: Type.Integer({ minimum: 0, maximum: 2_147_483_647, default: 0 }),
    paused: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type ScheduleListQuery = Static<typeof ScheduleListQuery>;
