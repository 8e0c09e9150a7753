// Per-host semaphore: at most `limit` requests to one host at a time, waiters served first come first.

/** Gives the slot back; calling it twice is harmless. */
export type Release = () => void;

export interface HostLimiter {
  /** Waits for a free slot for `host`; rejects with `signal.reason` if the signal aborts first. */
  acquire(host: string, signal?: AbortSignal): Promise<Release>;
  /** Requests currently holding a slot for `host`. */
  active(host: string): number;
  /** Requests waiting for a slot for `host`. */
  waiting(host: string): number;
}

interface HostState {
  active: number;
  waiters: Array<() => void>;
}

export function createHostLimiter(limit: number): HostLimiter {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`host limit must be a positive integer, got ${limit}`);
  // Entries are deleted as soon as a host is idle, so the map only ever holds hosts in use.
  const hosts = new Map<string, HostState>();

  function releaser(host: string, state: HostState): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = state.waiters.shift();
      if (next !== undefined) {
        next(); // the slot passes straight to the next waiter; `active` is unchanged
      } else if (--state.active === 0) {
        hosts.delete(host);
      }
    };
  }

  return {
    acquire(host, signal) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      let state = hosts.get(host);
      if (state === undefined) {
        state = { active: 0, waiters: [] };
        hosts.set(host, state);
      }
      const current = state;
      if (current.active < limit) {
        current.active++;
        return Promise.resolve(releaser(host, current));
      }
      return new Promise<Release>((resolve, reject) => {
        const onAbort = (): void => {
          const index = current.waiters.indexOf(grant);
          if (index !== -1) current.waiters.splice(index, 1);
          reject(signal?.reason);
        };
        const grant = (): void => {
          signal?.removeEventListener('abort', onAbort);
          resolve(releaser(host, current));
        };
        current.waiters.push(grant);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    },
    active(host) {
      return hosts.get(host)?.active ?? 0;
    },
    waiting(host) {
      return hosts.get(host)?.waiters.length ?? 0;
    },
  };
}
