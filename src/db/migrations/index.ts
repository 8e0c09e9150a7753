// The versioned schema, in order. Append only: a released migration is never edited, a new one is added.
import type { Migration } from '../migration.js';
import { migration as m001 } from './001-products.js';
import { migration as m002 } from './002-scrape-logs.js';
import { migration as m003 } from './003-product-count-shards.js';
import { migration as m004 } from './004-product-details.js';
import { migration as m005 } from './005-jobs.js';
import { migration as m006 } from './006-tracking.js';
import { migration as m007 } from './007-product-search.js';
import { migration as m008 } from './008-private-urls-and-canonical-keys.js';
import { migration as m009 } from './009-event-feed-by-transaction.js';
import { migration as m010 } from './010-search-lowered-title.js';
import { migration as m011 } from './011-articles.js';
import { migration as m012 } from './012-site-rules.js';
import { migration as m013 } from './013-tags-and-alerts.js';
import { migration as m014 } from './014-schedule-next-run.js';
import { migration as m015 } from './015-crawl-links-not-followed.js';
import { migration as m017 } from './017-article-tags.js';
import { migration as m018 } from './018-host-autothrottle.js';
import { migration as m019 } from './019-crawl-seeding.js';
import { migration as m020 } from './020-lz4-documents.js';
import { migration as m021 } from './021-job-cancel-requests.js';
import { migration as m022 } from './022-job-pages-blocked.js';

export const migrations: readonly Migration[] = [m001, m002, m003, m004, m005, m006, m007, m008, m009, m010, m011, m012, m013, m014, m015, m017, m018, m019, m020, m021, m022];
