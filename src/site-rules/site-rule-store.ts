// Site rules in the relational database: the site_rules table, and the rule that applies to a host.
import { pagedList } from '../db/paged-list.js';
import type { Database } from '../db/queryable.js';
import { Conflict } from '../problems.js';
import { patternsFor, type FieldRule, type RuleField, type SiteRule } from './site-rule-schema.js';

export interface SiteRuleInput {
  host_pattern: string;
  fields: Partial<Record<RuleField, FieldRule>>;
  page_type: string | null;
  note: string | null;
}

export interface SiteRuleStore {
  list(query: { limit: number; offset: number }): Promise<{ items: SiteRule[]; total: number }>;
  get(id: number): Promise<SiteRule | undefined>;
  /** 409 when a rule for that host pattern exists. */
  create(rule: SiteRuleInput): Promise<SiteRule>;
  /** Undefined when there is no such rule; 409 when another rule has the new host pattern. */
  update(id: number, rule: SiteRuleInput): Promise<SiteRule | undefined>;
  delete(id: number): Promise<boolean>;
  /**
   * The rule for a host: its own, else the most specific `*.` pattern over it. Read again at most
   * once a second per host: a change made through this store applies at once, one made by another
   * process (a worker's, say) within FOR_HOST_TTL_MS.
   */
  forHost(host: string): Promise<SiteRule | undefined>;
}

/** A crawl reads its host's rule once a second, not once a page (a round trip of the page's). */
const FOR_HOST_TTL_MS = 1_000;
/** Hosts remembered at most; past that, the memory starts over (a broad crawl meets many hosts). */
const FOR_HOST_MAX = 1_000;

const isoTime = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const COLUMNS = `id, host_pattern, fields, page_type, note, ${isoTime('created_at')} AS created_at, ${isoTime('updated_at')} AS updated_at`;

/** `now` is the clock the rules read per host are kept by (milliseconds; Date.now by default). */
export function createSiteRuleStore(db: Database, options: { now?: () => number } = {}): SiteRuleStore {
  const now = options.now ?? Date.now;
  // A host's rule as read (or being read: pages of a crawl that start together share one read).
  const recent = new Map<string, { rule: Promise<SiteRule | undefined>; until: number }>();
  // Every write forgets them all, a read still under way included: the next page reads again.
  const written = <T>(result: T): T => {
    recent.clear();
    return result;
  };
  const unique = async <T>(pattern: string, write: () => Promise<T>): Promise<T> => {
    try {
      return written(await write());
    } catch (error) {
      if ((error as { code?: string }).code === '23505') throw new Conflict(`A site rule for "${pattern}" exists already; change that one (PUT /site-rules/{id}).`);
      throw error;
    }
  };
  return {
    async list({ limit, offset }) {
      return pagedList<SiteRule>(db, { columns: COLUMNS, from: 'FROM site_rules', orderBy: 'host_pattern', limit, offset });
    },
    async get(id) {
      const [row] = await db.query<SiteRule>(`SELECT ${COLUMNS} FROM site_rules WHERE id = $1`, [id]);
      return row;
    },
    async create(rule) {
      return unique(rule.host_pattern, async () => {
        const [row] = await db.query<SiteRule>(`INSERT INTO site_rules (host_pattern, fields, page_type, note) VALUES ($1, $2::jsonb, $3, $4) RETURNING ${COLUMNS}`, [
          rule.host_pattern,
          JSON.stringify(rule.fields),
          rule.page_type,
          rule.note,
        ]);
        return row!;
      });
    },
    async update(id, rule) {
      return unique(rule.host_pattern, async () => {
        const [row] = await db.query<SiteRule>(
          `UPDATE site_rules SET host_pattern = $2, fields = $3::jsonb, page_type = $4, note = $5, updated_at = now() WHERE id = $1 RETURNING ${COLUMNS}`,
          [id, rule.host_pattern, JSON.stringify(rule.fields), rule.page_type, rule.note],
        );
        return row;
      });
    },
    async delete(id) {
      const rows = await db.query<{ id: number }>('DELETE FROM site_rules WHERE id = $1 RETURNING id', [id]);
      return written(rows.length > 0);
    },
    forHost(host) {
      const known = recent.get(host);
      if (known !== undefined && known.until > now()) return known.rule;
      if (recent.size >= FOR_HOST_MAX) recent.clear();
      const rule = db
        .query<SiteRule>(`SELECT ${COLUMNS} FROM site_rules WHERE host_pattern = ANY ($1::text[]) ORDER BY host_pattern NOT LIKE '*.%' DESC, length(host_pattern) DESC LIMIT 1`, [
          patternsFor(host),
        ])
        .then(([row]) => row);
      const entry = { rule, until: now() + FOR_HOST_TTL_MS };
      recent.set(host, entry);
      // A failed read is not remembered: the next page tries again.
      rule.catch(() => {
        if (recent.get(host) === entry) recent.delete(host);
      });
      return rule;
    },
  };
}
