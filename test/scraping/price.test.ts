// Price parsing: a table of prices as real shops write them, and properties over generated ones.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { currencyFromSymbol } from '../../src/scraping/currency.js';
import { parsePrice } from '../../src/scraping/price.js';

const NBSP = '\u00A0';
const NARROW_NBSP = '\u202F';

/** [input, amount, currency]; amount null means "no price". */
const CASES: ReadonlyArray<readonly [string, number | null, string | null]> = [
  // symbols before the amount
  ['£51.77', 51.77, 'GBP'],
  ['$1,299.99', 1299.99, 'USD'],
  ['€1.299,00', 1299, 'EUR'],
  ['¥3,000', 3000, 'JPY'],
  ['₹1,23,456.00', 123456, 'INR'],
  ['₩50,000', 50000, 'KRW'],
  ['₽1 500', 1500, 'RUB'],
  ['R$ 1.234,56', 1234.56, 'BRL'],
  ['CA$ 10', 10, 'CAD'],
  ['C$5.25', 5.25, 'CAD'],
  ['A$12', 12, 'AUD'],
  ['AU$ 12.00', 12, 'AUD'],
  ['US$ 7.10', 7.1, 'USD'],
  ['NZ$ 7.50', 7.5, 'NZD'],
  ["CHF 1'234.50", 1234.5, 'CHF'],
  ['Rs. 499', 499, 'INR'],
  ['$.99', 0.99, 'USD'],
  ['£0.99', 0.99, 'GBP'],
  // symbols and codes after the amount
  ['1.299,00 €', 1299, 'EUR'],
  [`1.299,00${NBSP}€`, 1299, 'EUR'],
  ['0,99 €', 0.99, 'EUR'],
  ['1 299,99 zł', 1299.99, 'PLN'],
  [`1${NBSP}299,99${NBSP}zł`, 1299.99, 'PLN'],
  [`1${NARROW_NBSP}299,99${NBSP}zł`, 1299.99, 'PLN'],
  ['45 kr', 45, 'SEK'],
  ['12.- CHF', 12, 'CHF'],
  ['3 000 ₽', 3000, 'RUB'],
  ['1 500 円', 1500, 'JPY'],
  // ISO codes
  ['USD 45', 45, 'USD'],
  ['45 USD', 45, 'USD'],
  ['EUR 12,99', 12.99, 'EUR'],
  ['12.99 EUR', 12.99, 'EUR'],
  ['Price: 12.50 GBP', 12.5, 'GBP'],
  ['DKK 1.295,00', 1295, 'DKK'],
  // no currency
  ['12,50', 12.5, null],
  ['1,234', 1234, null],
  ['1,234,567', 1234567, null],
  ['0.999', 0.999, null],
  ['19.95', 19.95, null],
  // in sentences and ranges
  ['from £10 to £20', 10, 'GBP'],
  ['10-20 €', 10, 'EUR'],
  ['2 for £10', 10, 'GBP'],
  ['RRP: £9.99 (was £12.99)', 9.99, 'GBP'],
  ['Item 5 $3', 3, 'USD'],
  ['Now only $1,000,000.00!', 1000000, 'USD'],
  // dollars, yen and kroner that name another currency: a code next to the symbol says which
  ['$1,190.00 AUD', 1190, 'AUD'],
  ['AUD 1,190.00', 1190, 'AUD'],
  ['NZD $ 89.00', 89, 'NZD'],
  ['SGD$12.90', 12.9, 'SGD'],
  ['S$ 12.90', 12.9, 'SGD'],
  ['NT$1,280', 1280, 'TWD'],
  ['HK$ 99', 99, 'HKD'],
  ['US$: 15.00', 15, 'USD'],
  ['USD$ 10', 10, 'USD'],
  ['MX$ 1,299.00', 1299, 'MXN'],
  ['$1,299.00 MXN', 1299, 'MXN'],
  ['$10 usd', 10, 'USD'],
  ['10 $ CAD', 10, 'CAD'],
  ['¥100 CNY', 100, 'CNY'],
  ['CNY ¥100', 100, 'CNY'],
  ['45 KR', 45, 'SEK'],
  ['499 kr NOK', 499, 'NOK'],
  ['kr 1.295,00 DKK', 1295, 'DKK'],
  ['NOK 499,-', 499, 'NOK'],
  // Cyrillic, Polish, Romanian
  ['4399 р.', 4399, 'RUB'],
  ['4 399 руб.', 4399, 'RUB'],
  ['1990 руб', 1990, 'RUB'],
  ['5 рублей', 5, 'RUB'],
  ['1 299 грн', 1299, 'UAH'],
  ['25 лв.', 25, 'BGN'],
  // Kazakh tenge and Croatian kuna as shops abbreviate them; a lettered symbol stands alone
  ['45 990 тг.', 45990, 'KZT'],
  ['118 500 тг', 118500, 'KZT'],
  ['349,00 Kn', 349, 'HRK'],
  ['1.049,99 kn', 1049.99, 'HRK'],
  ['5 knots', 5, null],
  ['12,50 Br', 12.5, 'BYN'],
  ['12,99 Zł', 12.99, 'PLN'],
  ['1 234,56 PLN', 1234.56, 'PLN'],
  ['120 lei', 120, 'RON'],
  ['120 LEI', 120, 'RON'],
  // Asia
  ['Rp 150.000', 150000, 'IDR'],
  ['Rp150.000,00', 150000, 'IDR'],
  ['RM 59.90', 59.9, 'MYR'],
  ['₹ 1,499', 1499, 'INR'],
  ['Rs 999', 999, 'INR'],
  ['50,000원', 50000, 'KRW'],
  // "from" prices end in a tilde; a split price reads as its parts joined
  ['30,000원~', 30000, 'KRW'],
  ['12,900원~', 12900, 'KRW'],
  ['每份$120元起', 120, 'USD'],
  ['EUR89.00', 89, 'EUR'],
  ['$4.590', 4590, 'USD'],
  ['฿1,290', 1290, 'THB'],
  ['¥ 3 000', 3000, 'JPY'],
  ['3.000 円（税込）', 3000, 'JPY'],
  ['1,500円税込', 1500, 'JPY'],
  ['３,０００円', 3000, 'JPY'],
  // Turkey, Ukraine, Nigeria
  ['249,90 TL', 249.9, 'TRY'],
  ['₺1.299,99', 1299.99, 'TRY'],
  ['₴999', 999, 'UAH'],
  ['₦25,000', 25000, 'NGN'],
  // Persian and Arabic; a toman is ten rials
  ['1.290.000 ریال', 1290000, 'IRR'],
  ['1000 ﷼', 1000, 'IRR'],
  ['120.000 تومان', 1200000, 'IRR'],
  ['۱۲۰٬۰۰۰ تومان', 1200000, 'IRR'],
  ['120 ر.س', 120, 'SAR'],
  ['٣٥٫٥٠ ر.س', 35.5, 'SAR'],
  ['د.إ 99.50', 99.5, 'AED'],
  ['50 ر.ق', 50, 'QAR'],
  // codes in lower and mixed case, when they stand alone next to the number
  ['12 pln', 12, 'PLN'],
  ['eur 12,99', 12.99, 'EUR'],
  ['12.99 eur', 12.99, 'EUR'],
  ['Eur 5', 5, 'EUR'],
  ['Total EUR: 12', 12, 'EUR'],
  ['10 USD/month', 10, 'USD'],
  ['200 MAD', 200, 'MAD'],
  // words are not currencies, in any case
  ['for 5', 5, null],
  ['per 10', 10, null],
  ['all 3', 3, null],
  ['3 and 4', 3, null],
  ['TOP 10', 10, null],
  ['10 TOP PICKS', 10, null],
  ['ALL 3 FOR $10', 10, 'USD'],
  ['GEL 50 ML', 50, null],
  ['AMD 7950X', 7950, null],
  ['12 kredits', 12, null],
  ['Only 3 left', 3, null],
  // a stray space after the decimal separator, cents after the sign, a sign glued to a word
  ['130, 38 zł', 130.38, 'PLN'],
  ['Cena: 130, 38 zł', 130.38, 'PLN'],
  ['$119. 95', 119.95, 'USD'],
  ['1.837, 32 €', 1837.32, 'EUR'],
  ['35€ 99', 35.99, 'EUR'],
  ['35€99', 35.99, 'EUR'],
  ['35€ 99 TTC', 35.99, 'EUR'],
  ['184,20 €HT', 184.2, 'EUR'],
  ['sizes 38, 40', 38, null],
  ['$5, 10 left', 5, 'USD'],
  ['10€ 20€', 10, 'EUR'],
  ['5 € 50 Stück', 5, 'EUR'],
  // dashes for zero cents, tax notes, several prices
  ['€ 12,-', 12, 'EUR'],
  ['12,- €', 12, 'EUR'],
  ['CHF 12.–', 12, 'CHF'],
  ['9,99 € inkl. MwSt.', 9.99, 'EUR'],
  ['from $19.99', 19.99, 'USD'],
  ['Now $89.99 Was $129.99', 89.99, 'USD'],
  ['Save 40% now $59.99', 59.99, 'USD'],
  // free is zero, with no currency
  ['Free', 0, null],
  ['FREE!', 0, null],
  ['Gratis', 0, null],
  ['Gratuit', 0, null],
  ['Kostenlos', 0, null],
  // not prices
  ['Not free', null, null],
  ['40% OFF', null, null],
  ['-40%', null, null],
  ['Save 40%', null, null],
  ['10-20% off', null, null],
  ['- $44.99', null, null],
  ['\u2212€5,00', null, null],
  ['—', null, null],
  ['', null, null],
  ['   ', null, null],
  ['Call for price', null, null],
  ['-5', null, null],
  ['-$5.00', null, null],
  ['$-5.00', null, null],
  ['Price: -12,50 €', null, null],
  ['99999999999999', null, null],
  ['$ 1000000000000.01', null, null],
  ['NaN', null, null],
  ['Infinity', null, null],
];

