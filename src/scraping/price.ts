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

/**
 * Symbols written next to amounts. Longer symbols come first so "CA$" wins over "$"; a bare "$"
 * means USD by contract, "kr" defaults to SEK (NOK/DKK shops usually also write the ISO code).
 */
const SYMBOLS: ReadonlyArray<readonly [symbol: string, code: string]> = [
  ['US$', 'USD'],
  ['CA$', 'CAD'],
  ['AU$', 'AUD'],
  ['NZ$', 'NZD'],
  ['HK$', 'HKD'],
  ['MX$', 'MXN'],
  ['CN¥', 'CNY'],
  ['RMB', 'CNY'],
  ['руб.', 'RUB'],
  ['руб', 'RUB'],
  ['Rs.', 'INR'],
  ['lei', 'RON'],
  ['C$', 'CAD'],
  ['A$', 'AUD'],
  ['S$', 'SGD'],
  ['R$', 'BRL'],
  ['zł', 'PLN'],
  ['Kč', 'CZK'],
  ['Ft', 'HUF'],
  ['kr', 'SEK'],
  ['Rs', 'INR'],
  ['$', 'USD'],
  ['£', 'GBP'],
  ['€', 'EUR'],
  ['¥', 'JPY'],
  ['￥', 'JPY'],
  ['円', 'JPY'],
  ['元', 'CNY'],
  ['₹', 'INR'],
  ['₩', 'KRW'],
  ['₽', 'RUB'],
  ['₺', 'TRY'],
  ['₪', 'ILS'],
  ['₫', 'VND'],
  ['₱', 'PHP'],
  ['₴', 'UAH'],
  ['₦', 'NGN'],
  ['฿', 'THB'],
];

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
 * A number as written: digits with thousands/decimal separators. A space (already normalised from
 * NBSP, narrow NBSP, thin space) only joins when exactly three digits follow, so "1 299,99" is one
 * number but "2 for 10" is two. A leading "." allows "$.99".
 */
