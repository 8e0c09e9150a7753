// The options every PGlite of this project opens with, on whichever thread it runs.
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';

export function pgliteOptions(sharedBuffersMb = 8): PGliteOptions {
  // Every start loads the extensions the migrations create (product search's trigram indexes).
  return { extensions: { pg_trgm }, startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${sharedBuffersMb}MB`] };
}
