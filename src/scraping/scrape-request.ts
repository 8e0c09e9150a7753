// What a scrape request asks for, decided once: its mode, its source, and whether it can run at all (selectors, target).
// The slim build: the same selector engine without parse5 (a third of the load time at start).
import { load } from 'cheerio/slim';
import { assertAllowedUrl } from '../egress/address-guard.js';
import { BlockedTarget, ValidationFailed, type FieldError } from '../problems.js';
import { checkedTags } from '../tags/tag-schema.js';
import type { ScrapeMode, ScrapeRequest } from './scrape-schema.js';

export function scrapeMode(request: Pick<ScrapeRequest, 'url' | 'use_selenium'>): ScrapeMode {
  if (request.url === undefined) return 'demo';
  return request.use_selenium === true ? 'dynamic' : 'static';
}

/** Where a run starts: the URL asked for, else the operator's demo site. */
export function sourceUrlOf(request: Pick<ScrapeRequest, 'url'>, demoSiteUrl: string): string {
  return request.url ?? demoSiteUrl;
}

/** Operator-configured URLs (the demo site) are trusted; user-supplied ones never are. */
export function isTrusted(request: Pick<ScrapeRequest, 'url'>): boolean {
  return request.url === undefined;
}

/**
 * What a scrape would refuse, refused before anything is fetched or queued: selectors and `wait_for`
 * the CSS engine cannot parse (422 naming each, under `at`), then a blocked target (422).
 */
export function checkScrapeRequest(request: Pick<ScrapeRequest, 'url' | 'selectors' | 'wait_for' | 'tags'>, allowPrivateNetworks: boolean, at = '/body'): void {
  const $ = load('<p></p>');
  const candidates: Array<[string, unknown]> = [
    ...Object.entries(request.selectors ?? {}).map(([key, value]) => [`${at}/selectors/${key}`, value] as [string, unknown]),
    [`${at}/wait_for`, request.wait_for],
  ];
  const errors: FieldError[] = [];
  for (const [path, selector] of candidates) {
    if (typeof selector !== 'string') continue;
    try {
      $(selector);
    } catch {
      errors.push({ path, message: 'is not a valid CSS selector' });
    }
  }
  if (errors.length > 0) throw new ValidationFailed(errors);
  if (request.tags !== undefined) checkedTags(request.tags, `${at}/tags`);
  if (request.url === undefined) return;
  try {
    assertAllowedUrl(request.url, allowPrivateNetworks);
  } catch (error) {
    throw error instanceof BlockedTarget ? error.at(`${at}/url`) : error;
  }
}
