// A channel of kind webhook: firings go out through a registered signed webhook as `alert.fired` messages; this is their payload, pure.
import type { Firing } from '../rules/firing.js';

/** The Standard Webhooks event type of a firing (beside product.created, price.changed ...). */
export const ALERT_FIRED = 'alert.fired';

/**
 * The `data` of an alert.fired message: the firing as recorded, with the product's dashboard link.
 * The webhook sender signs and retries it as it does change events; its message id should be
 * `alert_<dedupe_key>` so receivers deduplicate redeliveries of one firing.
 */
export function alertWebhookData(firing: Firing, dashboardLink: string): Record<string, unknown> {
  return {
    dedupe_key: firing.dedupe_key,
    rule: { id: firing.rule_id, name: firing.rule_name, condition: firing.condition },
    product: { ...firing.product, dashboard_url: dashboardLink },
    event: { id: firing.event_id, type: firing.event_type, created_at: firing.event_at },
    fired_at: firing.fired_at,
    before: firing.before,
    after: firing.after,
    reason: firing.reason,
    why: firing.why,
  };
}
