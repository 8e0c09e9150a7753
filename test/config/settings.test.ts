// The settings table is the truth the docs are made from: it names exactly what the services read, and the docs are current.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { envExample, withReference } from '../../src/config/settings-docs.js';
import { SETTINGS } from '../../src/config/settings.js';

test('the settings table names exactly the variables the configuration reads (PATH aside)', () => {
  const read = new Set<string>();
  const env = new Proxy({} as Record<string, string | undefined>, {
    get(_target, name) {
      if (typeof name === 'string') read.add(name);
      return undefined;
    },
  });
  loadConfig(env);
  read.delete('PATH');
  assert.deepEqual([...read].sort(), SETTINGS.map((s) => s.name).sort());
  assert.equal(new Set(SETTINGS.map((s) => s.name)).size, SETTINGS.length, 'each setting once');
});

test('docs/configuration.md and .env.example are what the table renders (npm run docs:config)', () => {
  const doc = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
  assert.equal(doc, withReference(doc), 'docs/configuration.md is stale');
  assert.equal(readFileSync(new URL('../../.env.example', import.meta.url), 'utf8'), envExample(), '.env.example is stale');
});

test('.env.example, copied as .env and uncommented, loads to the defaults', () => {
  const env: Record<string, string> = {};
  for (const line of envExample().split('\n')) {
    const match = /^# ([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
    if (match !== null && match[2] !== '') env[match[1]!] = match[2]!;
  }
  assert.ok(Object.keys(env).length > 20);
  const { database, ...rest } = loadConfig({ ...env, PATH: '' });
  const { database: defaultDatabase, ...defaults } = loadConfig({ PATH: '' });
  assert.deepEqual(rest, defaults);
  assert.deepEqual(database, defaultDatabase);
});
