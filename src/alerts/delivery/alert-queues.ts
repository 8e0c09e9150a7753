// The queues alerts run on: deliveries (one message per attempt) and the digest calendar; their names, policies and messages.
import type { QueuePolicy } from '../../queue/queue.js';

/** One attempt at one delivery (alert_deliveries row). */
export interface DeliveryMessage {
  delivery_id: string;
}

/** A run of the digest sender: the calendar's (every minute) or one asked for by an operator ending periods now. */
export interface DigestMessage {
  /** Send the digests due at this time too (the moment the periods were ended), whatever this worker's clock says. */
  until?: string;
}

export const ALERT_QUEUES = { delivery: 'alert-delivery', digest: 'alert-digest' } as const;

/** The digest calendar's one entry: every minute, any one worker sends the digests that are due. */
export const DIGEST_SCHEDULE = { key: 'alert-digests', cron: '* * * * *', timezone: 'UTC' } as const;

export const ALERT_POLICIES: Record<(typeof ALERT_QUEUES)[keyof typeof ALERT_QUEUES], QueuePolicy> = {
  // A channel's own failures follow their own schedule of recorded attempts (ALERT_RETRY_DELAYS_MS); the
  // queue retries only what did not get that far: a worker that died mid-attempt, a database that blinked.
  [ALERT_QUEUES.delivery]: { retryLimit: 5, retryDelaySeconds: 5, retryBackoff: true, retryDelayMaxSeconds: 300, expireInSeconds: 180 },
  [ALERT_QUEUES.digest]: { retryLimit: 2, retryDelaySeconds: 10, retryBackoff: true, expireInSeconds: 600 },
};
