// What the PostgreSQL log sends: group commit (fewer statements than appends) and bounded reads (pages, at most three in flight).
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { openMemoryLog } from '../src/log/index.js';
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
      const writes = counting.sent.filter((s) => /_write1?$/.test(s.name));
      expect(writes.length).toBeGreaterThanOrEqual(1);
      expect(writes.length).toBeLessThan(10);
      expect(results.map((batch) => batch[0]?.seq)).toEqual(results.map((_, i) => 2 + i + Math.floor(i / 2)));
      expect((await log.verify('s')).valid).toBe(true);
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
