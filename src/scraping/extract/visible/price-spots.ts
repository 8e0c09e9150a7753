// Prices as a shopper sees them on a product page: which amounts are prices at all, which is paid now, which is the old one, and how the page labels them.
import type { AnyNode, Element } from 'domhandler';
import { parsePrice } from '../../price.js';
import { distance, isElement } from '../dom-helpers.js';

export interface PriceSpot {
  el: Element;
  /** The price as written ("£32.50", "30,000원~"). */
  text: string;
  amount: number;
  /** Marked as a price by the shop (a price class, itemprop, data-price), not loose text. */
  marked: boolean;
  /** A price that no longer applies: struck through, or marked or labelled as the old, regular or list price. */
  stale: boolean;
  /** How the page says this is the price to pay now: a buy-box marker, a sale-price label, a current bid. */
  cue?: string;
}

/** A price shown on its own is short: "£340.00 (inc VAT)"; longer text is a sentence that mentions an amount. */
export const MAX_PRICE_CHARS = 40;

/** Price-like text about something else: shipping, savings, instalments, prices before tax, other sellers' offers. */
const NOT_THE_PRICE = new RegExp(
  [
    'shipping',
    'delivery',
    'postage',
    'orders? (?:over|above|from)',
    'spend',
    '\\bsave\\b',
    '\\boff\\b',
    'coupon',
    'voucher',
    'reward',
    'points',
    'per month',
    '/ ?mo\\b',
    '/ ?month',
    'financ',
    'klarna',
    'afterpay',
    'instal?lments?',
    'interest',
    'excl\\.?\\b',
    'excluding',
    'ex\\.? vat',
    'without (?:vat|tax)',
    'before tax',
    // Other sellers' offers beside the buy box ("New & used (4) from 63,06 €", "Promozioni").
    'offers? from',
    '\\(\\d+\\) (?:from|ab|à partir de|desde|da|od|от)',
    'other sellers',
    // An auction's opening bid and estimate are not what a buyer pays now.
    'starting (?:price|bid)',
    'opening bid',
    'estimate',
    'startpreis',
    'mindestgebot',
    'prix de départ',
    'mise à prix',
    'precio de salida',
    "base d'asta",
    'buying choices',
    'new (?:&|and) used',
    'used (?:&|and) new',
    'neufs? (?:&|et) occasions?',
    'neu (?:&|und) gebraucht',
    'nuovi? e usati?',
    'nuevos? y usados?',
    // German, French, Spanish, Italian, Portuguese, Dutch
    'versand',
    'lieferung',
    'ohne mwst',
    'zzgl',
    '(?<![\\p{L}])netto',
    'monatlich',
    '(?<![\\p{L}])raten',
    'gutschein',
    'livraison',
    'frais de port',
    'hors taxe',
    '\\bht\\b',
    'par mois',
    'mensualit',
    'économisez',
    'envío',
    'ahorra',
    'cuotas',
    'al mes',
    'sin iva',
    'spedizione',
    'risparmi',
    'al mese',
    'senza iva',
    'frete',
    'parcela',
    'economize',
    'sem iva',
    'verzend',
    'bezorg',
    // Central and Eastern Europe
    'dostawa',
    'wysyłka',
    'bez dph',
    'doprava',
    'brez ddv',
    'dostava',
    'bezmaksas',
    'доставка',
    'в месяц',
    'без ндс',
    'экономия',
    // Asia and the Middle East
    '運費',
    '运费',
    '免運',
    '免运',
    '配送',
    '送料',
    'ポイント',
    '\\d\\s*點',
    '點數',
    '积分',
    '積分',
    '配送料',
    '배송',
    '적립',
    'משלוח',
  ].join('|'),
  'iu',
);

/** Class or id names of amounts that are not the product's price: shipping, delivery, instalments, savings. */
const OTHER_AMOUNT_CLASS = /shipping|delivery|postage|versand|livraison|envio|spedizione|instal|monthly|saving|you-?save|discount-amount/i;

/** A cart's sums: not the price when the amount's own text says so (its surroundings may be the buy form, "Add to cart"). */
const CART_SUM = /subtotal|basket|\bcart\b|\btotal\b|warenkorb|panier|carrito|carrello|корзин/i;

/** An amount per unit of measure ("(68,90 € / unité)", "€2.50/kg", "per 100 g"): not what the product costs. */
const UNIT_PRICE = new RegExp(
  [
    '/ ?(?:\\d+ ?)?(?:kg|g|gr|l|ltr|ml|cl|m|m2|m²|m³|cm|lb|oz|unit|unité|unidad|unità|stück|stk|piece|pc|pcs|each|ea|шт|кг|л)(?![\\p{L}])',
    '\\bper (?:\\d+ ?)?(?:kg|g|l|ml|unit|piece|item|lb|oz|m)\\b',
    '\\bpro (?:kg|stück|liter|meter)\\b',
    '\\bprix au (?:kg|litre)\\b',
    '\\bje (?:kg|stück)\\b',
  ].join('|'),
  'iu',
);

