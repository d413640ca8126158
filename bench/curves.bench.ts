// Cost curves: how each cost grows with size (fold, projection warm and cold, append, resume, replay and verify,
// bytes per step, peak memory while reading), each as a table over sizes with a linear-or-worse verdict.
//
//   npx tsx bench/curves.bench.ts            # fold to 1M events, projection to 100k messages, … (several minutes)
//   npx tsx bench/curves.bench.ts --quick    # small sizes (npm run bench -- --quick)
//   npx tsx bench/curves.bench.ts --size medium
//
// A curve is "linear" when the cost per unit at the largest size is at most 1.5 times the cost per unit at
// the smallest (on a busy machine a single run wobbles by that much); otherwise it says by how much it grew.
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { DefaultContextProjector, openAiTokenizer } from '../src/context/index.js';
import type { NewSessionEvent, SessionEvent } from '../src/events/index.js';
import { assistantMessage, functionCall } from '../src/items/index.js';
import type { MemoryItem } from '../src/items/index.js';
import { openLevelLog } from '../src/log/index.js';
import type { SessionEventLog } from '../src/log/index.js';
import { foldMemory, foldMemoryAsync } from '../src/memory/index.js';
import { ScriptedModelClient } from '../src/model/index.js';
import type { ModelResult } from '../src/model/index.js';
import { replaySession } from '../src/replay/index.js';
import { Agents, defineTool } from '../src/runtime/index.js';
import { fromChatCompletions } from '../src/runtime/providers/index.js';
import { openSession } from '../src/session/index.js';
import { deepFreeze } from '../src/testing/index.js';
import { syntheticConversation } from './corpus.js';
import { argValue, prng, quick, reportResults } from './support.js';
import type { BenchResult } from './support.js';

const PRESETS = {
  quick: { fold: [10_000, 100_000], projection: [1_000, 10_000], append: 20_000, steps: [20, 80], read: 100_000 },
  medium: { fold: [10_000, 100_000, 300_000], projection: [1_000, 10_000, 30_000], append: 60_000, steps: [25, 100, 200], read: 300_000 },
  full: { fold: [10_000, 100_000, 1_000_000], projection: [1_000, 10_000, 100_000], append: 200_000, steps: [25, 100, 400], read: 1_000_000 },
} as const;
/** --quick, --size medium (a few minutes on a busy machine) or the full sizes of issue #15 (the default). */
const preset = quick ? 'quick' : (argValue('--size') ?? 'full');
if (!(preset in PRESETS)) throw new Error(`--size must be quick, medium or full, got ${JSON.stringify(preset)}`);
const SIZES = PRESETS[preset as keyof typeof PRESETS];
const LINEAR_SLACK = 1.5;

const collectGarbage = (globalThis as { gc?: () => void }).gc;
const tempDirs = new Set<string>();
const tempDir = async (name: string): Promise<string> => {
  const dir = await mkdtemp(join(tmpdir(), `context-ledger-curves-${name}-`));
  tempDirs.add(dir);
  return dir;
};
const storeBytes = async (dir: string): Promise<number> => {
  let total = 0;
  for (const name of await readdir(dir)) total += (await stat(join(dir, name))).size;
  return total;
};

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
const ms = (n: number): string => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2));
const us = (n: number): string => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2));

/** Median wall time of `runs` calls of `f` (each after a GC), in ms. */
const timeIt = async (runs: number, f: () => unknown): Promise<number> => {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    collectGarbage?.();
    const started = performance.now();
    await f();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[times.length >> 1] as number;
};

interface Point {
  readonly size: number;
  readonly ms: number;
  readonly extra?: string;
}

const results: BenchResult[] = [];

/** Prints one curve: size, time, time per unit, growth of the per-unit cost against the smallest size. */
const printCurve = (title: string, unit: string, points: readonly Point[], extraTitle = ''): void => {
  console.log(`\n${title}`);
  const first = points[0] as Point;
  const perUnit = (p: Point): number => (p.ms * 1000) / p.size;
  const rows = points.map((p) => [fmt(p.size), ms(p.ms), us(perUnit(p)), (perUnit(p) / perUnit(first)).toFixed(2), ...(extraTitle ? [p.extra ?? ''] : [])]);
  const header = [unit, 'ms', `µs per ${unit}`, 'per-unit ÷ smallest', ...(extraTitle ? [extraTitle] : [])];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string => cells.map((c, i) => c.padStart(widths[i] ?? 0)).join('  ');
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows) console.log(line(row));
  const last = points[points.length - 1] as Point;
  const growth = perUnit(last) / perUnit(first);
  const verdict = growth <= LINEAR_SLACK ? 'linear' : `worse than linear: ${growth.toFixed(2)}x the cost per ${unit}`;
  console.log(`  ${fmt(first.size)} → ${fmt(last.size)} ${unit}s: ${verdict}`);
  results.push({ measure: `${title} (${fmt(first.size)} → ${fmt(last.size)})`, value: `${growth.toFixed(2)}x per ${unit}`, target: `<= ${LINEAR_SLACK}`, verdict: growth <= LINEAR_SLACK ? 'PASS' : 'MISS' });
};

