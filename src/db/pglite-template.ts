// The files of a new embedded database, made once (initdb, every migration, the job queue's schema; in a child process) and copied into each new data directory.
//
// Why: PGlite's initdb runs a second WebAssembly PostgreSQL beside the first, and WebAssembly memory
// never shrinks, so a first start that ran initdb in the service kept its peak (hundreds of MB) for
// good and took seconds. Made in a child process, that peak dies with the child; made at build time
// (`npm run build` runs tools/make-pglite-template.js), a first start only copies files. What goes
// into a template (the schema, the queue's) is the template maker's business: a script given to us.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { constants, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, rmdirSync, statSync } from 'node:fs';
import { copyFile, mkdir, readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrations } from './migrations/index.js';

/** What a new database holds beside our migrations: the job queue's schema, named by the configuration. */
export interface TemplateSpec {
  cacheDir: string;
  /** pg-boss's schema (JOBS_SCHEMA); undefined: the template has none, the queue creates it at start. */
  queueSchema?: string;
  /**
   * The script that makes a database in a child process (`--into <dir> [--queue-schema <name>]`):
   * tools/make-pglite-template, as TypeScript under tsx or JavaScript from dist/.
   */
  maker: string;
}

/** Bumped when the way a template is made changes, so older templates are not used. */
const TEMPLATE_FORMAT = 1;
/** The database's files inside a data directory (the lock file sits beside them). */
const FILES = 'pglite';
/** Half-made directories: a copy or a child's initdb in progress, or left by a process that died. */
const STAGING_PREFIX = 'pglite.new-';

/** `<project>/node_modules/.cache/data-aggregator`: rebuilt with the dependencies, never shipped as data. */
export function defaultTemplateCache(): string {
  return fileURLToPath(new URL('../../node_modules/.cache/data-aggregator', import.meta.url));
}

/** A dependency's version, from the package.json above its entry point. */
function versionOf(name: string): string {
  let dir = dirname(fileURLToPath(import.meta.resolve(name)));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version: string };
      if (pkg.name === name) return pkg.version;
    } catch {
      // no package.json at this level
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json found for ${name}`);
    dir = parent;
  }
}

/**
 * What a template's files depend on: PGlite's version (its catalog format), every migration, and
 * pg-boss's version and schema name. A new migration or release makes a new template; an older one
 * is never copied. A
 * migration's `run` is left out: its source text differs between dist/ and tsx, and on the empty
 * database of a template it has nothing to work on.
 */
export function templateKey(queueSchema: string | undefined): string {
  const queue = queueSchema === undefined ? 'none' : `${queueSchema}@${versionOf('pg-boss')}`;
  const hash = createHash('sha256').update(`${TEMPLATE_FORMAT}\n${versionOf('@electric-sql/pglite')}\n${queue}\n`);
  for (const m of migrations) hash.update(JSON.stringify([m.version, m.name, m.sql]));
  return hash.digest('hex').slice(0, 16);
}

/**
 * Makes a database in `<staging>/pglite` in a child process: initdb, every migration, the queue's
 * schema, a clean shutdown. The child's memory (initdb's peak) goes when it exits.
 */
export function initInChild(staging: string, spec: Pick<TemplateSpec, 'queueSchema' | 'maker'>): Promise<void> {
  // From the TypeScript sources (tests, tsx) the child needs the same loader; from dist/ plain node.
  const args = [...(spec.maker.endsWith('.ts') ? ['--import', import.meta.resolve('tsx')] : []), spec.maker, '--into', staging];
  if (spec.queueSchema !== undefined) args.push('--queue-schema', spec.queueSchema);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-4096);
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`initialising the embedded database failed (${signal ?? `exit code ${code}`}): ${stderr.trim()}`));
    });
  });
}

/**
 * The template's files for the current key in `cacheDir`, made now (in a child process) if missing.
 * Several processes may make it at once: each in its own staging directory, the first rename wins.
 */
export async function ensureTemplate(spec: TemplateSpec): Promise<string> {
  const { cacheDir, queueSchema } = spec;
  // Templates with and without a queue schema (the services', the tests') live side by side.
  const kind = queueSchema === undefined ? 'pglite-plain-' : `pglite-queue-${queueSchema}-`;
  const name = `${kind}${templateKey(queueSchema)}`;
  const final = join(cacheDir, name);
  const files = join(final, FILES);
  if (existsSync(join(files, 'PG_VERSION'))) return files;
  mkdirSync(cacheDir, { recursive: true });
  const staging = join(cacheDir, `${STAGING_PREFIX}${name}-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await initInChild(staging, spec);
    try {
      renameSync(staging, final); // atomic: a template directory is complete or absent
    } catch (error) {
      if (!existsSync(join(files, 'PG_VERSION'))) throw error; // else another process made it first
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  // Its kind's templates of older keys are never used again; an hour-old staging directory was
  // left by a process that died while making one.
  for (const entry of readdirSync(cacheDir)) {
    const path = join(cacheDir, entry);
    const stale = entry.startsWith(STAGING_PREFIX) && Date.now() - (statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? Date.now()) > 3_600_000;
    if ((entry.startsWith(kind) && entry !== name) || stale) rmSync(path, { recursive: true, force: true });
  }
  return files;
}

/**
 * Gives `dataDir` (locked by the caller) its database files if it has none: a private copy of the
 * template, or, when no template can be had (a read-only cache), a database made in a child
 * process right there. A directory that holds anything already is left alone for PGlite to open.
 * Returns where the files came from.
 */
export async function seedDataDir(dataDir: string, spec: TemplateSpec): Promise<'existing' | 'template' | 'initdb'> {
  const target = join(dataDir, FILES);
  if (existsSync(target)) {
    if (readdirSync(target).length > 0) return 'existing';
    rmdirSync(target); // empty: nothing to keep, and the rename below needs the name free
  }
  // We hold the lock, so any staging directory here was left by a process that died mid-way.
  for (const entry of readdirSync(dataDir)) {
    if (entry.startsWith(STAGING_PREFIX)) rmSync(join(dataDir, entry), { recursive: true, force: true });
  }
  const staging = join(dataDir, `${STAGING_PREFIX}${process.pid}`);
  let source: 'template' | 'initdb' = 'template';
  try {
    let template: string | undefined;
    try {
      template = await ensureTemplate(spec);
    } catch {
      template = undefined;
    }
    if (template !== undefined) {
      // A copy, never a link: each data directory writes only its own files.
      await mkdir(staging);
      await copyTree(template, join(staging, FILES));
    } else {
      source = 'initdb';
      await initInChild(staging, spec);
    }
    renameSync(join(staging, FILES), target); // atomic: PGlite never sees half a database
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return source;
}

/**
 * Copies a directory tree, one file after another. About a thousand small files: fs.cp's checks
 * per file cost twice as much, and parallel copies only contend on the file system.
 */
async function copyTree(from: string, to: string): Promise<void> {
  await mkdir(to, { mode: 0o700 });
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) await copyTree(source, target);
    else if (entry.isFile()) await copyFile(source, target, constants.COPYFILE_EXCL);
    else throw new Error(`unexpected entry in the database template: ${source}`);
  }
}
