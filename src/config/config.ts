// Environment -> one typed, validated Config object, grouped by concern. The only module that reads process.env.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConnectionString } from 'mongodb-connection-string-url';
import { availableParallelism } from 'node:os';
import { redactUrl } from '../redact.js';

export interface HttpSettings {
  host: string;
  /** The main service's port. */
  port: number;
  /** Fastify `requestTimeout`: a request must be fully received within this. */
  requestTimeoutMs: number;
  bodyLimitBytes: number;
  /** Fastify's trustProxy: which proxies' X-Forwarded-For is believed for the client address (rate limits, logs). */
  trustProxy: boolean | number | string[];
  /** Host names the services answer to besides IP addresses and localhost (`*`: any), against DNS rebinding. */
  allowedHosts: string[];
  /** Live streams (Server-Sent Events): how many at once, per client and in all, and how long a client may stop reading. */
  streams: { perClient: number; total: number; stallMs: number };
}

export interface AuthSettings {
  /** When set, mutating endpoints need it as a Bearer token or X-API-Key. */
  apiKey: string | undefined;
  /** With an API key: every read needs it too, except health, docs and the dashboard's files. */
  apiKeyReads: boolean;
  /** Origins allowed by CORS ('*' for any); empty: no CORS headers. */
  corsOrigins: string[];
  /** Requests per minute per client; 0 turns a limit off. */
  rateLimitScrapePerMinute: number;
  rateLimitWritesPerMinute: number;
}

export interface DatabaseSettings {
  /** A PostgreSQL server; undefined: PGlite in `dataDir`. */
  url: string | undefined;
  dataDir: string;
  /** PGlite's buffer pool in MB, or sized from the data directory at each start. */
  pgliteSharedBuffersMb: number | 'auto';
  /** V8's optimizing compiler for PGlite, or only for a large store. */
  pgliteWasmTierUp: boolean | 'auto';
  /** Scrape logs in MongoDB; undefined: a JSONB table of the relational database. */
  mongodbUrl: string | undefined;
}

export interface ScrapeSettings {
  /** The demo scraper's site (operator-configured, so trusted). */
  demoSiteUrl: string;
  /** User-supplied URLs may reach loopback and private addresses (scrapes, crawls, webhooks). */
  allowPrivateNetworks: boolean;
  /** Per-page timeout in ms; `timeout_ms` in a request overrides it. */
  timeoutMs: number;
  /** The longest one whole scrape run may take, all its pages together. */
  runDeadlineMs: number;
  /** Worker threads that parse and extract big pages off the event loop (0: inline). */
  extractThreads: number;
  maxBodyBytes: number;
  maxRedirects: number;
  userAgent: string;
  obeyRobots: boolean;
  /** Concurrent page fetches per host within one scrape. */
  hostConcurrency: number;
  /** Scrapes that may run at once across the whole service. */
  globalConcurrency: number;
}

export interface BrowserSettings {
  chromiumPath: string | undefined;
  /** PATH, searched for a browser when CHROMIUM_PATH and the usual install paths have none. */
  executableSearchPath: string;
}

export interface JobSettings {
  /** The main service also runs workers (WORKERS=0: the API alone). */
  runWorkers: boolean;
  /** Jobs (and crawl pages) one worker process handles at once. */
  workerConcurrency: number;
  /** PostgreSQL schema of the job queue's own tables. */
  queueSchema: string;
  /** Schedules in all, paused ones included. */
  schedulesMax: number;
  /** Crawls pace each host by how it answers (CRAWL_AUTOTHROTTLE); null: only robots.txt's Crawl-delay paces them. */
  autothrottle: { targetConcurrency: number; maxDelayMs: number } | null;
}

export interface TrackingSettings {
  /** A product its source's successful runs miss this many times in a row is gone. */
  goneAfterRuns: number;
  /** Delays before each retry of a failed webhook delivery. */
  webhookRetryDelaysMs: number[];
  /** How long one delivery waits for the receiver's answer. */
  webhookTimeoutMs: number;
  /** Webhook subscriptions in all, and to one target URL. */
  webhooksMax: number;
  webhooksPerUrl: number;
}

