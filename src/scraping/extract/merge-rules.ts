// Where a field's value comes from when the most trusted source is not the right one: what the page shows people beats machine data that disagrees, for price, code and stock.
import type { Candidate, FieldName, Source } from './types.js';

export interface FieldChoice {
  from: Candidate;
  why: string;
}

/**
 * Sources a person stated for this site (their CSS selectors; site rules when they come): no rule
 * of thumb overrules them.
 */
const STATED_BY_USER: ReadonlySet<Source> = new Set(['selectors']);

const DOES_NOT_BUY: ReadonlySet<string> = new Set(['out_of_stock', 'discontinued']);

/**
 * The candidate `field` takes when a rule says so, else undefined (the most trusted source that
 * states it gives it). `ordered` is the group in order of trust.
 */
export function chooseByRule(field: FieldName, ordered: readonly Candidate[]): FieldChoice | undefined {
  const first = ordered.find((c) => c.fields[field] !== undefined);
  if (first === undefined || STATED_BY_USER.has(first.source)) return undefined;
  if (field === 'availability') {
    const variant = availableVariant(first, ordered);
    if (variant !== undefined) return variant;
  }
  const visible = ordered.find((c) => c.source === 'visible' && c.fields[field] !== undefined);
  if (visible === undefined || visible === first) return undefined;
  switch (field) {
    case 'price':
      return price(first, visible);
    case 'sku':
      return sku(first, visible);
    case 'availability':
      return availability(first, visible);
    default:
      return undefined;
  }
}

/**
 * The price a buyer pays now is the one the buy box shows: a visible price the page labels as the
 * current one (a buy-box marker, "Sale price", the current bid) wins over a structured price that
 * differs, and so does any visible current price when the structured one is the struck "was" price.
 */
function price(first: Candidate, visible: Candidate): FieldChoice | undefined {
  const shown = visible.fields.price!;
  const stated = first.fields.price!;
  if (shown.value === stated.value) return undefined;
  const text = visible.fields.price_text?.value ?? String(shown.value);
  if (shown.cue !== undefined) {
    return { from: visible, why: `the buy box shows ${text} as the price to pay now (${shown.cue}); ${first.source} states ${stated.value}` };
  }
  if (visible.fields.list_price?.value === stated.value) {
    return { from: visible, why: `${first.source} states ${stated.value}, the regular price the page shows struck through beside ${text}` };
  }
  return undefined;
}

/**
 * The product's code as the page presents it to people ("Product code: 51230087", "512/3008")
 * wins over the identifier in structured data, which is often a variant's id or a raw form.
 */
function sku(first: Candidate, visible: Candidate): FieldChoice | undefined {
  const shown = visible.fields.sku!;
  if (shown.cue === undefined || shown.value === first.fields.sku!.value) return undefined;
  return { from: visible, why: `the page presents ${shown.value} to people as the product's code (${shown.cue}); ${first.source} states ${first.fields.sku!.value}` };
}

/**
 * Stock stated in words beside the product ("Currently unavailable") wins over structured data that
 * disagrees; an enabled buy button wins over structured data saying the product cannot be bought,
 * which often describes one variant (the first size) rather than the product.
 */
function availability(first: Candidate, visible: Candidate): FieldChoice | undefined {
  const shown = visible.fields.availability!;
  const stated = first.fields.availability!;
  if (shown.value === stated.value) return undefined;
  if (shown.cue !== undefined) return { from: visible, why: `${shown.cue} beside the product; ${first.source} says ${stated.value}` };
  if (DOES_NOT_BUY.has(stated.value) && shown.value === 'in_stock') {
    return { from: visible, why: `the page's buy button is enabled, so the product can be bought; ${first.source} says ${stated.value}, which may be one variant's` };
  }
  return undefined;
}

/**
 * A product is in stock when any of its variants is: when the most trusted source marks up several
 * (sizes, colours) and the first cannot be bought, one that can gives the availability.
 */
function availableVariant(first: Candidate, ordered: readonly Candidate[]): FieldChoice | undefined {
  if (!DOES_NOT_BUY.has(first.fields.availability!.value)) return undefined;
  const variant = ordered.find((c) => c.source === first.source && c !== first && c.fields.availability?.value === 'in_stock');
  return variant === undefined
    ? undefined
    : { from: variant, why: `one of the product's variants in ${first.source} is in stock (${variant.locator}); the first is ${first.fields.availability!.value}` };
}
