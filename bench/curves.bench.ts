// Cost curves: how each cost grows with size (fold, projection warm and cold, append, resume against session length,
// resume, replay, audit and verify against steps, bytes per step, peak memory while reading), each as a table over
// sizes with a linear-or-worse verdict.
//
//   node --expose-gc --import tsx bench/curves.bench.ts                  # the issue's sizes: fold to 1M events, … (long: run it in the background)
//   node --expose-gc --import tsx bench/curves.bench.ts --quick          # small sizes (npm run bench -- --quick)
//   node --expose-gc --import tsx bench/curves.bench.ts --size medium
//   node --expose-gc --import tsx bench/curves.bench.ts --only resume,bounded   # some of the curves only
//   node --expose-gc --import tsx bench/curves.bench.ts --only precount         # countTokensOnWrite on ÷ off
//
// A curve is "linear" when the cost per unit at the largest size is at most 1.5 times the cost per unit at the
// next size down (on a busy machine a single run wobbles by that much; the smallest size also pays fixed costs);
// otherwise it says by how much it grew.
// A flat curve (append windows, resume with checkpoints) compares the cost itself, not the cost per unit.
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { spawnSync } from 'node:child_process';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { FactSummaryCompactPolicy, StructuredSummaryCompactPolicy } from '../src/compact/index.js';
import { DefaultContextProjector, openAiTokenizer } from '../src/context/index.js';
import type { NewSessionEvent, SessionEvent } from '../src/events/index.js';
import { assistantMessage, functionCall, functionCallOutput, userMessage } from '../src/items/index.js';
import type { MemoryItem } from '../src/items/index.js';
import { openLevelLog, openMemoryLog, secretRedactor } from '../src/log/index.js';
import type { SessionEventLog } from '../src/log/index.js';
import { foldMemory, foldMemoryAsync } from '../src/memory/index.js';
import { ScriptedModelClient } from '../src/model/index.js';
import type { ModelResult } from '../src/model/index.js';
import { auditItem, auditSession, replaySession } from '../src/replay/index.js';
import { createFateLawChecker } from '../src/replay/fate-law.js';
import { Agents, RecallIndex, defineTool } from '../src/runtime/index.js';
import type { Agent } from '../src/runtime/index.js';
import { fromChatCompletions } from '../src/providers/index.js';
import { deepFreeze } from '../src/testing/index.js';
import { memoryTokenTracker, openSession, rebuildState } from '../src/session/index.js';
import { sessionSpanRecords } from '../src/otel/index.js';
import type { AgentSession } from '../src/session/index.js';
import { codingSessionEvents, syntheticConversation } from './corpus.js';
import { argValue, judged, prng, quick, reportResults } from './support.js';
import type { BenchResult } from './support.js';

interface Sizes {
  readonly fold: readonly number[];
  readonly projection: readonly number[];
  /** Events the append curve writes, in ten windows. */
  readonly append: number;
  /** Steps of the runtime sessions: compaction on (memory bounded) and off (memory grows every step). */
  readonly boundedSteps: readonly number[];
  readonly unboundedSteps: readonly number[];
  /** Session lengths (events) of the checkpointed resume curve. */
  readonly resume: readonly number[];
  /** Events read for the peak-memory figure. */
  readonly read: number;
  /** Tool results in the one step of the re-run curve. */
  readonly rerunResults: readonly number[];
  /** Items in memory for the token trigger's per-step cost. */
  readonly trigger: readonly number[];
  /** Items a session has recorded when its recall index is built and queried. */
  readonly recall: readonly number[];
  /** Sizes (KiB of text) of the events the redactor scans. */
  readonly redactKiB: readonly number[];
  /** Messages of the synthetic session written with and without countTokensOnWrite. */
  readonly precount: readonly number[];
}

const PRESETS: Record<'quick' | 'medium' | 'full', Sizes> = {
  quick: { fold: [10_000, 50_000], projection: [1_000, 10_000], append: 20_000, boundedSteps: [30, 120], unboundedSteps: [15, 60], resume: [10_000, 20_000], read: 30_000, rerunResults: [250, 500], trigger: [1_000, 10_000], recall: [2_000, 10_000], redactKiB: [1, 16, 64], precount: [2_000] },
  medium: { fold: [10_000, 100_000, 300_000], projection: [1_000, 10_000, 30_000], append: 200_000, boundedSteps: [100, 400, 1_600], unboundedSteps: [25, 100, 200], resume: [10_000, 100_000, 300_000], read: 300_000, rerunResults: [1_000, 2_000, 4_000], trigger: [1_000, 10_000, 50_000], recall: [10_000, 50_000], redactKiB: [1, 16, 256], precount: [2_000, 10_000] },
  full: { fold: [10_000, 100_000, 1_000_000], projection: [1_000, 10_000, 100_000], append: 1_000_000, boundedSteps: [100, 1_000, 10_000], unboundedSteps: [100, 1_000, 4_000], resume: [10_000, 100_000, 1_000_000], read: 1_000_000, rerunResults: [1_000, 2_000, 4_000, 8_000, 16_000], trigger: [1_000, 10_000, 100_000], recall: [10_000, 100_000, 300_000], redactKiB: [1, 16, 256, 1_024], precount: [2_000, 10_000] },
};
const CURVES = ['fold', 'projection', 'append', 'bounded', 'unbounded', 'resume', 'read', 'rerun', 'trigger', 'recall', 'redact', 'precount'] as const;
type CurveName = (typeof CURVES)[number];

/** --quick, --size medium or the full sizes of issue #15 (the default). */
const preset = quick ? 'quick' : (argValue('--size') ?? 'full');
if (!(preset in PRESETS)) throw new Error(`--size must be quick, medium or full, got ${JSON.stringify(preset)}`);
const SIZES = PRESETS[preset as keyof typeof PRESETS];
/** --only fold,resume: run some of the curves (default all). */
const only = (argValue('--only') ?? CURVES.join(',')).split(',').filter((name) => name !== '');
for (const name of only) if (!(CURVES as readonly string[]).includes(name)) throw new Error(`--only takes ${CURVES.join(', ')}; got ${JSON.stringify(name)}`);
const LINEAR_SLACK = 1.5;
/**
 * The targets (linear growth, flat resume) are set for the full sizes of issue #15: at smaller sizes fixed costs and
 * the JIT still weigh on the larger size too, so --quick and --size medium print their figures as informative.
 */
const SET_AT = preset === 'full' ? undefined : 'the full sizes';
/** The resume curve: a checkpoint every 10,000 events, a compaction every 2,500 keeping 200 items (as resume.bench.ts). */
const CHECKPOINT_EVERY = 10_000;
const COMPACT_EVERY = 2_500;
/** The resume curve measures each length twice: right after a checkpoint, and with half a checkpoint band of tail. */
const MID_BAND_TAIL = CHECKPOINT_EVERY / 2;
/** The old-generation cap under which the compacted session is read a second time (it keeps a few thousand items). */
const READ_HEAP_CAP_MIB = 64;

