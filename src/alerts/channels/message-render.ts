// Message rendering, pure: a firing (or a digest of firings) -> title, plain text, escaped HTML, a short chat line and the chart.
import type { Firing, StateValues } from '../rules/firing.js';
import { cleanText, escapeHtml, htmlIsolated, isolate, safeHttpUrl } from './hostile-text.js';
import { formatMoney, formatPercent } from './money-format.js';
import { priceChart, sparkline, type ChartImage } from './price-chart.js';

export interface RenderOptions {
  /** Where the dashboard is served (PUBLIC_URL); messages link to `/ui/products/{id}` under it. */
  dashboardUrl: string;
  /** A channel's test message: the label, and so the title, the text and the HTML heading every channel shows, begins "Test: ". */
  test?: boolean;
}

/** A label and its value, plain text: chat channels lay these out as fields or facts. */
export interface Fact {
  label: string;
  value: string;
}

export interface RenderedMessage {
  /** One line, plain (e-mail subject, notification title). The product title in it is isolated. */
  title: string;
  /** For chat: the title and the change in one line. */
  short: string;
  text: string;
  html: string;
  /** The product's title, cleaned (no controls or bidi formatting) but not escaped: each channel escapes it for its markup. */
  product_title: string;
  /** The condition's label, e.g. "Price drop". */
  label: string;
  why: string;
  facts: Fact[];
  dashboard_link: string;
  /** The product page, when it is an http(s) URL. */
  product_link: string | null;
  sparkline: string;
  /** The PNG chart for e-mail (inline, by content id); null when there are too few prices. */
  chart: (ChartImage & { cid: string }) | null;
  /** One of URGENT_CONDITIONS (ntfy and Gotify send it at a higher priority, Discord in red). */
  urgent: boolean;
}

export const CHART_CID = 'price-chart@alerts';

/**
 * Alerts a person acts on at once, sent at a higher priority: stock is back, the price reached the
 * target they said they would buy at, the "was" price is not honest. A price wobble (a drop, a change,
 * a low) is not; the channel schema's priority descriptions name these same conditions.
 */
export const URGENT_CONDITIONS: ReadonlySet<Firing['condition']> = new Set(['back_in_stock', 'price_at_or_below', 'suspicious_discount']);

const LABELS: Record<Firing['condition'], string> = {
  price_at_or_below: 'Price alert',
  price_drop: 'Price drop',
  lowest_in_days: 'Lowest price',
  back_in_stock: 'Back in stock',
  out_of_stock: 'Out of stock',
  availability_changed: 'Availability changed',
  price_changed: 'Price changed',
  product_gone: 'Product gone',
  suspicious_discount: 'Suspicious discount',
};

export function renderFiring(firing: Firing, options: RenderOptions): RenderedMessage {
  const label = `${options.test === true ? 'Test: ' : ''}${LABELS[firing.condition]}`;
  const productTitle = cleanText(firing.product.title, 120) || `Product ${firing.product.id}`;
  const change = describeChange(firing.before, firing.after, firing.condition);
  const facts = factsOf(firing);
  const dashboardLink = dashboardLinkFor(options.dashboardUrl, firing.product.id);
  const productLink = safeHttpUrl(firing.product.url);
  const spark = sparkline(firing.chart);
  const image = priceChart(firing.chart, firing.event_at);
  const title = `${label}: ${isolate(productTitle)}`;

  const textLines = [title, '', firing.why, '', ...facts.map((f) => `${f.label}: ${f.value}`)];
  if (spark !== '') textLines.push(`History: ${spark}`);
  textLines.push('', `Open in the dashboard: ${dashboardLink}`);
  if (productLink !== null) textLines.push(`Product page: ${productLink}`);
  textLines.push(`Rule: ${isolate(cleanText(firing.rule_name, 200))}`);

  const htmlFacts = facts.map((f) => `<tr><th align="left" style="padding:2px 12px 2px 0">${escapeHtml(f.label)}</th><td>${escapeHtml(f.value)}</td></tr>`).join('');
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif;color:#0f172a">',
    `<h2 style="margin:0 0 8px">${escapeHtml(label)}: ${htmlIsolated(productTitle)}</h2>`,
    `<p>${escapeHtml(firing.why)}</p>`,
    `<table>${htmlFacts}</table>`,
    image === null
      ? spark === ''
        ? ''
        : `<p style="font-size:20px">${escapeHtml(spark)}</p>`
      : `<p><img src="cid:${CHART_CID}" width="${image.width}" height="${image.height}" alt="${escapeHtml(image.alt)}"></p>`,
    `<p><a href="${escapeHtml(dashboardLink)}">Open in the dashboard</a>`,
    productLink === null ? '' : ` · <a href="${escapeHtml(productLink)}">Product page</a>`,
    '</p>',
    `<p style="color:#64748b;font-size:12px">Rule: ${htmlIsolated(cleanText(firing.rule_name, 200))}</p>`,
    '</body></html>',
  ].join('');

  return {
    title,
    short: change === '' ? title : `${title}: ${change}`,
    text: textLines.join('\n'),
    html,
    product_title: productTitle,
    label,
    why: firing.why,
    facts,
    dashboard_link: dashboardLink,
    product_link: productLink,
    sparkline: spark,
    chart: image === null ? null : { ...image, cid: CHART_CID },
    urgent: URGENT_CONDITIONS.has(firing.condition),
  };
}

