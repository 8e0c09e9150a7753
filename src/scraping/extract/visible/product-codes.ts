// The product code a shop prints for people: a label ("SKU", "Bestellnummer", "Артикул", "Réf.", "商品編號") and the identifier beside it, or an element marked as the code.
import type { Element } from 'domhandler';

/**
 * Labels of a shop's own product code, lower case. Model and part numbers are left out: they name
 * the maker's model (often part of the title), not the shop's item.
 */
const CODE_LABELS: readonly string[] = [
  // English
  'sku',
  'sku code',
  'sku number',
  'item number',
  'item no.',
  'item no',
  'item #',
  'item code',
  'item id',
  'ebay item number',
  'product code',
  'product no.',
  'product no',
  'product number',
  'product id',
  'product ref',
  'product reference',
  'article number',
  'article no.',
  'catalogue number',
  'cat. no.',
  'stock code',
  'stock number',
  'order number',
  'order code',
  'reference',
  'ref.',
  'ref',
  'post id',
  'listing id',
  'ad id',
  'ad number',
  // German, Dutch, Scandinavian, Finnish
  'art.-nr.',
  'art.-nr',
  'art.nr.',
  'art.nr',
  'art-nr.',
  'art-nr',
  'art. nr.',
  'artikelnummer',
  'artikel-nr.',
  'artikel-nr',
  'artikelnr.',
  'artikelnr',
  'bestellnummer',
  'bestell-nr.',
  'bestell-nr',
  'best.-nr.',
  'produktnummer',
  'anzeigennummer',
  'anzeigen-nr.',
  'artikelcode',
  'productcode',
  'varenummer',
  'varenr.',
  'varenr',
  'artikkelnummer',
  'tuotenumero',
  'tuotekoodi',
  // French, Spanish, Portuguese, Italian
  'réf.',
  'réf',
  'référence',
  'ref. article',
  'code article',
  'n° article',
  "numéro d'article",
  "numéro de l'objet ebay",
  'código',
  'cód.',
  'código de producto',
  'código del producto',
  'código do produto',
  'referencia',
  'referência',
  'id produto',
  'id do produto',
  'codice',
  'codice articolo',
  'codice prodotto',
  'cod. articolo',
  'cod. prodotto',
  'numero oggetto ebay',
  'riferimento',
  // Central and Eastern Europe, Greek, Turkish
  'kod produktu',
  'kod',
  'numer katalogowy',
  'nr katalogowy',
  'katalogové číslo',
  'kód produktu',
  'kód',
  'číslo produktu',
  'cikkszám',
  'termékkód',
  'cod produs',
  'šifra',
  'šifra proizvoda',
  'koda',
  'kataloški broj',
  'артикул',
  'код',
  'код товара',
  'код продукта',
  'номер товара',
  'артикул товара',
  'κωδικός',
  'κωδικός προϊόντος',
  'ürün kodu',
  'stok kodu',
  // Asia
  '商品編號',
  '商品编号',
  '商品番号',
  '商品コード',
  '货号',
  '貨號',
  '상품번호',
  '상품코드',
  '품번',
  'mã sản phẩm',
  'รหัสสินค้า',
];

const LABEL_ALTERNATIVES = [...CODE_LABELS]
  .sort((a, b) => b.length - a.length)
  .map((l) => l.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
  .join('|');

/**
 * A label at the start of a text, then its separator and whatever follows ("Product code: 51230087",
 * "Bestellnummer 79961", "Šifra:"). Anchored, literal alternatives: linear on any text.
 */
const LABEL_AT_START = new RegExp(`^(?:${LABEL_ALTERNATIVES})(?![\\p{L}\\p{N}])[ \\t]*[:：#№.\\-–]?[ \\t]*`, 'iu');

/** An identifier as shops write one: letters, digits and a few joiners, with at least one digit. */
const IDENTIFIER = /^[\p{L}\p{N}][\p{L}\p{N}._/-]{1,39}$/u;

/** A cheap first look: names without these letters cannot name a code. */
const CODE_HINT = /sku|code|ref|number/i;

/** Words (from class, id or test names, split at dashes and camelCase) that name the product's code. */
const CODE_NAMES: ReadonlyArray<readonly string[]> = [
  ['sku'],
  ['product', 'code'],
  ['product', 'ref'],
  ['product', 'reference'],
  ['article', 'number'],
  ['item', 'number'],
  ['ref', 'number'],
  ['cat', 'number'],
  ['catalog', 'number'],
  ['part', 'code'],
];

/** An identifier: trailing punctuation trimmed, at least one digit, no spaces. */
export function asIdentifier(text: string): string | null {
  const value = text.trim().replace(/[.,;:)]+$/, '');
  if (!IDENTIFIER.test(value) || !/\p{N}/u.test(value)) return null;
  return value;
}

export interface LabelledCode {
  label: string;
  /** The identifier in the same text, when the label is followed by one. */
  value: string | null;
}

/** The code label a text starts with ("SKU:"), and the identifier after it if the same text holds it. */
export function codeLabel(raw: string): LabelledCode | null {
  if (raw.length > 80) return null;
  // Typographic apostrophes ("Numéro de l’objet") read as plain ones.
  const text = raw.replace(/\u2019/g, "'");
  const match = LABEL_AT_START.exec(text);
  if (match === null) return null;
  const rest = text.slice(match[0].length);
  const label = text.slice(0, match[0].length).replace(/[\s:：#№.\-–]+$/u, '') || match[0];
  if (rest.trim() === '') return { label, value: null };
  // "Product code: 51230087" or "Bestellnummer 79961"; "Ref. number of pieces 4" is not a code.
  const value = asIdentifier(rest.split(/\s+/u)[0] ?? '');
  return value === null || rest.trim().includes(' ') ? null : { label, value };
}

/**
 * True when the element's class, id, itemprop or test attribute marks it as the product's code
 * ("product-code", "sku", data-qa "product-reference", itemprop "productID").
 */
export function isCodeMarked(el: Element): boolean {
  const itemprop = el.attribs['itemprop'];
  if (itemprop === 'sku' || itemprop === 'productID') return true;
  const names = `${el.attribs['class'] ?? ''} ${el.attribs['id'] ?? ''} ${el.attribs['data-qa-qualifier'] ?? ''} ${el.attribs['data-test'] ?? ''} ${el.attribs['data-testid'] ?? ''}`;
  if (names.length > 300 || !CODE_HINT.test(names)) return false;
  const words = nameWords(names);
  return CODE_NAMES.some((name) => words.some((_, i) => name.every((word, j) => words[i + j] === word)));
}

/** "product-name-catNumber js-sku" -> product, name, cat, number, js, sku. */
export function nameWords(names: string): string[] {
  return names
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== '');
}

/** The identifier a code-marked element shows: its text without a label ("SKU: 123" -> "123"), or its content attribute. */
export function markedCode(text: string, content: string | undefined): string | null {
  const labelled = codeLabel(text);
  if (labelled?.value != null) return labelled.value;
  const shown = asIdentifier(text.replace(/^(?:sku|isbn|ean|gtin)\s*:\s*/i, ''));
  if (shown !== null) return shown;
  return content === undefined ? null : asIdentifier(content.replace(/^(?:sku|isbn|ean|gtin)\s*:\s*/i, ''));
}