const collectGarbage = (globalThis as { gc?: () => void }).gc;
const tempDirs = new Set<string>();
const tempDir = async (name: string): Promise<string> => {
  const dir = await mkdtemp(join(tmpdir(), `context-ledger-curves-${name}-`));
  tempDirs.add(dir);
  return dir;
};
const removeDir = async (dir: string): Promise<void> => {
  await rm(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
};
const storeBytes = async (dir: string): Promise<number> => {
  let total = 0;
  for (const name of await readdir(dir)) total += (await stat(join(dir, name))).size;
  return total;
};

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
const num = (n: number): string => (n >= 100 ? fmt(n) : n >= 10 ? n.toFixed(1) : n.toFixed(2));
const mib = (bytes: number): string => `${fmt(bytes / 1024 / 1024)} MiB`;
const load = (): string => loadavg()[0]?.toFixed(1) ?? '?';
const secondsSince = (started: number): string => `${((performance.now() - started) / 1000).toFixed(1)} s`;

const median = (xs: readonly number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

/** Median wall time of `runs` calls of `f` (each after a GC), in ms. */
const timeIt = async (runs: number, f: () => unknown): Promise<number> => {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    collectGarbage?.();
    const started = performance.now();
    await f();
    times.push(performance.now() - started);
  }
  return median(times);
};

const printTable = (header: readonly string[], rows: readonly (readonly string[])[]): void => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string => cells.map((c, i) => c.padStart(widths[i] ?? 0)).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows) console.log(line(row));
};

interface Point {
  readonly size: number;
  readonly ms: number;
}

interface Series {
  readonly name: string;
  readonly points: readonly Point[];
  /** Why the curve is expected to grow faster than linear, when it is (then it has no target in the summary). */
  readonly expectedWorse?: string;
}

const results: BenchResult[] = [];

const perUnit = (p: Point): number => p.ms / p.size;

/**
 * Prints several costs over the same sizes: per size the time and the time per unit of each, then per cost the
 * growth of its cost per unit over the largest step in size (the two largest sizes; the smallest also pays fixed
 * costs and the JIT, which flatters the growth from it) and over the whole range, and the verdict.
 */
const printCurves = (title: string, label: string, unit: string, series: readonly Series[]): void => {
  console.log(`\n${title}`);
  const sizes = (series[0] as Series).points.map((p) => p.size);
  const header = [`${unit}s`, ...series.flatMap((s) => [`${s.name} ms`, `µs/${unit}`])];
  const rows = sizes.map((size, i) => [
    fmt(size),
    ...series.flatMap((s) => {
      const p = s.points[i] as Point;
      return [num(p.ms), num((p.ms * 1000) / p.size)];
    }),
  ]);
  printTable(header, rows);
  const range = (from: number): string => `${fmt(sizes[from] as number)} → ${fmt(sizes[sizes.length - 1] as number)} ${unit}s`;
  const lastStep = range(Math.max(0, sizes.length - 2));
  for (const s of series) {
    const first = s.points[0] as Point;
    const previous = s.points[Math.max(0, s.points.length - 2)] as Point;
    const last = s.points[s.points.length - 1] as Point;
    const growth = perUnit(last) / perUnit(previous);
    const whole = perUnit(last) / perUnit(first);
    const linear = growth <= LINEAR_SLACK;
    const verdict = linear ? 'linear' : `worse than linear${s.expectedWorse ? ` (expected: ${s.expectedWorse})` : ''}`;
    const overWhole = sizes.length > 2 ? ` (×${whole.toFixed(2)} over ${range(0)})` : '';
    console.log(`  ${s.name}: per-${unit} cost ×${growth.toFixed(2)} over ${lastStep}${overWhole}: ${verdict}`);
    results.push(
      s.expectedWorse
        ? { measure: `${label}: ${s.name}, per-${unit} cost ${lastStep}`, value: `${growth.toFixed(2)}x`, target: '', verdict: '' }
        : judged(`${label}: ${s.name}, per-${unit} cost ${lastStep}`, `${growth.toFixed(2)}x`, `<= ${LINEAR_SLACK}`, linear, SET_AT),
    );
  }
};

// ---------------------------------------------------------------- events

const WORDS = 'read edit test build fix parse token budget memory event log session step tool call result error file path'.split(' ');
/** Events of a session without compaction: every event adds one item to memory (the fold keeps them all). */
const eventSource = (seed: number): (() => NewSessionEvent) => {
  const random = prng(seed);
  const words = (n: number): string => Array.from({ length: n }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' ');
  let step = 0;
  let pending: string | undefined;
  return () => {
    if (pending !== undefined) {
      const callId = pending;
      pending = undefined;
      return { type: 'tool.result', callId, output: words(40) };
    }
    step += 1;
    if (step % 50 === 1) return { type: 'user.input', items: [{ type: 'message', role: 'user', content: words(30) }] };
    pending = `call_${step}`;
    return { type: 'model.output', items: [{ type: 'function_call', call_id: pending, name: 'read_file', arguments: JSON.stringify({ path: words(2) }) }] };
  };
};

/** A LevelDB log (closed) holding one session 's' of `count` events appended in batches of 1,000. */
const buildLog = async (name: string, count: number): Promise<string> => {
  const dir = await tempDir(name);
  const log = await openLevelLog(dir);
  const next = eventSource(count);
  const started = performance.now();
  for (let done = 0; done < count; ) {
    const batch = Array.from({ length: Math.min(1_000, count - done) }, next);
    await log.append('s', batch);
    done += batch.length;
  }
  await log.close();
  console.log(`\n(built a log of ${fmt(count)} events through log.append in batches of 1,000 in ${secondsSince(started)}, ${mib(await storeBytes(dir))} on disk)`);
  return dir;
};

const readAll = async (log: SessionEventLog, id: string): Promise<SessionEvent[]> => {
  const events: SessionEvent[] = [];
  for await (const event of log.read(id)) events.push(event);
  return events;
};

// ---------------------------------------------------------------- fold, projection, append, read

const foldCurve = async (dir: string): Promise<void> => {
  const log = await openLevelLog(dir);
  const events = await readAll(log, 's');
  await log.close();
  const points: Point[] = [];
  for (const size of SIZES.fold) {
    const slice = events.slice(0, size);
    points.push({ size, ms: await timeIt(size >= 1_000_000 ? 3 : 5, () => foldMemory(slice)) });
  }
  printCurves('fold: foldMemory over decoded events (in memory, every event adds an item)', 'fold', 'event', [{ name: 'foldMemory', points }]);
};

