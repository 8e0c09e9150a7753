// Requests for one route, from its schemas: random and malformed parameters, query strings, headers and bodies; and requests broken in exactly one place.
import fc from 'fast-check';
import type { HTTPMethods } from 'fastify';
import type { Call } from './fuzz-contract.js';
import { API_KEY, poolKey, type Services } from './fuzz-services.js';
import {
  anyValueText,
  contentType,
  dangerousKey,
  fieldEntries,
  hugeString,
  json,
  nastyString,
  objectText,
  randomKey,
  randomString,
  rawBody,
  segmentText,
  wellFormed,
} from './fuzz-values.js';
import { fillPath, type Param, type Route } from './route-catalog.js';
import { breakAt, invalidTexts, passes, type Schema, valid, validText } from './schema-arbitrary.js';

export type KeyState = 'right' | 'none' | 'wrong';

export interface FuzzRequest {
  call: Call;
  key: KeyState;
  /** Nothing before the key check can refuse it: a plain host and origin, a well-formed path. */
  plain: boolean;
  /** Nothing before the body parser can refuse it either: `plain`, and the right key. */
  clean: boolean;
  /** Whether the body parses as JSON (none: no body). */
  json: 'none' | 'valid' | 'invalid';
}

export interface BrokenRequest {
  call: Call;
  /** What the 422 must name: `/params/id`, `/querystring/limit`, `/body/scope/product_id`... */
  path: string;
  how: string;
  body?: unknown;
}

const rightKey = fc.constantFrom<Record<string, string>>({ 'x-api-key': API_KEY }, { authorization: `Bearer ${API_KEY}` }, { authorization: `bearer  ${API_KEY}` });
const wrongKey = fc.constantFrom<Record<string, string>>(
  { 'x-api-key': 'wrong' },
  { 'x-api-key': '' },
  { 'x-api-key': API_KEY.slice(0, -1) },
  { authorization: `Bearer ${API_KEY}x` },
  { authorization: 'Bearer' },
  { authorization: `Basic ${Buffer.from(`user:${API_KEY}`).toString('base64')}` },
  { 'x-api-key': 'wrong', authorization: `Bearer ${API_KEY}` },
);
const keyHeaders = fc.oneof(
  { weight: 8, arbitrary: rightKey.map((h) => ['right', h] as const) },
  { weight: 1, arbitrary: fc.constant(['none', {}] as const) },
  { weight: 1, arbitrary: wrongKey.map((h) => ['wrong', h] as const) },
);

/** Header values are printable ASCII: anything else cannot be sent at all. */
const headerText = fc.oneof(fc.stringMatching(/^[!-~][ -~]{0,60}$/), fc.constantFrom('', ' ', 'a'.repeat(4000), '%00', '../', '*/*', 'null'));
// Headers a client may send to any route; `origin`, `host` and `sec-fetch-site` can refuse a request before its route does.
const JUNK = ['x-request-id', 'accept', 'accept-encoding', 'accept-language', 'if-none-match', 'x-forwarded-for', 'last-event-id', 'prefer', 'cookie', 'range'];
const REFUSING = ['host', 'origin', 'sec-fetch-site'];
const junkHeaders = fc.dictionary(fc.constantFrom(...JUNK, ...REFUSING), headerText, { maxKeys: 3 });

/** Every segment of a wildcard route's tail: traversal, encodings, the files it serves. */
const tailSegment = fc.oneof(
  fc.constantFrom('index.html', 'static', 'swagger-ui.css', 'app.js', '..', '.', '%2e%2e', '..%2f..%2fpackage.json', '%00', '%zz', 'x'.repeat(300), '', 'json', 'a b'),
  segmentText,
);
const junkTail = fc.array(tailSegment, { maxLength: 4 }).map((parts) => parts.join('/'));

/** A wildcard route's tail: a file the service's own pages link to under it, or anything. */
function tailFor(route: Route, files: readonly string[]): fc.Arbitrary<string> {
  const stem = route.path.slice(0, -1);
  const served = files.filter((f) => f.startsWith(stem)).map((f) => f.slice(stem.length));
  return served.length === 0 ? junkTail : fc.oneof(fc.constantFrom(...served), junkTail);
}

/** What a route's requests are drawn from besides its own schemas. */
export interface Surroundings {
  /** Every query parameter name of either service. */
  queryNames: string[];
  /** Paths of the files the services' own pages link to (the dashboard's assets, Swagger UI's). */
  files: string[];
}