describe('parsePrice', () => {
  for (const [input, amount, currency] of CASES) {
    test(`${JSON.stringify(input)} -> ${amount === null ? 'null' : `${amount} ${currency ?? '(no currency)'}`}`, () => {
      assert.deepEqual(parsePrice(input), amount === null ? null : { amount, currency });
    });
  }

  test('null and undefined are not prices', () => {
    assert.equal(parsePrice(null), null);
    assert.equal(parsePrice(undefined), null);
  });

  test('two-decimal amounts are the exact JS numbers, not float noise', () => {
    assert.equal(parsePrice('£51.77')?.amount, 51.77);
    assert.equal(parsePrice('1.299,10 €')?.amount, 1299.1);
    assert.equal(parsePrice('$0.30')?.amount, 0.3);
  });

  test('never throws, and any amount is finite and within 0..1e12, for arbitrary unicode', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => {
        const parsed = parsePrice(text);
        return parsed === null || (Number.isFinite(parsed.amount) && parsed.amount >= 0 && parsed.amount <= 1e12);
      }),
      { numRuns: 2000 },
    );
  });

  test('never throws on price-like noise built from digits, separators and symbols', () => {
    const pieces = fc.constantFrom('1', '0', '9', '.', ',', ' ', NBSP, "'", '-', '$', '£', '€', 'zł', 'R$', 'USD', 'kr', 'e', '+');
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 30 }), (parts) => {
        const parsed = parsePrice(parts.join(''));
        return parsed === null || (Number.isFinite(parsed.amount) && parsed.amount >= 0);
      }),
      { numRuns: 2000 },
    );
  });

  test('words next to a number are never its currency', () => {
    const words = ['for', 'per', 'all', 'and', 'the', 'top', 'try', 'pen', 'mad', 'gel', 'cup', 'off', 'new', 'set', 'box', 'pcs'];
    const cased = fc.tuple(fc.constantFrom(...words), fc.boolean()).map(([word, title]) => (title ? word.charAt(0).toUpperCase() + word.slice(1) : word));
    fc.assert(
      fc.property(cased, fc.integer({ min: 0, max: 99_999 }), fc.boolean(), (word, n, wordFirst) => {
        const text = wordFirst ? `${word} ${n}` : `${n} ${word}`;
        assert.equal(parsePrice(text)?.currency, null, text);
      }),
      { numRuns: 500 },
    );
  });

  test('percentages are never prices', () => {
    const forms = fc.constantFrom(
      (n: number) => `${n}%`,
      (n: number) => `-${n}%`,
      (n: number) => `${n} % OFF`,
      (n: number) => `Save ${n}%`,
      (n: number) => `up to ${n}%`,
    );
    fc.assert(
      fc.property(forms, fc.integer({ min: 0, max: 100 }), (form, n) => {
        assert.equal(parsePrice(form(n)), null, form(n));
      }),
      { numRuns: 500 },
    );
  });

  test('long hostile input is read only up to its first 4000 characters, and parses like that prefix', () => {
    // The bound is what keeps the parser's work per string small whatever a page holds; its speed
    // on such strings is measured by `npm run bench`, not asserted here.
    const units = ['1 ', '1, ', '1, 23 ', '$', 'kr', 'NZD $', '1%', ' ', '- ', 'Free ', '€ 99', '35€', "1'", 'р.', 'تومان', 'eur ', '1.'];
    for (const unit of units) {
      const long = unit.repeat(Math.ceil(100_000 / unit.length));
      assert.deepEqual(parsePrice(long), parsePrice(long.slice(0, 4000)), JSON.stringify(unit));
      const tail = `9 ${unit.repeat(Math.ceil(4_000 / unit.length))}1`;
      assert.deepEqual(parsePrice(tail), parsePrice(tail.slice(0, 4000)), JSON.stringify(unit));
    }
  });

  const cents = fc.integer({ min: 0, max: 100_000_000_000 });

  test('£n.nn round-trips exactly for 0..1e9', () => {
    fc.assert(
      fc.property(cents, (c) => {
        const amount = c / 100;
        assert.deepEqual(parsePrice(`£${amount.toFixed(2)}`), { amount, currency: 'GBP' });
      }),
      { numRuns: 1000 },
    );
  });

  test('$n,nnn.nn with thousands commas round-trips exactly', () => {
    fc.assert(
      fc.property(cents, (c) => {
        const amount = c / 100;
        assert.deepEqual(parsePrice(`$${groupThousands(amount, ',', '.')}`), { amount, currency: 'USD' });
      }),
      { numRuns: 1000 },
    );
  });

  test('n.nnn, nn zł with a stray space after the decimal comma round-trips exactly', () => {
    fc.assert(
      fc.property(cents, (c) => {
        const amount = c / 100;
        const written = groupThousands(amount, '.', ',').replace(/,(\d\d)$/, ', $1');
        assert.deepEqual(parsePrice(`${written} zł`), { amount, currency: 'PLN' });
      }),
      { numRuns: 1000 },
    );
  });

  test('European n.nnn,nn € round-trips exactly', () => {
    fc.assert(
      fc.property(cents, (c) => {
        const amount = c / 100;
        assert.deepEqual(parsePrice(`${groupThousands(amount, '.', ',')} €`), { amount, currency: 'EUR' });
      }),
      { numRuns: 1000 },
    );
  });
});

