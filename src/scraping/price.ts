// Pure price parsing: turns price strings as shops write them ("£51.77", "1.299,00 €", "R$ 1.234,56") into an amount and an ISO 4217 code.

import { type CurrencyMatch, currencyAfter, currencyBefore, isLetter, isMinus, trimEndOf, WORD_LIKE_CODES } from './currency.js';

export interface ParsedPrice {
  amount: number;
  /** ISO 4217 code; null when the text names no currency we recognise. */
  currency: string | null;
}

/** Prices above this are treated as garbage (serial numbers, timestamps), not amounts. */
const MAX_AMOUNT = 1e12;

/** Price strings are short; bounding the input keeps the regexes linear and cheap on hostile text. */
const MAX_INPUT_CHARS = 4000;

/**
 * A number as written: digits with thousands/decimal separators. A space (already normalised from
 * NBSP, narrow NBSP, thin space) only joins when exactly three digits follow, so "1 299,99" is one
 * number but "2 for 10" is two. A leading "." allows "$.99".
 */
const NUMBER_TOKEN = /(?:\.(?=\d))?\d(?:[\d.,']|[ ](?=\d{3}(?!\d)))*/g;

/**
 * Parses the first price in `text`. Prefers the first number that has a currency next to it
 * ("2 for £10" -> 10 GBP), else the first number ("12,50" -> 12.5). Percentages are never prices.
 * Returns 0 for "Free" and its translations when no number is left, null for no number, negative
 * amounts and absurd ones. Never throws.
 */
export function parsePrice(text: string | null | undefined): ParsedPrice | null {
  if (typeof text !== 'string') return null;
  const normalised = normalise(text.slice(0, MAX_INPUT_CHARS));
  const tokens = withoutPercentages(joinSplitDecimals(numberTokens(normalised), normalised), normalised);
  if (tokens.length === 0) return isFree(normalised) ? { amount: 0, currency: null } : null;

  const context = (i: number): TokenInContext => {
    const token = tokens[i]!;
    const before = normalised.slice(i === 0 ? 0 : tokens[i - 1]!.end, token.start);
    const after = normalised.slice(token.end, i + 1 < tokens.length ? tokens[i + 1]!.start : normalised.length);
    return { token, before, after, prefix: currencyBefore(before), suffix: currencyAfter(after, i + 1 < tokens.length) };
  };
  // Stop at the first number with a currency: later ones cannot win, and hostile text has thousands.
  let index = 0;
  let chosen = context(0);
  for (let i = 0; i < tokens.length; i += 1) {
    const candidate = i === 0 ? chosen : context(i);
    if (candidate.prefix !== null || candidate.suffix !== null) {
      index = i;
      chosen = candidate;
      break;
    }
  }
  const currency = currencyOf(chosen);
  // "10-20 €" names the currency once, after the range: the price is the range's start.
  const start = index > 0 && RANGE_JOINER.test(chosen.before) ? context(index - 1) : chosen;

  if (isNegative(normalised, start.token.start, start.prefix)) return null;
  const cents = start === chosen ? centsAfterSymbol(chosen, tokens[index + 1], normalised) : null;
  const amount = numberFromToken(cents ?? start.token.text, currency?.exponent ?? 0);
  return amount === null ? null : { amount, currency: currency?.code ?? null };
}

const RANGE_JOINER = /^ *(?:[-\u2013\u2014~]|to|bis|à) *$/i;

/**
 * One space-like character per space, ASCII digits and separators for Arabic-Indic, Persian and
 * full-width ones, so the rest of the parser sees one script. Every replacement is one UTF-16 unit.
 */
function normalise(text: string): string {
  // NBSP, narrow NBSP and thin spaces are common thousands separators (fr, pl, ru shops); direction
  // marks sit between amounts and Arabic or Persian symbols.
  return text
    .replace(/[\s\u00A0\u2007\u2009\u202F\u200E\u200F\u061C\u2066-\u2069]/g, ' ')
    .replace(/[\u0660-\u0669\u06F0-\u06F9\uFF10-\uFF19\u066A-\u066C\uFF05\uFF0C\uFF0E]/g, asciiOf);
}

function asciiOf(char: string): string {
  const code = char.charCodeAt(0);
  for (const zero of [0x0660, 0x06f0, 0xff10]) {
    if (code >= zero && code <= zero + 9) return String(code - zero);
  }
  return SEPARATORS[char] ?? char;
}

/** Arabic percent sign, decimal and thousands separators; full-width percent, comma and full stop. */
const SEPARATORS: Readonly<Record<string, string>> = { '\u066A': '%', '\u066B': '.', '\u066C': ',', '\uFF05': '%', '\uFF0C': ',', '\uFF0E': '.' };

interface Token {
  text: string;
  start: number;
  end: number;
}

interface TokenInContext {
  token: Token;
  /** Text between the previous number and this one. */
  before: string;
  /** Text between this number and the next one. */
  after: string;
  prefix: CurrencyMatch | null;
  suffix: CurrencyMatch | null;
}

function numberTokens(text: string): Token[] {
  const tokens: Token[] = [];
  // A fresh regex per call: a shared /g regex carries lastIndex between calls.
  const pattern = new RegExp(NUMBER_TOKEN.source, 'g');
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    const raw = cutInvalidSpaceGroups(match[0]);
    const start = match.index;
    tokens.push({ text: trimEndOf(raw, ".,' "), start, end: start + raw.length });
    // Resume right after what we kept, so "2024 100 €" still sees "100".
    pattern.lastIndex = start + raw.length;
  }
  return tokens;
}

/** "2024 100" is not one number: a space-grouped number must start with 1-3 digits. */
function cutInvalidSpaceGroups(token: string): string {
  const firstSpace = token.indexOf(' ');
  if (firstSpace === -1) return token;
  return /^\d{1,3}$/.test(token.slice(0, firstSpace)) ? token : token.slice(0, firstSpace);
}

/**
 * "130, 38 zł", "$119. 95", "1.837, 32 €": a separator, one space, then exactly two digits is a
 * decimal part typed with a stray space. Joined only when a currency sits at the join's ends, so
 * "sizes 38, 40" stays two numbers, and only when the separator is not also the thousands one.
 */
function joinSplitDecimals(tokens: Token[], text: string): Token[] {
  const joined: Token[] = [];
  for (let i = 0; i < tokens.length; i += 1) {
    const first = tokens[i]!;
    const second = tokens[i + 1];
    const separator = text.charAt(first.end - 1);
    const splitDecimal =
      second !== undefined &&
      (separator === '.' || separator === ',') &&
      /\d/.test(text.charAt(first.end - 2)) &&
      !first.text.includes(separator) &&
      text.slice(first.end, second.start) === ' ' &&
      /^\d{2}$/.test(second.text) &&
      second.end - second.start === 2;
    if (!splitDecimal) {
      joined.push(first);
      continue;
    }
    const before = text.slice(joined.length === 0 ? 0 : joined[joined.length - 1]!.end, first.start);
    const after = text.slice(second.end, i + 2 < tokens.length ? tokens[i + 2]!.start : text.length);
    // "$5, 10 left" is two numbers; "$119. 95" and "130, 38 zł" are one.
    const named = currencyAfter(after, i + 2 < tokens.length) !== null || (currencyBefore(before) !== null && !startsWithWord(after));
    if (named) {
      joined.push({ text: `${first.text}${separator}${second.text}`, start: first.start, end: second.end });
      i += 1;
    } else {
      joined.push(first);
    }
  }
  return joined;
}

/** "40% OFF", "-40%", "Save 40%", "10-20%": a percentage is a discount, never a price. */
function withoutPercentages(tokens: Token[], text: string): Token[] {
  const percent: boolean[] = new Array<boolean>(tokens.length).fill(false);
  for (let i = tokens.length - 1; i >= 0; i -= 1) {
    const after = text.slice(tokens[i]!.end, i + 1 < tokens.length ? tokens[i + 1]!.start : text.length);
    percent[i] = after.trimStart().startsWith('%') || (percent[i + 1] === true && RANGE_JOINER.test(after));
  }
  return tokens.filter((_, i) => !percent[i]);
}

/** Words that mean the price is zero, in the languages shops write them. */
const FREE_WORDS: ReadonlySet<string> = new Set(['free', 'gratis', 'gratuit', 'gratuite', 'gratuito', 'gratuita', 'kostenlos', 'бесплатно']);

/** "Free", "FREE!", "Gratis": the first word says it. "Call for price" and "Not free" are not zero. */
function isFree(text: string): boolean {
  const word = /\p{L}+/u.exec(text)?.[0];
  return word !== undefined && FREE_WORDS.has(word.toLowerCase());
}

/** The prefix names the currency, unless it is an ambiguous symbol and a code follows the number ("$1,190.00 AUD"). */
function currencyOf({ prefix, suffix }: TokenInContext): CurrencyMatch | null {
  if (prefix === null) return suffix;
  const suffixIsCode = suffix !== null && suffix.symbol === null && !WORD_LIKE_CODES.has(suffix.code);
  return prefix.ambiguous && suffixIsCode ? suffix : prefix;
}

function startsWithWord(text: string): boolean {
  return /^ *[\p{L}\p{N}]/u.test(text);
}

/** After a price, the cents as French and German shops sometimes print them: "35€ 99", "35€99". Tax notes may follow. */
const TAX_NOTE = /^ *(?:HT|TTC|HTVA|TVAC|inkl|incl|exkl|excl|zzgl|MwSt|TVA|IVA|VAT)(?!\p{L})/iu;

/**
 * "35€ 99" is 35.99 EUR: a whole amount, a sign after it, then two digits with nothing that makes
 * them a number of their own (a currency, a word: "10€ 20€", "5 € 50 Stück"). The token text to
 * parse instead of the chosen one, or null.
 */
function centsAfterSymbol(chosen: TokenInContext, next: Token | undefined, text: string): string | null {
  const { token, prefix, suffix, after } = chosen;
  if (next === undefined || prefix !== null || suffix === null || suffix.symbol === null || isLetter(suffix.symbol.slice(-1))) return null;
  const gap = after.slice(suffix.length);
  if ((gap !== '' && gap !== ' ') || !/^\d{2}$/.test(next.text) || next.end - next.start !== 2 || !/\d/.test(text.charAt(token.end - 1))) return null;
  const whole = numberFromToken(token.text, 0);
  if (whole === null || !Number.isInteger(whole)) return null;
  const following = text.slice(next.end, next.end + 40);
  if (startsWithWord(following) && !TAX_NOTE.test(following)) return null;
  if (currencyAfter(following, false) !== null) return null;
  return `${whole}.${next.text}`;
}

/**
 * A minus right before the digits ("-5", "$-5") or before the symbol ("-$5", "- $44.99" on a
 * discount line) is a sign, unless a letter or digit precedes it: "10 - 20 €" is a range and
 * "Item-5" a name.
 */
function isNegative(text: string, tokenStart: number, prefix: CurrencyMatch | null): boolean {
  const head = text.slice(0, tokenStart);
  const beforeSymbol = prefix === null ? head : head.slice(0, head.length - prefix.length);
  return [head, beforeSymbol].some(endsWithSign);
}

function endsWithSign(text: string): boolean {
  const trimmed = trimEndOf(text, ' ');
  if (!isMinus(trimmed.slice(-1))) return false;
  const beforeMinus = trimEndOf(trimmed.slice(0, -1), ' ').slice(-1);
  return !/[\p{L}\p{N}]/u.test(beforeMinus);
}

/**
 * Decides which separator is the decimal point. Both "." and ",": the last one is decimal
 * ("1.299,00", "1,23,456.00"). One of them, repeated: thousands ("1,234,567"). Once: decimal
 * unless exactly three digits follow a non-zero integer part ("1,234" -> 1234, "12,50" -> 12.5).
 * Spaces and apostrophes only ever group thousands ("1 299,99", "1'234.50"). `exponent` scales by
 * a power of ten (tomans to rials).
 */
function numberFromToken(token: string, exponent: number): number | null {
  const compact = token.replace(/[ ']/g, '');
  if (compact === '') return null;
  const lastDot = compact.lastIndexOf('.');
  const lastComma = compact.lastIndexOf(',');
  let integerPart: string;
  let fraction = '';
  if (lastDot !== -1 && lastComma !== -1) {
    const decimalAt = Math.max(lastDot, lastComma);
    integerPart = compact.slice(0, decimalAt);
    fraction = compact.slice(decimalAt + 1);
  } else if (lastDot !== -1 || lastComma !== -1) {
    const sep = lastDot !== -1 ? '.' : ',';
    const parts = compact.split(sep);
    const last = parts[parts.length - 1]!;
    const first = parts[0]!;
    const isThousands = parts.length > 2 || (last.length === 3 && first !== '' && !/^0+$/.test(first));
    integerPart = isThousands ? compact : parts.slice(0, -1).join('');
    fraction = isThousands ? '' : last;
  } else {
    integerPart = compact;
  }
  const digits = integerPart.replace(/[.,]/g, '');
  if (!/^\d*$/.test(digits) || !/^\d*$/.test(fraction) || digits.length + fraction.length === 0) return null;
  // Parsing the decimal string (not multiplying parts) gives the double nearest to what was written:
  // 51.77, not 51.769999; the exponent goes into the string for the same reason.
  const scale = exponent === 0 ? '' : `e${exponent}`;
  const amount = Number(`${digits === '' ? '0' : digits}${fraction === '' ? '' : `.${fraction}`}${scale}`);
  if (!Number.isFinite(amount) || amount < 0 || amount > MAX_AMOUNT) return null;
  return amount;
}
