// Article extraction bench: one real-world-sized news article page (~500 KB), extracted in this process, median and p95.
import { readFileSync } from 'node:fs';
import { extract } from '../src/scraping/extract/index.js';
import { timeExtraction } from './scrape.js';

export interface ArticleExtractionFigures {
  bytes: number;
  runs: number;
  medianMs: number;
  p95Ms: number;
  pageType: string;
  words: number;
}

/**
 * Extraction of one ~500 KB article page: the fixture news story grown the way real news pages are
 * (inline app state, a mega menu, a long story with figures and subheadings, 300 comments, 40 related
 * teasers). Every run parses the page twice (cheerio for the evidence, linkedom for Readability).
 */
export function measureArticleExtraction(runs: number): ArticleExtractionFigures {
  const html = realWorldSizedArticle();
  const url = 'http://127.0.0.1/uk/harbour-wall-collapse';
  const first = extract(html, url);
  const words = first.articles[0]?.word_count ?? 0;
  if (first.page_type !== 'article' || first.articles.length !== 1 || words < 3000 || /Commenter \d/.test(first.articles[0]?.body ?? '')) {
    throw new Error(`the 500 KB article page extracted to ${first.page_type} with ${first.articles.length} articles of ${words} words; expected its one story without comments`);
  }
  return { bytes: Buffer.byteLength(html), runs, ...timeExtraction(html, url, runs), pageType: first.page_type, words };
}

export function realWorldSizedArticle(): string {
  const base = readFileSync(new URL('../test/fixtures/pages/news-story.html', import.meta.url), 'utf8');
  const state = JSON.stringify({
    stories: Array.from({ length: 1500 }, (_, i) => ({
      id: 50_000 + i,
      slug: `story-${i}`,
      headline: `Headline of story ${i}`,
      section: ['uk', 'world', 'sport'][i % 3],
      tags: ['news', `tag-${i % 23}`],
      published: `2024-03-0${(i % 9) + 1}T0${i % 10}:00:00Z`,
    })),
  });
  const menu = Array.from(
    { length: 40 },
    (_, c) =>
      `<li class="menu__section"><a href="/section/${c}">Section ${c}</a><ul>${Array.from({ length: 30 }, (_, i) => `<li><a class="menu__link" href="/section/${c}/${i}">Topic ${c}.${i}</a></li>`).join('')}</ul></li>`,
  ).join('');
  const story = Array.from({ length: 40 }, (_, i) => {
    const paragraphs = Array.from(
      { length: 5 },
      (_, j) =>
        `<p>Part ${i}, paragraph ${j}: the engineers walked the length of the wall again at low tide, measuring each crack against the survey drawings from 2019 and noting where the mortar had washed out since the last inspection, while the harbourmaster kept a log of every boat that came in.</p>`,
    ).join('');
    const figure = i % 6 === 0 ? `<figure><img src="/img/part-${i}.jpg" alt=""><figcaption>Part ${i}: the wall at low tide. Photograph: agency</figcaption></figure>` : '';
    const related = i % 10 === 5 ? `<p><strong>READ MORE: </strong><a href="/uk/related-${i}">A related story about the coast, number ${i}</a></p>` : '';
    return `<h2>Part ${i}</h2>${figure}${paragraphs}${related}`;
  }).join('');
  const comments = Array.from(
    { length: 300 },
    (_, i) =>
      `<article class="comment" id="c${i}"><header><span class="comment__author">Commenter ${i}</span><time datetime="2024-03-05T1${i % 10}:00:00Z">${i} minutes ago</time></header><p>Comment ${i}: I have lived by this harbour all my life and I have never seen the sea come over the wall like that before, the council should have listened years ago.</p><footer><button>Reply</button><button>Like</button></footer></article>`,
  ).join('');
  const teasers = Array.from(
    { length: 40 },
    (_, i) =>
      `<article class="teaser"><a href="/uk/more-${i}"><img src="/img/more-${i}.jpg" alt=""></a><h3><a href="/uk/more-${i}">More news number ${i} from around the coast</a></h3><p>A summary of story ${i}.</p><time datetime="2024-03-04">4 March</time></article>`,
  ).join('');
  return base
    .replace('</head>', `<script>window.__APP_STATE__ = ${state};</script>\n</head>`)
    .replace(/<nav>[\s\S]*?<\/nav>/, `<nav class="menu"><ul>${menu}</ul></nav>`)
    .replace('<div class="story-body">', `<div class="story-body">${story}`)
    .replace('<h2>Comments (2)</h2>', `<h2>Comments (302)</h2>${comments}`)
    .replace('<section class="more-stories">', `<section class="more-stories">${teasers}`);
}