const projectionCurves = async (): Promise<void> => {
  const tokenizer = openAiTokenizer();
  tokenizer.count('start-up');
  const budget = { maxTokens: 16_000, pinnedPrefixItems: 1 };
  const largest = SIZES.projection[SIZES.projection.length - 1] as number;
  const chat = syntheticConversation(largest, 20_260_101);
  const cold: Point[] = [];
  const warm: Point[] = [];
  const touch: Point[] = [];
  for (const size of SIZES.projection) {
    const part = chat.slice(0, size);
    const projector = new DefaultContextProjector({ tokenizer });
    const runs = size >= 100_000 ? 3 : 5;
    // Items out of memory are deep-frozen by the fold, and the projection caches remember frozen items only: the
    // items here are frozen the same way (unfrozen, every projection would be cold).
    const freshItems = (): MemoryItem[] => deepFreeze(fromChatCompletions(part));
    // One untimed cold projection first (the JIT), on its own copy.
    projector.project(freshItems(), budget);
    // Fresh items for every cold run (nothing cached), converted one at a time so that only one copy is alive.
    const coldTimes: number[] = [];
    let items: MemoryItem[] = [];
    for (let run = 0; run < runs; run++) {
      items = freshItems();
      collectGarbage?.();
      const started = performance.now();
      projector.project(items, budget);
      coldTimes.push(performance.now() - started);
    }
    cold.push({ size, ms: median(coldTimes) });
    const warmItems = items;
    warm.push({ size, ms: await timeIt(9, () => projector.project(warmItems, budget)) });
    // The control: a bare loop that touches every item once, as a warm projection must (it checks that all are frozen).
    touch.push({
      size,
      ms: await timeIt(9, () => {
        let frozen = 0;
        for (const item of warmItems) if (Object.isFrozen(item)) frozen += 1;
        return frozen;
      }),
    });
  }
  printCurves('projection: DefaultContextProjector, o200k, 16,000 tokens, synthetic session', 'projection', 'message', [
    { name: 'cold (fresh items)', points: cold },
    { name: 'warm (the same items again)', points: warm, expectedWorse: 'each warm call touches every item; at 100,000 items (52 M characters) they no longer fit the CPU caches, see the control' },
    { name: 'control: Object.isFrozen of each item', points: touch, expectedWorse: 'memory, not algorithm: one read of each item, nothing else' },
  ]);
};

const appendCurve = async (): Promise<void> => {
  const dir = await tempDir('append');
  const log = await openLevelLog(dir);
  const next = eventSource(7);
  const windows = 10;
  const perWindow = SIZES.append / windows;
  const rates: number[] = [];
  const times: number[] = [];
  for (let w = 0; w < windows; w++) {
    const started = performance.now();
    for (let done = 0; done < perWindow; done += 100) await log.append('s', Array.from({ length: 100 }, next));
    const elapsed = performance.now() - started;
    times.push(elapsed);
    rates.push((perWindow * 1000) / elapsed);
  }
  await log.close();
  const stored = await storeBytes(dir);
  await removeDir(dir);
  console.log(`\nappend: batches of 100 events awaited one after another, ${fmt(perWindow)} events per window as one session grows to ${fmt(SIZES.append)} (LevelDB, ${mib(stored)} at the end)`);
  printTable(
    ['events', 'events/s', 'µs/event'],
    rates.map((rate, w) => [`${fmt(w * perWindow)}–${fmt((w + 1) * perWindow)}`, fmt(rate), num(1e6 / rate)]),
  );
  // The first window pays the JIT and LevelDB's start; the second is the baseline of the steady state.
  const second = times[1] as number;
  const last = times[times.length - 1] as number;
  const ratio = last / second;
  const worst = Math.max(...times.slice(1)) / second;
  const flat = ratio <= LINEAR_SLACK;
  console.log(`  last window ÷ second window (time): ${ratio.toFixed(2)}, slowest window ÷ second: ${worst.toFixed(2)} (${flat ? 'flat: append cost does not grow with the session' : 'grows with the session'})`);
  results.push(judged(`append: last ÷ second window of ${fmt(perWindow)} events, session up to ${fmt(SIZES.append)} events (time)`, ratio.toFixed(2), `<= ${LINEAR_SLACK}`, flat, SET_AT));
};

interface ReadPeak {
  readonly events: number;
  readonly ms: number;
  readonly items: number;
  /** Growth over the heap before the read: at the peak (sampled every 20 ms), and still held after a GC (the memory). */
  readonly peakHeap: number;
  readonly retained: number;
  readonly peakRss: number;
}

/** Reads a whole session with `foldMemoryAsync(log.read(id))`, sampling the heap: what `--read-peak dir id` prints. */
const readPeakHere = async (dir: string, id: string): Promise<ReadPeak> => {
  const log = await openLevelLog(dir);
  collectGarbage?.();
  const base = process.memoryUsage();
  let peakHeap = base.heapUsed;
  let peakRss = base.rss;
  const sample = setInterval(() => {
    const now = process.memoryUsage();
    peakHeap = Math.max(peakHeap, now.heapUsed);
    peakRss = Math.max(peakRss, now.rss);
  }, 20);
  const started = performance.now();
  const state = await foldMemoryAsync(log.read(id));
  const ms = performance.now() - started;
  clearInterval(sample);
  const after = process.memoryUsage();
  peakHeap = Math.max(peakHeap, after.heapUsed);
  peakRss = Math.max(peakRss, after.rss);
  collectGarbage?.();
  const retained = process.memoryUsage().heapUsed - base.heapUsed;
  await log.close();
  return { events: state.lastSeq, ms, items: state.state.entries.length, peakHeap: peakHeap - base.heapUsed, retained, peakRss: peakRss - base.rss };
};

/**
 * The peak memory of reading a session, measured in a process of its own: in this one, the heap the earlier curves
 * grew lets garbage pile up far beyond what the read keeps alive (V8 collects the old generation later the larger
 * the heap has been), which would measure the collector's slack rather than the read. With `heapCapMiB` the child
 * runs under `--max-old-space-size`, which shows what the read needs to stay alive at all.
 */