export function dashboardLinkFor(dashboardUrl: string, productId: number): string {
  return new URL(`/ui/products/${encodeURIComponent(String(productId))}`, dashboardUrl).href;
}

/** "€250.00 → €180.00 (−28 %)" or "in stock → out of stock". */
function describeChange(before: StateValues | null, after: StateValues | null, condition: Firing['condition']): string {
  if (condition === 'back_in_stock' || condition === 'out_of_stock' || condition === 'availability_changed') {
    return `${stock(before)} → ${stock(after)}`;
  }
  if (condition === 'product_gone') return 'no longer found';
  const now = formatMoney(after?.price ?? null, after?.currency ?? null);
  if (before?.price == null || after?.price == null || before.currency !== after.currency) return `now ${now}`;
  const percent = before.price === 0 ? '' : ` (${after.price < before.price ? '−' : '+'}${formatPercent(Math.abs(((after.price - before.price) / before.price) * 100))})`;
  return `${formatMoney(before.price, before.currency)} → ${now}${percent}`;
}

function factsOf(firing: Firing): Fact[] {
  const { before, after, reason } = firing;
  const facts: Fact[] = [];
  if (before !== null) facts.push({ label: 'Before', value: stateText(before) });
  if (after !== null) facts.push({ label: 'Now', value: stateText(after) });
  if (after?.list_price != null) facts.push({ label: 'Shown "was" price', value: formatMoney(after.list_price, after.currency) });
  if (reason.type === 'price_drop')
    facts.push({ label: 'Compared with', value: `${formatMoney(reason.baseline_price, after?.currency ?? null)} (since ${reason.baseline_at.slice(0, 10)})` });
  if (reason.type === 'lowest_in_days')
    facts.push({ label: 'Previous low', value: `${formatMoney(reason.previous_low, after?.currency ?? null)} (${reason.previous_low_at.slice(0, 10)})` });
  if (reason.type === 'suspicious_discount') {
    for (const failure of reason.verdict.failed)
      facts.push({ label: failure.test === 'list_price_never_charged' ? 'Never charged' : 'Raised before the sale', value: failure.explanation });
    const evidence = reason.verdict.evidence.map((p) => `${p.first_seen_at.slice(0, 10)} ${formatMoney(p.price, p.currency)}`).join(', ');
    if (evidence !== '') facts.push({ label: 'Recorded prices', value: evidence });
  }
  return facts;
}

function stateText(state: StateValues): string {
  const price = formatMoney(state.price, state.currency);
  return state.availability === null ? price : `${price}, ${stock(state)}`;
}

function stock(state: StateValues | null): string {
  return (state?.availability ?? 'unknown').replaceAll('_', ' ');
}

/**
 * Several firings in one message (a daily or weekly digest), newest first. The chart is left out:
 * one image per product would make a digest a wall of pictures; each line keeps its sparkline.
 */
export function renderDigest(firings: readonly Firing[], period: string, options: RenderOptions): RenderedMessage {
  const items = [...firings].sort((a, b) => Date.parse(b.event_at) - Date.parse(a.event_at)).map((f) => renderFiring(f, options));
  const title = `${period} digest: ${items.length} alert${items.length === 1 ? '' : 's'}`;
  const text = [title, '', ...items.flatMap((m) => [m.short, `  ${m.why}`, `  ${m.dashboard_link}`, ''])].join('\n').trimEnd();
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif;color:#0f172a">',
    `<h2>${escapeHtml(title)}</h2><ul>`,
    ...items.map(
      (m) =>
        `<li><p><a href="${escapeHtml(m.dashboard_link)}">${escapeHtml(m.label)}: ${htmlIsolated(m.product_title)}</a><br>${escapeHtml(m.why)}<br>${escapeHtml(m.sparkline)}</p></li>`,
    ),
    '</ul></body></html>',
  ].join('');
  return {
    title,
    short: title,
    text,
    html,
    product_title: '',
    label: `${period} digest`,
    why: `${items.length} alert${items.length === 1 ? '' : 's'} in this ${period.toLowerCase()} digest.`,
    facts: items.map((m) => ({ label: `${m.label}: ${m.product_title}`, value: m.why })),
    dashboard_link: new URL('/ui/alerts', options.dashboardUrl).href,
    product_link: null,
    sparkline: '',
    chart: null,
    urgent: items.some((m) => m.urgent),
  };
}
