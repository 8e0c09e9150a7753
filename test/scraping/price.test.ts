// Price parsing: a table of prices as real shops write them, and properties over generated ones.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { currencyFromSymbol, parsePrice } from '../../src/scraping/price.js';

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
  ['CHF 1\'234.50', 1234.5, 'CHF'],
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
  // not prices
  ['Free', null, null],
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
});

/** Formats a 2-decimal amount with the given thousands and decimal separators, e.g. 1234.5 -> "1.234,50". */
function groupThousands(amount: number, thousands: string, decimal: string): string {
  const [integer, fraction] = amount.toFixed(2).split('.') as [string, string];
  return `${integer.replace(/\B(?=(\d{3})+$)/g, thousands)}${decimal}${fraction}`;
}
