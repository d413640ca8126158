// Several processes on one PostgreSQL log: eight racing writers, a SIGKILLed writer, a subscriber in another process
// (with writers that notify, that do not, and both).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../src/events/index.js';
import type { SessionEventLog } from '../src/log/index.js';
import { openPostgresLog } from '../src/postgres/index.js';
import { collect } from '../src/testing/log-contract.js';
import { PG_URL, SKIP_MESSAGE, createSchema } from './support.js';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const childScript = fileURLToPath(new URL('./support/pg-child.ts', import.meta.url));
const SEED = Number(process.env['PG_TEST_SEED'] ?? Date.now() % 2 ** 31);
/** The issue asks for 20 s; 8 s by default keeps the shared 2-core machine usable (PG_SOAK_MS=20000 for the full run). */
const SOAK_MS = Number(process.env['PG_SOAK_MS'] ?? 8_000);

interface Child {
  readonly process: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly ready: Promise<void>;
  stderr(): string;
}

const start = (settings: Record<string, unknown>): Child => {
  const child = spawn(process.execPath, ['--import', 'tsx', childScript, JSON.stringify(settings)], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (stdout.includes('ready\n')) resolve();
    });
    void exited.then(({ code, signal }) => reject(new Error(`child exited before it was ready (${code ?? signal}): ${stderr}`)));
    setTimeout(() => reject(new Error(`child not ready after 30 s: ${stderr}`)), 30_000).unref();
  });
  ready.catch(() => {});
  return { process: child, exited, ready, stderr: () => stderr };
};

interface Ack {
  readonly session: string;
  readonly firstSeq: number;
  readonly size: number;
  readonly tag: string;
}

/** The acknowledged appends in a writer report (whole lines only). */
const acksOf = (text: string): Ack[] =>
  text
    .split('\n')
    .slice(0, -1)
    .filter((l) => l.startsWith('ack '))
    .map((l) => {
      const match = /^ack (".*") (\d+) (\d+) (\S+)$/.exec(l);
      if (!match) throw new Error(`bad report line ${JSON.stringify(l)}`);
      return { session: JSON.parse(match[1] ?? '""') as string, firstSeq: Number(match[2]), size: Number(match[3]), tag: match[4] ?? '' };
    });

const callIdOf = (event: SessionEvent | undefined): string => (event?.type === 'tool.result' ? event.callId : `<${event?.type}>`);

/**
 * Checks a session as stored: verifies, seqs 1..n, and every batch whole: its events adjacent, in
 * order, all `size` of them (a tag `<writer>/<size>` names the batch, `.i` the event in it).
 */
const checkSession = async (log: SessionEventLog, session: string): Promise<SessionEvent[]> => {
  const events = await collect(log.read(session));
  expect(await log.verify(session)).toEqual({ valid: true, eventCount: events.length, firstBrokenSeq: null });
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  for (let i = 0; i < events.length; ) {
    const callId = callIdOf(events[i]);
    const match = /^(.*\/(\d+))\.0$/.exec(callId);
    expect(match, `event ${i + 1} of ${session} (${callId}) must start a batch`).not.toBe(null);
    const tag = match?.[1] ?? '';
    const size = Number(match?.[2]);
    for (let k = 0; k < size; k++) {
      expect(callIdOf(events[i + k]), `batch ${tag} of ${session} is cut`).toBe(`${tag}.${k}`);
      expect(events[i + k]?.at).toBe(events[i]?.at);
    }
    i += size;
  }
  return events;
};

/** Every acknowledged append is stored at the seqs it was acknowledged with. */
const expectAcksPresent = (acks: readonly Ack[], stored: ReadonlyMap<string, readonly SessionEvent[]>): void => {
  for (const ack of acks) {
    const events = stored.get(ack.session) ?? [];
    for (let i = 0; i < ack.size; i++) {
      expect(callIdOf(events[ack.firstSeq - 1 + i]), `acknowledged ${ack.tag}.${i} at ${ack.session}#${ack.firstSeq + i}`).toBe(`${ack.tag}.${i}`);
    }
  }
};

/** Waits until the session's head reaches `count` (the writers are still running). */
const headReaches = async (log: SessionEventLog, session: string, count: number): Promise<void> => {
  for (let waited = 0; (await log.head(session)) < count; waited += 50) {
    if (waited > 30_000) throw new Error(`the writers did not reach ${count} events in ${session} within 30 s`);
    await sleep(50);
  }
};

