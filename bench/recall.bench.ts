// Recall benchmark: build the recall index of a 100,000-item session on LevelDB (compacted to its newest 200 items every
// 3,000 events, as a long session is) (time, heap it holds, peak RSS) against
// a plain read of the same log, then warm queries: the search alone and the whole `recall({ query })` call (which also
// reads the hits' events back for their snippets). Target: a warm query ≤ 20 ms.
//
//   npx tsx bench/recall.bench.ts                 # 100,000 items
//   npx tsx bench/recall.bench.ts --items 20000   # quick run (also: npm run bench -- --quick recall)
//   npx tsx bench/recall.bench.ts --corpus synthetic   # the 60-word stream: every query matches most items
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NewSessionEvent } from '../src/events/index.js';
import { openLevelLog } from '../src/log/index.js';
import { openSession } from '../src/session/index.js';
import { StructuredSummaryCompactPolicy } from '../src/compact/index.js';
import { RecallIndex, recallTool } from '../src/runtime/index.js';
import { MEMORY_ACCESS } from '../src/runtime/memory-tools/access.js';
import { codingSessionEvents, loadTrajectories, trajectoriesDir } from './corpus.js';
import { argValue, judged, positiveInt, prng, quick, reportResults } from './support.js';

const ITEMS = positiveInt(argValue('--items') ?? process.env['RECALL_BENCH_ITEMS'], quick ? 20_000 : 100_000, 'items');
const QUERIES = positiveInt(argValue('--queries'), 200, 'queries');
const TARGET_MS = 20;
/** `real`: the mini-SWE-agent runs, repeated (their vocabulary); `synthetic`: corpus.ts's 60-word stream (nearly every item matches every query: the worst case). */
const CORPUS = (argValue('--corpus') ?? 'real') === 'synthetic' ? 'synthetic' : 'real';

/** The real runs' messages as events (each user or assistant message an input or output item, each tool message a result), repeated. */
const realSessionEvents = (): (() => NewSessionEvent) => {
  const runs = loadTrajectories();
  if (!runs || runs.length === 0) throw new Error(`recall bench: no trajectories in ${trajectoriesDir} (use --corpus synthetic)`);
  const messages = runs.flatMap((r) => r.chat);
  let i = 0;
  let lap = 0;
  return (): NewSessionEvent => {
    const m = messages[i++ % messages.length]!;
    if (i % messages.length === 0) lap += 1;
    const text = `${typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? '')} (lap ${lap})`;
    if (m.role === 'tool') return { type: 'tool.result', callId: `call-${i}-${lap}`, output: text };
    return { type: m.role === 'user' ? 'user.input' : 'model.output', items: [{ type: 'message', role: m.role === 'user' ? 'user' : 'assistant', content: text }] };
  };
};

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};
const gc = (): void => (globalThis as { gc?: () => void }).gc?.();
const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

const main = async (): Promise<void> => {
  const dir = await mkdtemp(join(tmpdir(), 'cl-recall-bench-'));
  try {
    const log = await openLevelLog(join(dir, 'ledger'));
    const session = await openSession(log, { id: `recall-bench-${CORPUS}`, checkpointEvery: 0 });
    const next = CORPUS === 'real' ? realSessionEvents() : codingSessionEvents(7);
    let items = 0;
    let batches = 0;
    while (items < ITEMS) {
      const batch: NewSessionEvent[] = [];
      for (let i = 0; i < 1000 && items < ITEMS; i++) {
        const event = next();
        if (event.type === 'user.input' || event.type === 'model.output') items += event.items.length;
        else if (event.type === 'tool.result') items += 1;
        batch.push(event);
      }
      await session.record(batch);
      // Memory stays bounded as in a long session: most items have left it (what recall is for).
      if (++batches % 3 === 0) await session.compact(new StructuredSummaryCompactPolicy({ maxItems: 200 }));
    }
    const head = await log.head(session.id);
    console.log(`recall bench: ${items.toLocaleString('en-US')} items in ${head.toLocaleString('en-US')} events (LevelDB, ${CORPUS} corpus); load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);

    // Baseline: reading the whole log once.
    let t = performance.now();
    let read = 0;
    for await (const _event of log.read(session.id)) read += 1;
    const readMs = performance.now() - t;

    gc();
    const heapBefore = process.memoryUsage().heapUsed;
    t = performance.now();
    const index = new RecallIndex(log, session.id);
    await index.catchUp();
    const buildMs = performance.now() - t;
    gc();
    const heapHeld = process.memoryUsage().heapUsed - heapBefore;
    const peakRss = process.resourceUsage().maxRSS * 1024;

    const random = prng(11);
    const words =
      CORPUS === 'real'
        ? ['Traceback AssertionError', 'pydicom dataset', 'timezone offset', 'sed replace line', 'pytest failed', 'ValueError invalid', 'reproduce issue script', 'diff patch']
        : ['error test', 'parser refactor', 'checkpoint resume', 'session fold', 'lint fix', 'compact summary', 'interface extends', 'batch append'];
    const state = session.memory.state();
    const searchTimes: number[] = [];
    for (let i = 0; i < QUERIES; i++) {
      const query = words[Math.floor(random() * words.length)]!;
      const start = performance.now();
      index.search(query, index.seenIds(state), 5);
      searchTimes.push(performance.now() - start);
    }
    // The whole tool call (catch-up, what the model sees, search, the hits' events read back for snippets).
    const tool = recallTool();
    const context = { sessionId: session.id, runId: 'bench', step: 1, callId: 'q', signal: new AbortController().signal, record: async () => undefined, [MEMORY_ACCESS]: { session, record: async () => undefined } };
    await tool.execute({ query: 'warm up' }, context as never);
    const callTimes: number[] = [];
    for (let i = 0; i < Math.min(QUERIES, 100); i++) {
      const query = words[Math.floor(random() * words.length)]!;
      const start = performance.now();
      await tool.execute({ query }, context as never);
      callTimes.push(performance.now() - start);
    }
    const searchMs = median(searchTimes);
    const callMs = median(callTimes);
    console.log(`  read the log once:        ${readMs.toFixed(0)} ms (${read} events)`);
    console.log(`  build the index:          ${buildMs.toFixed(0)} ms (${(buildMs / readMs).toFixed(2)}x the read), ${index.size.toLocaleString('en-US')} items indexed`);
    console.log(`  heap the index holds:     ${mib(heapHeld)}; peak RSS of the process ${mib(peakRss)}`);
    console.log(`  warm search (median):     ${searchMs.toFixed(2)} ms over ${QUERIES} queries`);
    console.log(`  warm recall call (median): ${callMs.toFixed(2)} ms over ${callTimes.length} calls (target ≤ ${TARGET_MS} ms)`);
    reportResults('recall', [
      { measure: `recall index build, ${items} items (${CORPUS}) ÷ log read`, value: `${(buildMs / readMs).toFixed(2)}x`, target: '', verdict: '' },
      { measure: 'recall index heap', value: mib(heapHeld), target: '', verdict: '' },
      judged(`warm recall query, whole call (${CORPUS})`, `${callMs.toFixed(2)} ms`, `<= ${TARGET_MS} ms`, callMs <= TARGET_MS, items >= 100_000 ? undefined : '100,000 items'),
    ]);
    await log.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};

await main();
