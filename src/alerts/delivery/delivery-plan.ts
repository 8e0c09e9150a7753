// The deliveries of a firing or a digest: one per channel, but one message per destination, queued grouped by the server it goes to.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../db/queryable.js';
import type { Queue } from '../../queue/queue.js';
import { ALERT_QUEUES, type DeliveryMessage } from './alert-queues.js';
import type { ChannelState } from '../channels/channel-store.js';
import type { DeliveryStore, NewDelivery } from './delivery-store.js';

/** What the deliveries are of: one firing, or one digest. */
export type DeliveryOwner = { firing_id: number; digest_id: null } | { firing_id: null; digest_id: string };

export interface PlannedDelivery {
  row: NewDelivery;
  /** The server it is sent to (ChannelTarget.host): the queue's group, so a slow server holds only its own. */
  host: string;
}

/**
 * One delivery per channel. A channel whose destination already gets the same message (`sent`: the
 * destinations taken, by target key, with the channel taking each) is recorded as skipped, saying
 * through which channel it went: twenty channels to one URL send one message, not twenty.
 */
export function planDeliveries(owner: DeliveryOwner, channels: readonly ChannelState[], sent: Map<string, string>): PlannedDelivery[] {
  return channels.map((channel) => {
    const base = { id: randomUUID(), ...owner, channel_id: channel.id, channel_name: channel.name };
    if (!channel.enabled) {
      const error = `The channel is disabled${channel.disabled_reason === null ? '' : `: ${channel.disabled_reason}`}`;
      return { row: { ...base, status: 'skipped', error }, host: channel.target.host };
    }
    const through = sent.get(channel.target.key);
    if (through !== undefined) {
      return { row: { ...base, status: 'skipped', error: `Sent once to the same destination, through channel "${through}".` }, host: channel.target.host };
    }
    sent.set(channel.target.key, channel.name);
    return { row: { ...base, status: 'pending', error: null }, host: channel.target.host };
  });
}

/** Stores the deliveries and queues the pending ones' first attempts, in `tx`. */
export async function queueDeliveries(
  planned: readonly PlannedDelivery[],
  deps: { deliveries: Pick<DeliveryStore, 'create'>; queue: Pick<Queue, 'enqueue'> },
  tx: Queryable,
): Promise<void> {
  if (planned.length === 0) return;
  await deps.deliveries.create(
    planned.map((p) => p.row),
    tx,
  );
  const pending = planned.filter((p) => p.row.status === 'pending');
  await deps.queue.enqueue<DeliveryMessage>(
    ALERT_QUEUES.delivery,
    pending.map((p) => ({ data: { delivery_id: p.row.id }, group: p.host })),
    { tx },
  );
}
