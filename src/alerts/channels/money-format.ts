// Amounts as people read them ("€180.00", "12.5 %"), the same in every message and explanation.

const formats = new Map<string, Intl.NumberFormat>();

/** `amount` in `currency` (ISO 4217); the bare number with its code when the code is unknown to Intl. */
export function formatMoney(amount: number | null, currency: string | null): string {
  if (amount === null) return 'no price';
  if (currency === null) return trimNumber(amount);
  let format = formats.get(currency);
  if (format === undefined) {
    try {
      format = new Intl.NumberFormat('en-GB', { style: 'currency', currency });
    } catch {
      return `${trimNumber(amount)} ${currency}`;
    }
    formats.set(currency, format);
  }
  return format.format(amount);
}

export function formatPercent(value: number): string {
  return `${trimNumber(Math.round(value * 10) / 10)} %`;
}

function trimNumber(value: number): string {
  return String(Math.round(value * 100) / 100);
}
