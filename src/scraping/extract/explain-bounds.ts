// An explanation a person can read and a client can hold: long lists cut (saying so), locators bounded.
import { boundedLocator } from './merge.js';
import type { FieldDecision, PageExplanation } from './types.js';

/** Entries shown per list of an explanation (a 20,000-card listing explained in full was 49.5 MB). */
export const EXPLAIN_MAX_LISTED = 100;

/** A list cut to its first entries: which one, how many are shown, how many there were. */
export interface ExplainCut {
  list: string;
  shown: number;
  total: number;
}

/** The first EXPLAIN_MAX_LISTED of `entries`, recording the cut under `list` when there were more. */
export function firstListed<T>(entries: readonly T[], list: string, cuts: ExplainCut[]): T[] {
  if (entries.length <= EXPLAIN_MAX_LISTED) return [...entries];
  cuts.push({ list, shown: EXPLAIN_MAX_LISTED, total: entries.length });
  return entries.slice(0, EXPLAIN_MAX_LISTED);
}

const decision = (d: FieldDecision): FieldDecision => ({
  ...d,
  chosen: { ...d.chosen, locator: boundedLocator(d.chosen.locator) },
  others: d.others.map((o) => ({ ...o, locator: boundedLocator(o.locator) })),
});

function bySource<T extends { locator: string }>(lists: Partial<Record<string, T[]>>, name: string, cuts: ExplainCut[]): Partial<Record<string, T[]>> {
  return Object.fromEntries(
    Object.entries(lists).map(([source, list]) => [source, firstListed(list ?? [], `${name}.${source}`, cuts).map((c) => ({ ...c, locator: boundedLocator(c.locator) }))]),
  );
}

/** `explanation` with each list (candidates per source, items, articles) cut to its first entries and every locator bounded; `truncated` says what was cut. */
export function boundExplanation(explanation: Omit<PageExplanation, 'truncated'>): PageExplanation {
  const cuts: ExplainCut[] = [];
  const fields = <F extends string>(all: Partial<Record<F, FieldDecision>>) =>
    Object.fromEntries(Object.entries(all).map(([name, d]) => [name, decision(d as FieldDecision)])) as Partial<Record<F, FieldDecision>>;
  const merged = (list: Array<{ source: PageExplanation['items'][number]['merged'][number]['source']; locator: string }>) =>
    list.map((m) => ({ ...m, locator: boundedLocator(m.locator) }));
  return {
    ...explanation,
    candidates: bySource(explanation.candidates, 'candidates', cuts) as PageExplanation['candidates'],
    items: firstListed(explanation.items, 'items', cuts).map((item) => ({ ...item, fields: fields(item.fields), merged: merged(item.merged) })),
    article_candidates: bySource(explanation.article_candidates, 'article_candidates', cuts) as PageExplanation['article_candidates'],
    articles: firstListed(explanation.articles, 'articles', cuts).map((article) => ({
      ...article,
      fields: fields(article.fields),
      merged: merged(article.merged),
      ...(article.body === undefined ? {} : { body: { ...article.body, locator: boundedLocator(article.body.locator) } }),
    })),
    truncated: cuts,
  };
}
