// Change detection, pure: what a product was before a run and what the run saw -> the events that difference makes.

/** The values whose change is an event. */
export interface Snapshot {
  price: number | null;
  currency: string | null;
  list_price: number | null;
  availability: string | null;
}

export type ChangeEvent =
  | { type: 'product.created'; data: Snapshot }
  | {
      type: 'price.changed';
      data: { old: number | null; new: number | null; currency: string | null; change: number | null; change_percent: number | null; list_price: number | null };
    }
  | { type: 'availability.changed'; data: { old: string | null; new: string | null; back_in_stock: boolean } };

/** Stock states a shopper can buy in. */
const BUYABLE: ReadonlySet<string> = new Set(['in_stock', 'limited', 'preorder', 'backorder']);

/**
 * The events of one sighting. `before` null means the product is new. A price that changes
 * currency is a change of price; an unknown value (null) seen where one was known is a change too,
 * since a page that stops showing a price usually means something.
 */
export function detectChanges(before: Snapshot | null, seen: Snapshot): ChangeEvent[] {
  if (before === null) return [{ type: 'product.created', data: seen }];
  const events: ChangeEvent[] = [];
  if (before.price !== seen.price || (before.currency !== seen.currency && seen.price !== null)) {
    const change = before.price !== null && seen.price !== null ? round(seen.price - before.price, 4) : null;
    const percent = change !== null && before.price !== null && before.price !== 0 ? round((change / before.price) * 100, 2) : null;
    events.push({
      type: 'price.changed',
      data: { old: before.price, new: seen.price, currency: seen.currency ?? before.currency, change, change_percent: percent, list_price: seen.list_price },
    });
  }
  if (before.availability !== seen.availability) {
    const backInStock = seen.availability !== null && BUYABLE.has(seen.availability) && (before.availability === 'out_of_stock' || before.availability === 'discontinued');
    events.push({ type: 'availability.changed', data: { old: before.availability, new: seen.availability, back_in_stock: backInStock } });
  }
  return events;
}

/** Whether a sighting changes the product's history (a new observation), not just its last-seen time. */
export function isChange(before: Snapshot | null, seen: Snapshot): boolean {
  return before === null || before.price !== seen.price || before.currency !== seen.currency || before.list_price !== seen.list_price || before.availability !== seen.availability;
}

function round(value: number, digits: number): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
