// What the PostgreSQL log sends and survives: group commit, bounded reads (pages, at most three in flight), a killed LISTEN
// connection, one head poll for all subscribers.
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../src/events/index.js';
import { openMemoryLog } from '../src/log/index.js';
import { encodeSessionId } from '../src/log/keys.js';
import { openPostgresLog } from '../src/postgres/index.js';
import { collect, inputs } from '../src/testing/log-contract.js';
import { PG_URL, SKIP_MESSAGE, createSchema } from './support.js';

interface Sent {
  readonly name: string;
  readonly values: readonly unknown[];
}

/** A pool that records the named statements sent through it and how many page reads run at once. */
const countingPool = (url: string): { pool: pg.Pool; sent: Sent[]; maxPagesInFlight: () => number } => {
  const pool = new pg.Pool({ connectionString: url, max: 6 });
  const sent: Sent[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const query = pool.query.bind(pool) as (config: unknown) => Promise<pg.QueryResult>;
  (pool as unknown as { query: (config: unknown) => Promise<pg.QueryResult> }).query = (config: unknown) => {
    const named = config as { name?: string; values?: unknown[] };
    if (typeof named.name !== 'string') return query(config);
    sent.push({ name: named.name, values: named.values ?? [] });
    const isPage = named.name.endsWith('_page');
    if (isPage) maxInFlight = Math.max(maxInFlight, ++inFlight);
    return query(config).finally(() => {
      if (isPage) inFlight -= 1;
    });
  };
  return { pool, sent, maxPagesInFlight: () => maxInFlight };
};

if (PG_URL) {
  const url = PG_URL;
  describe('PostgreSQL log statements', () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    it('group-commits: 60 appends queued together on one session take a few statements, all land in call order', async () => {
      const { schema, drop } = await createSchema(url);
      cleanups.push(drop);
      const counting = countingPool(url);
      cleanups.push(() => counting.pool.end());
      const log = await openPostgresLog({ pool: counting.pool }, { schema });
      cleanups.push(() => log.close());
      await log.append('s', inputs('first', 1));
      counting.sent.length = 0;
      const results = await Promise.all(Array.from({ length: 60 }, (_, i) => log.append('s', inputs(`c${i}`, 1 + (i % 2)))));
      const writes = counting.sent.filter((s) => /_write1?q?$/.test(s.name));
      expect(writes.length).toBeGreaterThanOrEqual(1);
      expect(writes.length).toBeLessThan(10);
      expect(results.map((batch) => batch[0]?.seq)).toEqual(results.map((_, i) => 2 + i + Math.floor(i / 2)));
      expect((await log.verify('s')).valid).toBe(true);
    });

    it('a subscriber keeps receiving when its LISTEN connection is killed on the server', async () => {
      const { schema, drop } = await createSchema(url);
      cleanups.push(drop);
      const listening = new URL(url);
      listening.searchParams.set('application_name', `cl-listen-${schema}`);
      const a = await openPostgresLog({ connectionString: listening.toString() }, { schema, notify: true, pollMs: 300 });
      cleanups.push(() => a.close());
      const b = await openPostgresLog({ connectionString: url }, { schema, notify: true });
      cleanups.push(() => b.close());
      const seen: number[] = [];
      const controller = new AbortController();
      const following = (async () => {
        for await (const event of a.subscribe('s', { signal: controller.signal })) {
          seen.push(event.seq);
          if (seen.length === 6) controller.abort();
        }
      })();
      await b.append('s', inputs('before', 3));
      for (let waited = 0; seen.length < 3; waited += 20) {
        if (waited > 10_000) throw new Error(`saw ${seen.length} of 3 before the kill`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        const killed = await admin.query(
          `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1 AND query ILIKE 'LISTEN%'`,
          [`cl-listen-${schema}`],
        );
        expect(killed.rows).toHaveLength(1);
      } finally {
        await admin.end();
      }
      await b.append('s', inputs('after', 3));
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        following,
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`saw ${seen.length} of 6 within 10 s of the kill`)), 10_000);
        }),
      ]).finally(() => clearTimeout(timer));
      expect(seen).toEqual([1, 2, 3, 4, 5, 6]);
    });

    it('subscribers of several sessions cost one heads statement per poll, and read only when their head moved', async () => {
      const { schema, drop } = await createSchema(url);
      cleanups.push(drop);
      const counting = countingPool(url);
      cleanups.push(() => counting.pool.end());
      const log = await openPostgresLog({ pool: counting.pool }, { schema, notify: false, pollMs: 50 });
      cleanups.push(() => log.close());
      const other = await openPostgresLog({ connectionString: url }, { schema, notify: false });
      cleanups.push(() => other.close());
      const ids = ['a', 'b', 'c', 'd', 'e\u0000'];
      const controller = new AbortController();
      const seen = new Map<string, SessionEvent[]>(ids.map((id) => [id, []]));
      const following = ids.map(async (id) => {
        for await (const event of log.subscribe(id, { signal: controller.signal })) seen.get(id)?.push(event);
      });
      const until = async (what: string, done: () => boolean): Promise<void> => {
        for (let waited = 0; !done(); waited += 20) {
          if (waited > 10_000) throw new Error(`not within 10 s: ${what}`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };
      try {
        for (const id of ids) await other.append(id, inputs(id, 1));
        await until('every subscriber saw its first event', () => ids.every((id) => seen.get(id)?.length === 1));
        // nothing moves: the polls go on, one statement for all five sessions, and nobody reads (after
        // a few polls to settle: a wake that came during a subscriber's read makes it read once more)
        const heads = (): Sent[] => counting.sent.filter((s) => s.name.endsWith('_heads'));
        counting.sent.length = 0;
        await until('three polls', () => heads().length >= 3);
        counting.sent.length = 0;
        await until('four polls', () => heads().length >= 4);
        const quiet = [...counting.sent];
        for (const poll of heads()) expect([...(poll.values[0] as string[])].sort()).toEqual(ids.map(encodeSessionId).sort());
        expect(quiet.filter((s) => /_(first|page)$/.test(s.name))).toEqual([]);
        // one session moves: only its subscriber reads
        counting.sent.length = 0;
        await other.append('c', inputs('c.more', 2));
        await until('the subscriber of c saw the new events', () => seen.get('c')?.length === 3);
        const reads = counting.sent.filter((s) => /_(first|page)$/.test(s.name));
        expect(reads.length).toBeGreaterThan(0);
        expect(reads.every((r) => r.values[0] === encodeSessionId('c'))).toBe(true);
        expect(ids.filter((id) => id !== 'c').map((id) => seen.get(id)?.length)).toEqual([1, 1, 1, 1]);
      } finally {
        controller.abort();
        await Promise.all(following);
      }
    });

    it('never has two head polls in flight, however slow the statement and however many subscribe meanwhile', async () => {
      const { schema, drop } = await createSchema(url);
      cleanups.push(drop);
      const pool = new pg.Pool({ connectionString: url, max: 4 });
      cleanups.push(() => pool.end());
      let inFlight = 0;
      let maxInFlight = 0;
      let polls = 0;
      const query = pool.query.bind(pool) as (config: unknown) => Promise<pg.QueryResult>;
      (pool as unknown as { query: (config: unknown) => Promise<pg.QueryResult> }).query = async (config: unknown) => {
        const name = (config as { name?: unknown }).name;
        if (typeof name !== 'string' || !name.endsWith('_heads')) return query(config);
        polls += 1;
        maxInFlight = Math.max(maxInFlight, ++inFlight);
        try {
          await new Promise((resolve) => setTimeout(resolve, 150)); // a slow server
          return await query(config);
        } finally {
          inFlight -= 1;
        }
      };
      const log = await openPostgresLog({ pool }, { schema, pollMs: 5 });
      cleanups.push(() => log.close());
      const controller = new AbortController();
      const following: Promise<void>[] = [];
      try {
        for (const id of ['a', 'b', 'c', 'd', 'e', 'f']) {
          following.push(
            (async () => {
              for await (const _ of log.subscribe(id, { signal: controller.signal }));
            })(),
          );
          await new Promise((resolve) => setTimeout(resolve, 40)); // each new subscriber while a poll is in flight
        }
        for (let waited = 0; polls < 6; waited += 20) {
          if (waited > 10_000) throw new Error(`${polls} polls in 10 s`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        expect(maxInFlight).toBe(1);
      } finally {
        controller.abort();
        await Promise.all(following);
      }
    });

    it('a subscriber whose tables vanish gets the error instead of waiting forever', async () => {
      const { schema, drop } = await createSchema(url);
      cleanups.push(drop);
      const log = await openPostgresLog({ connectionString: url }, { schema, pollMs: 50 });
      cleanups.push(() => log.close());
      await log.append('s', inputs('x', 1));
      const seen: number[] = [];
      const following = (async () => {
        for await (const event of log.subscribe('s')) seen.push(event.seq);
      })();
      following.catch(() => {});
      for (let waited = 0; seen.length < 1; waited += 20) {
        if (waited > 10_000) throw new Error('the subscriber did not see the first event');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await drop();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const outcome = await Promise.race([
        following.then(
          () => 'ended',
          (error: unknown) => error,
        ),
        new Promise((resolve) => {
          timer = setTimeout(() => resolve('still waiting after 10 s'), 10_000);
        }),
      ]).finally(() => clearTimeout(timer));
      expect(outcome).toBeInstanceOf(Error);
      expect((outcome as Error).message).toMatch(/does not exist/);
    });

    it('two logs on one pool, one notifying and one not, both write (their statements are prepared under different names)', async () => {
      const { schema, drop } = await createSchema(url);
      cleanups.push(drop);
      const pool = new pg.Pool({ connectionString: url, max: 2 });
      cleanups.push(() => pool.end());
      const loud = await openPostgresLog({ pool }, { schema, notify: true });
      cleanups.push(() => loud.close());
      const quiet = await openPostgresLog({ pool }, { schema, notify: false });
      cleanups.push(() => quiet.close());
      for (let i = 0; i < 6; i++) {
        await loud.append('s', inputs(`loud${i}`, 1 + (i % 2)));
        await quiet.append('s', inputs(`quiet${i}`, 1 + (i % 2)));
      }
      expect(await loud.head('s')).toBe(18);
      expect(await quiet.verify('s')).toEqual({ valid: true, eventCount: 18, firstBrokenSeq: null });
    });

    it('reads a long session in pages of pageSize, at most three in flight, and stops at the head', async () => {
      const { schema, drop } = await createSchema(url);
      cleanups.push(drop);
      const source = await openMemoryLog();
      cleanups.push(() => source.close());
      for (let i = 0; i < 5; i++) await source.append('long', inputs(`b${i}`, 1000));
      const counting = countingPool(url);
      cleanups.push(() => counting.pool.end());
      const log = await openPostgresLog({ pool: counting.pool }, { schema, pageSize: 100 });
      cleanups.push(() => log.close());
      await log.importStored('long', await collect(source.readStored('long')));
      counting.sent.length = 0;
      let n = 0;
      for await (const event of log.read('long')) {
        n += 1;
        expect(event.seq).toBe(n);
      }
      expect(n).toBe(5000);
      const pages = counting.sent.filter((s) => s.name.endsWith('_page') || s.name.endsWith('_first'));
      expect(pages).toHaveLength(50);
      for (const page of pages) expect(Number(page.values[2]) - Number(page.values[1]) + 1).toBeLessThanOrEqual(100);
      expect(counting.maxPagesInFlight()).toBeLessThanOrEqual(3);
      // stopping early sends nothing more than what was in flight
      counting.sent.length = 0;
      for await (const event of log.read('long', { fromSeq: 10 })) if (event.seq === 150) break;
      expect(counting.sent.length).toBeLessThanOrEqual(4);
    });
  });
} else {
  describe.skip(SKIP_MESSAGE, () => {
    it('needs CONTEXT_LEDGER_PG_URL', () => {});
  });
}
