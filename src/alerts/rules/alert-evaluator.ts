// Rules judged in the write's own transaction: each appended event against the enabled rules, firings stored once, deliveries queued with them.
import type { Queryable } from '../../db/queryable.js';
import type { Queue } from '../../queue/queue.js';
import type { StoredEvent } from '../../tracking/tracking-store.js';
import type { AlertRule } from './alert-rule-schema.js';
import { CREATED_CONDITIONS, daysBefore, histories, LISTENS, lookBackDays, productContexts } from './alert-inputs.js';
import type { ChannelStore } from '../channels/channel-store.js';
import { planDeliveries, queueDeliveries } from '../delivery/delivery-plan.js';
import type { DeliveryStore } from '../delivery/delivery-store.js';
import { digestPeriod } from '../delivery/digest-schedule.js';
import type { Firing } from './firing.js';
import type { FiringStore, PendingFiring } from './firing-store.js';
import { evaluateRule, inScope } from './rule-evaluation.js';
import type { RuleStore } from './rule-store.js';

export interface AlertEvaluator {
  /**
   * In the transaction that appended `events` (after `append`): every enabled rule whose scope and
   * condition can match is judged; firings are inserted by dedupe key and the immediate ones'
   * deliveries queued, all committing or rolling back with the change itself. Answers the firings written.
   */
  evaluate(events: readonly StoredEvent[], tx: Queryable): Promise<Firing[]>;
  /** An SQL condition true when no enabled rule can fire on a product.created event (the one-statement create may run). */
  noneOnCreated(): string;
}

export interface AlertEvaluatorDeps {
  rules: Pick<RuleStore, 'enabled'>;
  firings: Pick<FiringStore, 'insert' | 'lastFirings'>;
  channels: Pick<ChannelStore, 'states'>;
  deliveries: Pick<DeliveryStore, 'create'>;
  queue: Pick<Queue, 'enqueue'>;
}

export function createAlertEvaluator(deps: AlertEvaluatorDeps): AlertEvaluator {
  /**
   * Deliveries of immediate firings: one per channel (a disabled channel's recorded as skipped, with
   * why), and one message per destination and change: the firings of several rules on one event, or
   * several channels to one URL, reach that URL once.
   */
  const deliver = async (written: ReadonlyArray<{ id: number; firing: Firing }>, tx: Queryable) => {
    const immediate = written.filter((w) => w.firing.digest === 'immediate' && w.firing.channel_ids.length > 0);
    if (immediate.length === 0) return;
    const channels = new Map((await deps.channels.states([...new Set(immediate.flatMap((w) => w.firing.channel_ids))], tx)).map((c) => [c.id, c]));
    const sentByEvent = new Map<number, Map<string, string>>();
    const planned = immediate.flatMap(({ id, firing }) => {
      let sent = sentByEvent.get(firing.event_id);
      if (sent === undefined) sentByEvent.set(firing.event_id, (sent = new Map()));
      const targets = firing.channel_ids.flatMap((channelId) => channels.get(channelId) ?? []);
      return planDeliveries({ firing_id: id, digest_id: null }, targets, sent);
    });
    await queueDeliveries(planned, deps, tx);
  };

  return {
    async evaluate(events, tx) {
      const judged = events.filter((e) => e.product_id !== null);
      if (judged.length === 0) return [];
      const rules = await deps.rules.enabled(tx);
      const candidates = judged.flatMap((event) => rules.filter((rule) => LISTENS[rule.condition.type].includes(event.type)).map((rule) => ({ event, rule })));
      if (candidates.length === 0) return [];
      const products = await productContexts([...new Set(candidates.map((c) => c.event.product_id as number))], tx);
      const matching = candidates.filter(({ event, rule }) => {
        const product = products.get(event.product_id as number);
        return product !== undefined && inScope(rule.scope, product, event.source);
      });
      if (matching.length === 0) return [];
      const earliest = matching.reduce((min, c) => Math.min(min, Date.parse(c.event.created_at)), Infinity);
      const history = await histories(
        [...new Set(matching.map((c) => c.event.product_id as number))],
        daysBefore(earliest, lookBackDays(matching.map((c) => c.rule.condition as { days?: number }))),
        tx,
      );
      const last = await deps.firings.lastFirings(uniquePairs(matching.map((c) => ({ rule_id: c.rule.id, product_id: c.event.product_id as number }))), tx);
      const pending: PendingFiring[] = [];
      // In feed order: a second change of one product in the same write meets the cool-down the first began.
      for (const { event, rule } of [...matching].sort((a, b) => a.event.id - b.event.id)) {
        const productId = event.product_id as number;
        const key = `${rule.id}:${productId}`;
        const lastFiring = last.has(key) ? { fired_at: last.get(key)! } : null;
        const firing = evaluateRule(rule as AlertRule, {
          event,
          product: products.get(productId)!,
          history: history.get(productId) ?? [],
          lastFiring,
          now: event.created_at,
        });
        if (firing === null) continue;
        last.set(key, firing.fired_at);
        pending.push({ firing, period: digestPeriod(firing.digest, firing.fired_at) });
      }
      const written = await deps.firings.insert(pending, tx);
      await deliver(written, tx);
      return written.map((w) => w.firing);
    },

    noneOnCreated: () => `NOT EXISTS (SELECT 1 FROM alert_rules WHERE enabled AND condition->>'type' IN (${CREATED_CONDITIONS.map((c) => `'${c}'`).join(', ')}))`,
  };
}

function uniquePairs(pairs: ReadonlyArray<{ rule_id: string; product_id: number }>) {
  return [...new Map(pairs.map((p) => [`${p.rule_id}:${p.product_id}`, p])).values()];
}
