// Resume benchmark: how long openSession takes to resume a session of 10,000 events and one of 1,000,000 events,
// both on LevelDB with a memory checkpoint every 10,000 events. Target: large / small ≤ 2.
//
//   npx tsx bench/resume.bench.ts                                  # 10,000 and 1,000,000 events (builds for a few minutes)
//   RESUME_BENCH_LARGE=100000 npx tsx bench/resume.bench.ts        # quick run
//   npx tsx bench/resume.bench.ts --small 10000 --large 200000 --runs 9
//
// Each session is built the way a long agent session grows: batches of 1,000 events (user turns, tool calls, tool
// results of a few hundred characters, now and then a failed command or a test result) appended through
// `session.record` of a session opened with `{ checkpointEvery: 10_000 }`, and a manual compaction
// (StructuredSummaryCompactPolicy keeping the newest 200 items) every 2,500 events so memory stays bounded.
// Both logs are then closed and reopened, and `openSession(log, { id })` and `agent.resumeSession(id)` (memory and run
// state from one fold: checkpoint + tail) are timed several times on each, alternating between the two sessions
// (medians reported). Neither may append an event or write a checkpoint.
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { StructuredSummaryCompactPolicy } from '../src/compact/index.js';
import type { NewSessionEvent } from '../src/events/index.js';
import { openLevelLog, type SessionEventLog } from '../src/log/index.js';
import { foldMemoryAsync } from '../src/memory/index.js';
import { openSession, rebuildState } from '../src/session/index.js';
import { Agents, type Agent } from '../src/runtime/index.js';
import { codingSessionEvents } from './corpus.js';
import { argValue, judged, positiveInt, quick, reportResults } from './support.js';

// ---------------------------------------------------------------- settings


const SMALL = positiveInt(argValue('--small') ?? process.env['RESUME_BENCH_SMALL'], 10_000, 'small session size');
// --quick (npm run bench -- --quick): 10,000 against 60,000 events, 5 resumes each.
const LARGE = positiveInt(argValue('--large') ?? process.env['RESUME_BENCH_LARGE'], quick ? 60_000 : 1_000_000, 'large session size');
const RUNS = positiveInt(argValue('--runs') ?? process.env['RESUME_BENCH_RUNS'], quick ? 5 : 11, 'resume runs');
const BATCH = 1_000;
const CHECKPOINT_EVERY = 10_000;
const COMPACT_EVERY = 2_500;
const KEEP_ITEMS = 200;
const TARGET_RATIO = 2;

// ---------------------------------------------------------------- build and measure

const tempDirs = new Set<string>();

/** Bytes in the files of a directory (a LevelDB store). */
const storeBytes = async (dir: string): Promise<number> => {
  let total = 0;
  for (const name of await readdir(dir)) total += (await stat(join(dir, name))).size;
  return total;
};
const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
const ms = (n: number): string => `${n < 10 ? n.toFixed(2) : n.toFixed(1)} ms`;

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

interface Built {
  readonly dir: string;
  readonly sessionId: string;
  readonly headSeq: number;
  readonly compactions: number;
  readonly buildMs: number;
  readonly storeBytes: number;
}

/** Appends `count` generated events (plus session.started and the compactions) to a new session in a temp dir. */
const build = async (label: string, count: number): Promise<Built> => {
  const dir = await mkdtemp(join(tmpdir(), `context-ledger-resume-bench-${label}-`));
  tempDirs.add(dir);
  const log = await openLevelLog(dir);
  const sessionId = `bench-${label}`;
  const session = await openSession(log, { id: sessionId, checkpointEvery: CHECKPOINT_EVERY });
  const next = codingSessionEvents(count);
  const policy = new StructuredSummaryCompactPolicy({ maxItems: KEEP_ITEMS, pinnedPrefixItems: 1 });
  const progressEvery = Math.max(BATCH, Math.min(50_000, Math.ceil(count / 10 / BATCH) * BATCH));
  const started = performance.now();
  let appended = 0;
  let compactions = 0;
  while (appended < count) {
    const n = Math.min(BATCH, count - appended);
    const batch: NewSessionEvent[] = [];
    for (let i = 0; i < n; i++) batch.push(next());
    await session.record(batch);
    const before = appended;
    appended += n;
    if (Math.floor(appended / COMPACT_EVERY) > Math.floor(before / COMPACT_EVERY)) {
      await session.compact(policy);
      compactions += 1;
    }
    if (count >= 100_000 && appended % progressEvery === 0 && appended < count) {
      const elapsed = (performance.now() - started) / 1000;
      console.log(`  ${label}: ${fmt(appended)} / ${fmt(count)} events appended (${elapsed.toFixed(1)} s, ${fmt(appended / elapsed)} events/s)`);
    }
  }
  const buildMs = performance.now() - started;
  const headSeq = await log.head(sessionId);
  await log.close();
  return { dir, sessionId, headSeq, compactions, buildMs, storeBytes: await storeBytes(dir) };
};

