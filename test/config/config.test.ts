// Configuration read from the environment: what is accepted, and the clear error for what is not.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { createMongoLogStore } from '../../src/scrape-logs/mongo-log-store.js';

test('MONGODB_URL takes what the driver takes: several hosts, a replica set, SRV; the log store opens on it', async () => {
  for (const url of [
    'mongodb://a.example:27017,b.example:27017,c.example:27017/logs?replicaSet=rs0',
    'mongodb://user:pw@db.example/logs?authSource=admin',
    'mongodb+srv://cluster0.example.net/logs',
    'mongodb://localhost',
  ]) {
    assert.equal(loadConfig({ MONGODB_URL: url }).database.mongodbUrl, url);
  }
  // The store names its database from the URL with the driver's parser (no connection is made here).
  const store = createMongoLogStore('mongodb://a.example:27017,b.example:27017/logs?replicaSet=rs0', { timeoutMs: 100 });
  await store.close();
});

test('a MONGODB_URL the driver refuses is a ConfigError naming the variable, with the password masked', () => {
  for (const url of ['http://db.example/logs', 'mongodb://', 'mongodb://user:hunter2@/x']) {
    assert.throws(
      () => loadConfig({ MONGODB_URL: url }),
      (error: Error) => error instanceof ConfigError && /MONGODB_URL/.test(error.message) && !error.message.includes('hunter2'),
      url,
    );
  }
});

test('TRUST_PROXY: off by default; true, a hop count, or addresses and CIDR ranges', () => {
  assert.equal(loadConfig({}).http.trustProxy, false);
  assert.equal(loadConfig({ TRUST_PROXY: 'true' }).http.trustProxy, true);
  assert.equal(loadConfig({ TRUST_PROXY: '2' }).http.trustProxy, 2);
  assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.1, 172.16.0.0/12,::1' }).http.trustProxy, ['10.0.0.1', '172.16.0.0/12', '::1']);
  assert.throws(() => loadConfig({ TRUST_PROXY: 'the load balancer' }), ConfigError);
});

test('API_KEY_READS and SCRAPE_RUN_DEADLINE_MS', () => {
  assert.equal(loadConfig({}).auth.apiKeyReads, false);
  assert.equal(loadConfig({ API_KEY_READS: 'true' }).auth.apiKeyReads, true);
  assert.equal(loadConfig({}).scrape.runDeadlineMs, 300_000);
  assert.equal(loadConfig({ SCRAPE_RUN_DEADLINE_MS: '5000' }).scrape.runDeadlineMs, 5000);
  assert.throws(() => loadConfig({ SCRAPE_RUN_DEADLINE_MS: '10' }), ConfigError);
});

test('PGLITE_SHARED_BUFFERS_MB: auto by default, else 8 to 1024', () => {
  assert.equal(loadConfig({}).database.pgliteSharedBuffersMb, 'auto');
  assert.equal(loadConfig({ PGLITE_SHARED_BUFFERS_MB: 'auto' }).database.pgliteSharedBuffersMb, 'auto');
  assert.equal(loadConfig({ PGLITE_SHARED_BUFFERS_MB: '64' }).database.pgliteSharedBuffersMb, 64);
  for (const bad of ['4', '2048', 'lots', '64MB']) assert.throws(() => loadConfig({ PGLITE_SHARED_BUFFERS_MB: bad }), /PGLITE_SHARED_BUFFERS_MB/, bad);
});

test('PGLITE_WASM_TIER_UP: auto by default, else true or false', () => {
  assert.equal(loadConfig({}).database.pgliteWasmTierUp, 'auto');
  assert.equal(loadConfig({ PGLITE_WASM_TIER_UP: 'AUTO' }).database.pgliteWasmTierUp, 'auto');
  assert.equal(loadConfig({ PGLITE_WASM_TIER_UP: 'true' }).database.pgliteWasmTierUp, true);
  assert.equal(loadConfig({ PGLITE_WASM_TIER_UP: 'off' }).database.pgliteWasmTierUp, false);
  assert.throws(() => loadConfig({ PGLITE_WASM_TIER_UP: 'fast' }), /PGLITE_WASM_TIER_UP must be auto, true or false/);
});
