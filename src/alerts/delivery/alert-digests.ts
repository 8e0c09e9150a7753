// Daily and weekly digests: what the digest calendar's job does each minute (or at once, for periods an operator ended now), once across all workers: the due firings of each rule grouped, one delivery per channel and one message per destination.
import { randomUUID } from 'node:crypto';
import type { Database } from '../../db/queryable.js';
import type { Queue } from '../../queue/queue.js';
import { ALERT_QUEUES, type DigestMessage } from './alert-queues.js';
import type { ChannelStore } from '../channels/channel-store.js';
import { planDeliveries, queueDeliveries } from './delivery-plan.js';
import type { DeliveryStore } from './delivery-store.js';
import type { FiringStore } from '../rules/firing-store.js';

export interface DigestSenderDeps {
  db: Database;
  firings: Pick<FiringStore, 'dueDigests' | 'claimDigest' | 'endPeriods'>;
  deliveries: Pick<DeliveryStore, 'create' | 'createDigest' | 'deleteDigest'>;
  channels: Pick<ChannelStore, 'states'>;
  queue: Pick<Queue, 'enqueue'>;
}

export interface DigestSender {
  /** Groups every firing whose digest is due at `now` into one digest per rule and period, and queues its deliveries. Answers the digests made. */
  sendDue(now: Date): Promise<number>;
  /**
   * Ends the periods of the firings waiting for a digest (of one mode, one rule, or all) now, and
   * queues a run of the sender, which any worker takes: each firing still goes into exactly one digest.
   */
  endNow(filter: { digest?: 'daily' | 'weekly' | undefined; rule_id?: string | undefined }): Promise<{ alerts: number; digests: number }>;
}

export function createDigestSender(deps: DigestSenderDeps): DigestSender {
  return {
    endNow: (filter) =>
      deps.db.transaction(async (tx) => {
        const { until, alerts, digests } = await deps.firings.endPeriods(filter, tx);
        if (digests > 0) await deps.queue.enqueue<DigestMessage>(ALERT_QUEUES.digest, [{ data: { until } }], { tx });
        return { alerts, digests };
      }),

    async sendDue(now) {
      let made = 0;
      for (const group of await deps.firings.dueDigests(now)) {
        const created = await deps.db.transaction(async (tx) => {
          const id = randomUUID();
          const label = /-W\d\d$/.test(group.digest_key) ? 'Weekly' : 'Daily';
          await deps.deliveries.createDigest({ id, rule_id: group.rule_id, period_key: group.digest_key, label }, tx);
          const firings = await deps.firings.claimDigest(group, id, now, tx);
          // Another worker holds (or has sent) them: nothing of this period is left to this one.
          if (firings.length === 0) {
            await deps.deliveries.deleteDigest(id, tx);
            return false;
          }
          const channelIds = [...new Set(firings.flatMap((f) => f.channel_ids))];
          // One message per destination, whichever of the rule's channels lead there.
          const planned = planDeliveries({ firing_id: null, digest_id: id }, await deps.channels.states(channelIds, tx), new Map());
          await queueDeliveries(planned, deps, tx);
          return true;
        });
        if (created) made += 1;
      }
      return made;
    },
  };
}