// ---------------------------------------------------------------- events

const WORDS = 'read edit test build fix parse token budget memory event log session step tool call result error file path'.split(' ');
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

/** A LevelDB log holding one session of `count` events appended in batches of 1,000. */
const buildLog = async (name: string, count: number): Promise<{ log: SessionEventLog; dir: string }> => {
  const dir = await tempDir(name);
  const log = await openLevelLog(dir);
  const next = eventSource(count);
  for (let done = 0; done < count; ) {
    const batch = Array.from({ length: Math.min(1_000, count - done) }, next);
    await log.append('s', batch);
    done += batch.length;
  }
  return { log, dir };
};

const readAll = async (log: SessionEventLog, id: string): Promise<SessionEvent[]> => {
  const events: SessionEvent[] = [];
  for await (const event of log.read(id)) events.push(event);
  return events;
};

// ---------------------------------------------------------------- curves

const foldCurve = async (): Promise<void> => {
  const largest = SIZES.fold[SIZES.fold.length - 1] as number;
  const { log } = await buildLog('fold', largest);
  const events = await readAll(log, 's');
  await log.close();
  const points: Point[] = [];
  for (const size of SIZES.fold) {
    const slice = events.slice(0, size);
    points.push({ size, ms: await timeIt(size >= 1_000_000 ? 1 : 3, () => foldMemory(slice)) });
  }
  printCurve('fold: foldMemory over decoded events (in memory)', 'event', points);
};

const projectionCurves = async (): Promise<void> => {
  const tokenizer = openAiTokenizer();
  tokenizer.count('start-up');
  const budget = { maxTokens: 16_000, pinnedPrefixItems: 1 };
  const largest = SIZES.projection[SIZES.projection.length - 1] as number;
  const chat = syntheticConversation(largest, 20_260_101);
  const cold: Point[] = [];
  const warm: Point[] = [];
  for (const size of SIZES.projection) {
    const part = chat.slice(0, size);
    const projector = new DefaultContextProjector({ tokenizer });
    const runs = size >= 100_000 ? 2 : 4;
    // One untimed cold projection first (the JIT), on its own copy.
    projector.project(fromChatCompletions(part), budget);
    // Deep-frozen, as memory's items are: the projection caches only frozen items, so "warm" needs them frozen.
    const fresh: MemoryItem[][] = Array.from({ length: runs }, () => deepFreeze(fromChatCompletions(part)));
    let k = 0;
    cold.push({ size, ms: await timeIt(runs, () => projector.project(fresh[k++] as MemoryItem[], budget)) });
    const items = fresh[0] as MemoryItem[];
    warm.push({ size, ms: await timeIt(9, () => projector.project(items, budget)) });
  }
  printCurve('projection, cold (first projection of a history; o200k, 16,000 tokens)', 'message', cold);
  printCurve('projection, warm (the same history again)', 'message', warm);
};

const appendCurve = async (): Promise<void> => {
  const dir = await tempDir('append');
  const log = await openLevelLog(dir);
  const next = eventSource(7);
  const windows = 10;
  const perWindow = SIZES.append / windows;
  const points: Point[] = [];
  let written = 0;
  for (let w = 0; w < windows; w++) {
    const started = performance.now();
    for (let done = 0; done < perWindow; done += 100) await log.append('s', Array.from({ length: 100 }, next));
    written += perWindow;
    points.push({ size: perWindow, ms: performance.now() - started, extra: `${fmt(written - perWindow)}–${fmt(written)}` });
  }
  await log.close();
  console.log(`\nappend: batches of 100 events awaited one after another, ${fmt(perWindow)} events per window as the session grows to ${fmt(SIZES.append)}`);
  const rows = points.map((p) => [p.extra ?? '', fmt((p.size * 1000) / p.ms)]);
  for (const [range, rate] of rows) console.log(`  events ${String(range).padEnd(17)} ${String(rate).padStart(8)} events/s`);
  const first = points[0] as Point;
  const last = points[points.length - 1] as Point;
  const ratio = last.ms / first.ms;
  console.log(`  last window ÷ first window (time): ${ratio.toFixed(2)} (${ratio <= LINEAR_SLACK ? 'flat: append cost does not grow with the session' : 'grows with the session'})`);
  results.push({ measure: `append throughput, last ÷ first window up to ${fmt(SIZES.append)} events (time)`, value: ratio.toFixed(2), target: `<= ${LINEAR_SLACK}`, verdict: ratio <= LINEAR_SLACK ? 'PASS' : 'MISS' });
};

