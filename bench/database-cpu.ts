// CPU time of the PostgreSQL backends serving one database, read from /proc (the server runs on this machine).
import pg from 'pg';
import { cpuMs } from './memory.js';

/** CPU ms used so far by each backend connected to the database, by pid. */
export type BackendCpu = Map<number, number>;

/**
 * Reads the CPU of every backend connected to `url`'s database but the reader's own, over one
 * connection of its own. Other databases of the server (other users of a shared server) are not
 * counted, nor the server's background processes (checkpointer, WAL writer, autovacuum).
 */
export async function openBackendCpu(url: string): Promise<{ read(): Promise<BackendCpu>; close(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    async read() {
      const { rows } = await client.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`,
      );
      const cpu: BackendCpu = new Map();
      for (const { pid } of rows) {
        const ms = cpuMs(pid);
        if (!Number.isNaN(ms)) cpu.set(pid, ms);
      }
      return cpu;
    },
    close: () => client.end(),
  };
}

/**
 * CPU ms the backends used between two readings. A backend that connected in between counts from
 * zero; one that disconnected in between is lost (the pools of the bench keep theirs open).
 */
export function cpuBetween(before: BackendCpu, after: BackendCpu): number {
  let ms = 0;
  for (const [pid, now] of after) ms += now - (before.get(pid) ?? 0);
  return ms;
}

/**
 * Follows the backends while work runs (every `everyMs`), so that backends that come and go (pg-boss,
 * worker pools opening connections) are counted from their first to their last reading.
 */
export function followBackendCpu(reader: { read(): Promise<BackendCpu> }, everyMs = 250): { stop(): Promise<number> } {
  const first: BackendCpu = new Map();
  const last: BackendCpu = new Map();
  let started = false;
  const sample = async () => {
    for (const [pid, ms] of await reader.read()) {
      // A backend first seen after the start connected in between: it counts from zero.
      if (!first.has(pid)) first.set(pid, started ? 0 : ms);
      last.set(pid, ms);
    }
    started = true;
  };
  let pending = sample();
  const timer = setInterval(() => {
    pending = pending.then(sample, sample);
  }, everyMs);
  return {
    async stop() {
      clearInterval(timer);
      await pending.catch(() => undefined);
      await sample();
      let ms = 0;
      for (const [pid, now] of last) ms += now - (first.get(pid) ?? 0);
      return ms;
    },
  };
}
