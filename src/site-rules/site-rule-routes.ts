// /site-rules: what a user pins for a site (per-field selectors or JSON paths, a page type), applied by every scrape, crawl and explain of it.
import { Type } from 'typebox';
import type { App } from '../http/base-app.js';
import { pagedAnswer } from '../http/paging.js';
import { problemResponses } from '../http/schemas.js';
import { NotFound } from '../problems.js';
import { checkedRule, SiteRule, SiteRuleBody, SiteRulePath } from './site-rule-schema.js';
import type { SiteRuleStore } from './site-rule-store.js';

const PageQuery = Type.Object(
  { limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }), offset: Type.Integer({ minimum: 0, maximum: 2_147_483_647, default: 0 }) },
  { additionalProperties: false },
);
const Deleted = Type.Object({ id: Type.Integer(), deleted: Type.Literal(true) });
const TAGS = ['site-rules'];
const HOW =
  'A rule applies to every scrape, crawl page, schedule and explain of a page whose host it matches (the host itself first, else the most specific `*.` pattern). ' +
  'Each pinned field wins over every other source (provenance `site-rule`); a pinned field that finds nothing on a page is reported in `site_rule_warnings` of the run and its log.';

export interface SiteRuleRoutesDeps {
  rules: SiteRuleStore;
}

export function siteRuleRoutes(app: App, deps: SiteRuleRoutesDeps): void {
  const { rules } = deps;
  app.get(
    '/site-rules',
    {
      schema: {
        tags: TAGS,
        summary: 'List site rules, by host pattern',
        description: HOW,
        querystring: PageQuery,
        response: { 200: Type.Array(SiteRule) },
      },
    },
    async (request, reply) => {
      return pagedAnswer(reply, '/site-rules', request, await rules.list(request.query));
    },
  );

  app.post(
    '/site-rules',
    {
      schema: {
        tags: TAGS,
        summary: 'Pin a rule for a site',
        description: `${HOW} A bad CSS selector, JSON path or host pattern is a 422 naming it; a second rule for the same pattern a 409.`,
        body: SiteRuleBody,
        response: { 201: SiteRule, ...problemResponses(409) },
      },
    },
    async (request, reply) => {
      const created = await rules.create(checkedRule(request.body));
      reply.code(201).header('location', `/site-rules/${created.id}`);
      return created;
    },
  );

  app.get('/site-rules/:id', { schema: { tags: TAGS, summary: 'One site rule', params: SiteRulePath, response: { 200: SiteRule } } }, async (request) => {
    const rule = await rules.get(request.params.id);
    if (rule === undefined) throw new NotFound(`Site rule ${request.params.id} does not exist.`);
    return rule;
  });

  app.put(
    '/site-rules/:id',
    {
      schema: {
        tags: TAGS,
        summary: 'Replace a site rule',
        description: 'The whole rule is replaced: fields left out are no longer pinned.',
        params: SiteRulePath,
        body: SiteRuleBody,
        response: { 200: SiteRule, ...problemResponses(409) },
      },
    },
    async (request) => {
      const updated = await rules.update(request.params.id, checkedRule(request.body));
      if (updated === undefined) throw new NotFound(`Site rule ${request.params.id} does not exist.`);
      return updated;
    },
  );

  app.delete('/site-rules/:id', { schema: { tags: TAGS, summary: 'Delete a site rule', params: SiteRulePath, response: { 200: Deleted } } }, async (request) => {
    if (!(await rules.delete(request.params.id))) throw new NotFound(`Site rule ${request.params.id} does not exist.`);
    return { id: request.params.id, deleted: true as const };
  });
}
