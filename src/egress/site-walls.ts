// Walls in an HTTP answer: the status, headers and first bytes a bot check, a rate limit or a login answer with instead of the page.
import type { Wall } from '../problems.js';

type Headers = Record<string, string | string[] | undefined>;

/** How much of an error answer's body is read to tell a wall by its page (challenge pages are small). */
export const WALL_SNIFF_BYTES = 64 * 1024;

const header = (headers: Headers, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/**
 * Markers the big bot-protection services put in their challenge, CAPTCHA and block pages (their
 * scripts, endpoints and page furniture), each with what it means. Checked on error answers, and on a
 * page that yielded nothing (see extract/wall-page.ts); never one of them alone on a page with content.
 */
export const PAGE_MARKERS: ReadonlyArray<{ pattern: RegExp; wall: Wall }> = [
  // Cloudflare: the managed challenge and its interstitial ("Just a moment..."); its block page.
  {
    pattern: /window\._cf_chl_opt|\/cdn-cgi\/challenge-platform\/h\/|id="challenge-form"|<title>\s*Just a moment\.\.\.\s*<\/title>/i,
    wall: { kind: 'challenge', signal: "Cloudflare's challenge page" },
  },
  { pattern: /Attention Required! \| Cloudflare|id="cf-error-details"[\s\S]{0,4000}blocked/i, wall: { kind: 'access-denied', signal: "Cloudflare's block page" } },
  // DataDome: its CAPTCHA or interstitial, served from captcha-delivery.com.
  { pattern: /(?:geo|ct)\.captcha-delivery\.com/i, wall: { kind: 'captcha', signal: "DataDome's CAPTCHA (captcha-delivery.com)" } },
  // HUMAN (PerimeterX): the "Press & Hold" CAPTCHA.
  { pattern: /id="px-captcha"|window\._pxAppId|\/captcha\/captcha\.js\?a=c&u=/i, wall: { kind: 'captcha', signal: "HUMAN (PerimeterX)'s Press & Hold CAPTCHA" } },
  // Imperva (Incapsula): its JavaScript challenge, and its "Request unsuccessful" block.
  { pattern: /\/_Incapsula_Resource\?/i, wall: { kind: 'challenge', signal: "Imperva (Incapsula)'s challenge" } },
  { pattern: /Incapsula incident ID/i, wall: { kind: 'access-denied', signal: "Imperva (Incapsula)'s block page" } },
  // Akamai: Bot Manager's challenge, and the edge's "Access Denied … Reference #".
  { pattern: /\/_sec\/cp_challenge\/|sec-if-cpt-container/i, wall: { kind: 'challenge', signal: "Akamai Bot Manager's challenge" } },
  { pattern: /errors\.edgesuite\.net|<H1>Access Denied<\/H1>[\s\S]{0,2000}Reference&#32;&#35;/i, wall: { kind: 'access-denied', signal: "Akamai's Access Denied page" } },
  // AWS WAF: its CAPTCHA and challenge scripts.
  { pattern: /captcha\.awswaf\.com|\.token\.awswaf\.com|AwsWafIntegration/i, wall: { kind: 'captcha', signal: "AWS WAF's CAPTCHA" } },
  // Sucuri: the website firewall's block page.
  { pattern: /Sucuri WebSite Firewall/i, wall: { kind: 'access-denied', signal: "Sucuri's firewall block page" } },
  // Kasada: its challenge script.
  { pattern: /KPSDK\.configure|\/ips\.js\?|x-kpsdk-ct/i, wall: { kind: 'challenge', signal: "Kasada's challenge" } },
];

/** CAPTCHA widgets anyone can put in a page: on an error answer they are the wall. */
const CAPTCHA_WIDGETS = /class="[^"]*\b(?:g-recaptcha|h-captcha|cf-turnstile)\b|www\.google\.com\/recaptcha\/|js\.hcaptcha\.com|challenges\.cloudflare\.com\/turnstile/i;

const RATE_LIMIT_WORDS = /too many requests|rate.?limit|slow down|request limit|zu viele anfragen|trop de requ[eê]tes|demasiadas solicitudes/i;

/**
 * The wall an answer is, from what the services say in their headers (some say it whatever the
 * status), the status, and for an error answer the start of its body; null when it says nothing of one.
 */
export function wallOfAnswer(status: number, headers: Headers, body: string | null): Wall | null {
  const cf = header(headers, 'cf-mitigated')?.toLowerCase();
  if (cf === 'challenge') return { kind: 'challenge', signal: 'header cf-mitigated: challenge (Cloudflare)' };
  const waf = header(headers, 'x-amzn-waf-action')?.toLowerCase();
  if (waf === 'captcha' || waf === 'challenge') return { kind: waf, signal: `header x-amzn-waf-action: ${waf} (AWS WAF)` };
  if (status < 400) return null;
  if (header(headers, 'x-datadome') !== undefined || header(headers, 'x-dd-b') !== undefined) {
    const interstitial = body !== null && /'rt'\s*:\s*'i'/.test(body);
    return { kind: interstitial ? 'challenge' : 'captcha', signal: `HTTP ${status} with DataDome's x-datadome header` };
  }
  if (header(headers, 'x-kpsdk-ct') !== undefined || header(headers, 'x-kpsdk-cd') !== undefined)
    return { kind: 'challenge', signal: `HTTP ${status} with Kasada's x-kpsdk headers` };
  if (header(headers, 'x-sucuri-block') !== undefined) return { kind: 'access-denied', signal: `HTTP ${status} with Sucuri's x-sucuri-block header` };
  if (status === 429) return { kind: 'rate-limit', signal: 'HTTP 429 Too Many Requests' };
  if (body !== null) {
    for (const { pattern, wall } of PAGE_MARKERS) if (pattern.test(body)) return wall;
    if (CAPTCHA_WIDGETS.test(body)) return { kind: 'captcha', signal: `HTTP ${status} with a CAPTCHA widget` };
  }
  if (status === 401) {
    const scheme = header(headers, 'www-authenticate')?.split(/\s/)[0];
    return { kind: 'login', signal: scheme === undefined ? 'HTTP 401 Unauthorized' : `HTTP 401 asking for ${scheme} credentials` };
  }
  if (status === 503 && header(headers, 'retry-after') !== undefined && body !== null && RATE_LIMIT_WORDS.test(body)) {
    return { kind: 'rate-limit', signal: 'HTTP 503 with Retry-After, saying the requests were too many' };
  }
  return null;
}