/** Counts the notifications on the schema's channel (a LISTEN of its own). */
const countNotifications = async (url: string, schema: string): Promise<{ count: () => number; stop: () => Promise<void> }> => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let count = 0;
  client.on('notification', () => {
    count += 1;
  });
  await client.query(`LISTEN "${schema}_appended"`);
  return { count: () => count, stop: () => client.end() };
};

/** The `seen <seq> <callId>` lines of a subscriber report once it has exited (or after 20 s). */
const subscriberOutcome = async (subscriber: Child, report: string): Promise<{ outcome: unknown; seen: string[][] }> => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const outcome = await Promise.race([
    subscriber.exited,
    new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), 20_000);
    }),
  ]);
  clearTimeout(timer);
  const seen = (await readFile(report, 'utf8'))
    .split('\n')
    .slice(0, -1)
    .map((l) => l.split(' '));
  return { outcome, seen };
};

/** Waits until no server backend of the child `pid` is left (they end after finishing what the child sent). */
const backendsGone = async (url: string, pid: number): Promise<void> => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (let waited = 0; ; waited += 50) {
      const result = await client.query<{ n: string }>(`SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1`, [`cl-child-${pid}`]);
      if (result.rows[0]?.n === '0') return;
      if (waited > 20_000) throw new Error(`backends of the killed writer ${pid} still there after 20 s`);
      await sleep(50);
    }
  } finally {
    await client.end();
  }
};

