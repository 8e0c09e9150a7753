// The fuzz suites' building blocks: hostile strings, numbers and JSON texts that have broken real services.
import fc from 'fast-check';

// FUZZ_SCALE=10 runs ten times as many cases (a deeper local hunt); the default keeps each file well under a minute.
const SCALE = Math.max(0.1, Number(process.env.FUZZ_SCALE ?? '1') || 1);
export const runs = (n: number) => Math.max(1, Math.round(n * SCALE));

/** Port 9 (discard) is closed: every upstream call to it fails at once, no network is ever reached. */
export const DEAD = 'http://127.0.0.1:9';

/** Strings that have broken real services: NUL, lone surrogates, combining marks, escapes, RTL override, BOM. */
export const nastyString = fc.constantFrom(
  '',
  ' ',
  '\t\n',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfff',
  '😀',
  'e\u0301',
  '\u202eabc',
  '\ufeff',
  'ＡＢＣ',
  'GBP',
  'gbp',
  'EURO',
  '%',
  '%00',
  '%zz',
  '..%2f',
  '../../etc/passwd',
  '<script>alert(1)</script>',
  "'; DROP TABLE products; --",
  '\\',
  '"',
  '{}',
  '[]',
  'null',
  'NaN',
  'Infinity',
  '1e308',
  '-0',
  '__proto__',
  'constructor',
  'toString',
  '$1,299.99',
  '£51.77',
  '1.299,00 €',
);

export const randomString = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 2, arbitrary: nastyString },
);

/** Strings around every length limit of the API (title 500, url 2048, description 20 000), and beyond. */
export const hugeString = fc
  .tuple(fc.constantFrom('a', 'é', '😀', ' ', '\u0000', 'x '), fc.constantFrom(499, 500, 501, 2048, 2049, 20_000, 20_001, 120_000, 1_100_000))
  .map(([unit, n]) => unit.repeat(n));

export const weirdNumber = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.constantFrom(
    1e308,
    -1e308,
    -0,
    5e-324,
    1e-7,
    1e-300,
    0,
    -1,
    0.1 + 0.2,
    19.99,
    1e12,
    1e12 + 1,
    999_999_999_999.99,
    2 ** 31,
    2 ** 53 + 2,
    Number.MAX_SAFE_INTEGER,
    Number.EPSILON,
  ),
);

/** Number literals JSON.stringify cannot produce: overflow, underflow, -0, 30 digits; some are not JSON at all. */
export const rawNumberLiteral = fc.constantFrom(
  '1e400',
  '-1e400',
  '-0',
  '-0.0',
  '0e0',
  '1E+2',
  '4.9e-324',
  '1e-400',
  '123456789012345678901234567890',
  '0.1000000000000000055511151231257827',
  '19.990',
  '1.0',
  '00',
  '01',
  '+1',
  '.5',
  'NaN',
  'Infinity',
  '0x10',
);

/** Nesting deep enough to overflow a recursive walker (the object form of 200 000 is over the 1 MiB limit). */
export const deepText = fc
  .tuple(fc.constantFrom(64, 1_000, 10_000, 200_000), fc.boolean())
  .map(([n, array]) => (array ? '['.repeat(n) + ']'.repeat(n) : `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`));

export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 3, arbitrary: randomString },
  { weight: 2, arbitrary: weirdNumber },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.array(randomString, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.dictionary(randomString, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }) },
);

export const json = (value: unknown) => JSON.stringify(value) ?? 'null';

/** Lone surrogates replaced, so encodeURIComponent cannot throw (String#toWellFormed is ES2024). */
export const wellFormed = (text: string) => text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');

/** One JSON value as text, sometimes one no JS value stringifies to. */
export const anyValueText = fc.oneof(
  { weight: 12, arbitrary: anyJson.map(json) },
  { weight: 1, arbitrary: rawNumberLiteral },
  { weight: 1, arbitrary: hugeString.map(json) },
  { weight: 1, arbitrary: deepText },
);

/** Keys that poison prototypes or collide with stored fields. */
export const dangerousKey = fc.constantFrom('__proto__', 'constructor', 'prototype', 'id', 'created_at', '');
export const randomKey = fc.oneof(randomString, dangerousKey);

