// PostgreSQL benchmark: our openPostgresLog against raw `pg` on the same rows of the same server.
//
//   CONTEXT_LEDGER_PG_URL=postgresql://… npm run bench -- postgres
//   scripts/with-postgres.sh npm run bench -- postgres      # a throwaway server
//   npx tsx bench/postgres.bench.ts --appends 2000 --read 100000 --rounds 3
//
// Five pairs, interleaved round by round (the side that goes first alternates), medians reported:
//   1. one writer: awaited single-event appends  vs  awaited single-row INSERTs (autocommit)
//   2. eight concurrent writers, each with its own log (own pool) and session  vs  eight INSERT loops
//   3, 4. the same two with `notify: true` (pg_notify in the append statement; 1 and 2 have the
//      default, notify: false), each against its own raw run of the same round
//   5. read + decode + fold of 100,000 events (foldMemoryAsync(log.read(id)))  vs  one raw SELECT of
//      the same rows + JSON.parse of each
// The raw inserts write exactly the rows our log writes (same columns and bytes, into a table of the
// same definition, the generated jsonb column included); the raw SELECT reads our table.
import { cpus, loadavg } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import pg from 'pg';
import { EVENT_VERSIONS, type NewSessionEvent } from '../src/events/index.js';
import { GENESIS_HASH, type SessionEventLog } from '../src/log/index.js';
import { sealEvent } from '../src/log/hash-chain.js';
import { encodeSessionId } from '../src/log/keys.js';
import { foldMemoryAsync } from '../src/memory/index.js';
import { migrate, openPostgresLog } from '../src/postgres/index.js';
import { argValue, positiveInt, prng } from './support.js';

const URL = process.env['CONTEXT_LEDGER_PG_URL'];
if (!URL) {
  console.log('postgres bench SKIPPED: set CONTEXT_LEDGER_PG_URL, or run it as `scripts/with-postgres.sh npm run bench -- postgres`.');
  process.exit(0);
}
const url = URL;

const APPENDS = positiveInt(argValue('--appends') ?? process.env['PG_BENCH_APPENDS'], 2000, 'append count');
const READ = positiveInt(argValue('--read') ?? process.env['PG_BENCH_READ'], 100_000, 'read event count');
const ROUNDS = positiveInt(argValue('--rounds') ?? process.env['PG_BENCH_ROUNDS'], 3, 'round count');
const WRITERS = 8;
const SCHEMA = `cl_bench_${process.pid}`;
const AT = '2025-01-01T00:00:00.000Z';
const TARGETS = { single: 0.7, eight: 0.7, read: 0.5 } as const;
/** `--only append` runs the four append pairs, `--only read` the read pair (default: all five). */
const ONLY = argValue('--only');
if (ONLY !== undefined && ONLY !== 'append' && ONLY !== 'read') throw new Error(`--only must be append or read, got ${JSON.stringify(ONLY)}`);

const WORDS = 'the log append read fold memory agent tool call result session event hash chain batch commit model output input user'.split(' ');
const userInput = (content: string): NewSessionEvent => ({ type: 'user.input', items: [{ type: 'message', role: 'user', content }] });
const makeEvents = (count: number, seed: number): NewSessionEvent[] => {
  const random = prng(seed);
  return Array.from({ length: count }, () => {
    let text = '';
    while (text.length < 380) text += `${text ? ' ' : ''}${WORDS[Math.floor(random() * WORDS.length)]}`;
    return userInput(text.slice(0, 380));
  });
};

interface Row {
  readonly seq: number;
  readonly prevHash: string;
  readonly hash: string;
  readonly text: string;
}
/** The rows our log writes for these events in `session` (the same sealing as the log). */
const rowsOf = (session: string, events: readonly NewSessionEvent[]): Row[] => {
  let prevHash = GENESIS_HASH;
  return events.map((event, i) => {
    const full: Record<string, unknown> = { sessionId: session, seq: i + 1, at: AT, v: EVENT_VERSIONS[event.type], prevHash, ...(event as Record<string, unknown>) };
    const { hash, text } = sealEvent(prevHash, full);
    const row = { seq: i + 1, prevHash, hash, text };
    prevHash = hash;
    return row;
  });
};

const collectGarbage: () => void = (() => {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
})();
const timed = async (count: number, body: () => Promise<void>): Promise<number> => {
  collectGarbage();
  const started = process.hrtime.bigint();
  await body();
  return count / (Number(process.hrtime.bigint() - started) / 1e9);
};
const check = (ok: boolean, message: string): void => {
  if (!ok) throw new Error(`bench self-check failed: ${message}`);
};

const admin = new pg.Pool({ connectionString: url, max: WRITERS + 2 });
const q = (text: string, values: unknown[] = []): Promise<pg.QueryResult> => admin.query(text, values);
const openOurs = (notify = false): Promise<SessionEventLog> =>
  openPostgresLog({ connectionString: url }, { schema: SCHEMA, clock: () => AT, poolSize: 2, notify });