const NUMBER_TOKEN = /(?:\.(?=\d))?\d(?:[\d.,']|[ ](?=\d{3}(?!\d)))*/g;

/** Maps a currency symbol or ISO code ("£", "R$", "eur") to its ISO 4217 code; null when unknown. */
export function currencyFromSymbol(symbol: string | null | undefined): string | null {
  if (typeof symbol !== 'string') return null;
  const s = symbol.trim();
  if (s === '') return null;
  const found = SYMBOLS.find(([sym]) => sym.toLowerCase() === s.toLowerCase());
  if (found) return found[1];
  const upper = s.toUpperCase();
  return /^[A-Z]{3}$/.test(upper) && ISO_CODES.has(upper) ? upper : null;
}

/**
 * Parses the first price in `text`. Prefers the first number that has a currency next to it
 * ("2 for £10" -> 10 GBP), else the first number ("12,50" -> 12.5). Returns null for no number,
 * negative amounts, and absurd ones. Never throws.
 */
export function parsePrice(text: string | null | undefined): ParsedPrice | null {
  if (typeof text !== 'string') return null;
  const normalised = normaliseSpaces(text.slice(0, MAX_INPUT_CHARS));
  const tokens = numberTokens(normalised);
  if (tokens.length === 0) return null;

  const context = (i: number): TokenInContext => {
    const token = tokens[i]!;
    const before = normalised.slice(i === 0 ? 0 : tokens[i - 1]!.end, token.start);
    const after = normalised.slice(token.end, i + 1 < tokens.length ? tokens[i + 1]!.start : normalised.length);
    return { token, before, prefix: currencyBefore(before), suffix: currencyAfter(after, i + 1 < tokens.length) };
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
  const currency = chosen.prefix?.code ?? chosen.suffix?.code ?? null;
  // "10-20 €" names the currency once, after the range: the price is the range's start.
  const start = index > 0 && RANGE_JOINER.test(chosen.before) ? context(index - 1) : chosen;

  if (isNegative(normalised, start.token.start, start.prefix)) return null;
  const amount = numberFromToken(start.token.text);
  return amount === null ? null : { amount, currency };
}

const RANGE_JOINER = /^ *(?:[-\u2013\u2014~]|to|bis|à) *$/i;

function normaliseSpaces(text: string): string {
  // NBSP, narrow NBSP and thin spaces are common thousands separators (fr, pl, ru shops).
  return text.replace(/[\s\u00A0\u2007\u2009\u202F]/g, ' ');
}

interface Token {
  text: string;
  start: number;
  end: number;
}

interface TokenInContext {
  token: Token;
  /** Text between the previous number and this one. */
  before: string;
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

interface CurrencyMatch {
  code: string;
  /** Characters of `before` the symbol occupies, so the minus check can look past it. */
  length: number;
}

function currencyBefore(before: string): CurrencyMatch | null {
  const trimmed = trimEndOf(before, ' ');
  // Allow "$-5": the minus sits between symbol and digits.
  const withoutMinus = isMinus(trimmed.slice(-1)) ? trimEndOf(trimmed.slice(0, -1), ' ') : trimmed;
  for (const candidate of [trimmed, withoutMinus]) {
    const symbol = SYMBOLS.find(([sym]) => candidate.endsWith(sym) && standsAlone(candidate, candidate.length - sym.length, sym));
    if (symbol) return { code: symbol[1], length: before.length - (candidate.length - symbol[0].length) };
    const iso = /(?:^|[^A-Za-z])([A-Z]{3})$/.exec(candidate);
    if (iso && ISO_CODES.has(iso[1]!)) return { code: iso[1]!, length: before.length - (candidate.length - 3) };
  }
  return null;
}

function currencyAfter(after: string, hasNext: boolean): CurrencyMatch | null {
  // Swiss and Nordic shops write "12.– CHF" or "45,- kr".
  const trimmed = after.replace(/^ *(?:[-\u2013] *)?/, '');
  const symbol = SYMBOLS.find(([sym]) => trimmed.startsWith(sym) && !/^[A-Za-z]/.test(trimmed.slice(sym.length)));
  if (symbol) {
    // "Item 5 $3": a prefix-style symbol right before the next number belongs to that number.
    const leadsNext = hasNext && trimmed.slice(symbol[0].length).trim() === '';
    return leadsNext && PREFIX_STYLE.test(symbol[0]) ? null : { code: symbol[1], length: symbol[0].length };
  }
  const iso = /^([A-Z]{3})(?![A-Za-z])/.exec(trimmed);
  if (iso && ISO_CODES.has(iso[1]!)) return { code: iso[1]!, length: 3 };
  return null;
}

/** Symbols written before the amount by convention; the others ("€", "zł", "kr") often follow it. */
const PREFIX_STYLE = /[$£₹₩]|^Rs/;

/** Lettered symbols ("R$", "kr", "Ft") only count as whole words: "OUR$5" is not an amount in reais. */
function standsAlone(text: string, symbolStart: number, symbol: string): boolean {
  if (!/^[A-Za-zА-яł]/.test(symbol)) return true;
  return symbolStart === 0 || !/[A-Za-zА-я]/.test(text.charAt(symbolStart - 1));
}

/**
 * A minus right before the digits ("-5", "$-5") or before the symbol ("-$5") is a sign, unless a
 * letter or digit precedes it: "10 - 20 €" is a range and "Item-5" a name.
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
 * Spaces and apostrophes only ever group thousands ("1 299,99", "1'234.50").
 */
function numberFromToken(token: string): number | null {
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
  // Parsing the decimal string (not multiplying parts) gives the double nearest to what was written: 51.77, not 51.769999.
  const amount = Number(`${digits === '' ? '0' : digits}${fraction === '' ? '' : `.${fraction}`}`);
  if (!Number.isFinite(amount) || amount < 0 || amount > MAX_AMOUNT) return null;
  return amount;
}