/** A value for a path parameter: one that exists, a valid one, or anything at all. */
function paramValue(s: Services, route: Route, p: Param): fc.Arbitrary<string> {
  const known = s.pools.get(poolKey(route, p.name));
  const validOne = validText(p.schema, s.hints, p.name).map((t) => encodeURIComponent(wellFormed(t)));
  const options: Array<fc.WeightedArbitrary<string>> = [
    { weight: 2, arbitrary: validOne },
    { weight: 3, arbitrary: segmentText },
  ];
  if (known.length > 0) options.push({ weight: 4, arbitrary: fc.constantFrom(...known).map(encodeURIComponent) });
  return fc.oneof(...options);
}

/** A query string: the route's own parameters (valid and not), other routes' names, random and repeated keys. */
function queryFor(s: Services, route: Route, allNames: string[]): fc.Arbitrary<string> {
  const own = route.query;
  const valueFor = (name: string): fc.Arbitrary<string> => {
    const p = own.find((q) => q.name === name);
    const validOne = p ? validText(p.schema, s.hints, name) : fc.constant('1');
    return fc.oneof({ weight: 3, arbitrary: validOne }, { weight: 2, arbitrary: randomString.map(wellFormed) }, { weight: 1, arbitrary: hugeString.map((h) => h.slice(0, 5000)) });
  };
  const names: Array<fc.WeightedArbitrary<string>> = [
    { weight: 2, arbitrary: fc.constantFrom(...allNames) },
    { weight: 1, arbitrary: randomKey.map(wellFormed) },
  ];
  if (own.length > 0) names.push({ weight: 5, arbitrary: fc.constantFrom(...own.map((q) => q.name)) });
  const name = fc.oneof(...names);
  const entry = name.chain((n) => fc.tuple(fc.constant(n), valueFor(n), fc.boolean()));
  const encode = (text: string, raw: boolean) => (raw && /^[!-~]*$/.test(text) && !/[#&=]/.test(text) ? text : encodeURIComponent(wellFormed(text)));
  return fc.oneof(
    { weight: 6, arbitrary: fc.array(entry, { maxLength: 5 }).map((entries) => entries.map(([k, v, raw]) => `${encode(k, raw)}=${encode(v, raw)}`).join('&')) },
    { weight: 1, arbitrary: fc.constantFrom('', '&&', '=', 'a', '%', '%zz=1', 'limit', 'limit=1&limit=2', '__proto__[x]=1', 'a[b]=c', '?', '#x') },
  );
}

/** A body for the route: schema-valid, broken, the real fields with anything in them, any JSON, or not JSON at all. */
function bodyFor(s: Services, route: Route): fc.Arbitrary<{ payload?: string | Buffer; type?: string }> {
  const none = fc.constant({});
  const junk = fc.tuple(rawBody, contentType).map(([payload, type]) => ({ payload, type }));
  if (route.bodies.length === 0) return fc.oneof({ weight: 6, arbitrary: none }, { weight: 1, arbitrary: junk });
  const options: Array<fc.WeightedArbitrary<{ payload?: string | Buffer; type?: string }>> = [
    { weight: 1, arbitrary: none },
    { weight: 2, arbitrary: junk },
  ];
  for (const { type, schema } of route.bodies) {
    const as = (t: fc.Arbitrary<string>) =>
      fc.tuple(t, fc.oneof({ weight: 6, arbitrary: fc.constant(type) }, { weight: 1, arbitrary: contentType })).map(([payload, ct]) => ({ payload, type: ct }));
    if (type === 'application/json') options.push({ weight: 12, arbitrary: as(jsonBody(s, schema)) });
    else if (type === 'text/csv') options.push({ weight: 12, arbitrary: as(csvBody(s)) });
    else options.push({ weight: 6, arbitrary: as(fc.oneof(fc.lorem({ maxCount: 40 }), randomString, hugeString, nastyString)) });
  }
  return fc.oneof(...options);
}

function jsonBody(s: Services, schema: Schema): fc.Arbitrary<string> {
  const fields = Object.fromEntries(Object.entries((schema.properties ?? {}) as Record<string, Schema>).map(([k, sub]) => [k, valid(sub, s.hints, k)]));
  const validOne = valid(schema, s.hints);
  return fc.oneof(
    { weight: 4, arbitrary: validOne.map(json) },
    { weight: 3, arbitrary: fc.tuple(validOne, fc.nat(), fc.nat()).map(([v, a, b]) => json(breakAt(schema, v, a, b)?.value ?? v)) },
    { weight: 2, arbitrary: Object.keys(fields).length > 0 ? objectText(fieldEntries(fields)) : validOne.map(json) },
    { weight: 1, arbitrary: fc.tuple(validOne, dangerousKey, anyValueText).map(([v, k, inner]) => withKey(json(v), k, inner)) },
    { weight: 1, arbitrary: anyValueText },
  );
}

/** `objectText` with one more key, written into the JSON text so `__proto__` stays a key. */
function withKey(text: string, key: string, value: string): string {
  return text.startsWith('{') && text !== '{}' ? `{${json(key)}:${value},${text.slice(1)}` : `{${json(key)}:${value}}`;
}

/** Watch-list CSV: a header or none, the site's URLs and others, tags and calendars right and wrong, quoting, CRLF, a BOM. */
function csvBody(s: Services): fc.Arbitrary<string> {
  const cell = fc.oneof(
    fc.constantFrom(
      ...s.site.pages,
      'https://shop.invalid/a',
      'ftp://x/',
      'espresso;kitchen',
      ' a ; b ',
      '"quoted, comma"',
      '"unclosed',
      '60',
      '0 7 * * *',
      'Mars/Olympus',
      'true',
      '',
    ),
    randomString.map((t) => t.replace(/[\r\n]/g, ' ')),
  );
  const header = fc.constantFrom('', 'url,tags,name\n', 'url,every_minutes,cron,timezone,max_pages,use_selenium\n', 'URL;TAGS\n', 'url,unknown\n', '\ufeffurl,tags\n');
  const line = fc.array(cell, { minLength: 1, maxLength: 4 }).map((cells) => cells.join(','));
  return fc
    .tuple(header, fc.array(line, { maxLength: 6 }), fc.constantFrom('\n', '\r\n'), fc.boolean())
    .map(([h, lines, eol, comment]) => `${h}${comment ? '# watch these\n' : ''}${lines.join(eol)}${eol}`);
}

/** A random request to `route`: parameters, query, headers and body all drawn from the above. */
export function requestFor(s: Services, route: Route, around: Surroundings): fc.Arbitrary<FuzzRequest> {
  const params = fc.record(Object.fromEntries(route.params.map((p) => [p.name, paramValue(s, route, p)])) as Record<string, fc.Arbitrary<string>>);
  const method: fc.Arbitrary<HTTPMethods> = route.head
    ? fc.oneof({ weight: 5, arbitrary: fc.constant(route.method) }, { weight: 1, arbitrary: fc.constant<HTTPMethods>('HEAD') })
    : fc.constant(route.method);
  const headerParams = fc.record(
    Object.fromEntries(
      route.headers.map((h) => [h.name, fc.oneof(validText(h.schema, s.hints, h.name), headerText, fc.constantFrom('respond-async', 'respond-async, wait=1', '42'))]),
    ),
    {
      requiredKeys: [],
    },
  );
  const junk = route.stream ? junkHeaders.map((h) => Object.fromEntries(Object.entries(h).filter(([k]) => k !== 'host'))) : junkHeaders;
  return fc
    .record({
      method,
      params,
      tail: route.path.endsWith('*') ? tailFor(route, around.files) : fc.constant(''),
      query: fc.oneof({ weight: 1, arbitrary: fc.constant('') }, { weight: 2, arbitrary: queryFor(s, route, around.queryNames) }),
      key: keyHeaders,
      junk: fc.oneof({ weight: 4, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: junk }),
      headerParams,
      body: bodyFor(s, route),
    })
    .map(({ method, params, tail: t, query, key, junk: extra, headerParams: hp, body }) => {
      const headers: Record<string, string> = { ...(extra as Record<string, string>), ...(hp as Record<string, string>), ...key[1] };
      if (body.type !== undefined) headers['content-type'] = body.type;
      const url = fillPath(route, params, t) + (query === '' ? '' : `?${query}`);
      const call: Call = { service: route.service, method, url, headers, allowed5xx: route.allowed5xx, ...(body.payload === undefined ? {} : { payload: body.payload }) };
      // Over a socket (the streams) Node's parser answers 431 to a request line and headers past 16 KiB, before any route.
      const size = url.length + Object.entries(headers).reduce((n, [k, v]) => n + k.length + v.length, 0);
      const plain = !REFUSING.some((h) => h in extra) && Object.values(params).every(cleanSegment) && size < 8_000;
      const text = body.payload?.toString();
      return {
        call,
        key: key[0],
        plain,
        clean: plain && key[0] === 'right',
        json: text === undefined ? 'none' : parseJson(text) === undefined ? 'invalid' : 'valid',
      } as FuzzRequest;
    });
}

/** A path segment the router takes as it is: not empty, decodable, not a dot segment, within its length limit. */
function cleanSegment(segment: string): boolean {
  try {
    const decoded = decodeURIComponent(segment);
    return segment !== '' && segment.length <= 2048 && decoded !== '.' && decoded !== '..';
  } catch {
    return false;
  }
}

/** The body as the service's JSON parser reads it, or undefined when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text.replace(/^\ufeff/, ''));
  } catch {
    return undefined;
  }
}

/**
 * A request valid in every part but one: a path parameter, a query parameter or a place in the JSON body
 * made invalid against its schema. Undefined parts (nothing there to break) are not drawn.
 */
export function brokenRequestFor(s: Services, route: Route): fc.Arbitrary<BrokenRequest | undefined> | undefined {
  const breakableParams = route.params.filter((p) => invalidTexts(p.schema, p.name).length > 0);
  const breakableQuery = route.query.filter((q) => invalidTexts(q.schema, q.name).length > 0);
  const jsonSchema = route.bodies.find((b) => b.type === 'application/json')?.schema;
  const csv = route.bodies.some((b) => b.type === 'text/csv');
  const plain = route.bodies.some((b) => b.type === 'text/plain');
  const parts: string[] = [...breakableParams.map((p) => `params:${p.name}`), ...breakableQuery.map((q) => `query:${q.name}`), ...(jsonSchema ? ['body'] : [])];
  if (parts.length === 0) return undefined;
  const params = fc.record(
    Object.fromEntries(
      route.params.map((p) => {
        const known = s.pools.get(poolKey(route, p.name));
        return [p.name, known.length > 0 ? fc.constantFrom(...known) : validText(p.schema, s.hints, p.name)];
      }),
    ) as Record<string, fc.Arbitrary<string>>,
  );
  const query = fc.record(Object.fromEntries(route.query.map((q) => [q.name, validText(q.schema, s.hints, q.name)])) as Record<string, fc.Arbitrary<string>>, {
    requiredKeys: route.query.filter((q) => q.required).map((q) => q.name),
  });
  const body = jsonSchema ? valid(jsonSchema, s.hints) : fc.constant(undefined);
  return fc.record({ part: fc.constantFrom(...parts), params, query, body, a: fc.nat(), b: fc.nat() }).map(({ part, params: ps, query: qs, body: b, a, b: c }) => {
    // Everything valid to begin with, or this draw says nothing.
    const textValid = (list: Param[], values: Record<string, string>) =>
      passes({ type: 'object', properties: Object.fromEntries(list.map((p) => [p.name, p.schema])), required: list.filter((p) => p.required).map((p) => p.name) }, values, true);
    if (!textValid(route.params, ps) || !textValid(route.query, qs) || (jsonSchema && !passes(jsonSchema, b))) return undefined;
    const values = { ...ps };
    const q: Record<string, string> = { ...qs };
    let path: string;
    let how: string;
    let payload = b;
    if (part.startsWith('params:') || part.startsWith('query:')) {
      const [where, name] = part.split(':') as [string, string];
      const p = (where === 'params' ? route.params : route.query).find((x) => x.name === name)!;
      const bad = invalidTexts(p.schema, p.name);
      const text = bad[a % bad.length]!;
      if (where === 'params') {
        if (!cleanSegment(encodeURIComponent(wellFormed(text)))) return undefined;
        values[name] = text;
      } else q[name] = text;
      path = `/${where === 'params' ? 'params' : 'querystring'}/${name}`;
      how = `${name}=${JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text)}`;
    } else {
      const broken = breakAt(jsonSchema!, b, a, c);
      if (broken === undefined) return undefined;
      payload = broken.value;
      path = `/body${broken.path}`;
      how = broken.how;
    }
    const encoded = Object.fromEntries(Object.entries(values).map(([k, v]) => [k, encodeURIComponent(wellFormed(v))]));
    const search = new URLSearchParams(q).toString();
    const headers: Record<string, string> = { 'x-api-key': API_KEY };
    let sent: string | undefined;
    if (jsonSchema) {
      headers['content-type'] = 'application/json';
      sent = json(payload);
    } else if (csv) {
      headers['content-type'] = 'text/csv';
      sent = `url\n${s.site.base}/product\n`;
    } else if (plain) {
      headers['content-type'] = 'text/plain';
      sent = 'Some text.';
    }
    const call: Call = {
      service: route.service,
      method: route.method,
      url: fillPath(route, encoded) + (search ? `?${search}` : ''),
      headers,
      allowed5xx: route.allowed5xx,
      ...(sent === undefined ? {} : { payload: sent }),
    };
    return { call, path, how, ...(jsonSchema ? { body: payload } : {}) };
  });
}

/** An ordinary request to `route` with `method`: parameters that exist (or valid ones), no query, the key. */
export function plainRequest(s: Services, route: Route, method: HTTPMethods): Call {
  const values = Object.fromEntries(
    route.params.map((p) => {
      const known = s.pools.get(poolKey(route, p.name));
      return [p.name, encodeURIComponent(wellFormed(known[0] ?? fc.sample(validText(p.schema, s.hints, p.name), { numRuns: 1, seed: 1 })[0]!))];
    }),
  );
  return { service: route.service, method, url: fillPath(route, values), headers: { 'x-api-key': API_KEY }, allowed5xx: route.allowed5xx };
}
