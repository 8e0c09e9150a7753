// Pure price parsing: turns price strings as shops write them ("£51.77", "1.299,00 €", "R$ 1.234,56") into an amount and an ISO 4217 code.

export interface ParsedPrice {
  amount: number;
  /** ISO 4217 code; null when the text names no currency we recognise. */
  currency: string | null;
}

/** Prices above this are treated as garbage (serial numbers, timestamps), not amounts. */
const MAX_AMOUNT = 1e12;

/** Price strings are short; bounding the input keeps the regexes linear and cheap on hostile text. */
const MAX_INPUT_CHARS = 4000;

interface CurrencySymbol {
  symbol: string;
  code: string;
  /** Also matches in other cases ("Zł", "KR", "LEI"). Off where another case reads as something else ("FT" is feet). */
  anyCase?: boolean;
  /** Written by several currencies ("$", "kr", "¥"): an ISO code next to it says which one ("NZD $", "45 kr NOK"). */
  ambiguous?: boolean;
  /** Power of ten from the written unit to the ISO one. */
  exponent?: number;
}

/**
 * Symbols written next to amounts, matched longest first so "CA$" wins over "$". A bare "$" means
 * USD by contract, "kr" SEK (NOK/DKK shops usually also write the ISO code), "¥" JPY, "Rs" INR.
 */
const SYMBOLS: readonly CurrencySymbol[] = [
  // Dollars, yen and rupees several countries share; the prefixed forms name one of them.
  { symbol: '$', code: 'USD', ambiguous: true },
  { symbol: 'US$', code: 'USD' },
  { symbol: 'CA$', code: 'CAD' },
  { symbol: 'C$', code: 'CAD' },
  { symbol: 'AU$', code: 'AUD' },
  { symbol: 'A$', code: 'AUD' },
  { symbol: 'NZ$', code: 'NZD' },
  { symbol: 'HK$', code: 'HKD' },
  { symbol: 'MX$', code: 'MXN' },
  { symbol: 'NT$', code: 'TWD' },
  { symbol: 'S$', code: 'SGD' },
  { symbol: 'R$', code: 'BRL' },
  { symbol: '¥', code: 'JPY', ambiguous: true },
  { symbol: '￥', code: 'JPY', ambiguous: true },
  { symbol: '円', code: 'JPY' },
  { symbol: 'CN¥', code: 'CNY' },
  { symbol: 'RMB', code: 'CNY' },
  { symbol: '元', code: 'CNY' },
  { symbol: 'Rs.', code: 'INR', anyCase: true, ambiguous: true },
  { symbol: 'Rs', code: 'INR', anyCase: true, ambiguous: true },
  { symbol: '₹', code: 'INR' },
  { symbol: 'kr.', code: 'SEK', anyCase: true, ambiguous: true },
  { symbol: 'kr', code: 'SEK', anyCase: true, ambiguous: true },
  // Cyrillic: "4399 р.", "1 299 грн", "25 лв.", and the declined "5 рублей".
  { symbol: 'рублей', code: 'RUB', anyCase: true },
  { symbol: 'рубля', code: 'RUB', anyCase: true },
  { symbol: 'рубль', code: 'RUB', anyCase: true },
  { symbol: 'руб.', code: 'RUB', anyCase: true },
  { symbol: 'руб', code: 'RUB', anyCase: true },
  { symbol: 'р.', code: 'RUB', anyCase: true },
  { symbol: 'р', code: 'RUB', anyCase: true },
  { symbol: 'грн', code: 'UAH', anyCase: true },
  { symbol: 'лв.', code: 'BGN', anyCase: true },
  { symbol: 'лв', code: 'BGN', anyCase: true },
  // Kazakh tenge as shops abbreviate it: "45 990 тг.".
  { symbol: 'тенге', code: 'KZT', anyCase: true },
  { symbol: 'тг.', code: 'KZT', anyCase: true },
  { symbol: 'тг', code: 'KZT', anyCase: true },
  // Latin-letter symbols; only the usual case where another one spells a word ("FT", "rm", "tl").
  { symbol: 'zł', code: 'PLN', anyCase: true },
  { symbol: 'Kč', code: 'CZK', anyCase: true },
  // The Croatian kuna, "349,00 Kn" (whole word only, like every lettered symbol).
  { symbol: 'kn', code: 'HRK', anyCase: true },
  { symbol: 'lei', code: 'RON', anyCase: true },
  { symbol: 'Rp.', code: 'IDR', anyCase: true },
  { symbol: 'Rp', code: 'IDR', anyCase: true },
  { symbol: 'Ft', code: 'HUF' },
  { symbol: 'TL', code: 'TRY' },
  { symbol: 'RM', code: 'MYR' },
  { symbol: 'Br', code: 'BYN' },
  // Signs.
  { symbol: '£', code: 'GBP' },
  { symbol: '€', code: 'EUR' },
  { symbol: '₩', code: 'KRW' },
  { symbol: '원', code: 'KRW' },
  { symbol: '₽', code: 'RUB' },
  { symbol: '₺', code: 'TRY' },
  { symbol: '₪', code: 'ILS' },
  { symbol: '₫', code: 'VND' },
  { symbol: '₱', code: 'PHP' },
  { symbol: '₴', code: 'UAH' },
  { symbol: '₦', code: 'NGN' },
  { symbol: '฿', code: 'THB' },
  { symbol: '₾', code: 'GEL' },
  { symbol: '₸', code: 'KZT' },
  { symbol: '₼', code: 'AZN' },
  // Persian and Arabic. "﷼" is the ligature of the Persian "ریال" (its Unicode name is RIAL SIGN), so IRR.
  // The toman has no ISO code and is exactly ten rials: it is converted, so the amount and code stay true.
  { symbol: 'ریال', code: 'IRR' },
  { symbol: '﷼', code: 'IRR' },
  { symbol: 'تومان', code: 'IRR', exponent: 1 },
  { symbol: 'ر.س', code: 'SAR' },
  { symbol: 'د.إ', code: 'AED' },
  { symbol: 'ر.ق', code: 'QAR' },
  { symbol: 'د.ك', code: 'KWD' },
  { symbol: 'ر.ع.', code: 'OMR' },
  { symbol: 'ج.م', code: 'EGP' },
].sort((a, b) => b.symbol.length - a.symbol.length);