let runId = 0;
const freshSession = (tag: string): string => `${tag}-${++runId}`;

const INSERT_RAW = `INSERT INTO "${SCHEMA}".raw_events (session_key, seq, type, at, prev_hash, hash, stored) VALUES ($1, $2, $3, $4, $5, $6, $7)`;
const insertRaw = (client: pg.Pool | pg.PoolClient, key: string, row: Row): Promise<unknown> =>
  client.query(INSERT_RAW, [key, row.seq, 'user.input', AT, row.prevHash, row.hash, row.text]);

interface Case {
  readonly name: string;
  run(): Promise<number>;
}

const oursSingle = (notify: boolean): Case => ({
  name: `ours: 1 writer, awaited appends, notify: ${String(notify)}`,
  async run() {
    const session = freshSession(notify ? 'single-notify' : 'single');
    const events = makeEvents(APPENDS, runId);
    const log = await openOurs(notify);
    try {
      const rate = await timed(APPENDS, async () => {
        for (const event of events) await log.append(session, [event]);
      });
      check((await log.head(session)) === APPENDS, 'single head');
      return rate;
    } finally {
      await log.close();
    }
  },
});
const rawSingle: Case = {
  name: 'raw: 1 writer, awaited INSERTs',
  async run() {
    const session = freshSession('raw-single');
    const rows = rowsOf(session, makeEvents(APPENDS, runId));
    const key = encodeSessionId(session);
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    try {
      return await timed(APPENDS, async () => {
        for (const row of rows) await insertRaw(pool, key, row);
      });
    } finally {
      await pool.end();
    }
  },
};
const PER_WRITER = Math.max(1, Math.floor(APPENDS / 2));
const oursEight = (notify: boolean): Case => ({
  name: `ours: ${WRITERS} writers (own logs, own sessions), notify: ${String(notify)}`,
  async run() {
    const logs = await Promise.all(Array.from({ length: WRITERS }, () => openOurs(notify)));
    try {
      const work = logs.map((log, w) => ({ log, session: freshSession(`eight${notify ? '-notify' : ''}${w}`), events: makeEvents(PER_WRITER, runId) }));
      const rate = await timed(WRITERS * PER_WRITER, async () => {
        await Promise.all(
          work.map(async ({ log, session, events }) => {
            for (const event of events) await log.append(session, [event]);
          }),
        );
      });
      for (const { log, session } of work) check((await log.head(session)) === PER_WRITER, 'eight head');
      return rate;
    } finally {
      await Promise.all(logs.map((log) => log.close()));
    }
  },
});
const rawEight: Case = {
  name: `raw: ${WRITERS} INSERT loops`,
  async run() {
    const pools = Array.from({ length: WRITERS }, () => new pg.Pool({ connectionString: url, max: 2 }));
    try {
      const work = pools.map((pool, w) => {
        const session = freshSession(`raw-eight${w}`);
        return { pool, key: encodeSessionId(session), rows: rowsOf(session, makeEvents(PER_WRITER, runId)) };
      });
      await Promise.all(pools.map((pool) => pool.query('SELECT 1'))); // connect outside the timed region, as ours does
      return await timed(WRITERS * PER_WRITER, async () => {
        await Promise.all(
          work.map(async ({ pool, key, rows }) => {
            for (const row of rows) await insertRaw(pool, key, row);
          }),
        );
      });
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
  },
};

const READ_SESSION = 'read-100k';
const oursRead: Case = {
  name: `ours: read + decode + fold of ${READ.toLocaleString('en')} events`,
  async run() {
    const log = await openOurs();
    try {
      let items = 0;
      const rate = await timed(READ, async () => {
        const { state, lastSeq } = await foldMemoryAsync(log.read(READ_SESSION));
        check(lastSeq === READ, `read ${lastSeq} events`);
        items = state.entries.length;
      });
      check(items === READ, 'fold item count');
      return rate;
    } finally {
      await log.close();
    }
  },
};
const rawRead: Case = {
  name: 'raw: one SELECT of the same rows + JSON.parse',
  async run() {
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      await pool.query('SELECT 1');
      return await timed(READ, async () => {
        const result = await pool.query({
          text: `SELECT seq, stored FROM "${SCHEMA}".events WHERE session_key = $1 ORDER BY seq`,
          values: [encodeSessionId(READ_SESSION)],
          rowMode: 'array',
        });
        let n = 0;
        for (const row of result.rows as [string, string][]) if ((JSON.parse(row[1]) as { seq: number }).seq > 0) n += 1;
        check(n === READ, `raw read ${n} rows`);
      });
    } finally {
      await pool.end();
    }
  },
};

