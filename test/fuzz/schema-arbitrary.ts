// Values from a route's JSON schema (as /openapi.json shows it): valid ones, and ones broken in exactly one known place.
import fc from 'fast-check';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { nastyString } from './fuzz-values.js';

// ajv-formats ships CommonJS with a default export that TypeScript sees one level down.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export type Schema = Record<string, unknown>;

/** Suggests values for a field by its name and schema (URLs of the local fixture, ids that exist...). */
export type Hints = (name: string, schema: Schema) => fc.Arbitrary<unknown> | undefined;

/** A value made invalid at `path` (a JSON pointer into it), everything else as it was. */
export interface Broken {
  value: unknown;
  path: string;
  how: string;
}

// The keywords this generator understands; a schema using another one has no generator (the suite lists it).
const KEYWORDS = new Set(['type', 'properties', 'required', 'additionalProperties', 'items', 'minItems', 'maxItems', 'uniqueItems', 'minProperties']);
const KEYWORDS_TOO = ['enum', 'const', 'anyOf', 'oneOf', 'format', 'pattern', 'minLength', 'maxLength', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'];
const ANNOTATIONS = new Set(['description', 'default', 'examples', 'example', 'title', 'deprecated', 'readOnly', 'writeOnly', 'nullable']);
const FORMATS = new Set(['uuid', 'date-time', 'email', 'uri']);
for (const k of KEYWORDS_TOO) KEYWORDS.add(k);

/** The parts of `schema` this generator cannot honour, as JSON pointers with the keyword; empty when it can. */
export function unsupported(schema: unknown, at = ''): string[] {
  if (schema === true || schema === undefined) return [];
  if (schema === null || typeof schema !== 'object') return [`${at} is not a schema`];
  const s = schema as Schema;
  const out: string[] = [];
  for (const key of Object.keys(s)) {
    if (!KEYWORDS.has(key) && !ANNOTATIONS.has(key)) out.push(`${at || '/'} uses ${key}`);
  }
  if (typeof s.format === 'string' && !FORMATS.has(s.format)) out.push(`${at || '/'} has format ${s.format}`);
  for (const [name, sub] of Object.entries((s.properties ?? {}) as Record<string, unknown>)) out.push(...unsupported(sub, `${at}/${name}`));
  if (s.items !== undefined) out.push(...unsupported(s.items, `${at}/items`));
  if (typeof s.additionalProperties === 'object') out.push(...unsupported(s.additionalProperties, `${at}/additionalProperties`));
  for (const branch of [...((s.anyOf ?? []) as unknown[]), ...((s.oneOf ?? []) as unknown[])]) out.push(...unsupported(branch, at));
  return out;
}

function validatorFor(coerce: boolean): Ajv {
  // As the services validate (http/base-app.ts): bodies as sent, query strings and paths coerced from text.
  const ajv = new Ajv({ strict: false, allErrors: true, coerceTypes: coerce ? 'array' : false, useDefaults: true });
  addFormats(ajv);
  return ajv;
}
const bodyAjv = validatorFor(false);
const textAjv = validatorFor(true);
const compiled = new Map<string, ValidateFunction>();

/** Whether `value` passes `schema` as the service validates that part (`text`: a query string or path). */
export function passes(schema: Schema, value: unknown, text = false): boolean {
  const key = `${text}:${JSON.stringify(schema)}`;
  let validate = compiled.get(key);
  if (validate === undefined) {
    validate = (text ? textAjv : bodyAjv).compile(schema);
    compiled.set(key, validate);
  }
  // Defaults and coercion change the value; judge a copy.
  return validate(structuredClone(value)) as boolean;
}

const types = (s: Schema): string[] => (Array.isArray(s.type) ? (s.type as string[]) : typeof s.type === 'string' ? [s.type] : []);
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

/** Valid values for `schema` (most of the time: the caller checks with `passes`). */
export function valid(schema: Schema, hints: Hints, name = ''): fc.Arbitrary<unknown> {
  const hinted = hints(name, schema);
  const own = validOwn(schema, hints, name);
  return hinted === undefined ? own : fc.oneof({ weight: 3, arbitrary: hinted }, { weight: 1, arbitrary: own });
}

function validOwn(s: Schema, hints: Hints, name: string): fc.Arbitrary<unknown> {
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  if ('const' in s) return fc.constant(s.const);
  const branches = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (branches) return fc.oneof(...branches.map((b) => valid({ ...b }, hints, name)));
  const list = types(s);
  if (list.length > 1) return fc.oneof(...list.map((type) => validOwn({ ...s, type }, hints, name)));
  switch (list[0]) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
    case 'number':
      return numberIn(s, list[0] === 'integer');
    case 'string':
      return stringIn(s);
    case 'array': {
      const min = num(s.minItems) ?? 0;
      const max = Math.min(num(s.maxItems) ?? min + 4, min + 4);
      const items = valid((s.items ?? {}) as Schema, hints, name);
      return s.uniqueItems ? fc.uniqueArray(items, { minLength: min, maxLength: max, selector: (v) => JSON.stringify(v) }) : fc.array(items, { minLength: min, maxLength: max });
    }
    default: {
      if (s.properties === undefined && list[0] !== 'object') return fc.jsonValue({ maxDepth: 2 });
      const props = (s.properties ?? {}) as Record<string, Schema>;
      const required = new Set((s.required ?? []) as string[]);
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [key, sub] of Object.entries(props)) model[key] = valid(sub, hints, key);
      return fc.record(model, { requiredKeys: [...required].filter((k) => k in props) });
    }
  }
}

