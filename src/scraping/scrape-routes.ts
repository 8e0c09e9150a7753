// POST /scrape: runs the pipeline and answers with what it stored.
import type { App } from '../http/base-app.js';
import { problemResponses } from '../http/schemas.js';
import type { Metrics } from '../http/metrics.js';
import { toProblem } from '../problems.js';
import { scrapeMode, type Scraper } from './scrape-pipeline.js';
import { ScrapeRequest, ScrapeResult } from './scrape-schema.js';

export function scrapeRoutes(app: App, scraper: Scraper, metrics: Metrics): void {
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
          '503 no browser, 504 timeout.',
        body: ScrapeRequest,
        response: { 200: ScrapeResult, ...problemResponses(400, 413, 415, 422, 502, 503, 504) },
      },
      // A bodiless POST means the same as `{}`.
      preValidation: (request, _reply, done) => {
        if (request.body === undefined || request.body === null) request.body = {};
        done();
      },
    },
    async (request) => {
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
}
