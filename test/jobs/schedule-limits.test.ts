// Schedules bounded: SCHEDULES_MAX of them, each looked at only when due (one queued message for its next run), none on every pass.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Database } from '../../src/db/database.js';
import type { App } from '../../src/http/base-app.js';
import { startFixtureSite } from '../fixtures/site.js';
import { assertProblem, backends, warnIfNoPostgres, openService, type OpenService } from '../helpers.js';
import { until } from '../wait.js';

warnIfNoPostgres();

for (const backend of backends()) {
  describe(`schedule limits on ${backend.name}`, () => {
    let app: App;
    let db: Database;
    let queueSchema: string;
    let site: Awaited<ReturnType<typeof startFixtureSite>>;
    let opened: OpenService;

    before(async () => {
      site = await startFixtureSite();
      const env = { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', SCRAPE_OBEY_ROBOTS: 'false', SCHEDULES_MAX: '20' };
      const service = (opened = await openService(backend, env, { work: true, queueTiming: { cronSeconds: 1 } }));
      opened.own(site);
      db = opened.db;
      app = service.app;
      queueSchema = service.config.jobs.queueSchema;
    });
    after(() => opened.close());

    const post = (payload: object) => app.inject({ method: 'POST', url: '/schedules', payload });
    /** The messages waiting in the schedules' queue, by schedule, with the time each waits for. */
    const waiting = async () =>
      db.query<{ schedule_id: string; start_after: string }>(
        `SELECT data->>'schedule_id' AS schedule_id, to_char(start_after AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS start_after
           FROM ${queueSchema}.job WHERE name = 'schedule-fire' AND state = 'created'`,
      );

    test('a new schedule shows the due time it will run at, runs then (not before), and then waits, as one queued message, for its next; the calendar holds none', async () => {
      const res = await post({ name: 'every minute', cron: '* * * * *', job: { url: `${site.url}pages/opengraph.html` } });
      assert.equal(res.statusCode, 201, res.body);
      const created = res.json();
      const first = Date.parse(created.next_run_at);
      // The first minute boundary after it was made: never one already begun, which it could not run on time.
      assert.ok(first > Date.parse(created.created_at) && first - Date.parse(created.created_at) <= 60_000, JSON.stringify(created));
      assert.equal(first % 60_000, 0);
      assert.deepEqual(
        (await waiting()).filter((m) => m.schedule_id === created.id).map((m) => m.start_after),
        [created.next_run_at],
        'one message waits for the time shown',
      );
      const job = await until('the first run', async () => (await app.inject({ url: `/jobs?schedule_id=${created.id}` })).json()[0], { withinMs: 120_000 });
      assert.ok(Date.parse(job.created_at) >= first, `run at ${job.created_at}, shown ${created.next_run_at}`);
      // Planned on from the due time it ran for: the following one, whatever the clock says now.
      const schedule = await until('the next run planned', async () => {
        const s = (await app.inject({ url: `/schedules/${created.id}` })).json();
        return s.runs >= 1 && s.next_run_at !== created.next_run_at ? s : undefined;
      });
      assert.ok(Date.parse(schedule.next_run_at) >= first + 60_000, schedule.next_run_at);
      const queued = (await waiting()).filter((m) => m.schedule_id === created.id).map((m) => m.start_after);
      assert.ok(queued.includes(schedule.next_run_at) && queued.length === 1, JSON.stringify(queued));
      const [calendar] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${queueSchema}.schedule WHERE name = 'schedule-fire'`);
      assert.equal(calendar!.n, 0, "no entry in the queue's calendar, whose every pass would evaluate it");
      // Paused: no next run; the message left waiting finds nothing to do when due.
      const paused = (await app.inject({ method: 'PATCH', url: `/schedules/${created.id}`, payload: { paused: true } })).json();
      assert.equal(paused.next_run_at, null);
      await app.inject({ method: 'DELETE', url: `/schedules/${created.id}` });
    });

    test('SCHEDULES_MAX schedules at most: the next is 422 limit-reached and stores nothing; a rename queues nothing more', async () => {
      const before = (await app.inject({ url: '/schedules?limit=100' })).json().length;
      const ids: string[] = [];
      for (let i = before; i < 20; i++) {
        const res = await post({ every_minutes: 60 + i, paused: i % 5 === 0, job: { url: `${site.url}pages/opengraph.html` } });
        assert.equal(res.statusCode, 201, res.body);
        ids.push(res.json().id);
      }
      const problem = assertProblem(await post({ every_minutes: 60, job: {} }), 422);
      assert.equal(problem.type, 'urn:data-aggregator:problem:limit-reached');
      assert.match(problem.detail, /SCHEDULES_MAX allows \(20\)/);
      assert.equal((await app.inject({ url: '/schedules?limit=100' })).json().length, 20);
      const queued = await waiting();
      const active = ids.filter((_, i) => (i + before) % 5 !== 0);
      assert.deepEqual(new Set(queued.filter((m) => ids.includes(m.schedule_id)).map((m) => m.schedule_id)), new Set(active), 'one message per active schedule');
      await app.inject({ method: 'PATCH', url: `/schedules/${active[0]}`, payload: { name: 'renamed' } });
      assert.equal((await waiting()).filter((m) => m.schedule_id === active[0]).length, 1, 'an unchanged next run keeps its one message');
    });
  });
}