/** Runtime sessions of n steps (a scripted model calling a tool each step), on LevelDB with compaction off. */
const runtimeCurves = async (): Promise<void> => {
  const readFile = defineTool({
    name: 'read_file',
    description: 'Read a file',
    parameters: z.object({ path: z.string() }),
    execute: ({ path }) => `// ${path}\n${'export const value = compute(input, options);\n'.repeat(8)}`,
  });
  const resume: Point[] = [];
  const open: Point[] = [];
  const replay: Point[] = [];
  const verify: Point[] = [];
  const bytes: string[] = [];
  for (const steps of SIZES.steps) {
    const dir = await tempDir(`runtime-${steps}`);
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
      maxSteps: steps + 1,
      checkpointEvery: 1_000_000,
    });
    const session = await agent.newSession();
    await session.run('Read the files.');
    const id = session.id;
    const recorded = await readAll(log, id);
    const json = recorded.reduce((sum, event) => sum + JSON.stringify(event).length, 0);
    const projectedJson = recorded.filter((event) => event.type === 'context.projected').reduce((sum, event) => sum + JSON.stringify(event).length, 0);
    await log.close();
    const stored = await storeBytes(dir);
    bytes.push(
      `  ${String(steps).padStart(5)} steps: ${fmt(recorded.length)} events, ${fmt(json / steps)} bytes of event JSON per step ` +
        `(${fmt(projectedJson / steps)} of it context.projected), LevelDB files ${fmt(stored)} bytes (${fmt(stored / steps)} per step)`,
    );
    const reopened = await openLevelLog(dir);
    const again = Agents.react({ modelClient: new ScriptedModelClient([]), model: 'scripted', tools: [readFile], log: reopened, checkpointEvery: 1_000_000 });
    await again.resumeSession(id); // untimed: the JIT
    resume.push({ size: steps, ms: await timeIt(5, () => again.resumeSession(id)) });
    open.push({ size: steps, ms: await timeIt(5, () => openSession(reopened, { id, checkpointEvery: 1_000_000 })) });
    replay.push({ size: steps, ms: await timeIt(3, () => replaySession(reopened, id)) });
    verify.push({ size: steps, ms: await timeIt(5, () => reopened.verify(id)) });
    await reopened.close();
  }
  console.log('\nbytes per step of a runtime session (compaction off; event JSON as read back, and the LevelDB files after close):');
  for (const line of bytes) console.log(line);
  printCurve('agent.resumeSession (no checkpoint: folds every event)', 'step', resume);
  printCurve('openSession (no checkpoint)', 'step', open);
  printCurve("replaySession, mode 'project' (re-projects and compares every step)", 'step', replay);
  printCurve('log.verify (hash chain; the audit helper is not on main yet)', 'step', verify);
};

const readPeakCurve = async (): Promise<void> => {
  const { log } = await buildLog('read', SIZES.read);
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
  const state = await foldMemoryAsync(log.read('s'));
  const elapsed = performance.now() - started;
  clearInterval(sample);
  const after = process.memoryUsage();
  peakHeap = Math.max(peakHeap, after.heapUsed);
  peakRss = Math.max(peakRss, after.rss);
  await log.close();
  const items = state.state.entries.length;
  console.log(
    `\npeak memory reading ${fmt(SIZES.read)} events (foldMemoryAsync(log.read), LevelDB): ${ms(elapsed)} ms; heap +${fmt((peakHeap - base.heapUsed) / 1024 / 1024)} MiB ` +
      `(peak), rss +${fmt((peakRss - base.rss) / 1024 / 1024)} MiB; the folded memory holds ${fmt(items)} items, ` +
      `${fmt((peakHeap - base.heapUsed) / Math.max(1, items))} bytes of heap per item`,
  );
  results.push({ measure: `peak heap reading ${fmt(SIZES.read)} events (fold keeps ${fmt(items)} items)`, value: `${fmt((peakHeap - base.heapUsed) / 1024 / 1024)} MiB`, target: '', verdict: '' });
};

const main = async (): Promise<void> => {
  console.log(`curves bench${quick ? ' (--quick)' : ''}: Node ${process.version}, ${cpus().length} cores, load average ${loadavg()[0]?.toFixed(1)}`);
  await foldCurve();
  await projectionCurves();
  await appendCurve();
  await runtimeCurves();
  await readPeakCurve();
  console.log(`\nload average at the end: ${loadavg()[0]?.toFixed(1)}`);
  reportResults('curves', results);
};

try {
  await main();
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await Promise.all([...tempDirs].map((dir) => rm(dir, { recursive: true, force: true })));
}