interface Measured {
  readonly times: number[];
  readonly agentTimes: number[];
  readonly checkpointSeq: number | 'none';
  readonly tailEvents: number;
  readonly items: number;
  readonly checkpointBytes: number;
}

interface Opened {
  readonly built: Built;
  readonly log: SessionEventLog;
  readonly agent: Agent;
  readonly measured: Measured;
  readonly checkpointSeqBefore: number | undefined;
}

/** Reopens a session's log, checks that resume uses a valid checkpoint, and warms up once. */
const reopen = async (built: Built): Promise<Opened> => {
  const log = await openLevelLog(built.dir);
  const rebuilt = await rebuildState(log, built.sessionId);
  if (rebuilt.rejectedCheckpoint !== undefined) throw new Error(`checkpoint rejected: ${rebuilt.rejectedCheckpoint}`);
  if (rebuilt.headSeq !== built.headSeq) throw new Error(`resume saw head ${rebuilt.headSeq}, expected ${built.headSeq}`);
  const checkpoint = await log.latestCheckpoint(built.sessionId);
  const warm = await openSession(log, { id: built.sessionId });
  const checkpointSeq = rebuilt.from === 'full-fold' ? 'none' : rebuilt.from.checkpointSeq;
  const agent = Agents.react({
    model: 'none',
    modelClient: { create: () => Promise.reject(new Error('the resume bench calls no model')) },
    log,
  });
  await agent.resumeSession(built.sessionId);
  return {
    built,
    log,
    agent,
    checkpointSeqBefore: checkpoint?.seq,
    measured: {
      times: [],
      agentTimes: [],
      checkpointSeq,
      tailEvents: built.headSeq - (checkpointSeq === 'none' ? 0 : checkpointSeq),
      items: warm.memory.snapshot().items.length,
      checkpointBytes: checkpoint ? Buffer.byteLength(JSON.stringify(checkpoint)) : 0,
    },
  };
};

/** Times one `openSession(log, { id })`, checking it resumed the whole session and appended nothing. */
const resumeOnce = async ({ built, log, measured }: Opened): Promise<number> => {
  const t0 = performance.now();
  const session = await openSession(log, { id: built.sessionId });
  const elapsed = performance.now() - t0;
  if (!session.resumed || session.memory.headSeq() !== built.headSeq) throw new Error('did not resume the whole session');
  measured.times.push(elapsed);
  return elapsed;
};

/** Times one `agent.resumeSession(id)`: memory and run state (last step, open run) from checkpoint + tail. */
const agentResumeOnce = async ({ built, agent, measured }: Opened): Promise<number> => {
  const t0 = performance.now();
  const session = await agent.resumeSession(built.sessionId);
  const elapsed = performance.now() - t0;
  if (session.memory.headSeq() !== built.headSeq) throw new Error('agent.resumeSession did not resume the whole session');
  measured.agentTimes.push(elapsed);
  return elapsed;
};

/** For context: folding every event of a session from the start (what resume would cost without checkpoints). */
const fullFoldMs = async (built: Built): Promise<number> => {
  const log = await openLevelLog(built.dir);
  try {
    const t0 = performance.now();
    const folded = await foldMemoryAsync(log.read(built.sessionId));
    const elapsed = performance.now() - t0;
    if (folded.lastSeq !== built.headSeq) throw new Error('full fold did not see every event');
    return elapsed;
  } finally {
    await log.close();
  }
};