const readPeak = (dir: string, id: string, what: string, heapCapMiB?: number): void => {
  const args = [...(heapCapMiB !== undefined ? [`--max-old-space-size=${heapCapMiB}`] : []), '--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url), '--read-peak', dir, id];
  const child = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  const line = child.stdout.trim().split('\n').at(-1) ?? '';
  const cap = heapCapMiB !== undefined ? ` under --max-old-space-size=${heapCapMiB}` : '';
  if (child.status !== 0 || !line.startsWith('{')) {
    console.log(`\npeak memory reading ${what}${cap}: the reading process failed (exit ${String(child.status ?? child.signal)}): ${child.stderr.trim().split('\n').slice(-3).join(' | ')}`);
    results.push({ measure: `reading ${what}${cap}`, value: 'failed', target: '', verdict: '' });
    return;
  }
  const peak = JSON.parse(line) as ReadPeak;
  console.log(
    `\npeak memory reading ${fmt(peak.events)} events of ${what} in a fresh process${cap} (foldMemoryAsync(log.read), LevelDB): ${fmt(peak.ms)} ms ` +
      `(${num((peak.ms * 1000) / peak.events)} µs/event); heap +${mib(peak.peakHeap)} at the peak, rss +${mib(peak.peakRss)}; the folded memory holds ` +
      `${fmt(peak.items)} items (+${mib(peak.retained)} of heap still held after a GC)`,
  );
  results.push({ measure: `peak heap reading ${fmt(peak.events)} events, ${what}${cap} (memory keeps ${fmt(peak.items)} items)`, value: mib(peak.peakHeap), target: '', verdict: '' });
};

// ---------------------------------------------------------------- runtime sessions against steps

const readFile = defineTool({
  name: 'read_file',
  description: 'Read a file',
  parameters: z.object({ path: z.string() }),
  execute: ({ path }) => `// ${path}\n${'export const value = compute(input, options);\n'.repeat(8)}`,
});

/** A LevelDB log (closed) with one runtime session of `steps` steps: a scripted ReAct agent calling a tool each step. */
const buildRuntimeSession = async (steps: number, compaction: boolean): Promise<{ dir: string; id: string; lastItemId: string }> => {
  const dir = await tempDir(`runtime-${compaction ? 'bounded' : 'unbounded'}-${steps}`);
  const log = await openLevelLog(dir);
  const answers: ModelResult[] = [
    ...Array.from({ length: steps - 1 }, (_, i) => ({ items: [functionCall(`call_${i}`, 'read_file', { path: `src/f${i}.ts` })] })),
    { outputText: 'done', items: [assistantMessage('done')] },
  ];
  const agent = Agents.react({
    modelClient: new ScriptedModelClient(answers),
    model: 'scripted',
    systemPrompt: 'You read files.',
    tools: [readFile],
    log,
    contextProjector: new DefaultContextProjector(),
    contextBudget: { maxTokens: 4_000, pinnedPrefixItems: 1 },
    // Compaction on: above 80 items, keep what a 40-item projection keeps and a summary (no model call).
    ...(compaction ? { compactPolicy: new StructuredSummaryCompactPolicy({ maxItems: 40, pinnedPrefixItems: 1 }, undefined, { compactAbove: 80 }) } : {}),
    maxSteps: steps + 1,
    checkpointEvery: 1_000_000,
  });
  const session = await agent.newSession();
  await session.run('Read the files.');
  const lastItemId = session.memory.getEntries().at(-1)?.id;
  await log.close();
  if (lastItemId === undefined) throw new Error('the runtime session has an empty memory');
  return { dir, id: session.id, lastItemId };
};

interface StepCosts {
  readonly resume: Point[];
  readonly open: Point[];
  readonly replay: Point[];
  readonly audit: Point[];
  readonly auditItem: Point[];
  readonly verify: Point[];
  /** What `context-ledger verify` does besides starting: log.verify, then the fate law streamed over log.read. */
  readonly cliVerify: Point[];
  /** The session's spans from the log (context-ledger/otel `sessionSpanRecords`, content not captured). */
  readonly spans: Point[];
  readonly bytes: string[][];
}

const measureRuntime = async (steps: number, compaction: boolean, costs: StepCosts): Promise<void> => {
  const started = performance.now();
  const { dir, id, lastItemId } = await buildRuntimeSession(steps, compaction);
  const built = secondsSince(started);
  const stored = await storeBytes(dir);
  const log = await openLevelLog(dir);
  const recorded = await readAll(log, id);
  const json = recorded.reduce((sum, event) => sum + JSON.stringify(event).length, 0);
  const projectedJson = recorded.filter((event) => event.type === 'context.projected').reduce((sum, event) => sum + JSON.stringify(event).length, 0);
  const compactions = recorded.filter((event) => event.type === 'memory.compacted').length;
  const memoryItems = (await openSession(log, { id, checkpointEvery: 0 })).memory.getEntries().length;
  costs.bytes.push([fmt(steps), fmt(recorded.length), fmt(compactions), fmt(memoryItems), fmt(json / steps), fmt(projectedJson / steps), fmt(stored / steps), built]);
  const runs = quick || steps >= 4_000 ? 3 : 5;
  const agent = Agents.react({ modelClient: new ScriptedModelClient([]), model: 'scripted', tools: [readFile], log, checkpointEvery: 1_000_000 });
  await agent.resumeSession(id); // untimed: the JIT
  costs.resume.push({ size: steps, ms: await timeIt(runs, () => agent.resumeSession(id)) });
  costs.open.push({ size: steps, ms: await timeIt(runs, () => openSession(log, { id, checkpointEvery: 0 })) });
  costs.replay.push({
    size: steps,
    ms: await timeIt(runs, async () => {
      const replayed = await replaySession(log, id);
      if (!replayed.identical) throw new Error(`replay of the ${steps}-step session diverged at step ${replayed.firstDivergence?.step}`);
    }),
  });
  costs.audit.push({
    size: steps,
    ms: await timeIt(runs, async () => {
      const audit = await auditSession(log, id);
      if (audit.totals.steps !== steps) throw new Error(`the audit saw ${audit.totals.steps} steps, expected ${steps}`);
    }),
  });
  // The newest item is still in memory at the end, so the audit of that one item reads the whole session.
  costs.auditItem.push({ size: steps, ms: await timeIt(runs, () => auditItem(log, id, lastItemId)) });
  costs.verify.push({
    size: steps,
    ms: await timeIt(runs, async () => {
      const verified = await log.verify(id);
      if (!verified.valid) throw new Error('the runtime session does not verify');
    }),
  });
  costs.cliVerify.push({
    size: steps,
    ms: await timeIt(runs, async () => {
      const verified = await log.verify(id);
      const law = createFateLawChecker();
      for await (const event of log.read(id)) law.observe(event);
      if (!verified.valid || law.finish().length > 0) throw new Error('the runtime session breaks the chain or the fate law');
    }),
  });
  costs.spans.push({
    size: steps,
    ms: await timeIt(runs, async () => {
      const spans = await sessionSpanRecords(log, id);
      if (spans.length < steps) throw new Error(`the ${steps}-step session exported ${spans.length} spans`);
    }),
  });
  await log.close();
  await removeDir(dir);
};

const stepCurves = async (compaction: boolean): Promise<void> => {
  const fresh = (): StepCosts => ({ resume: [], open: [], replay: [], audit: [], auditItem: [], verify: [], cliVerify: [], spans: [], bytes: [] });
  // Untimed first: a small session through every measurement, so that the smallest size does not pay for the JIT.
  await measureRuntime(20, compaction, fresh());
  const costs = fresh();
  for (const steps of compaction ? SIZES.boundedSteps : SIZES.unboundedSteps) {
    const started = performance.now();
    await measureRuntime(steps, compaction, costs);
    console.log(`  (${fmt(steps)} steps, memory ${compaction ? 'bounded' : 'unbounded'}: built and measured in ${secondsSince(started)}, load average ${load()})`);
  }
  const variant = compaction
    ? 'compaction on (StructuredSummaryCompactPolicy above 80 items, keeping 40): memory bounded'
    : 'compaction off: memory grows by two items every step (a call and its result)';
  console.log(`\nruntime sessions against steps, ${variant}; a scripted ReAct agent, one tool call per step, 4,000-token budget, no checkpoint`);
  console.log('bytes per step (event JSON as read back, and the LevelDB files after close):');
  printTable(['steps', 'events', 'compactions', 'items in memory at the end', 'JSON bytes/step', 'of it context.projected', 'LevelDB bytes/step', 'built in'], costs.bytes);
  const growing = compaction ? undefined : 'memory grows every step, and each step re-projects or re-reads all of it';
  printCurves(`resume, replay, audit and verify against steps (${compaction ? 'memory bounded' : 'memory unbounded'}; medians)`, `steps, memory ${compaction ? 'bounded' : 'unbounded'}`, 'step', [
    { name: 'agent.resumeSession', points: costs.resume },
    { name: 'openSession', points: costs.open },
    { name: 'replaySession', points: costs.replay, ...(growing ? { expectedWorse: growing } : {}) },
    { name: 'auditSession', points: costs.audit, ...(growing ? { expectedWorse: growing } : {}) },
    { name: 'auditItem', points: costs.auditItem, ...(growing ? { expectedWorse: growing } : {}) },
    { name: 'log.verify', points: costs.verify },
    { name: 'CLI verify (chain + fate law)', points: costs.cliVerify },
    { name: 'span export (sessionSpanRecords)', points: costs.spans },
  ]);
};

// ---------------------------------------------------------------- re-run against tool results in one step

/** One step whose model calls the tool N times; recorded, then re-run (replaySession mode 'rerun'). */
const rerunCurve = async (): Promise<void> => {
  const record: Point[] = [];
  const rerun: Point[] = [];
  for (const n of SIZES.rerunResults) {
    const log = await openMemoryLog();
    const answers: ModelResult[] = [
      { items: Array.from({ length: n }, (_, i) => functionCall(`call_${i}`, 'read_file', { path: `src/f${i}.ts` })) },
      { outputText: 'done', items: [assistantMessage('done')] },
    ];
    const agent = Agents.react({ modelClient: new ScriptedModelClient(answers), model: 'scripted', tools: [readFile], log, checkpointEvery: 1_000_000 });
    const session = await agent.newSession();
    let started = performance.now();
    await session.run('Read them all.');
    record.push({ size: n, ms: performance.now() - started });
    started = performance.now();
    const replayed = await replaySession(log, session.id, { mode: 'rerun' });
    rerun.push({ size: n, ms: performance.now() - started });
    if (!replayed.identical) throw new Error(`the re-run of ${n} results diverged`);
    await log.close();
  }
  printCurves('recording and re-running one step against its tool results (one run each)', 'tool results in one step', 'result', [
    { name: 'record (session.run)', points: record },
    { name: "replaySession 'rerun'", points: rerun },
  ]);
};

// ---------------------------------------------------------------- resume against session length (checkpointed)

interface ResumeRow {
  readonly head: number;
  readonly checkpointSeq: number;
  readonly items: number;
  readonly open: number[];
  readonly agent: number[];
}

/**
 * One session grown through `session.record` in batches of 1,000 (checkpoint every 10,000 events, a compaction every
 * 2,500 keeping 200 items, as a long agent session with compaction is), closed and reopened at each length; there
 * `openSession` and `agent.resumeSession` are timed right after a checkpoint and again 5,000 events later.
 * Returns the directory of the log at its full length (for the peak-memory figure).
 */
const resumeCurve = async (): Promise<string> => {
  const dir = await tempDir('resume');
  const id = 'resume';
  const next = codingSessionEvents(15);
  const policy = new StructuredSummaryCompactPolicy({ maxItems: 200, pinnedPrefixItems: 1 });
  let log = await openLevelLog(dir);
  let session: AgentSession = await openSession(log, { id, checkpointEvery: CHECKPOINT_EVERY });
  let appended = 0;
  const buildStarted = performance.now();
  let lastProgress = performance.now();
  const grow = async (head: number): Promise<void> => {
    while (session.memory.headSeq() < head) {
      const n = Math.min(1_000, head - session.memory.headSeq());
      await session.record(Array.from({ length: n }, next));
      const before = appended;
      appended += n;
      if (Math.floor(appended / COMPACT_EVERY) > Math.floor(before / COMPACT_EVERY)) await session.compact(policy);
      if (performance.now() - lastProgress > 30_000) {
        lastProgress = performance.now();
        console.log(`  (resume curve: ${fmt(session.memory.headSeq())} events after ${secondsSince(buildStarted)}, load ${load()})`);
      }
    }
  };
  const rows: { length: number; tail: 'checkpoint' | 'mid-band'; row: ResumeRow }[] = [];
  const runs = quick ? 7 : 9;
  const measure = async (length: number, tail: 'checkpoint' | 'mid-band'): Promise<void> => {
    await log.close();
    log = await openLevelLog(dir);
    const rebuilt = await rebuildState(log, id);
    if (rebuilt.from === 'full-fold' || rebuilt.rejectedCheckpoint !== undefined) throw new Error(`the ${fmt(length)}-event session resumes without a valid checkpoint`);
    const head = rebuilt.headSeq;
    const agent: Agent = Agents.react({ model: 'none', modelClient: { create: () => Promise.reject(new Error('the resume curve calls no model')) }, log });
    const warm = await openSession(log, { id });
    await agent.resumeSession(id);
    const row: ResumeRow = { head, checkpointSeq: rebuilt.from.checkpointSeq, items: warm.memory.getEntries().length, open: [], agent: [] };
    for (let run = 0; run < runs; run++) {
      collectGarbage?.();
      let t0 = performance.now();
      const opened = await openSession(log, { id });
      row.open.push(performance.now() - t0);
      if (opened.memory.headSeq() !== head) throw new Error('openSession did not resume the whole session');
      collectGarbage?.();
      t0 = performance.now();
      const resumed = await agent.resumeSession(id);
      row.agent.push(performance.now() - t0);
      if (resumed.memory.headSeq() !== head) throw new Error('agent.resumeSession did not resume the whole session');
    }
    if ((await log.head(id)) !== head) throw new Error('resuming appended events');
    rows.push({ length, tail, row });
    session = await openSession(log, { id, checkpointEvery: CHECKPOINT_EVERY });
  };
  for (const length of SIZES.resume) {
    await grow(length);
    await measure(length, 'checkpoint');
    await grow(length + MID_BAND_TAIL);
    await measure(length, 'mid-band');
  }
  await log.close();
  const stored = await storeBytes(dir);
  console.log(
    `\nresume against session length: one session grown through session.record (batches of 1,000, checkpoint every ${fmt(CHECKPOINT_EVERY)}, ` +
      `compaction every ${fmt(COMPACT_EVERY)} keeping 200 items; built in ${secondsSince(buildStarted)} with the measurements, ${mib(stored)} at the end), ` +
      `closed and reopened at each length; medians of ${runs}`,
  );
  printTable(
    ['events', 'checkpoint at', 'tail', 'items', 'openSession ms', 'min–max', 'agent.resumeSession ms', 'min–max'],
    rows.map(({ row }) => [
      fmt(row.head),
      fmt(row.checkpointSeq),
      fmt(row.head - row.checkpointSeq),
      fmt(row.items),
      num(median(row.open)),
      `${num(Math.min(...row.open))}–${num(Math.max(...row.open))}`,
      num(median(row.agent)),
      `${num(Math.min(...row.agent))}–${num(Math.max(...row.agent))}`,
    ]),
  );
  for (const tail of ['checkpoint', 'mid-band'] as const) {
    const same = rows.filter((r) => r.tail === tail);
    const first = (same[0] as (typeof rows)[number]).row;
    const last = (same[same.length - 1] as (typeof rows)[number]).row;
    for (const [name, pick] of [['openSession', (r: ResumeRow) => r.open], ['agent.resumeSession', (r: ResumeRow) => r.agent]] as const) {
      const ratio = median(pick(last)) / median(pick(first));
      const flat = ratio <= LINEAR_SLACK;
      const label = tail === 'checkpoint' ? 'right after a checkpoint' : `${fmt(MID_BAND_TAIL)} events after a checkpoint`;
      console.log(`  ${name}, ${label}: ${fmt(last.head)} ÷ ${fmt(first.head)} events ${ratio.toFixed(2)} (${flat ? 'flat' : 'grows with the session'})`);
      results.push(judged(`resume (checkpointed): ${name}, ${label}, ${fmt(last.head)} ÷ ${fmt(first.head)} events (time)`, ratio.toFixed(2), `<= ${LINEAR_SLACK}`, flat, SET_AT));
    }
  }
  return dir;
};

// ---------------------------------------------------------------- this round's features (issue #28, item 5)

/**
 * Prints a cost that should not depend on the size (the time itself, not per unit): flat when the time at the largest
 * size is at most LINEAR_SLACK times the time at the next size down.
 */
const printFlat = (title: string, label: string, unit: string, series: readonly Series[]): void => {
  console.log(`\n${title}`);
  const sizes = (series[0] as Series).points.map((p) => p.size);
  printTable([`${unit}s`, ...series.map((s) => `${s.name} ms`)], sizes.map((size, i) => [fmt(size), ...series.map((s) => num((s.points[i] as Point).ms))]));
  for (const s of series) {
    const previous = s.points[Math.max(0, s.points.length - 2)] as Point;
    const last = s.points[s.points.length - 1] as Point;
    const ratio = last.ms / previous.ms;
    const flat = ratio <= LINEAR_SLACK;
    console.log(`  ${s.name}: ${fmt(last.size)} ÷ ${fmt(previous.size)} ${unit}s ×${ratio.toFixed(2)}: ${flat ? 'flat' : 'grows with the size'}${s.expectedWorse ? ` (${s.expectedWorse})` : ''}`);
    results.push(
      s.expectedWorse
        ? { measure: `${label}: ${s.name}, ${fmt(last.size)} ÷ ${fmt(previous.size)} ${unit}s (time)`, value: ratio.toFixed(2), target: '', verdict: '' }
        : judged(`${label}: ${s.name}, ${fmt(last.size)} ÷ ${fmt(previous.size)} ${unit}s (time)`, ratio.toFixed(2), `<= ${LINEAR_SLACK}`, flat, SET_AT),
    );
  }
};

/** The items compaction-trigger.bench.ts records: a user turn, a call, its output, an answer, in turn. */
const triggerItemAt = (random: () => number, i: number): MemoryItem => {
  const text = (words: number): string => Array.from({ length: words }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' ');
  switch (i % 4) {
    case 0:
      return userMessage(text(20));
    case 1:
      return functionCall(`c${i}`, 'read_file', { path: `src/f${i}.ts` });
    case 2:
      return functionCallOutput(`c${i - 1}`, text(60));
    default:
      return assistantMessage(text(15));
  }
};

/**
 * The token trigger's cost per step against the items in memory: after each step records two items, the session's
 * memory tokens (memoryTokenTracker, o200k, counting only what is new) and a policy's decision (compactTrigger of a
 * FactSummaryCompactPolicy that never fires), as automatic compaction asks them every step. Median over the steps.
 */
const triggerCurve = async (): Promise<void> => {
  const tokenizer = openAiTokenizer('o200k_base');
  const points: Point[] = [];
  const trackerPoints: Point[] = [];
  const steps = quick ? 30 : 100;
  for (const size of SIZES.trigger) {
    const random = prng(size);
    const session = await openSession(await openMemoryLog(), { id: 'trigger', checkpointEvery: 0 });
    for (let i = 0; i < size; i += 500) {
      await session.memory.record([{ type: 'user.input', items: Array.from({ length: Math.min(500, size - i) }, (_, j) => triggerItemAt(random, i + j)) }]);
    }
    const policy = new FactSummaryCompactPolicy({ maxItems: 50, compactAbove: 10 * size, compactAboveTokens: 1e12, keepTokens: 1e6 });
    const tracker = memoryTokenTracker(tokenizer);
    tracker(session.memory.state()); // every item counted once: the steady state of a session
    const times: number[] = [];
    const trackerTimes: number[] = [];
    for (let step = 0; step < steps; step++) {
      await session.memory.record([{ type: 'user.input', items: [triggerItemAt(random, size + 4 * step), assistantMessage('ok')] }]);
      const started = performance.now();
      const measured = tracker(session.memory.state());
      const tracked = performance.now();
      if (policy.compactTrigger(session.memory.snapshot(), measured) !== undefined) throw new Error('the trigger fired');
      times.push(performance.now() - started);
      trackerTimes.push(tracked - started);
    }
    points.push({ size, ms: median(times) });
    trackerPoints.push({ size, ms: median(trackerTimes) });
  }
  printFlat(`token trigger per step against the items in memory (o200k, ${steps} steps each; median per step)`, 'token trigger', 'item', [
    { name: 'memoryTokenTracker + compactTrigger', points },
    { name: 'memoryTokenTracker alone', points: trackerPoints },
  ]);
};

/**
 * The recall index (context-ledger's RecallIndex, its public methods) of a session grown through `session.record`
 * (a compaction every 3 batches of 1,000 events keeps memory small, as recall.bench.ts does): building it over the
 * whole log (catchUp), and a query of the built index (search, excluding what memory holds; median of 50).
 */
const recallCurve = async (): Promise<void> => {
  const build: Point[] = [];
  const query: Point[] = [];
  const queries = ['error test', 'parser refactor', 'checkpoint resume', 'session fold', 'lint fix', 'compact summary', 'interface extends', 'batch append'];
  for (const size of SIZES.recall) {
    const dir = await tempDir(`recall-${size}`);
    const log = await openLevelLog(dir);
    const session = await openSession(log, { id: 'recall', checkpointEvery: 0 });
    const next = codingSessionEvents(7);
    let items = 0;
    let batches = 0;
    while (items < size) {
      const batch: NewSessionEvent[] = [];
      for (let i = 0; i < 1_000 && items < size; i++) {
        const event = next();
        if (event.type === 'user.input' || event.type === 'model.output') items += event.items.length;
        else if (event.type === 'tool.result') items += 1;
        batch.push(event);
      }
      await session.record(batch);
      if (++batches % 3 === 0) await session.compact(new StructuredSummaryCompactPolicy({ maxItems: 200 }));
    }
    collectGarbage?.();
    let started = performance.now();
    const index = new RecallIndex(log, session.id);
    await index.catchUp();
    build.push({ size, ms: performance.now() - started });
    const seen = index.seenIds(session.memory.state());
    const times: number[] = [];
    for (let i = 0; i < 50; i++) {
      started = performance.now();
      index.search(queries[i % queries.length] as string, seen, 5);
      times.push(performance.now() - started);
    }
    query.push({ size, ms: median(times) });
    await log.close();
    await removeDir(dir);
  }
  printCurves('recall index against the items a session recorded (synthetic coding session, LevelDB): building it', 'recall index', 'item', [{ name: 'build (catchUp)', points: build }]);
  printFlat('recall index: a query of the built index (median of 50)', 'recall index', 'item', [
    { name: 'query (search)', points: query, expectedWorse: 'a query looks at the items that match it, and more items match in a larger index' },
  ]);
};

/** A tool output of `kib` KiB that looks like one (paths, code, test lines), with a few secrets scattered in it. */
const redactText = (random: () => number, kib: number): string => {
  const lines: string[] = [];
  let length = 0;
  let n = 0;
  while (length < kib * 1024) {
    n += 1;
    const word = (): string => WORDS[Math.floor(random() * WORDS.length)] as string;
    const line =
      n % 97 === 0
        ? `export OPENAI_API_KEY=sk-${Math.floor(random() * 1e16).toString(36)}${Math.floor(random() * 1e16).toString(36)}T3BlbkFJ${Math.floor(random() * 1e16).toString(36)}`
        : n % 3 === 0
          ? `src/${word()}/${word()}.ts:${n}: const ${word()} = ${word()}(${n}, '${word()}');`
          : `    ${word()} ${word()} ${word()} passed in ${n} ms (${word()})`;
    lines.push(line);
    length += line.length + 1;
  }
  return lines.join('\n');
};

/**
 * Redaction per event against the event's size: `secretRedactor()` alone, and an append to a memory log with and
 * without it, on tool results of 1 KiB up (about 2 MiB of events per size); CPU time per event (process.cpuUsage).
 */
const redactCurve = async (): Promise<void> => {
  const alone: Point[] = [];
  const appendWith: Point[] = [];
  const appendWithout: Point[] = [];
  const cpuMs = (from: NodeJS.CpuUsage): number => {
    const used = process.cpuUsage(from);
    return (used.user + used.system) / 1000;
  };
  for (const kib of SIZES.redactKiB) {
    const random = prng(kib);
    const count = Math.max(8, Math.round(2_048 / kib));
    const events: NewSessionEvent[] = Array.from({ length: count }, (_, i) => ({ type: 'tool.result', callId: `c${i}`, output: redactText(random, kib) }));
    const redact = secretRedactor();
    for (const event of events.slice(0, 4)) redact(event); // untimed: the JIT
    collectGarbage?.();
    let from = process.cpuUsage();
    for (const event of events) redact(event);
    alone.push({ size: kib, ms: cpuMs(from) / count });
    for (const [redacting, points] of [[false, appendWithout], [true, appendWith]] as const) {
      const log = await openMemoryLog(redacting ? { redact: secretRedactor() } : {});
      await log.append('warm', [events[0] as NewSessionEvent]);
      collectGarbage?.();
      from = process.cpuUsage();
      for (const event of events) await log.append('s', [event]);
      points.push({ size: kib, ms: cpuMs(from) / count });
      await log.close();
    }
  }
  printCurves('redaction per event against its size (tool results with a few keys in them; CPU time per event)', 'redaction', 'KiB', [
    { name: 'secretRedactor alone', points: alone },
    { name: 'append without redact', points: appendWithout },
    { name: 'append with redact', points: appendWith },
  ]);
  const last = SIZES.redactKiB.length - 1;
  console.log(`  with ÷ without, per size: ${SIZES.redactKiB.map((kib, i) => `${kib} KiB ${((appendWith[i] as Point).ms / (appendWithout[i] as Point).ms).toFixed(2)}`).join(', ')}`);
  results.push({
    measure: `redaction: append with ÷ without redact, ${SIZES.redactKiB[last]} KiB events`,
    value: `${((appendWith[last] as Point).ms / (appendWithout[last] as Point).ms).toFixed(2)}x`,
    target: '',
    verdict: '',
  });
};

// ---------------------------------------------------------------- counting on the write path (countTokensOnWrite)

/** Process CPU (every thread: LevelDB's too) since `from`, in ms. */
const cpuSince = (from: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / 1000;
};

interface PrecountRound {
  /** Process CPU and wall per appended item over the appends and the drain, µs. */
  readonly appendCpu: number;
  readonly appendWall: number;
  /** Median of the next projection after each step (its items appended, the counting drained), ms. */
  readonly nextProjection: number;
  /** First projection after a resume of the session saved after those steps (projected each step), ms; and CPU. */
  readonly resumed: number;
  readonly resumedCpu: number;
  /** The same of a session saved without a projection before the save (written by a recorder, a bridge, an import). */
  readonly unprojected: number;
  readonly unprojectedCpu: number;
  /** Counts the two checkpoints carried. */
  readonly savedCounts: number;
  readonly unprojectedCounts: number;
  readonly items: number;
}

/**
 * countTokensOnWrite against the same session without it, interleaved round by round (LevelDB, o200k, the synthetic
 * session of the projection bench, one append per item): the CPU per appended item (the appends and the background
 * counting, drained), the next projection after a step, and the first projection after a resume.
 */
const precountCurve = async (): Promise<void> => {
  const tokenizer = openAiTokenizer();
  tokenizer.count('start-up');
  const budget = { maxTokens: 16_000, pinnedPrefixItems: 1 };
  const steps = quick ? 10 : 20;
  const rounds = quick ? 2 : 3;
  const projector = new DefaultContextProjector({ tokenizer });
  /** The first projection of a fresh resume (new item objects, the checkpoint's facts attached): median of 3 resumes. */
  const firstProjection = async (log: SessionEventLog, id: string): Promise<{ ms: number; cpu: number; counts: number }> => {
    const ms: number[] = [];
    const cpus: number[] = [];
    let counts = 0;
    for (let i = 0; i < 3; i++) {
      const resumed = await openSession(log, { id, tokenizer, checkpointEvery: 0 });
      counts = resumed.opened.projectionFacts?.tokenCounts ?? 0;
      collectGarbage?.();
      const cpu = process.cpuUsage();
      const started = performance.now();
      projector.project(resumed.memory.getItems(), budget);
      ms.push(performance.now() - started);
      cpus.push(cpuSince(cpu));
    }
    return { ms: median(ms), cpu: median(cpus), counts };
  };
  const round = async (messages: number, countTokensOnWrite: boolean): Promise<PrecountRound> => {
    const all = fromChatCompletions(syntheticConversation(messages + 3 * steps, 20_260_101));
    const history = all.slice(0, all.length - 3 * steps);
    const later = all.slice(history.length);
    const dir = await tempDir('precount');
    const log = await openLevelLog(dir);
    try {
      const session = await openSession(log, { id: 's', tokenizer, checkpointEvery: 0, countTokensOnWrite });
      collectGarbage?.();
      const cpu = process.cpuUsage();
      const started = performance.now();
      for (const item of history) await session.memory.addOutputItems([item]);
      await session.tokensCounted();
      const appendCpu = (cpuSince(cpu) * 1000) / history.length;
      const appendWall = ((performance.now() - started) * 1000) / history.length;
      // An agent loop: projected once (untimed), then each step appends its items, the model call's wait lets the
      // counting drain (nothing to drain without the option), and the next projection is timed.
      projector.project(session.memory.getItems(), budget);
      const times: number[] = [];
      for (let step = 0; step < steps; step++) {
        for (const item of later.slice(3 * step, 3 * step + 3)) await session.memory.addOutputItems([item]);
        await session.tokensCounted();
        await new Promise((resolve) => setImmediate(resolve));
        const at = performance.now();
        projector.project(session.memory.getItems(), budget);
        times.push(performance.now() - at);
      }
      await session.save();
      await session.close();
      const resumed = await firstProjection(log, 's');
      // The same history never projected before its checkpoint.
      const other = await openSession(log, { id: 'u', tokenizer, checkpointEvery: 0, countTokensOnWrite });
      for (const item of history) await other.memory.addOutputItems([item]);
      await other.tokensCounted();
      await other.save();
      await other.close();
      const unprojected = await firstProjection(log, 'u');
      return {
        appendCpu,
        appendWall,
        nextProjection: median(times),
        resumed: resumed.ms,
        resumedCpu: resumed.cpu,
        unprojected: unprojected.ms,
        unprojectedCpu: unprojected.cpu,
        savedCounts: resumed.counts,
        unprojectedCounts: unprojected.counts,
        items: history.length + later.length,
      };
    } finally {
      await log.close();
      await removeDir(dir);
    }
  };
  console.log(`\ncounting on the write path: countTokensOnWrite on and off, interleaved (${rounds} rounds; LevelDB, o200k, one append per item; ${steps} steps of 3 items; budget ${JSON.stringify(budget)})`);
  const rows: string[][] = [];
  for (const messages of SIZES.precount) {
    const measured: Record<'on' | 'off', PrecountRound[]> = { on: [], off: [] };
    for (let r = 0; r < rounds; r++) {
      for (const mode of r % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) measured[mode].push(await round(messages, mode === 'on'));
    }
    const med = (mode: 'on' | 'off', key: keyof PrecountRound): number => median(measured[mode].map((m) => m[key]));
    const loadHere = load();
    for (const mode of ['off', 'on'] as const) {
      rows.push([
        fmt(messages),
        fmt(med(mode, 'items')),
        mode,
        num(med(mode, 'appendCpu')),
        num(med(mode, 'appendWall')),
        num(med(mode, 'nextProjection')),
        `${num(med(mode, 'resumed'))} / ${num(med(mode, 'resumedCpu'))}`,
        fmt(med(mode, 'savedCounts')),
        `${num(med(mode, 'unprojected'))} / ${num(med(mode, 'unprojectedCpu'))}`,
        fmt(med(mode, 'unprojectedCounts')),
        loadHere,
      ]);
    }
    const ratio = (key: keyof PrecountRound): string => (med('on', key) / med('off', key)).toFixed(2);
    console.log(
      `  ${fmt(messages)} messages: CPU per appended item on ÷ off ${ratio('appendCpu')} (wall ${ratio('appendWall')}); next projection on ÷ off ${ratio('nextProjection')}; ` +
        `first after a resume on ÷ off ${ratio('resumed')} (never projected before the save: ${ratio('unprojected')}, CPU ${ratio('unprojectedCpu')}) (load ${loadHere})`,
    );
    results.push(
      { measure: `countTokensOnWrite: CPU per appended item on ÷ off, ${fmt(messages)} messages (load ${loadHere})`, value: `${ratio('appendCpu')}x`, target: '', verdict: '' },
      { measure: `countTokensOnWrite: next projection after a step on ÷ off, ${fmt(messages)} messages (load ${loadHere})`, value: `${ratio('nextProjection')}x`, target: '', verdict: '' },
      { measure: `countTokensOnWrite: first projection after a resume, never projected before, on ÷ off, ${fmt(messages)} messages (load ${loadHere})`, value: `${ratio('unprojected')}x`, target: '', verdict: '' },
    );
  }
  printTable(
    ['messages', 'items', 'countTokensOnWrite', 'append CPU µs/item', 'append wall µs/item', 'next projection ms', 'first after resume ms (wall / CPU)', 'counts saved', 'same, never projected before the save', 'counts saved', 'load'],
    rows,
  );
};

// ---------------------------------------------------------------- main

const main = async (): Promise<void> => {
  const run = (name: CurveName): boolean => only.includes(name);
  console.log(`curves bench (${preset} sizes${only.length < CURVES.length ? `; ${only.join(', ')} only` : ''}): Node ${process.version}, ${cpus().length} cores, load average ${load()}`);
  const timed = async (name: string, f: () => Promise<unknown>): Promise<void> => {
    const started = performance.now();
    await f();
    console.log(`  (${name}: ${secondsSince(started)}, load average ${load()})`);
  };
  if (run('read') || run('fold')) {
    const dir = await buildLog('uncompacted', Math.max(SIZES.read, ...SIZES.fold));
    if (run('read')) await timed('peak memory, uncompacted', async () => readPeak(dir, 's', 'a session without compaction'));
    if (run('fold')) await timed('fold', () => foldCurve(dir));
    await removeDir(dir);
  }
  if (run('projection')) await timed('projection', projectionCurves);
  if (run('append')) await timed('append', appendCurve);
  if (run('bounded')) await timed('steps, memory bounded', () => stepCurves(true));
  if (run('unbounded')) await timed('steps, memory unbounded', () => stepCurves(false));
  if (run('rerun')) await timed('re-run against results per step', rerunCurve);
  if (run('trigger')) await timed('token trigger', triggerCurve);
  if (run('recall')) await timed('recall index', recallCurve);
  if (run('redact')) await timed('redaction', redactCurve);
  if (run('precount')) await timed('counting on write', precountCurve);
  if (run('resume')) {
    let dir = '';
    await timed('resume', async () => {
      dir = await resumeCurve();
    });
    if (run('read')) {
      await timed('peak memory, compacted', async () => readPeak(dir, 'resume', 'a session with compaction'));
      await timed('peak memory, compacted, heap capped', async () => readPeak(dir, 'resume', 'a session with compaction', READ_HEAP_CAP_MIB));
    }
    await removeDir(dir);
  }
  console.log(`\nload average at the end: ${load()}`);
  reportResults('curves', results);
};

const readPeakArgs = process.argv.slice(2);
const readPeakAt = readPeakArgs.indexOf('--read-peak');
try {
  if (readPeakAt >= 0) console.log(JSON.stringify(await readPeakHere(readPeakArgs[readPeakAt + 1] ?? '', readPeakArgs[readPeakAt + 2] ?? '')));
  else await main();
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await Promise.all([...tempDirs].map((dir) => rm(dir, { recursive: true, force: true })));
}
