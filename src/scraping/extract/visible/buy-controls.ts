// A page's own purchase controls ("Add to cart", "In den Warenkorb", "Купить", "장바구니", a cart form's submit), in the languages shops are written in.
import type { AnyNode, Element } from 'domhandler';
import { cleanText, isElement, visibleText } from '../dom-helpers.js';

/** Labels of controls that put this product in a cart or buy it now. */
const BUY_LABEL = new RegExp(
  [
    // English: "Add to cart", "Add to your basket", "Buy now", "Buy MP3 album", "Place bid".
    'add(?:ing)? to (?:your |my )?(?:shopping )?(?:cart|basket|bag|trolley|order)',
    'buy(?: it)? now',
    'purchase',
    'order now',
    'place bid',
    'bid now',
    // German, Dutch, Scandinavian, Finnish
    'in den (?:warenkorb|einkaufswagen)',
    'in den korb',
    'jetzt kaufen',
    '^kaufen$',
    'in winkelwagen',
    'in mandje',
    'lägg i (?:varukorgen|kundvagnen)',
    '^köp(?:$|\\s)',
    'læg i kurv',
    'legg i handlekurv',
    '^kjøp(?:$|\\s)',
    'lisää ostoskoriin',
    '^osta(?:$|\\s)',
    // French, Spanish, Portuguese, Italian
    'ajouter au panier',
    'acheter',
    'añadir al carrito',
    'añadir a la cesta',
    'agregar al carrito',
    'comprar',
    'adicionar ao carrinho',
    'aggiungi al carrello',
    'acquista',
    // Central and Eastern Europe, Greek, Turkish
    'dodaj do koszyka',
    'kup teraz',
    '^kup$',
    'do košíku',
    'do košíka',
    'koupit',
    'kúpiť',
    'kosárba',
    'adaugă în coș',
    'v košarico',
    'u košaricu',
    'dodaj u košaricu',
    '^kupi(?:$|\\s)',
    '^naroči(?:$|\\s)',
    '^naruči(?:$|\\s)',
    'в корзину',
    'купить',
    'до кошика',
    'купити',
    'в количката',
    'στο καλάθι',
    'sepete ekle',
    'satın al',
    // Middle East and Asia
    'הוסף לסל',
    'أضف إلى السلة',
    'اضافة الى السلة',
    'カートに入れる',
    'カートに追加',
    '購入手続き',
    '今すぐ購入',
    '加入购物车',
    '加入購物車',
    '立即购买',
    '立即購買',
    '直接購買',
    '馬上購買',
    '马上购买',
    '^購買$',
    '^购买$',
    '장바구니',
    '바로구매',
    '구매하기',
    'thêm vào giỏ',
    'mua ngay',
    'ใส่ตะกร้า',
    'เพิ่มลงในรถเข็น',
    'tambah ke troli',
    'masukkan keranjang',
    'beli sekarang',
    // Out of stock and pre-order pages keep their buy box, with its button relabelled.
    'pre-?order',
    'sold out',
    'out of stock',
    'notify me when available',
  ].join('|'),
  'iu',
);

/** A button (not a link: "Buy this and get 90 days free" is a promotion) that starts with "Buy": "Buy MP3 album". */
const BUY_BUTTON_LABEL = /^buy\b/i;

/** A form that posts to a cart is a buy control even when its button says only "Add". */
const CART_ACTION = /cart|basket|checkout|add_to|addtocart|bag|kosik|koszyk|warenkorb|panier|carrito|carrello|korzina/i;

/** Ids, classes and names of add-to-cart controls, whatever their label says ("Naroči" on #button-cart). */
const CART_CONTROL_NAME =
  /add[-_. ]?to[-_. ]?(?:cart|basket|bag|trolley)|addtocart|addtobasket|button[-_]cart|btn[-_]?cart|cart[-_]button|buy[-_]?(?:now|button|btn)|btn[-_]buy|(?:^|[\s_-])(?:buy|purchase)(?:$|[\s_-])/i;

const CART_HINT = /buy|cart|basket|purchase/i;

/** A class token that disables a control on its own ("btn disabled"). */
const DISABLED_CLASS = /(?:^|\s)(?:is-|btn-|button--)?disabled(?:\s|$)/i;