function numberIn(s: Schema, integer: boolean): fc.Arbitrary<number> {
  const floor = num(s.exclusiveMinimum) ?? num(s.minimum);
  const ceil = num(s.exclusiveMaximum) ?? num(s.maximum);
  const lo = floor ?? -1_000_000;
  const hi = ceil ?? Math.max(lo + 1_000_000, 1_000_000);
  const edges = [num(s.minimum), num(s.maximum)].filter((v): v is number => v !== undefined);
  const inside = integer
    ? fc.integer({ min: Math.ceil(Math.max(lo, -(2 ** 31))), max: Math.floor(Math.min(hi, 2 ** 31 - 1)) })
    : fc.double({ min: lo, max: hi, noNaN: true, noDefaultInfinity: true });
  return edges.length > 0 ? fc.oneof({ weight: 3, arbitrary: inside }, { weight: 1, arbitrary: fc.constantFrom(...edges) }) : inside;
}

function stringIn(s: Schema): fc.Arbitrary<string> {
  const min = num(s.minLength) ?? 0;
  const max = num(s.maxLength) ?? Math.max(min, 60);
  const fits = (text: string) => text.length >= min && text.length <= max;
  switch (s.format) {
    case 'uuid':
      return fc.uuid().map(String);
    case 'date-time':
      return fc.date({ min: new Date('1970-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
    case 'email':
      return fc.constantFrom('me@home.example', 'a.b+c@shop.example', 'x@sub.example.org');
    case 'uri':
      return fc.constantFrom('https://shop.invalid/', 'http://127.0.0.1:9/x');
  }
  if (typeof s.pattern === 'string') {
    const re = new RegExp(s.pattern, 'u');
    let matching: fc.Arbitrary<string>;
    try {
      matching = fc.stringMatching(re);
    } catch {
      matching = fc.string({ minLength: min, maxLength: Math.min(max, min + 30) });
    }
    const free = fc.oneof(fc.string({ minLength: min, maxLength: Math.min(max, min + 30) }), nastyString);
    return fc.oneof({ weight: 3, arbitrary: matching }, { weight: 1, arbitrary: free }).map((text) => (fits(text) && re.test(text) ? text : fallback(min)));
  }
  return fc
    .oneof(
      { weight: 3, arbitrary: fc.string({ unit: 'grapheme', minLength: min, maxLength: Math.min(max, min + 30) }) },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: min, maxLength: Math.min(max, min + 20) }) },
      { weight: 1, arbitrary: nastyString },
    )
    .map((text) => (fits(text) ? text : fallback(min)));
}

/** A plain string of at least `min` characters, for when a generated one did not fit (the caller checks validity). */
const fallback = (min: number) => 'a'.repeat(Math.max(min, 1));

// ---------------------------------------------------------------------------------------------
// Breaking a valid value in one place.

/** Every node of `value` with the schema that governs it (a union resolved to the branch the node passes). */
function nodes(schema: Schema, value: unknown, at = ''): Array<{ path: string; schema: Schema; value: unknown }> {
  const branches = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (branches) {
    const branch = branches.find((b) => passes(b, value));
    return branch === undefined ? [] : nodes(branch, value, at);
  }
  const out = [{ path: at, schema, value }];
  if (Array.isArray(value) && schema.items) {
    value.forEach((item, i) => {
      out.push(...nodes(schema.items as Schema, item, `${at}/${i}`));
    });
  } else if (value !== null && typeof value === 'object' && schema.properties) {
    for (const [key, sub] of Object.entries(schema.properties as Record<string, Schema>)) {
      if (key in (value as object)) out.push(...nodes(sub, (value as Record<string, unknown>)[key], `${at}/${key}`));
    }
  }
  return out;
}

const WRONG_TYPES: unknown[] = ['x', '', 12345.5, -1, 0, true, null, [], {}, { a: 1 }, ['x']];

