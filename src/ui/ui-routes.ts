// /ui: the dashboard. Its own modules from ui/, Preact, htm and uPlot from node_modules, all served here (no CDN, no build step).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../http/base-app.js';

/** The project's ui/ folder: two levels up from src/ui/ and from dist/ui/ alike. */
const UI_DIR = fileURLToPath(new URL('../../ui/', import.meta.url));

const require = createRequire(import.meta.url);
const packageDir = (specifier: string) => dirname(require.resolve(specifier));

/** The browser files of the packages the dashboard uses, served under /ui/vendor/<file> (ui/index.html's import map names them). */
const VENDOR = [
  { dir: packageDir('preact'), file: 'preact.mjs' },
  { dir: packageDir('preact/hooks'), file: 'hooks.mjs' },
  { dir: packageDir('htm'), file: 'htm.mjs' },
  { dir: packageDir('htm/preact'), file: 'index.mjs' },
  { dir: packageDir('uplot'), file: 'uPlot.esm.js' },
  { dir: packageDir('uplot'), file: 'uPlot.min.css' },
];

/**
 * The page every dashboard URL answers with (the screens route in the browser), and its CSP: scripts
 * from this service only, plus the one inline import map, allowed by its hash.
 */
function loadPage(): { html: string; headers: Record<string, string> } {
  const html = readFileSync(`${UI_DIR}index.html`, 'utf8');
  const importMap = /<script type="importmap">([\s\S]*?)<\/script>/.exec(html)?.[1];
  if (importMap === undefined) throw new Error('ui/index.html has no import map');
  const hash = createHash('sha256').update(importMap).digest('base64');
  const csp = [
    "default-src 'self'",
    `script-src 'self' 'sha256-${hash}'`,
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "frame-ancestors 'none'",
    "base-uri 'self'",
    "form-action 'self'",
  ].join('; ');
  return { html, headers: { 'content-security-policy': csp, 'cache-control': 'no-cache' } };
}

/** The dashboard needs nothing of the service: its files and the screens' API calls are all it serves. */
export type UiRoutesDeps = Record<string, never>;

export async function uiRoutes(app: App, _deps: UiRoutesDeps = {}): Promise<void> {
  const page = loadPage();
  const sendPage = async (_request: FastifyRequest, reply: FastifyReply) => reply.headers(page.headers).type('text/html; charset=utf-8').send(page.html);
  // Every screen has its own URL; a reload or a shared link gets the page, which shows that screen.
  app.get('/ui', { schema: { hide: true } }, sendPage);
  app.get('/ui/*', { schema: { hide: true } }, sendPage);

  await app.register(fastifyStatic, {
    root: `${UI_DIR}src/`,
    prefix: '/ui/assets/',
    decorateReply: false,
    index: false,
    // Revalidated each time (ETag): a new version of the service shows at once.
    cacheControl: true,
    maxAge: 0,
  });
  const vendorDirs = [...new Set(VENDOR.map((v) => v.dir))];
  const served = new Set(VENDOR.map((v) => `/${v.file}`));
  await app.register(fastifyStatic, {
    root: vendorDirs,
    prefix: '/ui/vendor/',
    decorateReply: false,
    index: false,
    // Only the files the import map names, not whole package folders.
    allowedPath: (pathName) => served.has(pathName),
    maxAge: '1d',
  });
}
