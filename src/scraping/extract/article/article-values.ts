// Article values as stored: dates as ISO 8601 (with the page's own offset), language tags, author names, tags; pure and linear.
import { cleanText, truncate } from '../dom-helpers.js';

const MONTHS: ReadonlyMap<string, number> = new Map(['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'].map((m, i) => [m, i + 1]));

/** Zone names a page writes beside a time, as offsets from UTC. */
const ZONES: ReadonlyMap<string, string> = new Map([
  ['z', 'Z'],
  ['utc', 'Z'],
  ['gmt', 'Z'],
  ['ut', 'Z'],
  ['est', '-05:00'],
  ['edt', '-04:00'],
  ['cst', '-06:00'],
  ['cdt', '-05:00'],
  ['mst', '-07:00'],
  ['mdt', '-06:00'],
  ['pst', '-08:00'],
  ['pdt', '-07:00'],
  ['bst', '+01:00'],
  ['cet', '+01:00'],
  ['cest', '+02:00'],
  ['ist', '+05:30'],
]);

/** No date string a page writes is longer; longer input is not a date and is not scanned. */
const MAX_DATE_CHARS = 80;

const ISO = /^(\d{4})-?(\d{2})-?(\d{2})(?:[T\s]+(\d{1,2}):?(\d{2})(?::?(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?|[A-Za-z]{1,4})?$/;
/** "Tue, 19 Nov 2019 10:43:00 GMT", "19 November 2019". */
const DAY_MONTH =
  /^(?:[A-Za-z]+,?\s+)?(\d{1,2})\.?\s+([A-Za-z]{3,9})\.?,?\s+(\d{4})(?:,?\s+(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([ap]\.?m\.?)?)?\s*(Z|[+-]\d{2}:?\d{2}|[A-Za-z]{1,4})?$/i;
/** "November 19, 2019", "Nov. 19, 2019 4:00 am CST". */
const MONTH_DAY =
  /^(?:[A-Za-z]+,?\s+)?([A-Za-z]{3,9})\.?\s+(\d{1,2}),?\s+(\d{4})(?:,?\s+(?:at\s+)?(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([ap]\.?m\.?)?)?\s*(Z|[+-]\d{2}:?\d{2}|[A-Za-z]{1,4})?$/i;

/**
 * A date as ISO 8601: "2019-11-19T10:43:00+01:00" when the page states an offset (a zone name becomes
 * its offset, UTC is "Z"), "2019-11-19T10:43:00" when it gives a time without one, "2019-11-19" when it
 * gives only the day. Epoch seconds or milliseconds are UTC. Null for anything else or an impossible date.
 */
export function isoDate(raw: string): string | null {
  const text = raw.trim();
  if (text === '' || text.length > MAX_DATE_CHARS) return null;
  if (/^\d{10}$|^\d{13}$/.test(text)) {
    const ms = Number(text) * (text.length === 10 ? 1000 : 1);
    const date = new Date(ms);
    const year = date.getUTCFullYear();
    return year >= 1900 && year <= 2200 ? date.toISOString().replace('.000Z', 'Z') : null;
  }
  let m = ISO.exec(text);
  if (m !== null) return compose(+m[1]!, +m[2]!, +m[3]!, m[4], m[5], m[6], m[7], null, m[8]);
  m = DAY_MONTH.exec(text);
  if (m !== null) return compose(+m[3]!, monthOf(m[2]!), +m[1]!, m[4], m[5], m[6], undefined, m[7] ?? null, m[8]);
  m = MONTH_DAY.exec(text);
  if (m !== null) return compose(+m[3]!, monthOf(m[1]!), +m[2]!, m[4], m[5], m[6], undefined, m[7] ?? null, m[8]);
  return null;
}

function monthOf(name: string): number {
  return MONTHS.get(name.slice(0, 3).toLowerCase()) ?? 0;
}

function compose(
  year: number,
  month: number,
  day: number,
  hour: string | undefined,
  minute: string | undefined,
  second: string | undefined,
  fraction: string | undefined,
  meridiem: string | null,
  zone: string | undefined,
): string | null {
  if (year < 1900 || year > 2200 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return null;
  const date = `${year}-${pad(month)}-${pad(day)}`;
  if (hour === undefined || minute === undefined) return date;
  let h = Number(hour);
  const am = meridiem?.toLowerCase().startsWith('a');
  if (meridiem !== null) {
    if (h < 1 || h > 12) return null;
    h = (h % 12) + (am ? 0 : 12);
  }
  const min = Number(minute);
  const sec = second === undefined ? 0 : Number(second);
  if (h > 23 || min > 59 || sec > 60) return null;
  const millis = fraction === undefined || /^0+$/.test(fraction) ? '' : `.${fraction.slice(0, 3).padEnd(3, '0')}`;
  const time = `${date}T${pad(h)}:${pad(min)}:${pad(sec)}${millis}`;
  if (zone === undefined) return time;
  const offset = offsetOf(zone);
  // An unknown zone name ("AEDT" we do not map) still leaves a good local time; it is stated without offset.
  return offset === null ? time : `${time}${offset}`;
}

function offsetOf(zone: string): string | null {
  const named = ZONES.get(zone.toLowerCase());
  if (named !== undefined) return named;
  const m = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone);
  if (m === null) return null;
  const hours = Number(m[2]);
  const minutes = Number(m[3] ?? '0');
  if (hours > 14 || minutes > 59) return null;
  return hours === 0 && minutes === 0 ? 'Z' : `${m[1]}${m[2]}:${pad(minutes)}`;
}

function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/** "en_US", "en-us", "EN" -> "en-US", "en-US", "en"; null for what is not a language tag. */
export function languageTag(raw: string): string | null {
  const text = raw.trim().replace(/_/g, '-');
  if (!/^[a-z]{2,3}(?:-[a-z\d]{1,8}){0,3}$/i.test(text)) return null;
  try {
    return Intl.getCanonicalLocales(text)[0] ?? null;
  } catch {
    return null;
  }
}

const MAX_NAME_CHARS = 200;
const MAX_NAMES = 20;

/**
 * Author names as a byline writes them: "By Jane Doe and John Roe" -> ["Jane Doe", "John Roe"].
 * Commas split only when every part reads as a name of two or more words ("Doe, Jane" stays one).
 * Profile URLs (article:author often holds one) and handles are not names.
 */
export function authorNames(values: readonly string[]): string[] {
  const found: string[] = [];
  for (const value of values) {
    const text = cleanText(value)
      .replace(/^(?:by|von|par|por|di|door|av|af|автор:?)\s+/i, '')
      .replace(/\s*[|•·]\s*.*$/, '');
    if (text === '' || /^(?:https?:)?\/\//i.test(text) || /^@\w+$/.test(text)) continue;
    for (const name of splitNames(text)) {
      const clean = truncate(name.replace(/[,;:]+$/, '').trim(), MAX_NAME_CHARS);
      if (clean !== '' && /\p{L}/u.test(clean) && !found.some((f) => f.toLowerCase() === clean.toLowerCase())) found.push(clean);
      if (found.length >= MAX_NAMES) return found;
    }
  }
  return found;
}

function splitNames(text: string): string[] {
  const parts = text.split(/\s+(?:and|&|und|et|y|e|и)\s+|\s*;\s*/i);
  return parts.flatMap((part) => {
    const byComma = part.split(/\s*,\s*/);
    return byComma.length > 1 && byComma.every((p) => p.split(/\s+/).length >= 2) ? byComma : [part];
  });
}

const MAX_TAG_CHARS = 100;
const MAX_TAGS = 50;

/** Tags each once (case-insensitively), trimmed, at most 50. */
export function tagList(values: readonly string[]): string[] {
  const found: string[] = [];
  for (const value of values) {
    const tag = truncate(cleanText(value), MAX_TAG_CHARS);
    if (tag !== '' && !found.some((f) => f.toLowerCase() === tag.toLowerCase())) found.push(tag);
    if (found.length >= MAX_TAGS) break;
  }
  return found;
}