/** Values that break `s` at this node: off by one at each bound, the wrong type, outside the enum or pattern. */
function breakers(s: Schema, value: unknown): Array<{ replace?: unknown; remove?: string; add?: string; how: string }> {
  const out: Array<{ replace?: unknown; remove?: string; add?: string; how: string }> = WRONG_TYPES.map((v) => ({ replace: v, how: `wrong type ${JSON.stringify(v)}` }));
  const lo = num(s.minimum);
  const hi = num(s.maximum);
  if (lo !== undefined) out.push({ replace: lo - 1, how: 'minimum - 1' });
  if (hi !== undefined) out.push({ replace: hi + 1, how: 'maximum + 1' });
  if (num(s.exclusiveMinimum) !== undefined) out.push({ replace: s.exclusiveMinimum, how: 'at the exclusive minimum' });
  if (types(s).includes('integer')) out.push({ replace: 1.5, how: 'a fraction' });
  if (num(s.minLength) !== undefined && (s.minLength as number) > 0) out.push({ replace: 'a'.repeat((s.minLength as number) - 1), how: 'minLength - 1' });
  if (num(s.maxLength) !== undefined) out.push({ replace: 'a'.repeat((s.maxLength as number) + 1), how: 'maxLength + 1' });
  if (typeof s.pattern === 'string' || s.format !== undefined || Array.isArray(s.enum)) {
    for (const text of [' ', 'not valid', '\u0000', '%zz', 'ÄÖ-😀', 'urn:uuid:00000000-0000-0000-0000-000000000000', 'javascript:alert(1)'])
      out.push({ replace: text, how: `not the pattern/format/enum: ${JSON.stringify(text)}` });
  }
  if (num(s.maxItems) !== undefined && Array.isArray(value) && value.length > 0) {
    out.push({ replace: Array.from({ length: (s.maxItems as number) + 1 }, (_, i) => value[i % value.length]), how: 'maxItems + 1' });
  }
  if (num(s.minItems) !== undefined && (s.minItems as number) > 0) out.push({ replace: [], how: 'minItems - 1' });
  if (s.uniqueItems && Array.isArray(value) && value.length > 0) out.push({ replace: [...value, value[0]], how: 'a repeated item' });
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const key of (s.required ?? []) as string[]) out.push({ remove: key, how: `without required ${key}` });
    if (s.additionalProperties === false) for (const key of ['unknown_field', 'constructor', 'toString', 'Price']) out.push({ add: key, how: `unknown field ${key}` });
  }
  return out;
}

function setAt(root: unknown, path: string, change: (parent: Record<string, unknown>, key: string) => void): unknown {
  const copy = structuredClone(root);
  if (path === '') {
    const holder = { v: copy } as Record<string, unknown>;
    change(holder, 'v');
    return holder.v;
  }
  const keys = path.slice(1).split('/');
  let node = copy as Record<string, unknown>;
  for (const key of keys.slice(0, -1)) node = node[key] as Record<string, unknown>;
  change(node, keys.at(-1)!);
  return copy;
}

/**
 * `value` (valid for `schema`) broken in exactly one place, with that place's path; or undefined when
 * the chosen change happened to stay valid (a union took it) and the caller should draw again.
 */
export function breakAt(schema: Schema, value: unknown, pick: number, pickHow: number): Broken | undefined {
  const all = nodes(schema, value);
  if (all.length === 0) return undefined;
  const node = all[pick % all.length]!;
  const options = breakers(node.schema, node.value);
  const chosen = options[pickHow % options.length]!;
  let broken: unknown;
  let path = node.path;
  if (chosen.remove !== undefined) {
    path = `${node.path}/${chosen.remove}`;
    broken = setAt(value, node.path, (parent, key) => {
      const obj = { ...(parent[key] as Record<string, unknown>) };
      delete obj[chosen.remove!];
      parent[key] = obj;
    });
  } else if (chosen.add !== undefined) {
    path = `${node.path}/${chosen.add}`;
    broken = setAt(value, node.path, (parent, key) => {
      const obj = { ...(parent[key] as Record<string, unknown>) };
      // An own property even for keys such as "constructor", as JSON.parse would make it.
      Object.defineProperty(obj, chosen.add!, { value: 1, enumerable: true, writable: true, configurable: true });
      parent[key] = obj;
    });
  } else {
    broken = setAt(value, node.path, (parent, key) => {
      parent[key] = chosen.replace;
    });
  }
  if (passes(schema, broken)) return undefined;
  return { value: broken, path, how: chosen.how };
}

// ---------------------------------------------------------------------------------------------
// Path parameters and query values: text.

/** A valid value of a path or query parameter, as the text sent. */
export function validText(schema: Schema, hints: Hints, name: string): fc.Arbitrary<string> {
  return valid(schema, hints, name).map((v) => (typeof v === 'string' ? v : Array.isArray(v) ? v.map(String).join(',') : JSON.stringify(v)));
}

/** Texts that a parameter with `schema` must refuse (checked as the service checks text); may be empty. */
export function invalidTexts(schema: Schema, name: string): string[] {
  const candidates = [
    'abc',
    '',
    ' ',
    '1.5',
    '-1',
    '0',
    '1e400',
    'NaN',
    'maybe',
    '\u0000',
    'x'.repeat(3000),
    '00000000-0000-0000-0000-00000000000g',
    'urn:uuid:00000000-0000-0000-0000-000000000000',
    '2147483648',
    '99999999999999999999',
  ];
  const lo = num(schema.minimum);
  const hi = num(schema.maximum);
  if (lo !== undefined) candidates.push(String(lo - 1));
  if (hi !== undefined) candidates.push(String(hi + 1));
  if (num(schema.maxLength) !== undefined) candidates.push('a'.repeat((schema.maxLength as number) + 1));
  const holder = { type: 'object', properties: { [name]: schema } };
  return candidates.filter((text) => !passes(holder, { [name]: text }, true));
}
