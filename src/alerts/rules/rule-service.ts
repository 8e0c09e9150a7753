// Alert rules as the API drives them: checked beyond their schema (scope in canonical form, channels and product that exist), previewed against stored history, and the alert history's view.
import { randomUUID } from 'node:crypto';
import type { Database } from '../../db/queryable.js';
import { NotFound, ValidationFailed, type FieldError } from '../../problems.js';
import { checkedTags } from '../../tags/tag-schema.js';
import { canonicalUrl } from '../../url-identity/url-key.js';
import type { Alert, RulePatch } from './alert-api-schema.js';
import { daysBefore, histories, LISTENS, lookBackDays, periodEvents, productContexts } from './alert-inputs.js';
import { ruleProblem, type AlertRule, type AlertRuleCreate, type RuleScope } from './alert-rule-schema.js';
import type { ChannelStore } from '../channels/channel-store.js';
import type { StateValues } from './firing.js';
import type { FiringQuery, FiringStore, StoredFiring } from './firing-store.js';
import { inScope } from './rule-evaluation.js';
import { previewRule } from './rule-preview.js';
import type { RuleStore, StoredRule } from './rule-store.js';

/** The most stored events one preview replays. */
const PREVIEW_EVENTS = 10_000;
const PREVIEW_FIRINGS = 100;

export interface RuleServiceDeps {
  db: Database;
  rules: RuleStore;
  channels: Pick<ChannelStore, 'states'>;
  firings: Pick<FiringStore, 'list' | 'get'>;
  /** Alert rules in all (ALERT_RULES_MAX). */
  rulesMax: number;
}

export interface RulePreviewView {
  from: string;
  to: string;
  days: number;
  count: number;
  summary: string;
  products: Array<{ product_id: number; title: string; count: number }>;
  firings: Array<{ product_id: number; title: string; event_id: number; event_type: string; event_at: string; why: string; before: StateValues | null; after: StateValues | null }>;
  events_considered: number;
  truncated: boolean;
}

export interface RuleService {
  create(input: AlertRuleCreate): Promise<StoredRule>;
  get(id: string): Promise<StoredRule>;
  update(id: string, patch: RulePatch): Promise<StoredRule>;
  delete(id: string): Promise<void>;
  /** What `rule` would have done over the last `days` days of stored history. */
  preview(rule: AlertRule, days: number, now?: Date): Promise<RulePreviewView>;
  alerts(query: FiringQuery): Promise<{ items: Alert[]; total: number }>;
  alert(id: number): Promise<Alert>;
}

/** A stored firing as `GET /alerts` shows it. */
export function alertView(stored: StoredFiring): Alert {
  const f = stored.firing;
  return {
    id: stored.id,
    fired_at: stored.fired_at,
    rule: { id: stored.rule_id, name: f.rule_name, condition: f.condition },
    product: { id: stored.product_id, title: f.product.title, url: f.product.url },
    event: { id: f.event_id, type: f.event_type, created_at: f.event_at },
    before: f.before,
    after: f.after,
    reason: f.reason as unknown as Alert['reason'],
    why: f.why,
    digest: f.digest,
    deliveries: stored.deliveries,
  };
}

