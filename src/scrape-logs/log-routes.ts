// Read-only routes over the scrape-log documents.
import { Type } from 'typebox';
import type { App } from '../http/base-app.js';
import { NotFound } from '../problems.js';
import { LogId, LogListQuery, ScrapeLog } from './log-schema.js';
import type { LogStore } from './log-store.js';

export interface LogRoutesDeps {
  logs: LogStore;
}

export function logRoutes(app: App, deps: LogRoutesDeps): void {
  const { logs } = deps;
  app.get(
    '/scrape-logs',
    {
      schema: {
        tags: ['scraping'],
        summary: 'List scrape-log documents, newest first',
        description: `One document per scrape run from the document store (${logs.backend}). \`X-Total-Count\` gives the number matching the filters.`,
        querystring: LogListQuery,
        response: { 200: Type.Array(ScrapeLog) },
      },
    },
    async (request, reply) => {
      const { items, total } = await logs.list(request.query);
      reply.header('x-total-count', total);
      return items;
    },
  );

  app.get(
    '/scrape-logs/:id',
    {
      schema: {
        tags: ['scraping'],
        summary: 'Get one scrape-log document',
        params: LogId,
        response: { 200: ScrapeLog },
      },
    },
    async (request) => {
      const log = await logs.get(request.params.id);
      if (!log) throw new NotFound(`Scrape log ${request.params.id} does not exist.`);
      return log;
    },
  );
}