/** Symbols by their last and first character (lower case): a lookup per number, not a scan of the whole list. */
const SYMBOLS_BY_LAST = indexSymbols((symbol) => symbol.slice(-1));
const SYMBOLS_BY_FIRST = indexSymbols((symbol) => symbol.charAt(0));

function indexSymbols(key: (symbol: string) => string): ReadonlyMap<string, readonly CurrencySymbol[]> {
  const index = new Map<string, CurrencySymbol[]>();
  for (const entry of SYMBOLS) {
    const char = key(entry.symbol).toLowerCase();
    index.set(char, [...(index.get(char) ?? []), entry]);
  }
  return index;
}

/** ISO 4217 codes the runtime knows; the fallback covers runtimes built without full ICU. */
const ISO_CODES: ReadonlySet<string> = new Set(supportedCurrencies());

function supportedCurrencies(): string[] {
  try {
    return Intl.supportedValuesOf('currency');
  } catch {
    return 'USD EUR GBP JPY CNY INR KRW RUB PLN BRL CAD AUD NZD CHF SEK NOK DKK CZK HUF RON TRY ILS MXN SGD HKD ZAR THB VND PHP UAH NGN IDR MYR AED SAR'.split(' ');
  }
}

/**
 * Codes shops also write in lower or mixed case ("12 eur", "Pln"). A short list, not every code:
 * in lower case "all", "top", "try" and "pen" are words far more often than currencies.
 */
const ANY_CASE_CODES: ReadonlySet<string> = new Set(
  'EUR USD GBP CHF PLN CZK HUF SEK NOK DKK ISK BGN RSD UAH JPY CNY INR IDR MYR SGD HKD TWD NZD AUD CAD BRL MXN ZAR THB KRW VND AED SAR'.split(' '),
);

/**
 * Codes that are also English words shops write in capitals ("TOP 10", "ALL 3 FOR $10", "GEL 50 ML").
 * They count only after the number with no word following ("200 MAD"), and never outrank a symbol.
 */