const ALL_PAIRS = [
  { label: '1 writer appends', ours: oursSingle(false), raw: rawSingle, target: TARGETS.single, kind: 'append' },
  { label: `${WRITERS} writers appends`, ours: oursEight(false), raw: rawEight, target: TARGETS.eight, kind: 'append' },
  { label: '1 writer, notify: true', ours: oursSingle(true), raw: rawSingle, target: TARGETS.single, kind: 'append' },
  { label: `${WRITERS} writers, notify: true`, ours: oursEight(true), raw: rawEight, target: TARGETS.eight, kind: 'append' },
  { label: 'read + fold', ours: oursRead, raw: rawRead, target: TARGETS.read, kind: 'read' },
];
const PAIRS = ALL_PAIRS.filter((pair) => ONLY === undefined || pair.kind === ONLY);

/** The 100,000-event session both read sides use, written untimed through importStored in big batches. */
const populateRead = async (): Promise<void> => {
  const log = await openOurs();
  try {
    const rows = rowsOf(READ_SESSION, makeEvents(READ, 7));
    for (let i = 0; i < rows.length; i += 5000) await log.importStored(READ_SESSION, rows.slice(i, i + 5000).map((r) => r.text));
    check((await log.head(READ_SESSION)) === READ, 'populated head');
  } finally {
    await log.close();
  }
};

const median = (xs: readonly number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
};
const fmtRate = (n: number): string => Math.round(n).toLocaleString('en');
const fmtRatioDown = (n: number): string => (Math.floor(n * 100) / 100).toFixed(2);

const main = async (): Promise<void> => {
  const version = (await q('SHOW server_version')).rows[0] as { server_version: string };
  const settings = (await q(`SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit') ORDER BY name`)).rows as { name: string; setting: string }[];
  console.log(
    `postgres bench: PostgreSQL ${version.server_version} (${settings.map((s) => `${s.name}=${s.setting}`).join(', ')}), ` +
      `${APPENDS} single appends, ${WRITERS}×${PER_WRITER} concurrent, read ${READ.toLocaleString('en')}, ${ROUNDS} rounds, ` +
      `${cpus().length} cores, load ${loadavg()[0]?.toFixed(1)}`,
  );
  await migrate({ connectionString: url }, { schema: SCHEMA });
  await q(`CREATE TABLE "${SCHEMA}".raw_events (LIKE "${SCHEMA}".events INCLUDING ALL)`);
  try {
    if (PAIRS.some((pair) => pair.kind === 'read')) {
      const t0 = Date.now();
      await populateRead();
      console.log(`populated ${READ.toLocaleString('en')} events in ${((Date.now() - t0) / 1000).toFixed(1)} s (untimed)\n`);
    }
    const results = PAIRS.map(() => ({ ours: [] as number[], raw: [] as number[], ratios: [] as number[] }));
    for (let round = 0; round < ROUNDS; round++) {
      const parts: string[] = [];
      for (const [i, pair] of PAIRS.entries()) {
        const r = results[i];
        if (!r) continue;
        let ours: number;
        let raw: number;
        if (round % 2 === 0) {
          ours = await pair.ours.run();
          raw = await pair.raw.run();
        } else {
          raw = await pair.raw.run();
          ours = await pair.ours.run();
        }
        r.ours.push(ours);
        r.raw.push(raw);
        r.ratios.push(ours / raw);
        parts.push(`${pair.label} ${(ours / raw).toFixed(2)}`);
      }
      console.log(`round ${round + 1}/${ROUNDS}: ratios ${parts.join(' / ')}`);
    }
    console.log('');
    console.log(['case'.padEnd(24), 'ours ev/s'.padStart(11), 'raw ev/s'.padStart(11), 'ratio'.padStart(6), 'range'.padStart(11), 'target'.padStart(7)].join('  '));
    for (const [i, pair] of PAIRS.entries()) {
      const r = results[i];
      if (!r) continue;
      const ratio = median(r.ratios);
      console.log(
        [
          pair.label.padEnd(24),
          fmtRate(median(r.ours)).padStart(11),
          fmtRate(median(r.raw)).padStart(11),
          fmtRatioDown(ratio).padStart(6),
          `${Math.min(...r.ratios).toFixed(2)}–${Math.max(...r.ratios).toFixed(2)}`.padStart(11),
          `≥${pair.target}`.padStart(7),
          ratio >= pair.target ? 'PASS' : 'MISS',
        ].join('  '),
      );
    }
    console.log(`\nmedians of ${ROUNDS} rounds; ratio = median of per-round ours/raw. load average at the end: ${loadavg()[0]?.toFixed(1)}`);
  } finally {
    await q(`DROP SCHEMA "${SCHEMA}" CASCADE`);
    await admin.end();
  }
};

await main();