if (PG_URL) {
  const url = PG_URL;
  describe(`PostgreSQL log across processes (seed ${SEED}; PG_TEST_SEED repeats it)`, () => {
    let dir: string;
    let schema: { schema: string; drop: () => Promise<void> };
    let log: SessionEventLog;
    const children: Child[] = [];

    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'cl-pg-proc-'));
      schema = await createSchema(url);
      log = await openPostgresLog({ connectionString: url }, { schema: schema.schema });
    });
    afterEach(async () => {
      for (const child of children.splice(0)) if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill('SIGKILL');
      await log.close();
      await schema.drop();
      await rm(dir, { recursive: true, force: true });
    });

    it(`eight writer processes on the same 50 sessions for ${SOAK_MS / 1000} s: all verify, gap-free, every acknowledged append present`, async () => {
      const sessions = Array.from({ length: 50 }, (_, i) => (i % 10 === 9 ? `odd\u0000${i}\ud800` : `s${i}`));
      const reports = Array.from({ length: 8 }, (_, i) => join(dir, `writer${i}.report`));
      const writers = reports.map((report, i) =>
        start({ role: 'writer', url, schema: schema.schema, report, seed: SEED + i, durationMs: SOAK_MS, sessions, concurrency: 3, maxBatch: 6, payload: 200 }),
      );
      children.push(...writers);
      const results = await Promise.all(writers.map((w) => w.exited));
      for (const [i, result] of results.entries()) expect(result, `writer ${i}: ${writers[i]?.stderr() ?? ''}`).toEqual({ code: 0, signal: null });
      const acks = (await Promise.all(reports.map((r) => readFile(r, 'utf8')))).flatMap(acksOf);
      expect(acks.length).toBeGreaterThan(100);

      const stored = new Map<string, SessionEvent[]>();
      for (const session of sessions) stored.set(session, await checkSession(log, session));
      expectAcksPresent(acks, stored);
      // Nothing but acknowledged appends: the writers exited cleanly, so every stored batch was acknowledged.
      const total = [...stored.values()].reduce((n, events) => n + events.length, 0);
      expect(total).toBe(acks.reduce((n, a) => n + a.size, 0));
      expect([...(await collect(log.sessions()))].sort()).toEqual([...sessions].sort());
      console.log(`8 writers, ${SOAK_MS / 1000} s: ${acks.length} appends, ${total} events over 50 sessions`);
    });

    it('a writer SIGKILLed mid-append loses no acknowledged event and leaves no partial batch', async () => {
      const sessions = ['k0', 'k1', 'k2'];
      for (let run = 0; run < 3; run++) {
        const report = join(dir, `killed${run}.report`);
        // big batches, so that the kill lands while a statement is on the wire or in the server
        const writer = start({ role: 'writer', url, schema: schema.schema, report, seed: SEED + 100 + run, durationMs: 60_000, sessions, concurrency: 4, maxBatch: 200, payload: 2000 });
        children.push(writer);
        await writer.ready;
        await sleep(700 + ((SEED + run * 337) % 900));
        writer.process.kill('SIGKILL');
        expect((await writer.exited).signal).toBe('SIGKILL');
        // A statement the writer had sent may still commit: its append was never acknowledged, so it
        // may or may not land, but whole. Check once the server has finished the killed client's work.
        await backendsGone(url, writer.process.pid ?? 0);
        const acks = acksOf(await readFile(report, 'utf8'));
        expect(acks.length, `run ${run}: the writer acknowledged appends before it was killed`).toBeGreaterThan(0);
        const stored = new Map<string, SessionEvent[]>();
        for (const session of sessions) stored.set(session, await checkSession(log, session));
        expectAcksPresent(acks, stored);
      }
      // the log takes appends after the kills, on the chain the killed writer left
      for (const session of sessions) {
        const head = await log.head(session);
        const [next] = await log.append(session, [{ type: 'tool.result', callId: `after/1.0`, output: 'x' }], { expectedSeq: head });
        expect(next?.seq).toBe(head + 1);
        expect((await log.verify(session)).valid).toBe(true);
      }
    });

    it("a subscriber in another process sees every event of a writer's run, in order, once", async () => {
      const subscriberReport = join(dir, 'subscriber.report');
      const writerReport = join(dir, 'writer.report');
      // a head start before the subscriber exists: it must catch up, then follow
      await log.append('live', [{ type: 'tool.result', callId: 'early/2.0', output: 'x' }, { type: 'tool.result', callId: 'early/2.1', output: 'x' }]);
      const writer = start({ role: 'writer', url, schema: schema.schema, report: writerReport, seed: SEED + 200, durationMs: 3_000, sessions: ['live'], concurrency: 3, maxBatch: 4, payload: 50 });
      children.push(writer);
      expect(await writer.exited).toEqual({ code: 0, signal: null });
      const total = await log.head('live');
      // start the subscriber after part of the run, and add more events while it follows
      const subscriber = start({ role: 'subscriber', url, schema: schema.schema, report: subscriberReport, session: 'live', count: total + 40 });
      children.push(subscriber);
      await subscriber.ready;
      const second = start({ role: 'writer', url, schema: schema.schema, report: writerReport, seed: SEED + 201, durationMs: 60_000, sessions: ['live'], concurrency: 2, maxBatch: 3, payload: 50 });
      children.push(second);
      // stop the second writer once 40 more events are in
      for (let waited = 0; (await log.head('live')) < total + 40; waited += 50) {
        if (waited > 30_000) throw new Error('the second writer did not write 40 events in 30 s');
        await sleep(50);
      }
      second.process.kill('SIGTERM');
      expect(await second.exited).toEqual({ code: 0, signal: null });
      let timer: ReturnType<typeof setTimeout> | undefined;
      const outcome = await Promise.race([
        subscriber.exited,
        new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), 20_000);
        }),
      ]);
      clearTimeout(timer);
      const seen = (await readFile(subscriberReport, 'utf8'))
        .split('\n')
        .slice(0, -1)
        .map((l) => l.split(' '));
      expect(outcome, `subscriber saw ${seen.length} of ${total + 40}: ${subscriber.stderr()}`).toEqual({ code: 0, signal: null });
      const stored = await checkSession(log, 'live');
      expect(seen.map(([, seq]) => Number(seq))).toEqual(stored.slice(0, total + 40).map((e) => e.seq));
      expect(seen.map(([, , callId]) => callId)).toEqual(stored.slice(0, total + 40).map(callIdOf));
    });

    it('with notify: false (the default): no NOTIFY is sent, and a subscriber in another process still sees every event, in order, once', async () => {
      const notifications = await countNotifications(url, schema.schema);
      const loudLog = await openPostgresLog({ connectionString: url }, { schema: schema.schema, notify: true });
      try {
        const subscriberReport = join(dir, 'quiet-subscriber.report');
        const writerReport = join(dir, 'quiet-writer.report');
        await loudLog.append('quiet', [{ type: 'tool.result', callId: 'early/1.0', output: 'x' }]);
        const count = 120;
        // the subscriber's log has the defaults: it polls heads every 250 ms
        const subscriber = start({ role: 'subscriber', url, schema: schema.schema, report: subscriberReport, session: 'quiet', count });
        children.push(subscriber);
        await subscriber.ready;
        const writers = [0, 1].map((i) =>
          start({ role: 'writer', url, schema: schema.schema, report: writerReport, seed: SEED + 300 + i, durationMs: 60_000, sessions: ['quiet'], concurrency: 2, maxBatch: 3, payload: 50 }),
        );
        children.push(...writers);
        await Promise.all(writers.map((w) => w.ready));
        await headReaches(log, 'quiet', count);
        for (const writer of writers) writer.process.kill('SIGTERM');
        for (const writer of writers) expect(await writer.exited).toEqual({ code: 0, signal: null });
        const { outcome, seen } = await subscriberOutcome(subscriber, subscriberReport);
        expect(outcome, `subscriber saw ${seen.length} of ${count}: ${subscriber.stderr()}`).toEqual({ code: 0, signal: null });
        const stored = await checkSession(log, 'quiet');
        expect(seen.map(([, seq]) => Number(seq))).toEqual(stored.slice(0, count).map((e) => e.seq));
        expect(seen.map(([, , callId]) => callId)).toEqual(stored.slice(0, count).map(callIdOf));
        expect(acksOf(await readFile(writerReport, 'utf8')).length).toBeGreaterThan(0);
        // this process's log with notify: true sent one (the early append); the writers never did
        expect(notifications.count()).toBe(1);
      } finally {
        await loudLog.close();
        await notifications.stop();
      }
    });

    it('mixed writers, one notifying and one not: a subscriber in another process sees every event, those after the notifier stopped too', async () => {
      const notifications = await countNotifications(url, schema.schema);
      try {
        const subscriberReport = join(dir, 'mixed-subscriber.report');
        const loudReport = join(dir, 'loud-writer.report');
        const quietReport = join(dir, 'quiet-writer.report');
        // a subscriber whose log notifies: it LISTENs and polls heads every 1000 ms; it follows until stopped
        const subscriber = start({ role: 'subscriber', url, schema: schema.schema, report: subscriberReport, session: 'mixed', count: 1_000_000, notify: true });
        children.push(subscriber);
        await subscriber.ready;
        const writer = (report: string, seed: number, notify: boolean): Child =>
          start({ role: 'writer', url, schema: schema.schema, report, seed, durationMs: 60_000, sessions: ['mixed'], concurrency: 2, maxBatch: 3, payload: 50, notify });
        const loud = writer(loudReport, SEED + 400, true);
        const quiet = writer(quietReport, SEED + 401, false);
        children.push(loud, quiet);
        await Promise.all([loud.ready, quiet.ready]);
        for (let waited = 0; acksOf(await readFile(loudReport, 'utf8').catch(() => '')).length < 10; waited += 50) {
          if (waited > 30_000) throw new Error('the notifying writer did not acknowledge 10 appends within 30 s');
          await sleep(50);
        }
        loud.process.kill('SIGTERM');
        expect(await loud.exited).toEqual({ code: 0, signal: null });
        // from here on only the quiet writer appends: the subscriber finds these by polling alone
        const loudLast = await log.head('mixed');
        const count = loudLast + 40;
        await headReaches(log, 'mixed', count);
        quiet.process.kill('SIGTERM');
        expect(await quiet.exited).toEqual({ code: 0, signal: null });
        const seenLines = async (): Promise<string[][]> =>
          (await readFile(subscriberReport, 'utf8'))
            .split('\n')
            .slice(0, -1)
            .map((l) => l.split(' '));
        for (let waited = 0; (await seenLines()).length < count; waited += 50) {
          if (waited > 20_000) throw new Error(`the subscriber saw ${(await seenLines()).length} of ${count} events within 20 s: ${subscriber.stderr()}`);
          await sleep(50);
        }
        subscriber.process.kill('SIGKILL');
        const seen = (await seenLines()).slice(0, count);
        const stored = await checkSession(log, 'mixed');
        expect(seen.map(([, seq]) => Number(seq))).toEqual(stored.slice(0, count).map((e) => e.seq));
        expect(seen.map(([, , callId]) => callId)).toEqual(stored.slice(0, count).map(callIdOf));
        const loudAcks = acksOf(await readFile(loudReport, 'utf8'));
        const quietAcks = acksOf(await readFile(quietReport, 'utf8'));
        expect(loudAcks.every((ack) => ack.firstSeq <= loudLast)).toBe(true);
        expect(quietAcks.some((ack) => ack.firstSeq > loudLast && ack.firstSeq <= count)).toBe(true);
        // one notification per group the loud writer wrote (at most one per append), none from the quiet one
        expect(notifications.count()).toBeGreaterThan(0);
        expect(notifications.count()).toBeLessThanOrEqual(loudAcks.length);
      } finally {
        await notifications.stop();
      }
    });
  });
} else {
  describe.skip(SKIP_MESSAGE, () => {
    it('needs CONTEXT_LEDGER_PG_URL', () => {});
  });
}