export interface AlertSettings {
  /** Where people reach the dashboard: messages link under it. */
  publicUrl: string;
  /** Delays before each retry of a failed alert delivery. */
  retryDelaysMs: number[];
  /** The longest one delivery takes, whole. */
  timeoutMs: number;
  /** Alert rules in all. */
  rulesMax: number;
  /** Channels to one destination. */
  channelsPerTarget: number;
}

export interface PostsSettings {
  url: string;
  timeoutMs: number;
  cacheTtlMs: number;
}

export interface AuxiliarySettings {
  port: number;
  mainServiceUrl: string;
  proxyTimeoutMs: number;
}

/** The whole configuration, grouped by concern as docs/configuration.md lists it (src/config/settings.ts). */
export interface Config {
  http: HttpSettings;
  auth: AuthSettings;
  database: DatabaseSettings;
  scrape: ScrapeSettings;
  browser: BrowserSettings;
  jobs: JobSettings;
  tracking: TrackingSettings;
  alerts: AlertSettings;
  posts: PostsSettings;
  auxiliary: AuxiliarySettings;
  logLevel: string;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function str(env: Env, name: string): string | undefined {
  const v = env[name]?.trim();
  return v === undefined || v === '' ? undefined : v;
}

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = str(env, name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return n;
}

/** AutoThrottle's settings, checked whether it is on or not (a wrong value is an error either way); null when off. */
function autothrottle(env: Env): JobSettings['autothrottle'] {
  const targetConcurrency = int(env, 'CRAWL_AUTOTHROTTLE_TARGET_CONCURRENCY', 2, 1, 32);
  const maxDelayMs = int(env, 'CRAWL_AUTOTHROTTLE_MAX_DELAY_MS', 60_000, 1_000, 600_000);
  return bool(env, 'CRAWL_AUTOTHROTTLE', false) ? { targetConcurrency, maxDelayMs } : null;
}

/** 'auto' (the default) or an integer in [min, max]. */
function sizeOrAuto(env: Env, name: string, min: number, max: number): number | 'auto' {
  const raw = str(env, name);
  return raw === undefined || raw === 'auto' ? 'auto' : int(env, name, min, min, max);
}

const TRUE_WORDS = ['true', '1', 'yes', 'on'];
const FALSE_WORDS = ['false', '0', 'no', 'off'];

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = str(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (TRUE_WORDS.includes(raw)) return true;
  if (FALSE_WORDS.includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

/** 'auto' (the default), or true or false. */
function boolOrAuto(env: Env, name: string): boolean | 'auto' {
  const raw = str(env, name)?.toLowerCase();
  if (raw === undefined || raw === 'auto') return 'auto';
  if (TRUE_WORDS.includes(raw)) return true;
  if (FALSE_WORDS.includes(raw)) return false;
  throw new ConfigError(`${name} must be auto, true or false, got "${raw}"`);
}

function url(env: Env, name: string, fallback: string, protocols: string[]): string {
  const raw = str(env, name) ?? fallback;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL, got "${raw}"`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got "${raw}"`);
  }
  return raw;
}

/**
 * TRUST_PROXY: unset or false trusts nobody (the socket's address is the client); true trusts every
 * hop (only behind a proxy that overwrites X-Forwarded-For); a number trusts that many hops; a
 * comma-separated list trusts those addresses or CIDR ranges.
 */
function trustProxy(env: Env, name: string): boolean | number | string[] {
  const raw = str(env, name);
  if (raw === undefined || ['false', '0', 'no', 'off'].includes(raw.toLowerCase())) return false;
  if (['true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  const list = raw
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  for (const entry of list) {
    if (!/^[0-9a-fA-F.:]+(?:\/\d{1,3})?$/.test(entry)) throw new ConfigError(`${name} must be true, false, a hop count or a list of addresses/CIDRs, got "${raw}"`);
  }
  return list;
}

/** ALLOWED_HOSTS: comma-separated host names (no scheme, no port), or `*` for any. */
function allowedHosts(env: Env, name: string): string[] {
  const list = (str(env, name) ?? '')
    .split(',')
    .map((host) => host.trim().toLowerCase().replace(/\.$/, ''))
    .filter((host) => host !== '');
  for (const host of list) {
    if (host !== '*' && !/^[a-z0-9.-]{1,253}$/.test(host)) throw new ConfigError(`${name} must be comma-separated host names (no scheme or port) or *, got "${host}"`);
  }
  return list;
}

/** A MongoDB connection string, read by the driver's own parser (several hosts, replica sets, SRV). */
function mongoUrl(env: Env, name: string): string | undefined {
  const raw = str(env, name);
  if (raw === undefined) return undefined;
  try {
    new ConnectionString(raw);
  } catch (error) {
    throw new ConfigError(`${name} is not a MongoDB connection string (${(error as Error).message}), got "${redactUrl(raw)}"`);
  }
  return raw;
}

export function loadConfig(env: Env = process.env): Config {
  const port = int(env, 'PORT', 8000, 0, 65535);
  const logLevel = str(env, 'LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  return {
    http: {
      host: str(env, 'HOST') ?? '127.0.0.1',
      port,
      requestTimeoutMs: int(env, 'REQUEST_TIMEOUT_MS', 120_000, 1_000, 3_600_000),
      bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 1_048_576, 1_024, 104_857_600),
      trustProxy: trustProxy(env, 'TRUST_PROXY'),
      allowedHosts: allowedHosts(env, 'ALLOWED_HOSTS'),
      streams: {
        perClient: int(env, 'STREAMS_PER_CLIENT', 10, 1, 10_000),
        total: int(env, 'STREAMS_MAX', 200, 1, 100_000),
        stallMs: int(env, 'STREAM_STALL_MS', 30_000, 100, 3_600_000),
      },
    },
    auth: {
      apiKey: str(env, 'API_KEY'),
      apiKeyReads: bool(env, 'API_KEY_READS', false),
      corsOrigins: (str(env, 'CORS_ORIGINS') ?? '')
        .split(',')
        .map((o) => o.trim())
        .filter((o) => o !== ''),
      // Off unless configured: a self-hosted service's owner must never meet a 429 from their own scripts.
      rateLimitScrapePerMinute: int(env, 'RATE_LIMIT_SCRAPE_PER_MINUTE', 0, 0, 1_000_000),
      rateLimitWritesPerMinute: int(env, 'RATE_LIMIT_WRITES_PER_MINUTE', 0, 0, 10_000_000),
    },
    database: {
      url: str(env, 'DATABASE_URL') === undefined ? undefined : url(env, 'DATABASE_URL', '', ['postgres:', 'postgresql:']),
      dataDir: resolve(str(env, 'DATA_DIR') ?? './data'),
      pgliteSharedBuffersMb: sizeOrAuto(env, 'PGLITE_SHARED_BUFFERS_MB', 8, 1024),
      pgliteWasmTierUp: boolOrAuto(env, 'PGLITE_WASM_TIER_UP'),
      mongodbUrl: mongoUrl(env, 'MONGODB_URL'),
    },
    scrape: {
      demoSiteUrl: url(env, 'DEMO_SITE_URL', 'https://books.toscrape.com/', ['http:', 'https:']),
      allowPrivateNetworks: bool(env, 'SCRAPE_ALLOW_PRIVATE_NETWORKS', false),
      timeoutMs: int(env, 'SCRAPE_TIMEOUT_MS', 15_000, 100, 120_000),
      runDeadlineMs: int(env, 'SCRAPE_RUN_DEADLINE_MS', 300_000, 1_000, 86_400_000),
      extractThreads: int(env, 'EXTRACT_THREADS', defaultExtractThreads(), 0, 64),
      maxBodyBytes: int(env, 'SCRAPE_MAX_BODY_BYTES', 10 * 1024 * 1024, 1_024, 104_857_600),
      maxRedirects: 5,
      userAgent: str(env, 'SCRAPE_USER_AGENT') ?? 'DataAggregatorBot/0.1 (+https://github.com/data-aggregator)',
      obeyRobots: bool(env, 'SCRAPE_OBEY_ROBOTS', true),
      hostConcurrency: int(env, 'SCRAPE_HOST_CONCURRENCY', 8, 1, 32),
      globalConcurrency: int(env, 'SCRAPE_CONCURRENCY', 4, 1, 64),
    },
    browser: {
      chromiumPath: str(env, 'CHROMIUM_PATH'),
      executableSearchPath: env.PATH ?? '',
    },
    jobs: {
      runWorkers: int(env, 'WORKERS', 1, 0, 1) === 1,
      workerConcurrency: int(env, 'WORKER_CONCURRENCY', 8, 1, 64),
      queueSchema: identifier(env, 'JOBS_SCHEMA', 'pgboss'),
      schedulesMax: int(env, 'SCHEDULES_MAX', 1000, 1, 1_000_000),
      autothrottle: autothrottle(env),
    },
    tracking: {
      goneAfterRuns: int(env, 'GONE_AFTER_RUNS', 3, 1, 1000),
      webhookRetryDelaysMs: delays(env, 'WEBHOOK_RETRY_DELAYS_MS', STANDARD_WEBHOOK_DELAYS_MS),
      webhookTimeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
      webhooksMax: int(env, 'WEBHOOKS_MAX', 1000, 1, 1_000_000),
      webhooksPerUrl: int(env, 'WEBHOOKS_PER_URL', 10, 1, 1_000_000),
    },
    alerts: {
      publicUrl: url(env, 'PUBLIC_URL', str(env, 'MAIN_SERVICE_URL') ?? `http://127.0.0.1:${port}`, ['http:', 'https:']),
      retryDelaysMs: delays(env, 'ALERT_RETRY_DELAYS_MS', [30_000, 120_000, 600_000, 1_800_000, 7_200_000]),
      timeoutMs: int(env, 'ALERT_TIMEOUT_MS', 30_000, 100, 300_000),
      rulesMax: int(env, 'ALERT_RULES_MAX', 500, 1, 100_000),
      channelsPerTarget: int(env, 'ALERT_CHANNELS_PER_TARGET', 10, 1, 1000),
    },
    posts: {
      url: url(env, 'EXTERNAL_POSTS_URL', 'https://jsonplaceholder.typicode.com/posts', ['http:', 'https:']),
      timeoutMs: int(env, 'EXTERNAL_POSTS_TIMEOUT_MS', 10_000, 100, 120_000),
      cacheTtlMs: int(env, 'EXTERNAL_POSTS_CACHE_TTL_MS', 60_000, 0, 86_400_000),
    },
    auxiliary: {
      port: int(env, 'AUX_PORT', 5000, 0, 65535),
      mainServiceUrl: url(env, 'MAIN_SERVICE_URL', `http://127.0.0.1:${port}`, ['http:', 'https:']),
      proxyTimeoutMs: int(env, 'PROXY_TIMEOUT_MS', 10_000, 100, 120_000),
    },
    logLevel,
  };
}

/** EXTRACT_THREADS' default: the cores there are, at most 4 (parsing is what the threads do). */
export function defaultExtractThreads(): number {
  return Math.min(4, Math.max(1, availableParallelism()));
}

/** Standard Webhooks' schedule after the first attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
const STANDARD_WEBHOOK_DELAYS_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];

function delays(env: Env, name: string, fallback: number[]): number[] {
  const raw = str(env, name);
  if (raw === undefined) return fallback;
  const list = raw.split(',').map((part) => Number(part.trim()));
  if (list.length === 0 || list.length > 50 || list.some((n) => !Number.isInteger(n) || n < 0 || n > 7 * 86_400_000)) {
    throw new ConfigError(`${name} must be a comma-separated list of up to 50 delays in milliseconds (0 to 7 days), got "${raw}"`);
  }
  return list;
}

function identifier(env: Env, name: string, fallback: string): string {
  const raw = str(env, name) ?? fallback;
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(raw)) throw new ConfigError(`${name} must be a lower-case SQL identifier, got "${raw}"`);
  return raw;
}

/** Reads `.env` from the working directory into process.env (existing variables win). */
export function loadDotEnv(path = '.env'): void {
  if (existsSync(path)) process.loadEnvFile(path);
}
