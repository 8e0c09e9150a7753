// POST /scrape: runs the pipeline and answers with what it stored.
import { Type, type Static } from 'typebox';
import type { App } from '../http/base-app.js';
import { Problem, problemResponses } from '../http/schemas.js';
import type { Metrics } from '../http/metrics.js';
import { toProblem, UnsupportedMediaType } from '../problems.js';
import { scrapeMode } from './scrape-request.js';
import type { Scraper } from './scrape-run.js';
import { ScrapeExplanation, ScrapeRequest, ScrapeResult } from './scrape-schema.js';

/** A failed explain: the problem, plus what was decided before the failure (guard verdict, redirects, robots.txt). */
const ExplainProblem = Type.Object(
  {
    ...Problem.properties,
    explanation: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'The target verdict and every fetch attempted before the failure' })),
  },
  { description: 'RFC 9457 problem details with an `explanation` extension member.' },
);

/**
 * A scrape runs only when asked in JSON (`{}` for the demo): a bodiless POST is what a page of
 * another site can send without asking the browser first, and it must not start a scrape.
 */
const jsonOnly = (request: { body: unknown; headers: Record<string, unknown> }, _reply: unknown, done: (error?: Error) => void) => {
  if (request.headers['content-type'] === undefined) {
    return done(new UnsupportedMediaType('Send the request as JSON (Content-Type: application/json), with {} for the demo scraper.'));
  }
  done();
};

/** Queues the body as a job instead (POST /scrape with `Prefer: respond-async`). */
export interface AsyncScrapes {
  create(request: ScrapeRequest): Promise<{ id: string } & Record<string, unknown>>;
}

export interface ScrapeRoutesDeps {
  scraper: Scraper;
  metrics: Metrics;
  /** Where `Prefer: respond-async` queues the run as a job. */
  asyncScrapes: AsyncScrapes;
}

export function scrapeRoutes(app: App, deps: ScrapeRoutesDeps): void {
  const { scraper, metrics, asyncScrapes } = deps;
  app.post(
    '/scrape',
    {
      schema: {
        tags: ['scraping'],
        summary: 'Scrape a page (or the demo site) and store its products',
        description:
          '`{}` runs the demo scraper on the practice book site. With `url`, the page is fetched over HTTP ' +
          '(static) or rendered in headless Chromium (`use_selenium: true`). Products are upserted by their ' +
          'own URL, so re-running updates instead of duplicating. Every run writes one scrape-log document, ' +
          'also when it fails. Errors: 422 blocked or invalid target, 502 upstream error or not HTML, ' +
          '503 no browser, 504 timeout. With `Prefer: respond-async` the run is queued as a job instead: ' +
          '202 with `Location: /jobs/{id}` and the job (see `POST /jobs`).',
        body: ScrapeRequest,
        headers: Type.Object({ prefer: Type.Optional(Type.String({ description: '`respond-async` queues the scrape as a job (RFC 7240)' })) }),
        response: {
          200: ScrapeResult,
          202: Type.Object({}, { additionalProperties: true, description: 'The queued job, as GET /jobs/{id} answers it' }),
          ...problemResponses(502, 504),
        },
      },
      preValidation: jsonOnly,
    },
    async (request, reply) => {
      if (/(?:^|[\s,;])respond-async(?:$|[\s,;])/i.test(request.headers.prefer ?? '')) {
        const job = await asyncScrapes.create(request.body);
        return reply.code(202).header('location', `/jobs/${job.id}`).header('preference-applied', 'respond-async').send(job);
      }
      const mode = scrapeMode(request.body);
      const stop = metrics.scrapeDuration.startTimer({ mode });
      try {
        const result = await scraper.scrape(request.body);
        stop({ outcome: 'succeeded' });
        metrics.scrapeRuns.inc({ mode, outcome: 'succeeded' });
        metrics.scrapeProducts.inc({ mode }, result.count);
        return result;
      } catch (error) {
        const outcome = `failed_${toProblem(error).status}`;
        stop({ outcome });
        metrics.scrapeRuns.inc({ mode, outcome });
        throw error;
      }
    },
  );

  app.post(
    '/scrape/explain',
    {
      schema: {
        tags: ['scraping'],
        summary: 'Explain what a scrape would do, without storing anything',
        description:
          'Takes the same body as `POST /scrape`, fetches and extracts exactly as a scrape would, and stores nothing ' +
          "(no products, no log). Answers the whole decision: the address guard's verdict and the addresses the host " +
          'resolves to, robots.txt verdicts, the redirect chain with statuses, content type, size and charset, timings ' +
          'per phase, the page type and why, every candidate each source of evidence found, and which value was chosen ' +
          'for each field and why. Same errors and limits as `POST /scrape`; a failure carries what was decided before ' +
          'it under `explanation` (a blocked target is 422 with the reason).',
        body: ScrapeRequest,
        response: {
          200: ScrapeExplanation,
          422: ExplainProblem,
          502: ExplainProblem,
          503: ExplainProblem,
          504: ExplainProblem,
        },
      },
      preValidation: jsonOnly,
    },
    // The answer is built from interfaces the schema documents as open objects; the schema serialises it.
    async (request) => (await scraper.explain(request.body)) as unknown as Static<typeof ScrapeExplanation>,
  );
}
