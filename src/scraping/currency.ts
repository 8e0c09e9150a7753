// Currencies as shops write them: symbols, ISO 4217 codes and where they sit around an amount.

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
export const WORD_LIKE_CODES: ReadonlySet<string> = new Set('ALL AMD BAM BOB CUP GEL MAD MOP PEN SOS TOP TRY'.split(' '));

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

export interface CurrencyMatch {
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

export function currencyBefore(before: string): CurrencyMatch | null {
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

export function currencyAfter(after: string, hasNext: boolean): CurrencyMatch | null {
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

export function isLetter(char: string): boolean {
  return char !== '' && /\p{L}/u.test(char);
}

export function isMinus(char: string): boolean {
  return char.length === 1 && '-\u2212\u2012\u2013'.includes(char);
}

/**
 * `text` without trailing `chars`. A loop, not /[…]+$/: an end-anchored regex rescans every run of
 * those characters, which is quadratic on hostile input.
 */
export function trimEndOf(text: string, chars: string): string {
  let end = text.length;
  while (end > 0 && chars.includes(text.charAt(end - 1))) end -= 1;
  return text.slice(0, end);
}
