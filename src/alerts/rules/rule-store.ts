// Alert rules in the relational database (alert_rules): CRUD, and the enabled ones a write evaluates, read in its transaction.
import { pagedList } from '../../db/paged-list.js';
import type { Database, Queryable } from '../../db/queryable.js';
import { LimitReached } from '../../problems.js';
import type { AlertRule, AlertRuleCreate } from './alert-rule-schema.js';

export interface StoredRule extends AlertRule {
  created_at: string;
  updated_at: string;
}

export interface RuleStore {
  /** Refuses (LimitReached, nothing stored) a rule beyond `max` (ALERT_RULES_MAX). */
  create(id: string, rule: AlertRuleCreate, max: number): Promise<StoredRule>;
  get(id: string): Promise<StoredRule | undefined>;
  list(query: { limit: number; offset: number; enabled?: boolean | undefined }): Promise<{ items: StoredRule[]; total: number }>;
  /** Replaces every field (the route merges a patch first). */
  update(id: string, rule: AlertRuleCreate): Promise<StoredRule | undefined>;
  delete(id: string): Promise<boolean>;
  /** The enabled rules, inside `tx` (the write's own transaction). */
  enabled(tx: Queryable): Promise<AlertRule[]>;
  /** A channel deleted: no rule sends to it any more. */
  forgetChannel(channelId: string, tx: Queryable): Promise<void>;
}

const isoTime = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
// uuid[] as JSON: node-postgres and PGlite then hand back the same array.
const RULE = `id, name, scope, condition, cooldown_minutes, digest, to_jsonb(channel_ids) AS channel_ids, enabled`;
const COLUMNS = `${RULE}, ${isoTime('created_at')} AS created_at, ${isoTime('updated_at')} AS updated_at`;

const params = (rule: AlertRuleCreate) => [
  rule.name,
  JSON.stringify(rule.scope),
  JSON.stringify(rule.condition),
  rule.cooldown_minutes,
  rule.digest,
  rule.channel_ids,
  rule.enabled,
];

export function createRuleStore(db: Database): RuleStore {
  return {
    create: (id, rule, max) =>
      db.transaction(async (tx) => {
        // Locked against other writers, so two requests cannot both take the last place.
        await tx.exec('LOCK TABLE alert_rules IN SHARE ROW EXCLUSIVE MODE');
        const [count] = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM alert_rules');
        if (count!.n >= max) throw new LimitReached(`There are ${count!.n} alert rules, the most ALERT_RULES_MAX allows (${max}); delete one first.`);
        const [row] = await tx.query<StoredRule>(
          `INSERT INTO alert_rules (id, name, scope, condition, cooldown_minutes, digest, channel_ids, enabled)
           VALUES ($1, $2, $3, $4, $5, $6, $7::uuid[], $8) RETURNING ${COLUMNS}`,
          [id, ...params(rule)],
        );
        return row!;
      }),

    async get(id) {
      const [row] = await db.query<StoredRule>(`SELECT ${COLUMNS} FROM alert_rules WHERE id = $1`, [id]);
      return row;
    },

    async list(query) {
      return pagedList<StoredRule>(db, {
        columns: COLUMNS,
        from: query.enabled === undefined ? 'FROM alert_rules' : 'FROM alert_rules WHERE enabled = $1',
        params: query.enabled === undefined ? [] : [query.enabled],
        orderBy: 'alert_rules.created_at DESC, id DESC',
        limit: query.limit,
        offset: query.offset,
      });
    },

    async update(id, rule) {
      const [row] = await db.query<StoredRule>(
        `UPDATE alert_rules SET name = $2, scope = $3, condition = $4, cooldown_minutes = $5, digest = $6, channel_ids = $7::uuid[], enabled = $8, updated_at = now()
          WHERE id = $1 RETURNING ${COLUMNS}`,
        [id, ...params(rule)],
      );
      return row;
    },

    async delete(id) {
      return (await db.query('DELETE FROM alert_rules WHERE id = $1 RETURNING id', [id])).length > 0;
    },

    enabled: (tx) => tx.query<AlertRule>(`SELECT ${RULE} FROM alert_rules WHERE enabled`),

    async forgetChannel(channelId, tx) {
      await tx.query('UPDATE alert_rules SET channel_ids = array_remove(channel_ids, $1::uuid), updated_at = now() WHERE $1::uuid = ANY (channel_ids)', [channelId]);
    },
  };
}