const WORD_LIKE_CODES: ReadonlySet<string> = new Set('ALL AMD BAM BOB CUP GEL MAD MOP PEN SOS TOP TRY'.split(' '));

/**
 * A number as written: digits with thousands/decimal separators. A space (already normalised from
 * NBSP, narrow NBSP, thin space) only joins when exactly three digits follow, so "1 299,99" is one
 * number but "2 for 10" is two. A leading "." allows "$.99".
 */
const NUMBER_TOKEN = /(?:\.(?=\d))?\d(?:[\d.,']|[ ](?=\d{3}(?!\d)))*/g;

/** Maps a currency symbol or ISO code ("£", "R$", "eur", "SGD$") to its ISO 4217 code; null when unknown. */
export function currencyFromSymbol(symbol: string | null | undefined): string | null {
  if (typeof symbol !== 'string') return null;
  const s = symbol.trim();
  if (s === '') return null;
  const found = SYMBOLS.find((entry) => entry.symbol.toLowerCase() === s.toLowerCase());
  if (found) return found.code;
  // "SGD$", "NZD $": the code says which dollar.
  const dollar = /^([A-Za-z]{3}) ?\$$/.exec(s);
  return codeOf(dollar?.[1] ?? s);
}

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

interface CurrencyMatch {
  code: string;
  /** Characters of the surrounding text the currency occupies, so the minus check can look past it. */
  length: number;
  /** The symbol as written; null when an ISO code names the currency. */
  symbol: string | null;
  /** A symbol several currencies write ("$", "kr"): an ISO code on the other side of the number wins. */
  ambiguous: boolean;
  exponent: number;
}

function symbolMatch(entry: CurrencySymbol, length: number): CurrencyMatch {
  return { code: entry.code, length, symbol: entry.symbol, ambiguous: entry.ambiguous === true, exponent: entry.exponent ?? 0 };
}

function codeMatch(code: string, length: number): CurrencyMatch {
  return { code, length, symbol: null, ambiguous: false, exponent: 0 };
}

/** The prefix names the currency, unless it is an ambiguous symbol and a code follows the number ("$1,190.00 AUD"). */
function currencyOf({ prefix, suffix }: TokenInContext): CurrencyMatch | null {
  if (prefix === null) return suffix;
  const suffixIsCode = suffix !== null && suffix.symbol === null && !WORD_LIKE_CODES.has(suffix.code);
  return prefix.ambiguous && suffixIsCode ? suffix : prefix;
}

function currencyBefore(before: string): CurrencyMatch | null {
  // "US$: 15.00" puts a colon between symbol and digits.
  const trimmed = trimEndOf(before, ' :');
  // Allow "$-5": the minus sits between symbol and digits.
  const withoutMinus = isMinus(trimmed.slice(-1)) ? trimEndOf(trimmed.slice(0, -1), ' ') : trimmed;
  for (const candidate of [trimmed, withoutMinus]) {
    const found = currencyAtEnd(candidate);
    if (found) return { ...found, length: before.length - (candidate.length - found.length) };
  }
  return null;
}

/** The currency `text` ends with: a symbol, a code, or a code then an ambiguous symbol ("NZD $", "SGD$"). */
function currencyAtEnd(text: string): CurrencyMatch | null {
  const entry = SYMBOLS_BY_LAST.get(text.slice(-1).toLowerCase())?.find((candidate) => endsWithSymbol(text, candidate));
  if (entry) {
    const head = text.slice(0, text.length - entry.symbol.length);
    const beforeSymbol = trimEndOf(head, ' ');
    const code = entry.ambiguous ? codeBefore(beforeSymbol) : null;
    return code === null ? symbolMatch(entry, entry.symbol.length) : codeMatch(code, text.length - beforeSymbol.length + 3);
  }
  const code = codeBefore(text);
  return code === null ? null : codeMatch(code, 3);
}

function currencyAfter(after: string, hasNext: boolean): CurrencyMatch | null {
  // Swiss and Nordic shops write "12.– CHF" or "45,- kr".
  const lead = /^ *(?:[-\u2013] *)?/.exec(after)![0].length;
  const trimmed = after.slice(lead);
  const entry = SYMBOLS_BY_FIRST.get(trimmed.charAt(0).toLowerCase())?.find((candidate) => startsWithSymbol(trimmed, candidate));
  if (entry) {
    const rest = trimmed.slice(entry.symbol.length);
    if (entry.ambiguous) {
      // "45 kr NOK", "10 $ CAD": a code right after an ambiguous symbol says which currency it is.
      const spaced = rest.replace(/^[ .]*/, '');
      const code = codeAfter(spaced);
      if (code !== null && !WORD_LIKE_CODES.has(code)) return codeMatch(code, after.length - spaced.length + 3);
    }
    // "Item 5 $3": a prefix-style symbol right before the next number belongs to that number.
    const leadsNext = hasNext && rest.trim() === '';
    return leadsNext && PREFIX_STYLE.test(entry.symbol) ? null : symbolMatch(entry, lead + entry.symbol.length);
  }
  const code = codeAfter(trimmed);
  return code === null ? null : codeMatch(code, lead + 3);
}

/** Symbols written before the amount by convention; the others ("€", "zł", "kr") often follow it. */
const PREFIX_STYLE = /[$£₹₩₦₱]|^(?:Rs|Rp|RM)/i;

/** A currency code as the last three characters of `text`, standing alone ("Total EUR", not "TOUR"). */
function codeBefore(text: string): string | null {
  if (text.length < 3 || isLetter(text.charAt(text.length - 4))) return null;
  const code = codeOf(text.slice(-3));
  return code === null || WORD_LIKE_CODES.has(code) ? null : code;
}

/** A currency code as the first three characters of `text`, standing alone ("EUR/month", not "EURO"). */
function codeAfter(text: string): string | null {
  if (isLetter(text.charAt(3))) return null;
  const code = codeOf(text.slice(0, 3));
  if (code === null) return null;
  // "200 MAD" is dirhams; "10 TOP PICKS" is not pa'anga.
  return WORD_LIKE_CODES.has(code) && /\p{L}/u.test(text.slice(3)) ? null : code;
}

/** An ISO 4217 code in capitals, or one of the codes shops also write in other cases; else null. */
function codeOf(word: string): string | null {
  if (!/^[A-Za-z]{3}$/.test(word)) return null;
  const upper = word.toUpperCase();
  if (word === upper) return ISO_CODES.has(upper) ? upper : null;
  return ANY_CASE_CODES.has(upper) ? upper : null;
}

function sameSymbol(written: string, entry: CurrencySymbol): boolean {
  return entry.anyCase === true ? written.toLowerCase() === entry.symbol.toLowerCase() : written === entry.symbol;
}

/** Lettered symbols ("R$", "kr", "Rp") only count as whole words: "OUR$5" is not an amount in reais. */
function endsWithSymbol(text: string, entry: CurrencySymbol): boolean {
  const start = text.length - entry.symbol.length;
  if (start < 0 || !sameSymbol(text.slice(start), entry)) return false;
  return !isLetter(entry.symbol.charAt(0)) || start === 0 || !isLetter(text.charAt(start - 1));
}

/**
 * A symbol ending in a letter must not run on into a word ("12 kredits", "5 рублей" is its own entry).
 * Signs may ("184,20 €HT": HT is "before tax"), and so may CJK ones, as those scripts use no spaces ("1,500円税込").
 */
function startsWithSymbol(text: string, entry: CurrencySymbol): boolean {
  const length = entry.symbol.length;
  if (!sameSymbol(text.slice(0, length), entry)) return false;
  const next = text.charAt(length);
  return !isLetter(entry.symbol.charAt(length - 1)) || !isLetter(next) || CJK.test(next);
}

const CJK = /[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}]/u;

function isLetter(char: string): boolean {
  return char !== '' && /\p{L}/u.test(char);
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

function isMinus(char: string): boolean {
  return char.length === 1 && '-\u2212\u2012\u2013'.includes(char);
}

/**
 * `text` without trailing `chars`. A loop, not /[…]+$/: an end-anchored regex rescans every run of
 * those characters, which is quadratic on hostile input.
 */
function trimEndOf(text: string, chars: string): string {
  let end = text.length;
  while (end > 0 && chars.includes(text.charAt(end - 1))) end -= 1;
  return text.slice(0, end);
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
