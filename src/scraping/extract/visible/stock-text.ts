// What a shop's own words say about stock ("Currently unavailable", "Nicht verfügbar", "Agotado", "품절"), in the languages shops are written in.
import type { Availability } from '../types.js';

/**
 * Phrases per availability, most specific first: "not available" must be read before "available",
 * "nicht verfügbar" before "verfügbar". Each is a plain alternation of literals, so matching stays
 * linear on any text.
 */
const PHRASES: ReadonlyArray<readonly [Availability, readonly string[]]> = [
  [
    'out_of_stock',
    [
      // English
      'out of stock',
      'sold out',
      'currently unavailable',
      'temporarily unavailable',
      'no longer available',
      'not available',
      'unavailable',
      'not in stock',
      'no stock',
      // "We don't know when or if this item will be back in stock": what it will be again, it is not now.
      'back in stock',
      'wieder vorrätig',
      'wieder verfügbar',
      'de nouveau disponible',
      'de nouveau approvisionné',
      'nuovamente disponibile',
      'di nuovo disponibile',
      'vuelva a estar disponible',
      'weer op voorraad',
      // Offers to tell the shopper when it comes back exist only while it is gone.
      'email me when',
      'notify me when',
      'tell me when',
      'alert me when',
      'benachrichtigen sie mich',
      'me prévenir',
      "m'avertir",
      'avvisami',
      'avísame',
      // German, Dutch, Scandinavian
      'ausverkauft',
      'nicht auf lager',
      'nicht verfügbar',
      'nicht lieferbar',
      'derzeit nicht',
      'vergriffen',
      'uitverkocht',
      'niet op voorraad',
      'niet beschikbaar',
      'slutsåld',
      'ej i lager',
      'ikke på lager',
      'udsolgt',
      'utsolgt',
      'loppu varastosta',
      // French, Spanish, Portuguese, Italian
      'épuisé',
      'indisponible',
      'rupture de stock',
      'en rupture',
      'agotado',
      'sin stock',
      'no disponible',
      'esgotado',
      'indisponível',
      'sem estoque',
      'esaurito',
      'non disponibile',
      'non più disponibile',
      // Central and Eastern Europe
      'niedostępny',
      'brak w magazynie',
      'wyprzedany',
      'není skladem',
      'vyprodáno',
      'nedostupné',
      'nie je na sklade',
      'vypredané',
      'nincs készleten',
      'elfogyott',
      'nu este în stoc',
      'stoc epuizat',
      'ni na zalogi',
      'nije dostupno',
      'nema na stanju',
      'rasprodano',
      'нет в наличии',
      'отсутствует',
      'распродано',
      'немає в наявності',
      'няма наличност',
      'εξαντλήθηκε',
      'μη διαθέσιμο',
      'stokta yok',
      'tükendi',
      // Middle East and Asia
      'אזל מהמלאי',
      'אינו במלאי',
      'غير متوفر',
      'نفدت الكمية',
      'نفذت الكمية',
      '在庫切れ',
      '品切れ',
      '売り切れ',
      '販売終了',
      '缺貨',
      '缺货',
      '售完',
      '已售完',
      '售罄',
      '無庫存',
      '无货',
      '품절',
      '일시품절',
      '재고 없음',
      'hết hàng',
      'สินค้าหมด',
      'stok habis',
      'habis',
    ],
  ],
  ['discontinued', ['discontinued', 'nicht mehr erhältlich', 'plus disponible', 'ya no está disponible', 'снят с производства']],
  ['preorder', ['pre-order', 'preorder', 'vorbestellen', 'vorbestellung', 'précommande', 'preventa', 'pre-venda', 'prenotazione', 'предзаказ', '予約受付', '予約']],
  ['backorder', ['back-order', 'backorder', 'nachbestellt', 'sur commande']],
  ['limited', ['few left', 'limited stock', 'low stock', 'limited availability', 'nur noch wenige', 'últimas unidades', 'ultimi pezzi']],
  [
    'in_stock',
    [
      'in stock',
      'available now',
      'ready to ship',
      'auf lager',
      'sofort lieferbar',
      'lieferbar',
      'verfügbar',
      'op voorraad',
      'in voorraad',
      'på lager',
      'i lager',
      'en stock',
      'disponible',
      'en existencia',
      'disponibilità immediata',
      'disponibile',
      'em estoque',
      'disponível',
      'dostępny',
      'w magazynie',
      'na skladě',
      'skladem',
      'na sklade',
      'raktáron',
      'în stoc',
      'na zalogi',
      'na stanju',
      'dobavljivo',
      'в наличии',
      'є в наявності',
      'σε απόθεμα',
      'stokta',
      'במלאי',
      'متوفر',
      '在庫あり',
      '有現貨',
      '有货',
      '現貨',
      '재고 있음',
      'còn hàng',
    ],
  ],
];

/** Scripts written without spaces between words: their phrases match anywhere in the text. */
const UNSPACED = /[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}\p{sc=Thai}]/u;

const PATTERNS: ReadonlyArray<readonly [Availability, RegExp]> = PHRASES.map(([value, phrases]) => {
  const sorted = [...phrases].sort((a, b) => b.length - a.length);
  const spaced = sorted.filter((p) => !UNSPACED.test(p)).map(escapeRegExp);
  const unspaced = sorted.filter((p) => UNSPACED.test(p)).map(escapeRegExp);
  // Whole words where the script has them: "unavailable" is not read in "unavailableReasons".
  const alternatives = [`(?<![\\p{L}])(?:${spaced.join('|')})(?![\\p{L}])`, ...(unspaced.length > 0 ? [`(?:${unspaced.join('|')})`] : [])];
  return [value, new RegExp(alternatives.join('|'), 'iu')];
});

/** "Only 3 left", "Only 3 left in stock": a count, so not a literal. */
const FEW_LEFT = /(?<![\p{L}])only \d{1,4} left(?![\p{L}])/iu;

/** Stock statements are short; longer text is a sentence that happens to mention stock. */
const MAX_STATEMENT_CHARS = 100;

/** The availability a short piece of shop text states, with the phrase that says it; null when it states none. */
export function stockFromText(text: string): { value: Availability; phrase: string } | null {
  if (text.length > MAX_STATEMENT_CHARS) return null;
  const few = FEW_LEFT.exec(text);
  if (few !== null) return { value: 'limited', phrase: few[0] };
  for (const [value, pattern] of PATTERNS) {
    const match = pattern.exec(text);
    if (match === null) continue;
    if (value !== 'in_stock' && value !== 'limited') return { value, phrase: match[0] };
    // "Não disponível", "не в наличии", "n'est pas disponible": a stock word under a negation says the opposite.
    const from = Math.max(0, match.index - 40);
    const negated = NEGATED.exec(text.slice(from, match.index));
    if (negated === null) return { value, phrase: match[0] };
    return { value: 'out_of_stock', phrase: text.slice(from + negated.index, match.index + match[0].length) };
  }
  return null;
}

/** A negation one or two words before a stock phrase, in the languages of the phrases above. */
const NEGATED =
  /(?<![\p{L}])(?:not|no|non|nicht|keine?|niet|ikke|inte|ej|nie|není|nu|nem|ne|pas|não|nao|não está|не|немає|δεν|değil|לא|אינו|אינה|غير|ليس)\s+(?:[\p{L}'’]+\s+){0,2}$/iu;

function escapeRegExp(literal: string): string {
  return literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
