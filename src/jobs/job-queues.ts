// The queues jobs run on: their names, policies and messages (the queue itself is the generic port in queue/).
import type { QueuePolicy } from '../queue/queue.js';

/** A scrape job or a crawl's seed: its row's id is the message's id. */
export interface JobMessage {
  job_id: string;
}

/** One page of a crawl, as queued: its frontier row's id is the message's id. */
export interface QueuedPage {
  id: string;
  job_id: string;
  url: string;
  depth: number;
  /** Set when the page went back to the queue to wait for its host: its reserved moment (epoch ms). */
  polite_at?: number;
}

/** A schedule's due time: the message waits in the queue until `at` (absent in calendar entries of releases before migration 14). */
export interface ScheduleMessage {
  schedule_id: string;
  at?: string;
}

export const JOB_QUEUES = { job: 'scrape-job', page: 'crawl-page', scheduled: 'schedule-fire' } as const;

/** Retries back off exponentially; a heartbeat lets a cancel reach a running handler. */
export const JOB_POLICIES: Record<(typeof JOB_QUEUES)[keyof typeof JOB_QUEUES], QueuePolicy> = {
  [JOB_QUEUES.job]: { retryLimit: 2, retryDelaySeconds: 5, retryBackoff: true, retryDelayMaxSeconds: 300, expireInSeconds: 4 * 3600 },
  [JOB_QUEUES.page]: { retryLimit: 2, retryDelaySeconds: 5, retryBackoff: true, retryDelayMaxSeconds: 120, expireInSeconds: 1800 },
  [JOB_QUEUES.scheduled]: { retryLimit: 2, retryDelaySeconds: 5, retryBackoff: true, expireInSeconds: 600 },
};