describe('currencyFromSymbol', () => {
  test('maps symbols and ISO codes, case-insensitively for codes', () => {
    assert.equal(currencyFromSymbol('$'), 'USD');
    assert.equal(currencyFromSymbol('£'), 'GBP');
    assert.equal(currencyFromSymbol('R$'), 'BRL');
    assert.equal(currencyFromSymbol('zł'), 'PLN');
    assert.equal(currencyFromSymbol('chf'), 'CHF');
    assert.equal(currencyFromSymbol('XYZ'), null);
    assert.equal(currencyFromSymbol(''), null);
    assert.equal(currencyFromSymbol(null), null);
  });

  test('maps the symbols and codes shops write, but not words', () => {
    const expected: ReadonlyArray<readonly [string, string | null]> = [
      ['руб.', 'RUB'],
      ['р.', 'RUB'],
      ['Rp', 'IDR'],
      ['грн', 'UAH'],
      ['лв', 'BGN'],
      ['TL', 'TRY'],
      ['RM', 'MYR'],
      ['Br', 'BYN'],
      ['NT$', 'TWD'],
      ['SGD$', 'SGD'],
      ['NZD $', 'NZD'],
      ['₺', 'TRY'],
      ['ریال', 'IRR'],
      ['تومان', 'IRR'],
      ['ر.س', 'SAR'],
      ['د.إ', 'AED'],
      ['ر.ق', 'QAR'],
      ['﷼', 'IRR'],
      ['pln', 'PLN'],
      ['Zł', 'PLN'],
      ['LEI', 'RON'],
      ['eur', 'EUR'],
      ['ALL', 'ALL'],
      ['for', null],
      ['per', null],
      ['all', null],
      ['and', null],
    ];
    for (const [symbol, code] of expected) assert.equal(currencyFromSymbol(symbol), code, symbol);
  });
});

/** Formats a 2-decimal amount with the given thousands and decimal separators, e.g. 1234.5 -> "1.234,50". */
function groupThousands(amount: number, thousands: string, decimal: string): string {
  const [integer, fraction] = amount.toFixed(2).split('.') as [string, string];
  return `${integer.replace(/\B(?=(\d{3})+$)/g, thousands)}${decimal}${fraction}`;
}