/** A JSON object as text from `entry`; keys may repeat, as raw JSON allows. */
export function objectText(entry: fc.Arbitrary<[string, string]>, maxKeys = 6): fc.Arbitrary<string> {
  return fc.array(entry, { maxLength: maxKeys }).map((entries) => `{${entries.map(([key, value]) => `${json(key)}:${value}`).join(',')}}`);
}

/** Entries for the real field names (valid values mostly, anything sometimes) and a few random keys. */
export function fieldEntries(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<[string, string]> {
  const known = Object.entries(fields).map(([name, valid]) =>
    fc.tuple(fc.constant(name), fc.oneof({ weight: 3, arbitrary: valid.map(json) }, { weight: 1, arbitrary: anyValueText })),
  );
  return fc.oneof({ weight: 6, arbitrary: fc.oneof(...known) }, { weight: 1, arbitrary: fc.tuple(randomKey, anyValueText) });
}

/** Path segments that have broken routers and stores: escapes, traversal, uuid spellings, numbers past int4, long ones. */
export const malformedSegment = fc.constantFrom(
  '%00',
  '..%2f',
  '..%2F..%2Fetc%2Fpasswd',
  '%',
  '%zz',
  '%E2%82',
  '%2e%2e',
  '0',
  '-1',
  '1.5',
  '1e3',
  '0x10',
  '+1',
  '01',
  '2147483647',
  '2147483648',
  '99999999999999999999',
  'NaN',
  'Infinity',
  '%20',
  '%EF%BC%91',
  '1%00',
  '00000000-0000-0000-0000-000000000000',
  'urn:uuid:00000000-0000-0000-0000-000000000000',
  '{00000000-0000-0000-0000-000000000000}',
  '00000000000000000000000000000000',
  'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
  `urn:uuid:${'a'.repeat(8)}-aaaa-aaaa-aaaa-${'a'.repeat(12)}`,
  'a'.repeat(101),
  '1'.repeat(200),
  'x'.repeat(2049),
);

/** Any text as one encoded path segment or query value, sometimes raw when it is printable ASCII already. */
export const segmentText = fc.oneof(
  { weight: 3, arbitrary: malformedSegment },
  { weight: 3, arbitrary: fc.string({ maxLength: 30 }).map((s) => encodeURIComponent(wellFormed(s))) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }).map((s) => encodeURIComponent(wellFormed(s))) },
  { weight: 2, arbitrary: nastyString.map((s) => encodeURIComponent(wellFormed(s))) },
  { weight: 2, arbitrary: fc.bigInt().map(String) },
  { weight: 1, arbitrary: fc.double().map(String) },
  { weight: 1, arbitrary: fc.uuid().map(String) },
);

/** Content types a JSON route must refuse (415) when a body comes with them. */
export const NOT_JSON = new Set(['application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'text/plain', 'text/html', 'application/xml', 'text/csv']);

export const contentType = fc.oneof(
  { weight: 4, arbitrary: fc.constant('application/json') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'application/json; charset=latin1',
      'APPLICATION/JSON',
      'application/json;',
      'application/jsonx',
      ...NOT_JSON,
      'application/problem+json',
      '*/*',
      ';',
      'application/',
      'json',
      'text/plain; charset=utf-16',
      'text/csv; charset=utf-8',
    ),
  },
  { weight: 1, arbitrary: fc.stringMatching(/^[!-~][ -~]{0,40}$/) },
);

/** Bodies that are not what any route takes: binary, cut JSON, trailing commas, prototype keys. */
export const rawBody = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 100 }),
  fc.string({ maxLength: 100 }),
  fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
  // Valid JSON cut short.
  fc.tuple(fc.jsonValue({ maxDepth: 2 }).map(json), fc.nat()).map(([text, cut]) => text.slice(0, cut % (text.length + 1))),
  fc.constantFrom('', ' ', '\ufeff{}', '{"title":"a","price":1,}', "{'a':1}", '{"a":1}}', '[1,]', 'undefined', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}'),
);

/** What a JSON body text means to the server, or undefined when it is not JSON. */
export function parsed(text: string): unknown {
  try {
    return JSON.parse(text.replace(/^\ufeff/, ''));
  } catch {
    return undefined;
  }
}

/** CSS selectors, valid and not. */
export const css = fc.oneof(fc.constantFrom('div', 'a.b', 'h3 a', '>>>', '[', ':has(', '::x', '*', 'div:nth-child(2n+1)', '#id .c', 'a[href^="x"]', ''), randomString);
