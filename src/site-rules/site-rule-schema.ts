// Site rule shapes (what a user pins for a site: per-field selectors or JSON paths, a page type) and their checks.
// The slim build: the same selector engine without parse5 (a third of the load time at start).
import { load } from 'cheerio/slim';
import { Type, type Static } from 'typebox';
import { NO_NUL } from '../http/schemas.js';
import { ValidationFailed, type FieldError } from '../problems.js';
import { PAGE_TYPES, SITE_RULE_FIELDS } from './site-rule-spec.js';

/** The fields a rule can pin, as the API names them. */
export const RULE_FIELDS = SITE_RULE_FIELDS;
export type RuleField = (typeof RULE_FIELDS)[number];

/**
 * A JSON path over the page's JSON scripts (JSON-LD, `__NEXT_DATA__`, any `application/json`):
 * `$`, then `.name`, `['name']` or `[index]` steps. No filters or wildcards: one path names one value.
 */
const JSON_PATH = /^\$(?:\.[A-Za-z_$@][\w$@-]*|\['(?:[^'\\]|\\.)*'\]|\[\d{1,6}\])*$/;

export const FieldRule = Type.Object(
  {
    // NO_NUL: stored as JSONB, which holds neither U+0000 nor an unpaired surrogate.
    selector: Type.Optional(
      Type.String({ minLength: 1, maxLength: 500, pattern: NO_NUL, description: "A CSS selector; the first match's text (or `content`, `src`, `href`) is the value" }),
    ),
    json_path: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 500,
        pattern: NO_NUL,
        description: "A JSON path (`$.offers.price`, `$['props']['sku']`, `$.offers[0].price`) into the page's JSON scripts; the first script where it names a value wins",
      }),
    ),
  },
  { additionalProperties: false, description: 'Exactly one of `selector` and `json_path`' },
);
export type FieldRule = Static<typeof FieldRule>;

export const RuleFields = Type.Object(
  Object.fromEntries(RULE_FIELDS.map((f) => [f, Type.Optional(FieldRule)])) as Record<RuleField, ReturnType<typeof Type.Optional<typeof FieldRule>>>,
  {
    additionalProperties: false,
    description: 'Per field, where its value is on the pages of this site',
  },
);

export const HostPattern = Type.String({
  minLength: 1,
  maxLength: 253,
  description: 'A host (`shop.example`) or a wildcard over its subdomains (`*.shop.example`, which does not match `shop.example` itself); stored lower-cased',
  examples: ['shop.example', '*.shop.example'],
});

export const SiteRuleBody = Type.Object(
  {
    host_pattern: HostPattern,
    fields: Type.Optional(RuleFields),
    page_type: Type.Optional(
      Type.Union([...PAGE_TYPES.map((t) => Type.Literal(t)), Type.Null()], { description: "Overrides the page type extraction would decide on this site's pages" }),
    ),
    note: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
  },
  {
    additionalProperties: false,
    examples: [
      {
        host_pattern: 'shop.example',
        fields: { price: { selector: '#buy-box .price-now' }, sku: { json_path: '$.props.pageProps.product.sku' } },
        page_type: 'product',
        note: 'the JSON-LD price is the regular price, not the sale',
      },
    ],
  },
);
export type SiteRuleBody = Static<typeof SiteRuleBody>;

export const SiteRule = Type.Object(
  {
    id: Type.Integer(),
    host_pattern: Type.String(),
    fields: RuleFields,
    page_type: Type.Union([...PAGE_TYPES.map((t) => Type.Literal(t)), Type.Null()]),
    note: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  {
    $id: 'SiteRule',
    examples: [
      {
        id: 1,
        host_pattern: 'shop.example',
        fields: { price: { selector: '#buy-box .price-now' } },
        page_type: null,
        note: null,
        created_at: '2026-11-27T00:00:00.000Z',
        updated_at: '2026-11-27T00:00:00.000Z',
      },
    ],
  },
);
export type SiteRule = Static<typeof SiteRule>;

export const SiteRulePath = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) });

/** A DNS label: letters, digits, hyphens inside; an IPv4 address or `localhost` pass as hosts too. */
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** The rule as stored: host pattern lower-cased, empty fields dropped; every problem named at once (422). */
export function checkedRule(body: SiteRuleBody): { host_pattern: string; fields: Partial<Record<RuleField, FieldRule>>; page_type: string | null; note: string | null } {
  const errors: FieldError[] = [];
  const host = body.host_pattern.trim().toLowerCase().replace(/\.$/, '');
  const labels = (host.startsWith('*.') ? host.slice(2) : host).split('.');
  if (labels.some((l) => !LABEL.test(l)) || (host.startsWith('*.') && labels.length < 2)) {
    errors.push({
      path: '/host_pattern',
      message: `"${body.host_pattern}" is not a host or a "*.host" pattern (letters, digits and hyphens between dots; a wildcard only as the first label, over at least two labels)`,
    });
  }
  const fields: Partial<Record<RuleField, FieldRule>> = {};
  for (const name of RULE_FIELDS) {
    const rule = body.fields?.[name];
    if (rule === undefined) continue;
    const path = `/fields/${name}`;
    if ((rule.selector === undefined) === (rule.json_path === undefined)) {
      errors.push({ path, message: 'give exactly one of "selector" and "json_path"' });
      continue;
    }
    if (rule.selector !== undefined) {
      const problem = selectorProblem(rule.selector);
      if (problem !== null) errors.push({ path: `${path}/selector`, message: `"${rule.selector}" is not a CSS selector: ${problem}` });
    }
    if (rule.json_path !== undefined && !JSON_PATH.test(rule.json_path.trim())) {
      errors.push({
        path: `${path}/json_path`,
        message: `"${rule.json_path}" is not a JSON path of this form: $ then .name, ['name'] or [index] steps (e.g. $.offers.price)`,
      });
    }
    fields[name] = rule.selector !== undefined ? { selector: rule.selector.trim() } : { json_path: rule.json_path!.trim() };
  }
  if (Object.keys(fields).length === 0 && (body.page_type ?? null) === null) errors.push({ path: '/fields', message: 'a rule pins at least one field or a page type' });
  if (errors.length > 0) throw new ValidationFailed(errors);
  return { host_pattern: host, fields, page_type: body.page_type ?? null, note: body.note ?? null };
}

/** Why css-select cannot use `selector`, or null when it can. */
function selectorProblem(selector: string): string | null {
  try {
    load('<p></p>')('p').find(selector);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** The host patterns that match `host`, most specific first: itself, then `*.` + each parent. */
export function patternsFor(host: string): string[] {
  const labels = host.toLowerCase().replace(/\.$/, '').split('.');
  const out = [labels.join('.')];
  for (let i = 1; labels.length - i >= 2; i += 1) out.push(`*.${labels.slice(i).join('.')}`);
  return out;
}
