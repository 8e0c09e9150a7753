// Splits a corpus's pages in two halves by site, never by page: a rule written looking at one half is kept
// only when it also helps the other. The half of a page is the parity of its host's SHA-1 (without "www.").
import { createHash } from 'node:crypto';

export type Half = 'A' | 'B';

/** The host a page came from, without a leading "www."; a page without a URL stands for itself. */
export function siteOf(url: string | null | undefined, fallback: string): string {
  try {
    return new URL(url ?? '').hostname.replace(/^www\./, '');
  } catch {
    return fallback;
  }
}

export function halfOf(site: string): Half {
  return Number.parseInt(createHash('sha1').update(site).digest('hex').slice(0, 8), 16) % 2 === 0 ? 'A' : 'B';
}