const main = async (): Promise<void> => {
  console.log(
    `resume bench: sessions of ${fmt(SMALL)} and ${fmt(LARGE)} events, checkpoint every ${fmt(CHECKPOINT_EVERY)}, ` +
      `compaction every ${fmt(COMPACT_EVERY)} (keep ${KEEP_ITEMS}), ${RUNS} resumes each; Node ${process.version}, ${cpus().length} cores, ` +
      `load average ${loadavg()[0]!.toFixed(1)}\n`,
  );
  console.log(`building the small session (${fmt(SMALL)} events)...`);
  const small = await build('small', SMALL);
  console.log(`  done in ${(small.buildMs / 1000).toFixed(1)} s (${fmt(small.headSeq)} events stored, ${small.compactions} compactions)`);
  console.log(`building the large session (${fmt(LARGE)} events)...`);
  const large = await build('large', LARGE);
  console.log(`  done in ${(large.buildMs / 1000).toFixed(1)} s (${fmt(large.headSeq)} events stored, ${large.compactions} compactions)\n`);

  const smallFull = await fullFoldMs(small);
  const smallOpen = await reopen(small);
  const largeOpen = await reopen(large);
  // Interleaved (the side that goes first alternates), so drift on a shared machine hits both alike.
  const ratios: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const [a, b] = run % 2 === 0 ? [smallOpen, largeOpen] : [largeOpen, smallOpen];
    await resumeOnce(a);
    await resumeOnce(b);
    await agentResumeOnce(a);
    await agentResumeOnce(b);
    ratios.push(largeOpen.measured.times.at(-1)! / smallOpen.measured.times.at(-1)!);
  }
  for (const opened of [smallOpen, largeOpen]) {
    if ((await opened.log.head(opened.built.sessionId)) !== opened.built.headSeq) throw new Error('resuming appended events');
    if ((await opened.log.latestCheckpoint(opened.built.sessionId))?.seq !== opened.checkpointSeqBefore) throw new Error('resuming wrote a checkpoint');
    await opened.log.close();
  }
  const smallResult = smallOpen.measured;
  const largeResult = largeOpen.measured;

  const rows = [
    ['small', small, smallResult],
    ['large', large, largeResult],
  ] as const;
  const header = ['session', 'events', 'store', 'checkpoint at', 'tail', 'items', 'checkpoint size', 'openSession (median)', 'min–max', 'agent.resumeSession (median)'];
  const body = rows.map(([name, b, m]) => [
    name,
    fmt(b.headSeq),
    `${(b.storeBytes / 1024 / 1024).toFixed(1)} MiB`,
    m.checkpointSeq === 'none' ? 'none' : fmt(m.checkpointSeq),
    fmt(m.tailEvents),
    fmt(m.items),
    `${(m.checkpointBytes / 1024).toFixed(0)} KiB`,
    ms(median(m.times)),
    `${ms(Math.min(...m.times))}–${ms(Math.max(...m.times))}`,
    ms(median(m.agentTimes)),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)));
  const line = (cells: readonly string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of body) console.log(line(row));

  const ratio = median(largeResult.times) / median(smallResult.times);
  console.log(`\nfor context: folding all ${fmt(small.headSeq)} events of the small session without a checkpoint: ${ms(smallFull)}`);
  console.log(`per-run ratios large/small: ${ratios.map((r) => r.toFixed(2)).join(' ')}`);
  console.log(
    `resume ratio large/small (median/median): ${ratio.toFixed(2)}, median of per-run ratios ${median(ratios).toFixed(2)} ` +
      `(target ≤ ${TARGET_RATIO}) ${ratio <= TARGET_RATIO ? 'PASS' : 'MISS'}`,
  );
  const agentRatio = median(largeResult.agentTimes) / median(smallResult.agentTimes);
  console.log(
    `agent.resumeSession ratio large/small (median/median): ${agentRatio.toFixed(2)} (target ≤ ${TARGET_RATIO}) ${agentRatio <= TARGET_RATIO ? 'PASS' : 'MISS'}`,
  );
  console.log('resuming appended no event and wrote no checkpoint (checked after every run)');
  console.log(`load average at the end: ${loadavg()[0]!.toFixed(1)}`);
  // The target is set for 10,000 against 1,000,000 events; --quick compares 10,000 with 60,000, where a resume
  // that grew with the session's length would not show it.
  const setAt = SMALL === 10_000 && LARGE === 1_000_000 ? undefined : '10,000 ÷ 1,000,000 events';
  reportResults('resume', [
    judged(
      `openSession, ${fmt(large.headSeq)} ÷ ${fmt(small.headSeq)} events (medians ${ms(median(largeResult.times))} / ${ms(median(smallResult.times))})`,
      ratio.toFixed(2),
      `≤ ${TARGET_RATIO}`,
      ratio <= TARGET_RATIO,
      setAt,
    ),
    judged(`agent.resumeSession, ${fmt(large.headSeq)} ÷ ${fmt(small.headSeq)} events`, agentRatio.toFixed(2), `≤ ${TARGET_RATIO}`, agentRatio <= TARGET_RATIO, setAt),
  ]);
};

try {
  await main();
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await Promise.all([...tempDirs].map((path) => rm(path, { recursive: true, force: true })));
}
