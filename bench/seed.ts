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

// A catalogue for search: titles and descriptions from word lists, so that a word occurs in a known
// share of the rows, as in a real shop (unlike "Bench product N"): each of 1000 brands in 0.1 %
// (seven rows in a row, as a scrape stores them), each of 101 product nouns in 1 %, spread evenly.
const BRAND_STEMS =
  'Nor Ald Bram Cast Delm Elv Fenn Gall Hart Ivo Jun Kest Lind Marl Ned Oak Pell Quar Row Ster Thorn Umb Val West Yarr Zeph Ash Birch Cald Dun Ever Fox Grey Holl Ingle King Lark Moor Northc Osk'.split(
    ' ',
  );
const BRAND_ENDINGS = 'vik erra well ora mont aro wick way dell ix uma ton berg lund stad holm ley ridge moor field bury gate worth ham cote'.split(' ');
const ADJECTIVES = (
  'classic compact deluxe sturdy portable vintage modern rustic premium slim foldable wireless ergonomic waterproof ' + 'lightweight handmade organic smart large mini'
).split(' ');
const MATERIALS = 'steel oak bamboo ceramic glass leather cotton walnut copper linen marble wool'.split(' ');
const NOUNS = (
  'lamp chair table teapot kettle mug bowl plate vase clock mirror rug cushion blanket towel basket shelf stool bench ' +
  'desk sofa bed pillow curtain candle lantern jar bottle skillet casserole knife fork spoon ladle whisk grater ' +
  'colander tray rack hook hanger drawer cabinet wardrobe dresser trunk crate planter hose rake shovel trowel bucket ' +
  'sprinkler wheelbarrow hammock umbrella backpack wallet belt scarf glove beanie boot sandal sneaker jacket coat ' +
  'sweater shirt dress skirt sock blender toaster mixer grinder juicer heater fan speaker headphones charger cable ' +
  'keyboard mouse monitor tripod camera drone watch bracelet necklace ring earrings notebook pencil easel puzzle kite ' +
  'doormat'
).split(' ');
const BRANDS = BRAND_STEMS.flatMap((stem) => BRAND_ENDINGS.map((ending) => stem + ending));

/** Words of the catalogue a search looks for, and the share of rows that hold each. */
export const CATALOGUE_WORDS = {
  brand: { word: 'Norvik', share: 1 / BRANDS.length },
  noun: { word: 'teapot', share: 1 / NOUNS.length },
};

const sqlArray = (words: readonly string[]) => `'{${words.join(',')}}'::text[]`;

/** Inserts catalogue products numbered $1..$2 (inclusive): "<Brand> <adjective> <material> <noun>", a sentence about it, a price. */
export const CATALOGUE_SEED_SQL = `
  INSERT INTO products (title, price, currency, description, source_url)
  SELECT w.brand || ' ' || w.adjective || ' ' || w.material || ' ' || w.noun, (n % 100) + 0.99, 'GBP',
         'The ' || w.adjective || ' ' || w.noun || ' by ' || w.brand || ', in ' || w.material || '. Model ' || n || '.',
         'https://shop.example/products/' || n
  FROM generate_series($1::int, $2::int) AS n,
       LATERAL (SELECT (${sqlArray(BRANDS)})[1 + (n / 7) % ${BRANDS.length}] AS brand,
                       (${sqlArray(ADJECTIVES)})[1 + (n / ${NOUNS.length * MATERIALS.length}) % ${ADJECTIVES.length}] AS adjective,
                       (${sqlArray(MATERIALS)})[1 + (n / ${NOUNS.length}) % ${MATERIALS.length}] AS material,
                       (${sqlArray(NOUNS)})[1 + n % ${NOUNS.length}] AS noun) AS w`;
