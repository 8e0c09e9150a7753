// Live event streams of this process, fed by one reader: listeners that want the same events from the same place share each read.
//
// Each stream used to read the feed itself whenever anything was written: 300 listeners made every
// write cost 300 reads (on PGlite, 300 reads on the one connection the write also needs). Here
// listeners are grouped by filter and cursor; one pass reads once per group and hands the rows to each
// member's queue. A member that does not keep up is split off so it never holds its group back, gets
// no more reads while its queue is full (its memory stays bounded), and is told to reconnect (with
// Last-Event-ID it misses nothing) when it falls too far behind.
import type { LiveEvents } from './live-events.js';
import type { EventQuery, StoredEvent, Tracker } from './tracking-store.js';

export type EventFilter = Omit<EventQuery, 'limit' | 'after' | 'before' | 'order' | 'since'>;

export interface LiveFeed {
  /**
   * The events matching `filter` after `cursor` (an event id; the feed's order), now and as they are
   * written, until `signal` aborts. Throws FellBehind when the listener stops taking them.
   */
  follow(filter: EventFilter, cursor: number, signal: AbortSignal): AsyncGenerator<StoredEvent>;
  /** Groups reading now (one read each per change), for tests and metrics. */
  groups(): number;
}

export class FellBehind extends Error {
  override name = 'FellBehind';
}

interface Member {
  queue: StoredEvent[];
  notify: (() => void) | null;
  failure: string | null;
}

interface Group {
  filter: EventFilter;
  key: string;
  cursor: number;
  members: Set<Member>;
}

/** Rows per read. */
const BATCH = 1000;
/** A member whose queue holds this many events gets no more reads until it takes them. */
const FULL = 200;

export function createLiveFeed(tracker: Pick<Tracker, 'events' | 'lastEventId'>, live: Pick<LiveEvents, 'onPublished'>, options: { pollMs?: number } = {}): LiveFeed {
  const pollMs = options.pollMs ?? 500;
  const groups = new Set<Group>();
  let pending = false;
  let running = false;
  let newest = -1;
  let poller: NodeJS.Timeout | undefined;

  const kick = () => {
    pending = true;
    if (!running) void pump();
  };
  live.onPublished(kick);

  /** Other processes' writes are found by one shared look at the newest id, made only while someone listens. */
  const poll = async () => {
    try {
      const id = await tracker.lastEventId();
      if (id !== newest) {
        newest = id;
        kick();
      }
    } catch {
      // The database is away for a moment; the next look tries again.
    }
  };

  const pump = async () => {
    running = true;
    try {
      while (pending && groups.size > 0) {
        pending = false;
        for (const group of [...groups]) {
          if (group.members.size === 0) {
            groups.delete(group);
            continue;
          }
          const slow = [...group.members].filter((m) => m.queue.length >= FULL);
          if (slow.length === group.members.size) continue; // nobody has room: no read until someone takes
          if (slow.length > 0) splitOff(group, slow);
          const rows = await tracker.events({ ...group.filter, after: group.cursor, limit: BATCH }).catch(() => []);
          if (rows.length === 0) continue;
          group.cursor = rows[rows.length - 1]!.id;
          for (const member of group.members) {
            for (const row of rows) member.queue.push(row);
            if (member.queue.length > FULL + BATCH) member.failure = `the stream fell more than ${FULL + BATCH} events behind`;
            member.notify?.();
          }
          if (rows.length === BATCH) pending = true; // more to read for this group
        }
      }
    } finally {
      running = false;
    }
    if (pending && groups.size > 0) void pump();
  };

  /** Slow members get a group of their own, at the same cursor, so they never hold the others back. */
  const splitOff = (group: Group, slow: Member[]) => {
    for (const member of slow) group.members.delete(member);
    groups.add({ filter: group.filter, key: `${group.key}#${Math.random()}`, cursor: group.cursor, members: new Set(slow) });
  };

  const join = (member: Member, filter: EventFilter, cursor: number) => {
    const key = JSON.stringify(filter);
    // Listeners at the same place with the same filter share a group (and so every read).
    for (const group of groups) {
      if (group.key === key && group.cursor === cursor) {
        group.members.add(member);
        return;
      }
    }
    groups.add({ filter, key, cursor, members: new Set([member]) });
    if (poller === undefined) {
      poller = setInterval(() => {
        if (groups.size === 0) {
          clearInterval(poller);
          poller = undefined;
          return;
        }
        void poll();
      }, pollMs);
      poller.unref();
    }
  };

  const leave = (member: Member) => {
    for (const group of groups) {
      if (group.members.delete(member) && group.members.size === 0) groups.delete(group);
    }
  };

  return {
    groups: () => groups.size,

    async *follow(filter, cursor, signal) {
      const member: Member = { queue: [], notify: null, failure: null };
      const onAbort = () => member.notify?.();
      signal.addEventListener('abort', onAbort, { once: true });
      join(member, filter, cursor);
      kick(); // what was written before it joined
      try {
        while (!signal.aborted) {
          if (member.failure !== null) throw new FellBehind(member.failure);
          const event = member.queue.shift();
          if (event !== undefined) {
            yield event;
            // Room again: the reads it was left out of can resume.
            if (member.queue.length === FULL - 1) kick();
            continue;
          }
          await new Promise<void>((resolve) => {
            member.notify = resolve;
          });
          member.notify = null;
        }
      } finally {
        signal.removeEventListener('abort', onAbort);
        leave(member);
      }
    },
  };
}