/** Labels of a price that no longer applies. */
const STALE_LABEL =
  /^(?:was|regular price|regular|list price|rrp|msrp|uvp|statt|avant|au lieu de|prix barré|prix initial|antes|precio anterior|prima|prezzo consigliato|старая цена|было|原價|原价|정가|定価|通常価格|参考価格|市價|市价)(?![\p{L}])\s*:?/iu;
const STALE_WORDS = /(?:^|[^a-z]|price)(?:old|was|regular|strike|strikethrough|line-?through|crossed|compare|before|original|rrp|list|msrp|barred)(?:[^a-z]|$)/i;
const STRUCK_TAGS: ReadonlySet<string> = new Set(['del', 's', 'strike']);

/** "Now $89.99 Was $129.99": the amount after "now" is the one paid. */
const NOW_LABEL = /(?:^|[^\p{L}])(?:now|jetzt|maintenant|ahora|ora|agora|nu|teraz|сейчас)\s*:?\s*(?=\D{0,4}\d)/iu;

/** Labels, aria-labels and class names that say "this is the price to pay now". */
const SALE_LABEL =
  /sale[-_ ]?price|prix de l'offre|special[-_ ]?price|current[-_ ]?price|price[-_ ]?now|now[-_ ]?price|our[-_ ]?price|deal[-_ ]?price|offer[-_ ]?price|your[-_ ]?price|final[-_ ]?price|selling[-_ ]?price|price[-_ ]?(?:sale|special|current|final|new)|pricenew|prix de vente|prix actuel|verkaufspreis|aktueller preis|angebotspreis|precio de venta|precio actual|prezzo di vendita|prezzo attuale|preço atual|cena sprzedaży|цена продажи|текущая цена|판매가|할인가|售價|售价|特價|特价|販売価格|セール価格/iu;

/** Ids of the buy box's price on shops that name it (Amazon's #priceblock_*, #corePrice*, #price_inside_buybox), and buy boxes in general. */
const BUY_BOX_PRICE = /priceblock_(?:our|deal|sale)price|price_inside_buybox|newbuyboxprice|coreprice|apexprice|buy-?box|buy_box/i;

/** An auction's price is its current bid: "$340 · 4 bids", "Current bid: US $12.50". */
const CURRENT_BID = /current bid|winning bid|\d+ bids?\b|aktuelles gebot|\d+ gebote?\b|enchère actuelle|\d+ enchères?\b|puja actual|\d+ pujas?\b|offerta attuale|\d+ offerte\b/i;

const PRICE_CLASS = /price|cost|amount|preis|prix|precio|prezzo|cena|цена/i;

/**
 * The price an element's short text states, or null when the text is no price, names no currency,
 * or is about shipping, savings, instalments or a unit of measure. `contextOf` gives the text around
 * it (its parent's), where labels such as "Shipping:" or "4 bids" sit.
 */
export function readPriceSpot(el: Element, text: string, contextOf: () => string, struck: boolean): PriceSpot | null {
  if (text.length > MAX_PRICE_CHARS || !/\d/.test(text)) return null;
  const now = NOW_LABEL.exec(text);
  const written = now === null ? text : text.slice(now.index + now[0].length);
  const parsed = parsePrice(written);
  // A shown zero is a counter or a free extra ("0 р. delivery"), not what the product costs.
  if (parsed === null || parsed.currency === null || parsed.amount === 0) return null;
  // Most digits on a page name no currency and stop above; only prices pay for the word checks.
  if (NOT_THE_PRICE.test(text) || CART_SUM.test(text) || UNIT_PRICE.test(text)) return null;
  // The surroundings are read only for amounts that are prices by their own text: most digits on a page are not.
  const context = contextOf();
  if (NOT_THE_PRICE.test(context) || (context.length <= MAX_PRICE_CHARS && UNIT_PRICE.test(context))) return null;
  if (upTo(el, 2).some((e) => OTHER_AMOUNT_CLASS.test(`${e.attribs['class'] ?? ''} ${e.attribs['id'] ?? ''}`.slice(0, 300)))) return null;
  const stale = struck || (now === null && STALE_LABEL.test(text)) || staleByName(el);
  const spot: PriceSpot = { el, text, amount: parsed.amount, marked: isPriceMarked(el), stale };
  const cue = stale ? undefined : cueOf(el, context);
  if (cue !== undefined) spot.cue = cue;
  return spot;
}