export function createRuleService(deps: RuleServiceDeps): RuleService {
  const { rules } = deps;
  const notFound = (id: string) => new NotFound(`Alert rule ${id} does not exist.`);

  /** The scope as evaluation compares it: a tag normalised, a source canonical, a site lower-case. */
  const normalScope = (scope: RuleScope): RuleScope => {
    switch (scope.type) {
      case 'tag':
        return { type: 'tag', tag: checkedTags([scope.tag], '/body/scope/tag')[0] ?? scope.tag };
      case 'source': {
        const source = canonicalUrl(scope.source);
        if (source === null) throw new ValidationFailed([{ path: '/body/scope/source', message: 'is not an http(s) URL' }]);
        return { type: 'source', source };
      }
      case 'site':
        return { type: 'site', site: scope.site.toLowerCase().replace(/\.$/, '') };
      default:
        return scope;
    }
  };

  /** What the schema cannot check: a drop's threshold, the product, the channels. */
  const checked = async (rule: AlertRuleCreate): Promise<AlertRuleCreate> => {
    const problem = ruleProblem(rule);
    if (problem !== null) throw new ValidationFailed([{ path: '/body/condition', message: problem }]);
    const scope = normalScope(rule.scope);
    const errors: FieldError[] = [];
    if (scope.type === 'product' && (await productContexts([scope.product_id], deps.db)).size === 0) {
      errors.push({ path: '/body/scope/product_id', message: `names no product (${scope.product_id})` });
    }
    const known = new Set((await deps.channels.states(rule.channel_ids)).map((c) => c.id));
    rule.channel_ids.forEach((id, i) => {
      if (!known.has(id)) errors.push({ path: `/body/channel_ids/${i}`, message: 'names no channel (see /channels)' });
    });
    if (errors.length > 0) throw new ValidationFailed(errors);
    return { ...rule, scope };
  };

  return {
    async create(input) {
      return rules.create(randomUUID(), await checked(input), deps.rulesMax);
    },

    async get(id) {
      const rule = await rules.get(id);
      if (rule === undefined) throw notFound(id);
      return rule;
    },

    async update(id, patch) {
      const current = await rules.get(id);
      if (current === undefined) throw notFound(id);
      const { id: _id, created_at: _created, updated_at: _updated, ...fields } = current;
      const updated = await rules.update(id, await checked({ ...fields, ...patch } as AlertRuleCreate));
      if (updated === undefined) throw notFound(id);
      return updated;
    },

    async delete(id) {
      if (!(await rules.delete(id))) throw notFound(id);
    },

    async preview(rule, days, now = new Date()) {
      const to = now.toISOString();
      const from = daysBefore(to, days);
      const scoped = { ...rule, scope: normalScope(rule.scope) };
      const { events, truncated } = await periodEvents(scoped.scope, LISTENS[rule.condition.type], from, PREVIEW_EVENTS, deps.db);
      const products = await productContexts([...new Set(events.map((e) => e.product_id as number))], deps.db);
      const inPeriod = events.filter((e) => {
        const product = products.get(e.product_id as number);
        return product !== undefined && inScope(scoped.scope, product, e.source);
      });
      const ids = [...new Set(inPeriod.map((e) => e.product_id as number))];
      const history = await histories(ids, daysBefore(from, lookBackDays([rule.condition as { days?: number }])), deps.db);
      const result = previewRule(
        scoped,
        ids.map((id) => ({ product: products.get(id)!, history: history.get(id) ?? [], events: inPeriod.filter((e) => e.product_id === id) })),
        { now: to, days },
      );
      const title = (id: number) => products.get(id)?.title ?? `Product ${id}`;
      const times = result.count === 1 ? 'once' : `${result.count} times`;
      const forProducts = result.products.length > 1 ? `, for ${result.products.length} products` : '';
      return {
        from: result.from,
        to: result.to,
        days,
        count: result.count,
        summary: `This rule would have fired ${times} in the last ${days} day${days === 1 ? '' : 's'}${forProducts}${truncated ? ' (at least: the period holds more changes than a preview replays)' : ''}.`,
        products: result.products.map((p) => ({ ...p, title: title(p.product_id) })),
        firings: result.firings.slice(0, PREVIEW_FIRINGS).map((f) => ({
          product_id: f.product.id,
          title: f.product.title,
          event_id: f.event_id,
          event_type: f.event_type,
          event_at: f.event_at,
          why: f.why,
          before: f.before,
          after: f.after,
        })),
        events_considered: inPeriod.length,
        truncated,
      };
    },

    async alerts(query) {
      const { items, total } = await deps.firings.list(query);
      return { items: items.map(alertView), total };
    },

    async alert(id) {
      const stored = await deps.firings.get(id);
      if (stored === undefined) throw new NotFound(`Alert ${id} does not exist.`);
      return alertView(stored);
    },
  };
}
