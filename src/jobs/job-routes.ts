// /jobs and /schedules: asynchronous scrapes and crawls, their live progress, and recurring runs.
import { Type } from 'typebox';
import type { App } from '../http/base-app.js';
import { pagedAnswer } from '../http/paging.js';
import { problemResponses } from '../http/schemas.js';
import { sendEvents, type ServerEvent, type StreamLimiter } from '../http/sse.js';
import { NotFound } from '../problems.js';
import type { JobEvents } from './job-events.js';
import { Job, JobId, JobListQuery, JobRequest, Schedule, ScheduleCreate, ScheduleListQuery, SchedulePatch } from './job-schema.js';
import type { JobService } from './job-service.js';
import type { JobStore } from './job-store.js';
import type { ScheduleStore } from './schedule-store.js';

export interface JobRoutesDeps {
  jobs: JobStore;
  schedules: ScheduleStore;
  service: JobService;
  events: JobEvents;
  /** The app's bound on open streams. */
  streams: StreamLimiter;
}

const ScheduleDeleted = Type.Object({ id: Type.String(), deleted: Type.Literal(true) });

export function jobRoutes(app: App, deps: JobRoutesDeps): void {
  const { jobs, service, events } = deps;

  app.post(
    '/jobs',
    {
      schema: {
        tags: ['jobs'],
        summary: 'Queue a scrape or a whole-site crawl; answers 202 with the job',
        description:
          'Takes the `POST /scrape` body, plus `crawl` to crawl a whole site. Answers at once with `202` and ' +
          '`Location: /jobs/{id}`; any worker process sharing the database runs it. Follow it with `GET /jobs/{id}` ' +
          'or live with `GET /jobs/{id}/events`. A blocked target or an invalid selector is refused here (422), ' +
          'before anything is queued.',
        body: JobRequest,
        response: { 202: Job },
      },
    },
    async (request, reply) => {
      const job = await service.create(request.body);
      return reply.code(202).header('location', `/jobs/${job.id}`).send(job);
    },
  );

  app.get(
    '/jobs',
    {
      schema: {
        tags: ['jobs'],
        summary: 'List jobs, newest first',
        querystring: JobListQuery,
        response: { 200: Type.Array(Job) },
      },
    },
    async (request, reply) => {
      return pagedAnswer(reply, '/jobs', request, await jobs.list(request.query));
    },
  );

  app.get(
    '/jobs/:id',
    {
      schema: {
        tags: ['jobs'],
        summary: 'One job: status, progress, timings, attempts, its logs, its error',
        params: JobId,
        response: { 200: Job },
      },
    },
    async (request) => {
      const job = await jobs.get(request.params.id);
      if (job === undefined) throw new NotFound(`Job ${request.params.id} does not exist.`);
      return job;
    },
  );

  app.delete(
    '/jobs/:id',
    {
      schema: {
        tags: ['jobs'],
        summary: 'Cancel a job',
        description:
          'A queued job never runs; a running one stops within about two seconds and keeps what it already stored; ' +
          'its log says cancelled. Cancelling a cancelled job answers it again; an ended job is a 409.',
        params: JobId,
        response: { 200: Job, ...problemResponses(409) },
      },
    },
    async (request) => service.cancel(request.params.id),
  );

  app.get(
    '/jobs/:id/events',
    {
      schema: {
        tags: ['jobs'],
        summary: 'Live progress as Server-Sent Events, until the job ends',
        description:
          'A `text/event-stream`: a `progress` event with the whole job now and at every change, then an `end` event ' +
          'with the ended job, and the stream closes. Event ids count up; a client that goes away costs nothing.',
        params: JobId,
        response: { 200: { description: 'text/event-stream of `progress` and `end` events, each carrying the job', type: 'string' } },
        produces: ['text/event-stream'],
      },
    },
    async (request, reply) => {
      const job = await jobs.get(request.params.id);
      if (job === undefined) throw new NotFound(`Job ${request.params.id} does not exist.`);
      await sendEvents(request, reply, deps.streams, async function* (signal): AsyncGenerator<ServerEvent> {
        let n = 0;
        for await (const snapshot of events.watch(job.id, signal)) {
          n += 1;
          const ended = snapshot.status === 'succeeded' || snapshot.status === 'failed' || snapshot.status === 'cancelled';
          yield { event: ended ? 'end' : 'progress', id: String(n), data: snapshot };
        }
      });
    },
  );

  app.post(
    '/schedules',
    {
      schema: {
        tags: ['schedules'],
        summary: 'Run a job on a schedule (cron or every N minutes)',
        description:
          'Fires once per due time however many workers run, in the given time zone; a run never overlaps a still-running ' +
          'run of the same schedule unless `allow_overlap` (the skipped occurrence is counted). The answer says when it fires next.',
        body: ScheduleCreate,
        response: { 201: Schedule },
      },
    },
    async (request, reply) => {
      const schedule = await service.createSchedule(request.body);
      return reply.code(201).header('location', `/schedules/${schedule.id}`).send(schedule);
    },
  );

  app.get(
    '/schedules',
    {
      schema: {
        tags: ['schedules'],
        summary: 'List schedules, newest first',
        querystring: ScheduleListQuery,
        response: { 200: Type.Array(Schedule) },
      },
    },
    async (request, reply) => {
      const page = await deps.schedules.list(request.query);
      return service.listSchedules(pagedAnswer(reply, '/schedules', request, page));
    },
  );

  app.get(
    '/schedules/:id',
    {
      schema: { tags: ['schedules'], summary: 'One schedule, with its next run time', params: JobId, response: { 200: Schedule } },
    },
    async (request) => service.getSchedule(request.params.id),
  );

  app.patch(
    '/schedules/:id',
    {
      schema: {
        tags: ['schedules'],
        summary: 'Change a schedule; `paused: true` pauses it, `paused: false` resumes it',
        params: JobId,
        body: SchedulePatch,
        response: { 200: Schedule },
      },
    },
    async (request) => service.updateSchedule(request.params.id, request.body),
  );

  app.post(
    '/schedules/:id/run',
    {
      schema: {
        tags: ['schedules'],
        summary: 'Run a schedule now, once; answers 202 with the job',
        description:
          'The same run its calendar would start (counted in its runs), also when paused. While its previous run still goes, ' +
          'a schedule without `allow_overlap` answers 409 instead.',
        params: JobId,
        response: { 202: Job, ...problemResponses(409) },
      },
    },
    async (request, reply) => {
      const job = (await service.runSchedule(request.params.id, { manual: true }))!;
      return reply.code(202).header('location', `/jobs/${job.id}`).send(job);
    },
  );

  app.delete(
    '/schedules/:id',
    {
      schema: {
        tags: ['schedules'],
        summary: 'Delete a schedule (the jobs it started stay)',
        params: JobId,
        response: { 200: ScheduleDeleted },
      },
    },
    async (request) => {
      await service.deleteSchedule(request.params.id);
      return { id: request.params.id, deleted: true as const };
    },
  );
}