/** Why the page says this is the price paid now, if it says so. */
function cueOf(el: Element, context: string): string | undefined {
  for (const current of upTo(el, 5)) {
    const id = current.attribs['id'] ?? '';
    if (BUY_BOX_PRICE.test(id)) return `the buy box's price (#${id})`;
    const label = current.attribs['aria-label'] ?? '';
    if (label.length <= 40 && SALE_LABEL.test(label)) return `labelled for screen readers as "${label}"`;
  }
  for (const current of upTo(el, 3)) {
    const names = current.attribs['class'] ?? '';
    if (names.length <= 200 && BUY_BOX_PRICE.test(names)) return 'in the buy box';
    if (names.length <= 200 && SALE_LABEL.test(names) && !STALE_WORDS.test(names)) return `marked as the sale price (class "${names.trim()}")`;
  }
  if (context.length <= 80) {
    if (CURRENT_BID.test(context)) return 'the current bid';
    const label = SALE_LABEL.exec(context);
    if (label !== null) return `labelled "${label[0]}"`;
  }
  return undefined;
}

/** Marked as a price: itemprop, data-price, or a price class within three levels. */
/** The element or one of its three nearest ancestors is marked as a price (itemprop, data-price, class or id). */
export function isPriceMarked(el: Element): boolean {
  for (const current of upTo(el, 3)) {
    if (current.attribs['itemprop'] === 'price' || current.attribs['data-price'] !== undefined) return true;
    if (PRICE_CLASS.test(current.attribs['class'] ?? '') || PRICE_CLASS.test(current.attribs['id'] ?? '')) return true;
  }
  return false;
}

function staleByName(el: Element): boolean {
  for (const current of upTo(el, 3)) {
    if (STRUCK_TAGS.has(current.name) || current.attribs['data-a-strike'] === 'true') return true;
    if (STALE_WORDS.test(`${current.attribs['class'] ?? ''} ${current.attribs['id'] ?? ''}`.slice(0, 300))) return true;
  }
  return false;
}

/** `el` and its element ancestors, `levels` in all. */
function upTo(el: Element, levels: number): Element[] {
  const chain: Element[] = [];
  for (let current: AnyNode | null = el; current !== null && chain.length < levels; current = current.parent) {
    if (isElement(current)) chain.push(current);
  }
  return chain;
}

export interface ChosenPrice {
  current: PriceSpot;
  /** A struck or "was" price above the current one, in the same buy box. */
  regular?: PriceSpot;
  /** Another current price in the box, marked as one, says something else ("Buy together: special price"). */
  contested: boolean;
  why: string;
}

/**
 * The price of the buy box: the spots nearest the buy control (or the heading) form the box; in it
 * a current price beats an old one, and a price the page labels as the one to pay beats a loose one.
 * A struck price alone in the box is the price (nothing is on sale).
 */
export function choosePrice(spots: readonly PriceSpot[], anchor: Element, heading: Element): ChosenPrice | undefined {
  // Distance in tree steps; a price the page labels as the one to pay (the buy box's own id, "Sale
  // price") outweighs a few steps of it.
  const scored = spots.map((spot) => {
    const near = Math.min(distance(spot.el, anchor), distance(spot.el, heading) + 1) * 2;
    return { spot, near, score: near - (spot.cue !== undefined ? 8 : spot.marked ? 1 : 0) };
  });
  let best: (typeof scored)[number] | undefined;
  for (const s of scored) if (best === undefined || s.score < best.score) best = s;
  if (best === undefined) return undefined;
  // The buy box: the prices about as near as the best one.
  const box = scored.filter((s) => s.near <= best.near + 4);
  let current: (typeof scored)[number] | undefined;
  for (const s of box) if (!s.spot.stale && (current === undefined || s.score < current.score)) current = s;
  if (current === undefined) return { current: best.spot, contested: false, why: 'the only price beside the buy control; nothing beside it is a sale price' };
  const chosen = current.spot;
  let regular: PriceSpot | undefined;
  for (const s of box) if (s.spot.stale && s.spot.amount > chosen.amount && (regular === undefined || s.spot.amount < regular.amount)) regular = s.spot;
  const contested = box.some((s) => !s.spot.stale && s.spot.amount !== chosen.amount && (s.spot.marked || s.spot.cue !== undefined));
  const why = chosen.cue ?? (chosen.marked ? 'the price marked as such nearest the buy control' : 'the price nearest the buy control');
  return regular === undefined ? { current: chosen, contested, why } : { current: chosen, regular, contested, why };
}
