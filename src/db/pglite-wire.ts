// What the service and its PGlite thread say to each other (pglite-thread.ts, pglite-worker.ts).

/** What the thread opens: files under `dataDir`, or in memory (from a `loadDataDir` snapshot when given). */
export interface EngineData {
  dataDir?: string;
  sharedBuffersMb: number;
  loadDataDir?: Blob;
}

export type Request =
  | { id: number; op: 'query'; sql: string; params?: readonly unknown[]; tx?: number; prepared?: false }
  | { id: number; op: 'exec'; sql: string; tx?: number }
  | { id: number; op: 'begin'; tx: number }
  | { id: number; op: 'end'; tx: number; commit: boolean }
  | { id: number; op: 'listen'; channel: string; listener: number }
  | { id: number; op: 'unlisten'; listener: number }
  | { id: number; op: 'dump' }
  | { id: number; op: 'close' };

/** An error as it crosses: its message and a DatabaseError's fields (code, detail, constraint, ...). */
export interface WireError {
  message: string;
  [field: string]: string | number;
}

/** The answer to request `id` (0: the engine started), or a notification for listener `notify`. */
export type Reply = { id: number; value: unknown } | { id: number; error: WireError } | { id: 0; notify: number; payload: string };