/** A link that runs the shop's buy or add-to-cart script: "javascript:buy_process(…)", "javascript:addToCart(…)". */
const SCRIPT_BUY_LINK = /^javascript:\s*[\w.]{0,40}?(?:buy|add_?to_?cart|addtocart|add_?cart|add_?to_?basket)\w{0,40}\(/i;

/**
 * True when `el` is a control of this site that buys the page's product, or says it cannot be
 * bought (a relabelled buy button). `hosts` are the site's own (the page's, its canonical's): a link
 * elsewhere ("Buy at Amazon" in a review) sells nothing here.
 */
export function isBuyControl(el: Element, hosts: ReadonlySet<string>): boolean {
  if (el.name === 'form') return false;
  const isButton = el.name === 'button' || (el.name === 'input' && /^(?:submit|button|image)$/i.test(el.attribs['type'] ?? '')) || el.attribs['role'] === 'button';
  const isLink = el.name === 'a';
  const names = `${el.attribs['id'] ?? ''} ${el.attribs['class'] ?? ''} ${el.attribs['name'] ?? ''}`.slice(0, 300);
  // Most elements are neither controls nor named for a cart: one cheap look rules them out.
  if (!isButton && !isLink && !CART_HINT.test(names)) return false;
  // A div or span is a control only when its names say so: "div.buy-btn" reading "Купить".
  const namedControl = CART_CONTROL_NAME.test(names);
  if (!isButton && !isLink && !(namedControl && (el.name === 'div' || el.name === 'span') && !holdsControls(el))) return false;
  const label = controlLabel(el);
  if (label.length > 60) return false;
  if (BUY_LABEL.test(label) || (isButton && BUY_BUTTON_LABEL.test(label))) return !isLink || sameSite(el.attribs['href'], hosts);
  const other = /wish|list|compare|favou?rite|share/i.test(`${label} ${names}`);
  // Named for the cart (#button-cart reading "Naroči"): a button whatever it says; a link only when it shows no words (an image).
  if (namedControl && !other && (isButton || (isLink && label === ''))) return !isLink || sameSite(el.attribs['href'], hosts);
  if (isLink && SCRIPT_BUY_LINK.test(el.attribs['href'] ?? '') && !other) return true;
  // In a form that posts to the cart, its submit button buys whatever it says; +/- buttons and
  // unlabelled ones (other sellers' offers, icons) do not count.
  if (label === '') return false;
  const submits = el.name === 'input' ? el.attribs['type'] !== 'button' : (el.attribs['type'] ?? 'submit').toLowerCase() === 'submit';
  const form = formOf(el);
  return isButton && submits && form !== null && CART_ACTION.test(form.attribs['action'] ?? '');
}

/** A container named for the cart ("#addToCart_feature_div") is not the control: the button inside it is. */
function holdsControls(el: Element): boolean {
  const stack: AnyNode[] = [...el.children];
  for (let seen = 0; stack.length > 0 && seen < 200; seen += 1) {
    const node = stack.pop()!;
    if (!isElement(node)) continue;
    if (node.name === 'button' || node.name === 'input' || node.name === 'a' || node.name === 'form') return true;
    // A loop, not push(...children): a hostile element has more children than a call takes arguments.
    for (const child of node.children) stack.push(child);
  }
  return false;
}

/** What the control says: its text, else its value, aria-label or title. */
export function controlLabel(el: Element): string {
  return cleanText(visibleText(el) || el.attribs['value'] || el.attribs['aria-label'] || el.attribs['title'] || '');
}

/** A disabled control cannot buy: the attribute, aria-disabled, or a "disabled" class. */
export function isDisabled(el: Element): boolean {
  return el.attribs['disabled'] !== undefined || el.attribs['aria-disabled'] === 'true' || DISABLED_CLASS.test(el.attribs['class'] ?? '');
}

/**
 * One buy box is one purchase point, however many buttons its form has, and however many copies of
 * it the page keeps for other screen sizes: controls that submit the same order count once.
 */
export function purchasePoints(controls: readonly Element[]): Element[] {
  const seen = new Set<string>();
  let forms: ReadonlyMap<string, Element> | undefined;
  const formNamed = (name: string, from: Element) => (forms ??= namedForms(from)).get(name) ?? null;
  return controls.filter((control, i) => {
    const key = orderOf(control, formNamed) ?? `control ${i}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** What a control orders: its form's action and hidden fields, the form its script submits, or its link. */
function orderOf(control: Element, formNamed: (name: string, from: Element) => Element | null): string | null {
  const form = formOf(control);
  if (form !== null) return formOrder(form);
  const submitted = /document\.(\w{1,60})\.submit\(/.exec((control.attribs['onclick'] ?? '').slice(0, 500))?.[1];
  if (submitted !== undefined) {
    const named = formNamed(submitted, control);
    if (named !== null) return formOrder(named);
  }
  const href = (control.attribs['href'] ?? '').trim();
  return href === '' || href.startsWith('#') || /^javascript:\s*(?:void|;|$)/i.test(href) ? null : `link ${href}`;
}

function formOrder(form: Element): string {
  const fields: string[] = [];
  const stack: AnyNode[] = [...form.children];
  for (let seen = 0; stack.length > 0 && seen < 300; seen += 1) {
    const node = stack.pop()!;
    if (!isElement(node)) continue;
    if (node.name === 'input' && (node.attribs['type'] ?? '').toLowerCase() === 'hidden') fields.push(`${node.attribs['name'] ?? ''}=${node.attribs['value'] ?? ''}`);
    for (const child of node.children) stack.push(child);
  }
  return `form ${form.attribs['action'] ?? ''} ${fields.sort().join('&')}`;
}

/** The named forms of the document that holds `el`, found in one bounded walk (a script submits them by name). */
function namedForms(el: Element): ReadonlyMap<string, Element> {
  let root: AnyNode = el;
  while (root.parent !== null) root = root.parent;
  const forms = new Map<string, Element>();
  const stack: AnyNode[] = [root];
  for (let seen = 0; stack.length > 0 && seen < 200_000; seen += 1) {
    const node = stack.pop()!;
    const name = isElement(node) && node.name === 'form' ? node.attribs['name'] : undefined;
    if (name !== undefined && !forms.has(name)) forms.set(name, node as Element);
    if ('children' in node) for (const child of node.children) stack.push(child);
  }
  return forms;
}

export function formOf(el: Element): Element | null {
  for (let current = el.parent; current !== null; current = current.parent) {
    if (isElement(current) && current.name === 'form') return current;
  }
  return null;
}

/** The page's host without "www.", for telling this shop's links from other sites'. */
export function siteOf(url: string): string | null {
  try {
    return new URL(url).hostname.replace(/^www\./, '');
  } catch {
    return null;
  }
}

function sameSite(href: string | undefined, hosts: ReadonlySet<string>): boolean {
  if (href === undefined || href.trim() === '' || /^(?:#|javascript:)/i.test(href.trim())) return true;
  if (!/^[a-z][a-z0-9+.-]*:|^\/\//i.test(href.trim())) return true; // relative
  try {
    return hosts.has(new URL(href, 'http://relative.invalid').hostname.replace(/^www\./, ''));
  } catch {
    return false;
  }
}
