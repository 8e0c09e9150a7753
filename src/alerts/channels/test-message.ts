// The message `POST /channels/{id}/test` sends: a made-up price alert, marked "Test:" in every channel's title, linking to the channels screen.
import type { Outgoing } from '../delivery/alert-delivery.js';
import type { Firing } from '../rules/firing.js';
import { renderFiring } from './message-render.js';

export function testMessage(dashboardUrl: string, now = new Date()): Outgoing {
  const at = now.toISOString();
  const firing: Firing = {
    dedupe_key: `test:${at}`,
    rule_id: '00000000-0000-4000-8000-000000000000',
    rule_name: 'Channel test',
    condition: 'price_at_or_below',
    product: { id: 0, title: 'Test product', url: null, tags: [] },
    event_id: 0,
    event_type: 'price.changed',
    event_at: at,
    fired_at: at,
    before: { price: 249, currency: 'EUR', list_price: null, availability: 'in_stock' },
    after: { price: 199, currency: 'EUR', list_price: null, availability: 'in_stock' },
    reason: { type: 'price_at_or_below', target: 200, currency: 'EUR' },
    why: 'This is a test message from the data aggregator: this channel works.',
    chart: [
      { at: new Date(now.getTime() - 20 * 86_400_000).toISOString(), price: 249 },
      { at, price: 199 },
    ],
    digest: 'immediate',
    channel_ids: [],
  };
  const rendered = renderFiring(firing, { dashboardUrl, test: true });
  const product = rendered.dashboard_link;
  const channels = new URL('/ui/channels', dashboardUrl).href;
  const relink = (text: string) => text.split(product).join(channels);
  return {
    message: {
      ...rendered,
      text: relink(rendered.text),
      html: relink(rendered.html),
      dashboard_link: channels,
    },
    webhook: { id: `test_${now.getTime()}`, type: 'alert.test', data: { title: rendered.title, message: firing.why, sent_at: at } },
  };
}
