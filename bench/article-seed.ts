// Articles for the search bench: titles, summaries and bodies from word lists, so that a word occurs in a known share of the rows, as in a real news archive.

// Each article is about one topic (1 % of the rows each) in one town (0.1 % each), on one of 50 sites;
// its body is three sentences around them. Nine in ten are English, one in twenty German (the same
// words, stemmed the German way), one in twenty of unknown language (matched as written).
const TOPICS = (
  'flood storm harbour bridge school budget election festival museum railway ferry library hospital council river ' +
  'bakery market theatre stadium airport tunnel lighthouse castle garden orchard vineyard brewery factory quarry mine ' +
  'forest beach cliff island canal reservoir dam windfarm pier promenade bus tram cycle road motorway parking housing ' +
  'rent wages pension tax fuel energy water sewage recycling litter noise crime police fire ambulance court prison ' +
  'church mosque temple carnival concert orchestra choir gallery cinema bookshop newspaper radio podcast website ' +
  'startup bank farm fishing tourism hotel restaurant cafe pub wedding funeral birthday anniversary marathon regatta ' +
  'football cricket rugby tennis golf swimming sailing rowing'
).split(' ');
const TOWN_STEMS = 'Ash Bal Car Dun Ell Fen Gar Hol Ing Kel Lan Mor Nor Ock Pen Rad Sel Tor Ul Ver Wes Yar Zen Bram Clif'.split(' ');
const TOWN_ENDINGS = 'bury ford ham ley mouth port stead ton wick worth by dale field gate holm minster ness pool side thorpe vale well wood bridge cross'.split(' ');
const TOWNS = TOWN_STEMS.flatMap((stem) => TOWN_ENDINGS.map((ending) => stem + ending)).slice(0, 1000);
const VERBS = 'reopens closes expands wins loses welcomes plans rejects approves delays celebrates repairs'.split(' ');

/** Words a search looks for, and the share of articles that hold each. */
export const ARTICLE_WORDS = {
  topic: { word: 'lighthouse', share: 1 / TOPICS.length },
  town: { word: TOWNS[137]!, share: 1 / TOWNS.length },
};

const sqlArray = (words: readonly string[]) => `'{${words.join(',')}}'::text[]`;

/** Inserts articles numbered $1..$2 (inclusive), each with its own URL; published over the two years before 2026. */
export const ARTICLE_SEED_SQL = `
  INSERT INTO articles (url_key, url, title, description, body, body_html, language, site_name, site_keys, authors, author_keys,
                        published_at, published_time, word_count, source_url, source_key, last_seen_at)
  SELECT 'https://site' || (n % 50) || '.example/news/' || n, 'https://site' || (n % 50) || '.example/news/' || n,
         initcap(w.topic) || ' ' || w.verb || ' in ' || w.town,
         'What the ' || w.topic || ' in ' || w.town || ' means for the people who live there.',
         w.body, '<p>' || replace(w.body, E'\\n\\n', '</p><p>') || '</p>',
         CASE WHEN n % 20 = 0 THEN 'de' WHEN n % 20 = 1 THEN NULL ELSE 'en' END,
         'Site ' || (n % 50), ARRAY['site' || (n % 50) || '.example'], ARRAY['Reporter ' || (n % 300)], ARRAY['reporter ' || (n % 300)],
         to_char(w.t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), w.t, 60,
         'https://site' || (n % 50) || '.example/', 'https://site' || (n % 50) || '.example/', now()
    FROM generate_series($1::int, $2::int) AS n,
         LATERAL (SELECT (${sqlArray(TOPICS)})[1 + n % ${TOPICS.length}] AS topic,
                         (${sqlArray(TOWNS)})[1 + (n / 7) % ${TOWNS.length}] AS town,
                         (${sqlArray(VERBS)})[1 + (n / 3) % ${VERBS.length}] AS verb,
                         timestamptz '2026-01-01' - make_interval(mins => (n * 37) % 1051200) AS t) AS v,
         LATERAL (SELECT v.topic, v.town, v.verb, v.t,
                         'Residents of ' || v.town || ' gathered on Tuesday as the ' || v.topic || ' ' || v.verb || ', and the council promised a full report before the end of the month.' ||
                         E'\\n\\n' || 'Local traders said the news about the ' || v.topic || ' would change how visitors see the town, while others worried about the cost to families.' ||
                         E'\\n\\n' || 'A public meeting is planned for next week at the town hall in ' || v.town || ', where the plans will be shown in full.' AS body) AS w`;
