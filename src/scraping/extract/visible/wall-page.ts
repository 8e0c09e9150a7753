// A page that yielded nothing, looked at once more: is it a wall (a CAPTCHA, a bot check, a login, a rate limit) standing where the content was?
import type { Element } from 'domhandler';
import { PAGE_MARKERS } from '../../../egress/site-walls.js';
import type { Wall } from '../../../problems.js';
import { cleanText, isElement, visibleText } from '../dom-helpers.js';
import type { Page } from '../page.js';

/**
 * Visible characters outside the site's header, navigation and footer below which a page is "thin":
 * a wall says a sentence or two around its form; a page with content says more. A page above it is
 * never called a wall, whatever it holds (an article about CAPTCHAs, a contact form with a widget).
 */
const THIN_CHARS = 2000;

/** Elements whose text people do not read (a noscript's is read: it is the page for clients without scripts). */
const UNSEEN = new Set(['script', 'style', 'template', 'svg', 'head', 'title']);

/** A CAPTCHA widget: the common services' containers, frames and scripts, or anything naming a captcha. */
const WIDGET_CLASS = /\b(?:g-recaptcha|h-captcha|cf-turnstile|frc-captcha)\b/i;
const WIDGET_SRC = /recaptcha|hcaptcha\.com|challenges\.cloudflare\.com\/turnstile|captcha-delivery\.com|friendlycaptcha|arkoselabs|funcaptcha/i;
const NAMES_CAPTCHA = /captcha/i;

/** Fields a person fills in (not hidden values, buttons, or boxes to tick). */
const FILLED = /^(?:text|email|password|tel|number|search|url|)$/i;

const TITLE_WALLS: ReadonlyArray<{ pattern: RegExp; wall: Wall }> = [
  { pattern: /^(?:429\b|too many requests|rate.?limit(?:ed)?|slow down)/i, wall: { kind: 'rate-limit', signal: 'the page says the requests were too many' } },
  {
    pattern:
      /^(?:just a moment|checking your browser|verify(?:ing)? (?:you are|that you are) (?:a )?human|are you a robot|bot check|human verification|please verify you are a human)/i,
    wall: { kind: 'challenge', signal: 'the page is a browser check' },
  },
  {
    pattern: /^(?:access denied|access to this page has been denied|you have been blocked|request blocked|403 forbidden)/i,
    wall: { kind: 'access-denied', signal: 'the page says access was denied' },
  },
];

/**
 * The wall a page that yielded no product and no article is, or null. Every signal needs a thin
 * page; the strongest first: a bot-protection service's own page, a CAPTCHA form (one that asks for
 * the CAPTCHA and at most one typed field, unlike a contact form with a widget), a login form with at
 * most three typed fields, then what the page's title or heading says.
 */
export function wallOfPage(page: Page, html: string): Wall | null {
  if (visibleLength(page, THIN_CHARS) >= THIN_CHARS) return null;
  for (const { pattern, wall } of PAGE_MARKERS) if (pattern.test(html)) return wall;
  const forms = page.elements.filter((el) => el.name === 'form' && !page.chrome.has(el) && !hidden(el));
  for (const form of forms) {
    const inside = descendantElements(form);
    const typed = inside.filter((el) => (el.name === 'input' && FILLED.test(el.attribs['type'] ?? '')) || el.name === 'textarea' || el.name === 'select');
    if (typed.length <= 1 && (inside.some(isWidget) || namesCaptcha(form) || inside.some(namesCaptcha))) {
      return { kind: 'captcha', signal: 'a CAPTCHA form is the content of the page' };
    }
    const password = typed.some((el) => (el.attribs['type'] ?? '').toLowerCase() === 'password');
    if (password && typed.length <= 3) return { kind: 'login', signal: 'a login form is the content of the page' };
  }
  // A widget outside any form (a form's widget was judged with its form: a contact form may carry one).
  if (page.elements.some((el) => !page.chrome.has(el) && isWidget(el) && !hidden(el) && !inForm(el)))
    return { kind: 'captcha', signal: 'a CAPTCHA widget is the content of the page' };
  const said = [page.$('title').first().text(), visibleText(page.elements.find((el) => el.name === 'h1'))].map((t) => cleanText(t));
  for (const { pattern, wall } of TITLE_WALLS) {
    const text = said.find((t) => pattern.test(t));
    if (text !== undefined) return { kind: wall.kind, signal: `${wall.signal} ("${text.slice(0, 80)}")` };
  }
  return null;
}

/** Hidden from people by its markup, or inside something that is (a login form kept for scripts, say). */
function hidden(el: Element): boolean {
  for (let node: Element | null = el; node !== null; node = isElement(node.parent as never) ? (node.parent as Element) : null) {
    if (node.attribs['hidden'] !== undefined || node.attribs['aria-hidden'] === 'true') return true;
    if (/(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)/i.test(node.attribs['style'] ?? '')) return true;
  }
  return false;
}

function inForm(el: Element): boolean {
  for (let node = el.parent; node !== null; node = node.parent) if (isElement(node) && node.name === 'form') return true;
  return false;
}

function isWidget(el: Element): boolean {
  if (WIDGET_CLASS.test(el.attribs['class'] ?? '')) return true;
  if ((el.name === 'iframe' || el.name === 'script') && WIDGET_SRC.test(el.attribs['src'] ?? '')) return true;
  return el.attribs['data-sitekey'] !== undefined;
}

/** A form, field or image that calls itself a captcha (Amazon's "validateCaptcha" form, its captcha image). */
function namesCaptcha(el: Element): boolean {
  const named = [el.attribs['action'], el.attribs['name'], el.attribs['id']].some((v) => v !== undefined && NAMES_CAPTCHA.test(v));
  return named || (el.name === 'img' && NAMES_CAPTCHA.test(el.attribs['src'] ?? ''));
}

function descendantElements(root: Element): Element[] {
  const out: Element[] = [];
  const stack: Element[] = [root];
  while (stack.length > 0) {
    const el = stack.pop()!;
    for (const child of el.children) {
      if (isElement(child)) {
        out.push(child);
        stack.push(child);
      }
    }
  }
  return out;
}

/** Visible characters outside the page's chrome, counted up to `cap`. */
function visibleLength(page: Page, cap: number): number {
  let length = 0;
  const stack = [page.root];
  while (stack.length > 0 && length < cap) {
    const node = stack.pop()!;
    if (node.type === 'text') {
      length += (node as unknown as { data: string }).data.replace(/\s+/g, ' ').trim().length;
      continue;
    }
    if (!isElement(node) && node.type !== 'root') continue;
    if (isElement(node) && (UNSEEN.has(node.name) || page.chrome.has(node) || node.attribs['hidden'] !== undefined)) continue;
    const children = (node as Element).children;
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return length;
}
