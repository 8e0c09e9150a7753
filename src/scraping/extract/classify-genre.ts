// The second look at a page that sells nothing: a thread of posts is a forum, a page of a manual is
// documentation, a landing or pricing page is a service page, each by the structures they share (page-genre.ts).
import type { PageEvidence } from './classify.js';
import type { PageVerdict } from './types.js';
import type { GenreEvidence } from './visible/page-genre.js';

/** Points each kind needs; a signal that names the kind outright (software, structured data) is worth two. */
const FORUM_POINTS = 3;
const DOCS_POINTS = 2.5;
const SERVICE_POINTS = 2;

/**
 * Refines a verdict of article, article-list or none; a product or listing stays what it is. A page
 * that marks itself up as an article (its Article is its own and og:type says article) stays one unless
 * it marks up a thread of posts.
 */
export function refineGenre(verdict: PageVerdict, e: PageEvidence, genre: () => GenreEvidence | null): PageVerdict {
  if (verdict.type === 'listing' && e.structured.products === 0 && e.layoutItems === 0 && e.selectorItems === 0)
    return plansOrGoods(verdict, e.heuristics?.pricedCards ?? 0, genre());
  if (verdict.type !== 'article' && verdict.type !== 'article-list' && verdict.type !== 'none') return verdict;
  const g = genre();
  if (g === null) return verdict;
  const markedArticle = e.structured.articleMain === true && e.openGraph.type !== null && /^(?:og:)?article/i.test(e.openGraph.type);

  const forum: string[] = [];
  if (g.forum.url) forum.push("its address has a forum thread's shape");
  if (g.forum.software) forum.push(`forum software made it (${g.generator})`);
  if (g.forum.schema) forum.push('structured data marks up a discussion (DiscussionForumPosting, QAPage)');
  if (g.forum.posts >= 3) forum.push(`${g.forum.posts} repeated post blocks`);
  if (g.forum.authors >= 2) forum.push(`posts by ${g.forum.authors} authors`);
  const forumPoints = 2 * (Number(g.forum.url) + Number(g.forum.software) + Number(g.forum.schema)) + Number(g.forum.posts >= 3) + Number(g.forum.authors >= 2);
  if (forumPoints >= FORUM_POINTS && (!markedArticle || g.forum.schema)) return { type: 'forum', reasons: forum };

  const docs: string[] = [];
  if (g.docs.software) docs.push('documentation software made it (its generator tag or layout)');
  if (g.docs.url) docs.push('its address is under a documentation path (/docs/, /reference/, /guide/...)');
  if (g.docs.navigation) docs.push('a sidebar of the manual or a table of contents beside the text');
  if (g.docs.code >= 3) docs.push(`${g.docs.code} code blocks`);
  if (g.docs.schema) docs.push('structured data marks up a TechArticle or APIReference');
  const docsPoints = 2 * Number(g.docs.software) + 1.5 * Number(g.docs.url) + Number(g.docs.navigation) + Number(g.docs.code >= 3) + Number(g.docs.schema);
  if (docsPoints >= DOCS_POINTS && !markedArticle) return { type: 'documentation', reasons: docs };

  const service: string[] = [];
  if (g.service.url) service.push('its address names a service page (/pricing, /services/, /features, /about...)');
  if (g.service.pricing) service.push('plans with prices per period, or a pricing section');
  if (g.service.actions >= 1) service.push(`${g.service.actions} call${g.service.actions === 1 ? '' : 's'} to action ("Get started", "Contact us"...)`);
  if (g.service.sections >= 3) service.push(`${g.service.sections} sections, each under its own heading`);
  const servicePoints = 2 * (Number(g.service.url) + Number(g.service.pricing)) + Number(g.service.actions >= 1) + Number(g.service.actions >= 3) + Number(g.service.sections >= 3);
  // A page with nothing for sale and no article of its own is a site's page about itself.
  // A page with nothing for sale, no article and no thread, that speaks of its offer, is a site's page about itself.
  if (verdict.type === 'none' && servicePoints >= 1) return { type: 'service', reasons: [...service, 'nothing for sale, no article, no thread'] };
  const writing = e.structured.articleMain === true || (e.openGraph.type !== null && /^(?:og:)?article/i.test(e.openGraph.type)) || e.articleBody;
  // An index of teasers stays one: a news front page sells subscriptions in cards too.
  if (verdict.type === 'article' && !writing && servicePoints >= SERVICE_POINTS) return { type: 'service', reasons: [...service, 'nothing marks it up as an article'] };
  return verdict;
}

/**
 * Cards with prices per period ("$12/month") are a service's plans, not goods for sale: a listing found
 * only by its repeated priced cards, whose prices are mostly per period, is a pricing page.
 */
function plansOrGoods(verdict: PageVerdict, cards: number, g: GenreEvidence | null): PageVerdict {
  if (g === null || g.service.periodPrices < 2 || g.service.periodPrices < cards / 2) return verdict;
  return { type: 'service', reasons: [...verdict.reasons, `but ${g.service.periodPrices} of the prices are per period: a service's plans, not goods`] };
}
