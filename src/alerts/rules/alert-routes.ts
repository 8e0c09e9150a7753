// /alert-rules (CRUD and preview) and /alerts (every firing with its deliveries, cursor-paged).
import { Type } from 'typebox';
import type { App } from '../../http/base-app.js';
import { pagedAnswer } from '../../http/paging.js';
import { ValidationFailed } from '../../problems.js';
import {
  Alert,
  AlertPath,
  AlertQuery,
  Deleted,
  DigestSendAnswer,
  DigestSendQuery,
  IdPath,
  PreviewQuery,
  RuleListQuery,
  RulePatch,
  RulePreviewAnswer,
  RuleView,
} from './alert-api-schema.js';
import type { DigestSender } from '../delivery/alert-digests.js';
import { AlertRuleCreate, ruleProblem } from './alert-rule-schema.js';
import type { RuleService } from './rule-service.js';
import type { RuleStore } from './rule-store.js';

export interface AlertRoutesDeps {
  rules: RuleStore;
  service: RuleService;
  digests: Pick<DigestSender, 'endNow'>;
}

const CONDITIONS =
  'Conditions: `price_at_or_below` {target, currency?}; `price_drop` {baseline: previous|highest, days?, min_percent?, min_amount?}; ' +
  '`lowest_in_days` {days}; `back_in_stock`; `out_of_stock`; `availability_changed`; `price_changed`; `product_gone`; ' +
  '`suspicious_discount` {days ≥ 30} (a "was" price the history does not support: never charged in the period, or above the lowest price ' +
  'of the period before the reduction, as the EU Omnibus Directive puts it). Scopes: one `product`, a `tag`, a `source` URL, a `site` (and its subdomains), or `all`.';

export function alertRoutes(app: App, deps: AlertRoutesDeps): void {
  const { service } = deps;

  app.post(
    '/alert-rules',
    {
      schema: {
        tags: ['alerts'],
        summary: 'Create an alert rule',
        description:
          `A rule watches products (its scope) for a change (its condition) and sends each firing to its channels, at once or in a daily or weekly digest. ${CONDITIONS} ` +
          'A rule fires once per qualifying change (an unchanged re-scrape makes none), then holds back for `cooldown_minutes` for that product. ' +
          'Rules are judged in the same transaction as the change, so a change that was rolled back never alerts.',
        body: AlertRuleCreate,
        response: { 201: RuleView },
      },
    },
    async (request, reply) => {
      const rule = await service.create(request.body);
      return reply.code(201).header('location', `/alert-rules/${rule.id}`).send(rule);
    },
  );

  app.get(
    '/alert-rules',
    {
      schema: {
        tags: ['alerts'],
        summary: 'List alert rules, newest first',
        querystring: RuleListQuery,
        response: { 200: Type.Array(RuleView) },
      },
    },
    async (request, reply) => {
      return pagedAnswer(reply, '/alert-rules', request, await deps.rules.list(request.query));
    },
  );

  app.get('/alert-rules/:id', { schema: { tags: ['alerts'], summary: 'One alert rule', params: IdPath, response: { 200: RuleView } } }, async (request) =>
    service.get(request.params.id),
  );

  for (const method of ['patch', 'put'] as const) {
    app[method](
      '/alert-rules/:id',
      {
        schema: {
          tags: ['alerts'],
          summary: method === 'patch' ? 'Change an alert rule' : 'Change an alert rule (as PATCH)',
          description: 'Any of the fields; absent ones stay. `enabled: false` pauses the rule.',
          params: IdPath,
          body: RulePatch,
          response: { 200: RuleView },
        },
      },
      async (request) => service.update(request.params.id, request.body),
    );
  }

  app.delete(
    '/alert-rules/:id',
    {
      schema: {
        tags: ['alerts'],
        summary: 'Delete an alert rule (its alerts stay in the history)',
        params: IdPath,
        response: { 200: Deleted },
      },
    },
    async (request) => {
      await service.delete(request.params.id);
      return { id: request.params.id, deleted: true as const };
    },
  );

  app.get(
    '/alert-rules/:id/preview',
    {
      schema: {
        tags: ['alerts'],
        summary: 'What a rule would have done: "would have fired N times in the last 30 days"',
        description:
          'Replays the stored change events of the last `days` days through the rule, each judged against the history as it stood then, ' +
          'cool-down included. Nothing is sent or stored. A disabled rule is previewed as if enabled.',
        params: IdPath,
        querystring: PreviewQuery,
        response: { 200: RulePreviewAnswer },
      },
    },
    async (request) => service.preview(await service.get(request.params.id), request.query.days),
  );

  app.post(
    '/alert-rules/preview',
    {
      schema: {
        tags: ['alerts'],
        summary: 'Preview a rule before creating it',
        description: 'The body of `POST /alert-rules`; answers as `GET /alert-rules/{id}/preview` does. Nothing is stored.',
        querystring: PreviewQuery,
        body: AlertRuleCreate,
        response: { 200: RulePreviewAnswer },
      },
    },
    async (request) => {
      const problem = ruleProblem(request.body);
      if (problem !== null) throw new ValidationFailed([{ path: '/body/condition', message: problem }]);
      return service.preview({ ...request.body, id: '00000000-0000-4000-8000-000000000000' }, request.query.days);
    },
  );

  app.get(
    '/alerts',
    {
      schema: {
        tags: ['alerts'],
        summary: 'Alert history: every firing, newest first, with each delivery and its outcome',
        description:
          'Paged by cursor: `before` is the last id you have; `Link: rel="next"` gives the next page while pages are full. ' +
          '`X-Total-Count` counts every alert matching the filters. Each alert has its product, rule, the values before and after, ' +
          'why it fired, and for each channel the delivery status (`pending`, `retrying`, `succeeded`, `failed`, `skipped`), attempts and last error.',
        querystring: AlertQuery,
        response: { 200: Type.Array(Alert) },
      },
    },
    async (request, reply) => {
      const { items, total } = await service.alerts(request.query);
      reply.header('x-total-count', total);
      const last = items.at(-1);
      if (last !== undefined && items.length === request.query.limit) {
        const params = new URLSearchParams(request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '');
        params.set('before', String(last.id));
        params.set('limit', String(request.query.limit));
        reply.header('link', `</alerts?${params.toString()}>; rel="next"`);
      }
      return items;
    },
  );

  app.post(
    '/alerts/digests/send',
    {
      schema: {
        tags: ['alerts'],
        summary: 'Send the waiting digests now: their periods end at this moment',
        description:
          'The alerts of rules with `digest: daily` or `weekly` wait for the end of their period (a UTC day, an ISO week). This ends the ' +
          'current periods now (of `period` only, or of one `rule_id`, if given) and queues the sending, which any worker takes: ' +
          'each rule gets one digest of what it has gathered so far, each alert goes into exactly one digest, and later alerts wait ' +
          'for the next end of their period as usual. Answers 202 with how many digests and alerts were queued (0 and 0 when none wait).',
        querystring: DigestSendQuery,
        response: { 202: DigestSendAnswer },
      },
    },
    async (request, reply) => reply.code(202).send(await deps.digests.endNow({ digest: request.query.period, rule_id: request.query.rule_id })),
  );

  app.get('/alerts/:id', { schema: { tags: ['alerts'], summary: 'One alert with its deliveries', params: AlertPath, response: { 200: Alert } } }, async (request) =>
    service.alert(request.params.id),
  );
}
