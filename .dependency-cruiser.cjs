// The layers of src/ (docs/architecture.md), checked by `npm run lint` and CI: imports only point down, no circles.
/** A folder (or a file at src/), as a path pattern. */
const dir = (...names) => `^src/(${names.join('|')})(/|\\.ts$)`;

// Bottom to top. A module may import from its own layer and the layers below it, never above.
const BASE = ['problems', 'redact', 'config'];
const INFRA = ['egress', 'url-identity', 'db', 'text', 'http'];
const PORTS = ['queue'];
const STORES = ['products', 'articles', 'tags', 'site-rules', 'scrape-logs', 'external-posts'];
const TRACKING = ['tracking'];
const ALERTS = ['alerts'];
const WRITE_PATH = ['recording'];
const PIPELINE = ['scraping'];
const SERVICES = ['jobs', 'ui'];
const ROOT = ['context'];
const ENTRIES = ['main', 'worker', 'auxiliary', 'tools', 'start'];

const layers = [BASE, INFRA, PORTS, STORES, TRACKING, ALERTS, WRITE_PATH, PIPELINE, SERVICES, ROOT, ENTRIES];
const above = (i) => layers.slice(i + 1).flat();

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Two modules that import each other (type-only imports included) share a concept that wants its own home.',
      from: {},
      to: { circular: true },
    },
    ...layers.slice(0, -1).map((layer, i) => ({
      name: `layer-${layer.join('-')}`,
      severity: 'error',
      comment: `${layer.join(', ')} may not import from a layer above it (${above(i).join(', ')}).`,
      from: { path: dir(...layer) },
      to: { path: dir(...above(i)) },
    })),
    {
      name: 'storage-knows-its-tables',
      severity: 'error',
      comment: 'The storage layer (db/, products/, articles/, tags/, site-rules/, scrape-logs/) imports nothing from scraping, tracking, jobs, recording or the entry points.',
      from: { path: dir('db', 'products', 'articles', 'tags', 'site-rules', 'scrape-logs') },
      to: { path: dir('scraping', 'tracking', 'jobs', 'recording', 'context', 'main', 'worker', 'auxiliary', 'tools') },
    },
    {
      name: 'migrations-are-frozen',
      severity: 'error',
      comment: 'A migration never calls live application code: only the Migration type and node built-ins.',
      from: { path: '^src/db/migrations/' },
      to: { path: '^src/', pathNot: ['^src/db/migration\\.ts$', '^src/db/queryable\\.ts$', '^src/db/migrations/'] },
    },
    {
      name: 'not-to-dev-dependencies',
      severity: 'error',
      comment: 'The services run without devDependencies.',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'] },
    },
    {
      name: 'no-unresolvable',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a circle of types is still a circle.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs'], exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'types', 'default'] },
    exclude: { path: '^(dist|node_modules)/' },
  },
};
