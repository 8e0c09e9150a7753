// Live progress of a job for Server-Sent Events: woken at once by changes in this process, polling for those of other processes.
import { EventEmitter, on } from 'node:events';
import type { Job } from './job-schema.js';
import { FINAL_STATUSES, type JobStore } from './job-store.js';

export interface JobEvents {
  /** Says a job changed (a worker in this process, the API): its watchers look now rather than at their next poll. */
  changed(jobId: string): void;
  /**
   * The job as it is, then again each time it changes, until it ends (the last snapshot is the
   * ended job) or `signal` aborts. A job that does not exist ends the stream at once.
   */
  watch(jobId: string, signal: AbortSignal): AsyncGenerator<Job>;
  /** Streams open in this process now. */
  watchers(): number;
}

/** How often a watcher reads the job when nothing in this process said it changed (workers elsewhere). */
const POLL_MS = 500;

export function createJobEvents(jobs: Pick<JobStore, 'get'>, pollMs = POLL_MS): JobEvents {
  const emitter = new EventEmitter();
  // One listener per open stream; many open streams are normal, not a leak.
  emitter.setMaxListeners(0);
  let open = 0;

  return {
    watchers: () => open,

    changed(jobId) {
      emitter.emit(jobId);
    },

    async *watch(jobId, signal) {
      open += 1;
      try {
        let last = '';
        while (!signal.aborted) {
          const job = await jobs.get(jobId);
          if (job === undefined) return;
          const fingerprint = `${job.status} ${job.updated_at} ${JSON.stringify(job.progress)} ${job.log_ids.length}`;
          if (fingerprint !== last) {
            last = fingerprint;
            yield job;
          }
          if (FINAL_STATUSES.has(job.status)) return;
          await nextChange(emitter, jobId, pollMs, signal);
        }
      } finally {
        open -= 1;
      }
    },
  };
}

/** Resolves on a change of `jobId` in this process, after `ms`, or when `signal` aborts, whichever is first. */
async function nextChange(emitter: EventEmitter, jobId: string, ms: number, signal: AbortSignal): Promise<void> {
  const stop = AbortSignal.any([signal, AbortSignal.timeout(ms)]);
  try {
    for await (const _ of on(emitter, jobId, { signal: stop })) return;
  } catch {
    // timed out or aborted: either way, look again (or end, if aborted)
  }
}
