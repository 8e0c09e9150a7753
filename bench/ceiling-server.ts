// The ceiling: a bare node:http server doing the product store's queries (and the text statistics) with nothing around them.
//
// Run as its own process (`node --import tsx bench/ceiling-server.ts`) so it has an event loop of
// its own, like the service. Environment: CEILING_DATABASE_URL (pg Pool, max 10 like the service)
// or CEILING_PGLITE_DIR (PGlite files, migrated and seeded here), PORT. Prints `{"port": N}` on
// stdout when listening. No validation, no logging, no hooks: what is left is the floor cost of
// HTTP + the query + JSON.stringify. The columns are the product store's own (imported), so both
// servers send the database the same statements.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { useBaselineWasmCompiler } from '../src/db/database.js';
import { pgliteOptions } from '../src/db/pglite-options.js';
import { migrations } from '../src/db/migrations/index.js';
import { PRODUCT_COLUMNS } from '../src/products/product-list-sql.js';
import { textStats } from '../src/text/text-stats.js';
import { SEED_SQL } from './seed.js';

const GET = `SELECT ${PRODUCT_COLUMNS} FROM products WHERE id = $1`;
const LIST = `SELECT ${PRODUCT_COLUMNS} FROM products ORDER BY id LIMIT $1`;
const INSERT = `INSERT INTO products (title, price, description, currency, source_url)
         VALUES ($1, $2, $3, $4, $5) RETURNING ${PRODUCT_COLUMNS}`;

type Query = (name: string, text: string, values: unknown[]) => Promise<unknown[]>;

async function openPg(url: string): Promise<{ query: Query; close: () => Promise<void> }> {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  return {
    // Named statements: prepared once per connection, as the service's adapter does.
    query: async (name, text, values) => (await pool.query({ name, text, values })).rows,
    close: () => pool.end(),
  };
}

async function openPglite(dir: string, seedRows: number): Promise<{ query: Query; close: () => Promise<void> }> {
  // Opened as the service opens its PGlite (extensions, start parameters, the same WebAssembly compiler).
  useBaselineWasmCompiler();
  const db = new PGlite(dir, pgliteOptions());
  await db.waitReady;
  const present = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'products'`);
  if (present.rows[0]?.n === 0) {
    for (const migration of migrations) await db.exec(migration.sql);
    await db.query(SEED_SQL, [1, seedRows]);
    await db.exec('ANALYZE products');
  }
  return {
    query: async (_name, text, values) => (await db.query(text, values)).rows,
    close: () => db.close(),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const databaseUrl = process.env.CEILING_DATABASE_URL;
const pgliteDir = process.env.CEILING_PGLITE_DIR;
const db = databaseUrl !== undefined ? await openPg(databaseUrl) : pgliteDir !== undefined ? await openPglite(pgliteDir, Number(process.env.CEILING_SEED_ROWS ?? 1000)) : undefined;

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = req.url ?? '/';
  const qs = url.indexOf('?');
  const path = qs === -1 ? url : url.slice(0, qs);
  if (req.method === 'POST' && path === '/process/text') {
    const body = JSON.parse(await readBody(req)) as { text: string };
    return json(res, 200, textStats(body.text));
  }
  if (db === undefined) return json(res, 404, { error: 'no database' });
  if (req.method === 'GET' && path.startsWith('/products/')) {
    const rows = await db.query('ceiling_get', GET, [Number(path.slice('/products/'.length))]);
    return rows[0] === undefined ? json(res, 404, { error: 'not found' }) : json(res, 200, rows[0]);
  }
  if (req.method === 'GET' && path === '/products') {
    const limit = qs === -1 ? 1000 : Number(new URLSearchParams(url.slice(qs + 1)).get('limit') ?? 1000);
    return json(res, 200, await db.query('ceiling_list', LIST, [limit]));
  }
  if (req.method === 'POST' && path === '/products') {
    const p = JSON.parse(await readBody(req)) as Record<string, unknown>;
    const rows = await db.query('ceiling_insert', INSERT, [p.title, String(p.price), p.description ?? null, p.currency ?? null, p.source_url ?? null]);
    return json(res, 201, rows[0]);
  }
  json(res, 404, { error: 'no such route' });
}

const server = createServer({ keepAliveTimeout: 72_000 }, (req, res) => {
  handle(req, res).catch((error: unknown) => {
    if (!res.headersSent) json(res, 500, { error: (error as Error).message });
    else res.destroy();
  });
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});

const stop = () => {
  server.close();
  server.closeAllConnections();
  void (db?.close() ?? Promise.resolve()).finally(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
