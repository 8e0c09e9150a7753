// Digest periods, pure: which daily or weekly digest a firing belongs to and when that digest is due (UTC).
import type { DigestMode } from '../rules/alert-rule-schema.js';

export interface DigestPeriod {
  /** Groups the firings of one rule's digest: '2026-11-23' (daily) or '2026-W48' (weekly, ISO week). */
  key: string;
  /** The period's name in a message title: "Daily" or "Weekly". */
  label: string;
  /** When the period ends and its digest is sent. */
  due_at: string;
}

const DAY_MS = 86_400_000;

/** The digest period `at` falls in; null for immediate delivery. Periods are UTC days and ISO weeks (Monday to Sunday). */
export function digestPeriod(mode: DigestMode, at: string): DigestPeriod | null {
  if (mode === 'immediate') return null;
  const time = Date.parse(at);
  if (Number.isNaN(time)) throw new RangeError(`Not a timestamp: ${at}`);
  const dayStart = Math.floor(time / DAY_MS) * DAY_MS;
  if (mode === 'daily') {
    return { key: new Date(dayStart).toISOString().slice(0, 10), label: 'Daily', due_at: new Date(dayStart + DAY_MS).toISOString() };
  }
  const weekday = (new Date(dayStart).getUTCDay() + 6) % 7; // Monday 0 ... Sunday 6
  const monday = dayStart - weekday * DAY_MS;
  // The ISO week-numbering year is the year of the week's Thursday.
  const thursday = new Date(monday + 3 * DAY_MS);
  const year = thursday.getUTCFullYear();
  const week = Math.floor((thursday.getTime() - Date.UTC(year, 0, 1)) / (7 * DAY_MS)) + 1;
  return { key: `${year}-W${String(week).padStart(2, '0')}`, label: 'Weekly', due_at: new Date(monday + 7 * DAY_MS).toISOString() };
}
