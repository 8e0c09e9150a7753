// The rows the benchmarks list and fetch: the same content whether inserted by SQL or through the API.

const DESCRIPTION = 'for the benchmarks: a description of about a hundred characters, much like a real one.';

/** Inserts products numbered $1..$2 (inclusive); ids come from the identity column. */
export const SEED_SQL = `
  INSERT INTO products (title, price, currency, description, source_url)
  SELECT 'Bench product ' || n, (n % 100) + 0.99, 'GBP', 'Seeded row ' || n || ' ${DESCRIPTION}',
         'https://shop.example/products/' || n
  FROM generate_series($1::int, $2::int) AS n`;

/** The body of POST /products for product number `n`, matching SEED_SQL's row `n`. */
export function productBody(n: number): { title: string; price: number; currency: string; description: string; source_url: string } {
  return {
    title: `Bench product ${n}`,
    price: (n % 100) + 0.99,
    currency: 'GBP',
    description: `Seeded row ${n} ${DESCRIPTION}`,
    source_url: `https://shop.example/products/${n}`,
  };
}

const WORDS = (
  'the market opens at dusk and the stalls fill with lanterns candles books records spices bread ' +
  'every trader sets a price in pounds some haggle others wait a quiet crowd moves between the rows ' +
  'children follow the smell of dumplings while musicians tune old guitars near the fountain and ' +
  'nobody hurries because the night is long'
).split(' ');

/** About `bytes` of English-like prose in paragraphs (deterministic), for POST /process/text. */
export function sampleText(bytes: number): string {
  let seed = 42;
  const next = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed / 2_147_483_648;
  };
  const paragraphs: string[] = [];
  let size = 0;
  while (size < bytes) {
    const sentences: string[] = [];
    for (let s = 0; s < 4; s++) {
      const words = Array.from({ length: 8 + Math.floor(next() * 8) }, () => WORDS[Math.floor(next() * WORDS.length)]!);
      const sentence = words.join(' ');
      sentences.push(`${sentence[0]!.toUpperCase()}${sentence.slice(1)}${next() < 0.2 ? '?' : '.'}`);
    }
    const paragraph = sentences.join(' ');
    paragraphs.push(paragraph);
    size += paragraph.length + 2;
  }
  return paragraphs.join('\n\n').slice(0, bytes);
}
