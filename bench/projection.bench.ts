// Projection benchmark: our projectors against LangChain trimMessages, ai pruneMessages + a cut, and Mastra's TokenLimiter.
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DefaultContextProjector,
  TypeAwareContextProjector,
  approxTokenizer,
  itemTokenCount,
  openAiTokenizer,
  toolPairGroups,
} from '../src/context/index.js';
import type { ContextBudget, ContextProjection, ContextProjector, Tokenizer } from '../src/context/index.js';
import { callIdsOf, outputCallIdOf } from '../src/items/index.js';
import type { MemoryItem } from '../src/items/index.js';
import { openLevelLog } from '../src/log/index.js';
import { fromChatCompletions, toChatCompletions } from '../src/providers/index.js';
import { openSession } from '../src/session/index.js';
import type { AgentSession } from '../src/session/index.js';
import { deepFreeze } from '../src/testing/index.js';
import { loadPeers } from './peers/ensure.js';
import type { ChatMessage, PeerLibraries, PeerTrimmer } from './peers/ensure.js';
import { loadTrajectories, messageChars, syntheticConversation, trajectoriesDir } from './corpus.js';
import type { Trajectory } from './corpus.js';
import { argValue, judged, loadNow, positiveInt, quick, reportResults, verdictText } from './support.js';
import type { BenchResult } from './support.js';
import { referenceProjectContext } from '../test/support/reference-projection.js';

const SEED = 20_260_101;
const SYNTHETIC_MESSAGES = positiveInt(argValue('--messages'), quick ? 2_000 : 10_000, 'message count');
const SYNTHETIC_BUDGET = 16_000;
const PREFIX_TURNS = quick ? 100 : 500;
const PREFIX_MAX_ITEMS = 100;
const REAL_BUDGET = 8_000;
/** With --quick, only this many of the real runs are replayed. */
const QUICK_RUNS = 1;

const TARGET_VS_LANGCHAIN = 20;
const TARGET_COLD_VS_MASTRA = 2;
const TARGET_RESUMED_VS_MASTRA = 2;
const TARGET_WARM_VS_MASTRA = 5;
const TARGET_PREFIX_SHARE = 0.9;

// ------------------------------------------------------------------------------------------------ items and checks

/**
 * The items of the whole conversation (converted once, so items keep their identity as memory grows) and, for
 * each message, how many items the conversation up to and including it has. The per-message item counts come from
 * converting each message alone and are checked against the whole conversion.
 */
const itemsWithBoundaries = (chat: readonly ChatMessage[]): { items: MemoryItem[]; ends: number[] } => {
  const items = memoryItemsOf(chat);
  const ends: number[] = [];
  let end = 0;
  for (const [index, message] of chat.entries()) {
    const alone = fromChatCompletions([message]);
    for (const [k, item] of alone.entries()) {
      const whole = items[end + k];
      if (whole === undefined || whole.type !== item.type) {
        throw new Error(`message ${index} converts differently alone than in its conversation; cannot replay it turn by turn`);
      }
    }
    end += alone.length;
    ends.push(end);
  }
  if (end !== items.length) throw new Error(`per-message conversion gives ${end} items, the whole conversation ${items.length}`);
  return { items, ends };
};

/**
 * The items of a conversation as memory holds them: deep-frozen (the fold freezes every item; the projection
 * caches only frozen items, so unfrozen items would be measured afresh on every "warm" projection).
 */
const memoryItemsOf = (chat: readonly ChatMessage[]): MemoryItem[] => deepFreeze(fromChatCompletions(chat));

/** Indices `i` such that the model is called with messages `[0, i)`: after every user message and tool result. */
const requestPoints = (chat: readonly ChatMessage[]): number[] => {
  const points: number[] = [];
  for (let i = 1; i <= chat.length; i++) {
    const role = chat[i - 1]?.role;
    if (role !== 'user' && role !== 'tool') continue;
    // A step with several tool calls is answered by several tool messages; the model is called after the last.
    if (role === 'tool' && chat[i]?.role === 'tool') continue;
    points.push(i);
  }
  return points;
};

interface Inspection {
  readonly messages: number;
  readonly tokens: number;
  /** Tool results whose call is not before them, plus calls whose result is not after them. */
  readonly orphans: number;
  /** Entries that are not messages at all (LangChain returns `[undefined]` in one case). */
  readonly invalid: number;
  readonly userMessages: number;
  /** Whether the first user message of the source (the task) is in the output. */
  readonly taskKept: boolean;
}

const o200k = openAiTokenizer('o200k_base');
/**
 * The same o200k count under another identity: token counts are memoized per tokenizer, so checking outputs and
 * counting for the peers never adds entries to (or warms) the memo table our projector uses.
 */
const o200kForChecks: Tokenizer = { name: o200k.name, count: (text) => o200k.count(text) };
const o200kForPeers: Tokenizer = { name: o200k.name, count: (text) => o200k.count(text) };

const tokensOf = (items: readonly MemoryItem[], tokenizer: Tokenizer = o200kForChecks): number => {
  let total = 0;
  for (const item of items) total += itemTokenCount(item, tokenizer);
  return total;
};

const orphansOf = (items: readonly MemoryItem[]): number => {
  const issued = new Set<string>();
  const answered = new Set<string>();
  let orphans = 0;
  for (const item of items) {
    for (const id of callIdsOf(item)) issued.add(id);
    const answers = outputCallIdOf(item);
    if (answers === undefined) continue;
    if (!issued.has(answers)) orphans += 1;
    answered.add(answers);
  }
  for (const id of issued) if (!answered.has(id)) orphans += 1;
  return orphans;
};

const isUserItem = (item: MemoryItem): boolean =>
  item.type === 'message' && (item as { role?: unknown }).role === 'user';

const inspectItems = (items: readonly MemoryItem[], task: string | undefined, invalid = 0): Inspection => {
  let userMessages = 0;
  let taskKept = false;
  for (const item of items) {
    if (!isUserItem(item)) continue;
    userMessages += 1;
    if ((item as { content?: unknown }).content === task) taskKept = true;
  }
  return {
    messages: toChatCompletions(items).length,
    tokens: tokensOf(items),
    orphans: orphansOf(items),
    invalid,
    userMessages,
    taskKept,
  };
};

const inspectPeer = (peer: PeerTrimmer<unknown>, output: readonly unknown[], task: string | undefined): Inspection => {
  const invalid = output.filter((entry) => entry === undefined || entry === null).length;
  return inspectItems(fromChatCompletions(peer.toChat(output)), task, invalid);
};

const firstUserText = (chat: readonly ChatMessage[]): string | undefined =>
  chat.find((message) => message.role === 'user')?.content ?? undefined;

/** Tokens of one Chat message as ours counts it: the items it converts to, counted with o200k (memoized). */
const chatTokenMemo = new WeakMap<ChatMessage, number>();
const countChatMessage = (message: ChatMessage): number => {
  const hit = chatTokenMemo.get(message);
  if (hit !== undefined) return hit;
  const tokens = tokensOf(fromChatCompletions([message]), o200kForPeers);
  chatTokenMemo.set(message, tokens);
  return tokens;
};

// ------------------------------------------------------------------------------------------------ same as before

/**
 * Whether a projection is the one the eager algorithm (every item counted up front, as before lazy counting)
 * gives: same items, fates, notes and token totals; sourceTokens, when present, the same too.
 */
const identity = { checked: 0, identical: 0, firstDifference: undefined as string | undefined };
const o200kForReference: Tokenizer = { name: o200k.name, count: (text) => o200k.count(text) };
const checkAgainstReference = (projection: ContextProjection, items: readonly MemoryItem[], budget: ContextBudget, where: string): void => {
  const expected = referenceProjectContext(items, budget, { tokenizer: o200kForReference });
  const { sourceTokens, ...report } = projection.report;
  const { sourceTokens: expectedSourceTokens, ...expectedReport } = expected.report;
  const same =
    projection.items.length === expected.items.length &&
    projection.items.every((item, i) => JSON.stringify(item) === JSON.stringify(expected.items[i])) &&
    JSON.stringify({ ...report, fates: [...report.fates] }) === JSON.stringify(expectedReport) &&
    (sourceTokens === undefined || sourceTokens === expectedSourceTokens);
  identity.checked += 1;
  if (same) identity.identical += 1;
  else identity.firstDifference ??= where;
};

// ------------------------------------------------------------------------------------------------ timing

const collectGarbage = (globalThis as { gc?: (options?: { type: 'major' | 'minor' }) => void }).gc;
/** A young-generation collection (about 0.1 ms): clears the garbage of the previous library before a short timed call. */
const collectYoungGarbage = (): void => collectGarbage?.({ type: 'minor' });

/** Elapsed wall-clock and CPU milliseconds (CPU: this process, user + system, the collector's helper threads included). */
interface Elapsed {
  readonly wall: number;
  readonly cpu: number;
}

const startStopwatch = (): (() => Elapsed) => {
  const cpu = process.cpuUsage();
  const wall = performance.now();
  return () => {
    const wallMs = performance.now() - wall;
    const used = process.cpuUsage(cpu);
    return { wall: wallMs, cpu: (used.user + used.system) / 1000 };
  };
};

/** One thing to time: `prepare` builds its input untimed (or timed apart, as set-up), `run` is timed. */
interface Contender {
  readonly prepare: () => unknown;
  /** Time `prepare` too, apart from `run` (the set-up a row reports beside its time, e.g. a resume). */
  readonly timePrepare?: boolean;
  /** Called untimed after each timed run with its input and output (checks of every run). */
  readonly check?: (input: unknown, output: unknown) => void;
  readonly run: (input: unknown) => unknown;
  /** Timed runs per round (more for fast contenders, so their median rests on more samples). */
  readonly runsPerRound: number;
  /** Untimed runs before the first round (JIT warm-up; for warm rows also the caches). */
  readonly warmUps: number;
}

interface Timed {
  /** Wall-clock milliseconds of each timed run. */
  readonly times: number[];
  /** CPU milliseconds of each timed run. */
  readonly cpuTimes: number[];
  /** Wall-clock and CPU milliseconds of each timed run's `prepare`, when the contender times it. */
  readonly prepareTimes: number[];
  readonly prepareCpuTimes: number[];
  readonly output: unknown;
  /** The input of the last timed run. */
  readonly input: unknown;
}

/**
 * Times contenders in interleaved rounds (round 1: each contender in turn, round 2: again, ...), so that every
 * contender sees the same machine load. With --expose-gc, each contender's turn starts with a full collection and
 * an untimed settling run (the first run after a full collection is up to twice as slow, which would penalize
 * short runs most), and a young-generation collection precedes every timed run.
 */
const timeInRounds = async (contenders: readonly Contender[], rounds: number): Promise<Timed[]> => {
  type Result = { times: number[]; cpuTimes: number[]; prepareTimes: number[]; prepareCpuTimes: number[]; output: unknown; input: unknown };
  const results = contenders.map((): Result => ({
    times: [],
    cpuTimes: [],
    prepareTimes: [],
    prepareCpuTimes: [],
    output: undefined,
    input: undefined,
  }));
  for (const contender of contenders) {
    for (let i = 0; i < contender.warmUps; i++) await contender.run(await contender.prepare());
  }
  for (let round = 0; round < rounds; round++) {
    for (const [index, contender] of contenders.entries()) {
      const result = results[index] as Result;
      if (collectGarbage) {
        collectGarbage();
        await contender.run(await contender.prepare());
      }
      for (let k = 0; k < contender.runsPerRound; k++) {
        if (contender.timePrepare) collectYoungGarbage();
        const stopPrepare = startStopwatch();
        const input = await contender.prepare();
        const prepared = stopPrepare();
        if (contender.timePrepare) {
          result.prepareTimes.push(prepared.wall);
          result.prepareCpuTimes.push(prepared.cpu);
        }
        collectYoungGarbage();
        const stop = startStopwatch();
        result.output = await contender.run(input);
        const elapsed = stop();
        result.times.push(elapsed.wall);
        result.cpuTimes.push(elapsed.cpu);
        result.input = input;
        contender.check?.(input, result.output);
      }
    }
  }
  return results;
};

const median = (values: readonly number[]): number => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

const percentile = (values: readonly number[], p: number): number => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] as number;
};

// ------------------------------------------------------------------------------------------------ printing

const formatMs = (ms: number): string =>
  !Number.isFinite(ms) ? '-' : ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3);
const formatRatio = (ratio: number): string =>
  !Number.isFinite(ratio) ? '-' : ratio >= 100 ? `${ratio.toFixed(0)}x` : ratio >= 10 ? `${ratio.toFixed(1)}x` : `${ratio.toFixed(2)}x`;
const formatInt = (value: number): string => value.toLocaleString('en-US');
const verdict = (pass: boolean): string => (pass ? 'PASS' : 'MISS');

const printTable = (header: readonly string[], rows: readonly (readonly string[])[], rightAligned: ReadonlySet<number>): void => {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, column) => (rightAligned.has(column) ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  console.log(line(header));
  console.log(widths.map((width) => '-'.repeat(width)).join('  '));
  for (const row of rows) console.log(line(row));
};

/** Other processes share the machine; the load average tells a reader how far to trust absolute times. */
const loadAverage = (): string => `load average ${loadavg().map((value) => value.toFixed(2)).join(' / ')} (1 / 5 / 15 min)`;

const section = (title: string): void => {
  console.log(`\n${title}\n${'='.repeat(title.length)}`);
};

// ------------------------------------------------------------------------------------------------ part 1

type Phase = 'cold' | 'warm' | 'resumed';

interface Row {
  readonly library: string;
  readonly counts: string;
  /** Whether token counts were cached before the run; Mastra caches nothing. */
  readonly cache: Phase | 'none';
  /** The interleaved phase the row was timed in; its ratio is against ours (o200k exact) in the same phase. */
  readonly phase: Phase;
  readonly timed: Timed;
  readonly inspection: Inspection;
  readonly ours: boolean;
}

interface SyntheticResult {
  readonly rows: Row[];
  /** Ours, o200k exact, in each phase: what each peer row of the phase is divided by. */
  readonly oursExactCold: Row;
  readonly oursExactWarm: Row;
  readonly oursExactResumed: Row;
  /** Mastra's first limiter (it parses the o200k ranks for each TokenLimiter it builds). */
  readonly mastraSetUp: Elapsed;
  /** The session the resumed rows resume, as saved. */
  readonly saved: SavedSession;
  /** What the last timed resume attached from the checkpoint's projection facts. */
  readonly attached: AgentSession['opened']['projectionFacts'];
  /** Whether the first projection after each resume equals the projection made before the save (items, fates, notes, tokens). */
  readonly sameAsBeforeSave: { readonly checked: number; readonly same: number };
}

/** A session saved by the library after an agent loop's projections, in a LevelDB log, resumed by the resumed rows. */
interface SavedSession {
  readonly dir: string;
  readonly log: Awaited<ReturnType<typeof openLevelLog>>;
  readonly id: string;
  readonly items: number;
  /** Events stored, and the checkpoint's seq (the head: the tail folded on resume is empty). */
  readonly head: number;
  /** The projection of memory just before the save, to compare each resumed first projection with. */
  readonly before: ContextProjection;
  /** Exact token counts the checkpoint holds (those the projections before the save had made), of all items. */
  readonly countsSaved: number;
}

/**
 * Saves a session as an agent would leave it: memory appended through the session in chunks (as model output),
 * projected as the agent loop does before each model call (here three times, the warm steady state), then
 * `session.save()` (a checkpoint at the head, holding memory and the projection facts). LevelDB, in a temporary
 * directory. Nothing of it is timed.
 */
const saveSession = async (items: readonly MemoryItem[], projector: DefaultContextProjector, budget: ContextBudget): Promise<SavedSession> => {
  const dir = await mkdtemp(join(tmpdir(), 'context-ledger-projection-bench-'));
  const log = await openLevelLog(dir);
  const id = 'resumed-session';
  const session = await openSession(log, { id, tokenizer: projector.tokenizer });
  for (let start = 0; start < items.length; start += 500) await session.memory.addOutputItems(items.slice(start, start + 500));
  let before: ContextProjection | undefined;
  for (let turn = 0; turn < 3; turn++) before = projector.project(session.memory.getItems(), budget);
  await session.save();
  const head = await log.head(id);
  const checkpoint = await log.latestCheckpoint(id);
  const projection = (checkpoint?.data as { projection?: { tokens?: { exact?: number[] } } } | undefined)?.projection;
  const countsSaved = projection?.tokens?.exact?.filter((count) => count > 0).length ?? 0;
  if (checkpoint?.seq !== head) throw new Error(`the saved session's checkpoint is at seq ${String(checkpoint?.seq)}, not at the head ${head}`);
  return { dir, log, id, items: session.memory.getItems().length, head, before: before as ContextProjection, countsSaved };
};

/** Same items (as JSON), fates, notes and token totals. */
const sameProjection = (a: ContextProjection, b: ContextProjection): boolean =>
  a.items.length === b.items.length &&
  a.items.every((item, i) => JSON.stringify(item) === JSON.stringify(b.items[i])) &&
  JSON.stringify({ ...a.report, fates: [...a.report.fates] }) === JSON.stringify({ ...b.report, fates: [...b.report.fates] });

/** Tokenizer start-up of ours (gpt-tokenizer loading the o200k ranks): once per process, measured first thing. */
let oursSetUp: Elapsed = { wall: NaN, cpu: NaN };

const SYNTHETIC_ROUNDS = positiveInt(argValue('--rounds'), quick ? 2 : 5, 'round count');

const progress = (text: string): void => {
  process.stdout.write(`  ${text}\n`);
};

interface RowPlan {
  readonly library: string;
  readonly counts: string;
  readonly cache: Row['cache'];
  readonly phase: Phase;
  readonly ours: boolean;
  readonly contender: Contender;
  readonly inspect: (output: unknown) => Inspection;
}

const runSynthetic = async (chat: ChatMessage[], peers: PeerLibraries): Promise<SyntheticResult> => {
  const task = firstUserText(chat);
  const budget: ContextBudget = { maxTokens: SYNTHETIC_BUDGET, pinnedPrefixItems: 1 };
  const items = memoryItemsOf(chat);

  let saved: SavedSession | undefined;
  const sameAsBeforeSave = { checked: 0, same: 0 };
  const ours = (counts: string, tokenizer: Tokenizer, cache: Phase): RowPlan => {
    const projector = new DefaultContextProjector({ tokenizer });
    const project = (input: readonly MemoryItem[]): ContextProjection => projector.project(input, budget);
    const resumed: Contender = {
      // The resume (openSession: the checkpoint read, checked against the chain and attached) is the set-up,
      // timed apart; the first projection of the resumed memory is the run.
      prepare: () => openSession((saved as SavedSession).log, { id: (saved as SavedSession).id, tokenizer }),
      timePrepare: true,
      run: (input) => project((input as AgentSession).memory.getItems()),
      check: (_input, output) => {
        sameAsBeforeSave.checked += 1;
        if (sameProjection(output as ContextProjection, (saved as SavedSession).before)) sameAsBeforeSave.same += 1;
      },
      runsPerRound: 2,
      warmUps: 2,
    };
    return {
      library: cache === 'resumed' ? 'ours, first projection after a resume' : 'ours DefaultContextProjector',
      counts,
      cache,
      phase: cache,
      ours: true,
      contender:
        cache === 'resumed'
          ? resumed
          : {
              // Cold: fresh item objects each run, so no token count is cached (counts are memoized by item identity).
              // Items are deep-frozen, as memory's are (only frozen items are cached).
              prepare: cache === 'warm' ? () => items : () => memoryItemsOf(chat),
              run: (input) => project(input as MemoryItem[]),
              runsPerRound: cache === 'warm' ? 6 : 2,
              warmUps: 2,
            },
      inspect: (output) => inspectItems((output as { items: readonly MemoryItem[] }).items, task),
    };
  };
  const peer = (library: PeerTrimmer<unknown>, counts: string, cache: Row['cache'], phase: Phase): RowPlan => {
    let shared: unknown[] | undefined;
    return {
      library: library.name,
      counts,
      cache,
      phase,
      ours: false,
      contender: {
        // Cold: a fresh conversion each run, so the counter's cache (by message id or identity) starts empty.
        prepare: cache === 'cold' ? () => library.toNative(chat) : () => (shared ??= library.toNative(chat)),
        run: (input) => library.trim(input as unknown[], SYNTHETIC_BUDGET),
        runsPerRound: 1,
        warmUps: 1,
      },
      inspect: (output) => inspectPeer(library, output as unknown[], task),
    };
  };
  const exact = 'o200k exact (ours)';
  // Two phases, warm then cold: cold runs leave hundreds of thousands of dead entries in the memo tables
  // (WeakMaps for ours, a Map by id for LangChain), which slows later lookups. Measured first, warm rows see
  // tables sized for one session, as an agent process holding one session would. Mastra caches nothing and is
  // timed in both phases.
  const warmPlans = [
    ours('o200k exact', o200k, 'warm'),
    ours('approx chars/4', approxTokenizer, 'warm'),
    peer(peers.langchain, exact, 'warm', 'warm'),
    peer(peers.aiSdk, exact, 'warm', 'warm'),
    peer(peers.mastra, 'o200k js-tiktoken (its own)', 'none', 'warm'),
  ];
  const coldPlans = [
    ours('o200k exact', o200k, 'cold'),
    ours('approx chars/4', approxTokenizer, 'cold'),
    peer(peers.langchain, exact, 'cold', 'cold'),
    peer(peers.aiSdk, exact, 'cold', 'cold'),
    peer(peers.mastra, 'o200k js-tiktoken (its own)', 'none', 'cold'),
  ];
  const resumedPlans = [ours('o200k exact', o200k, 'resumed'), peer(peers.mastra, 'o200k js-tiktoken (its own)', 'none', 'resumed')];
  // Mastra builds its encoder (parses the o200k ranks) for each TokenLimiter; the first is its set-up, timed apart.
  collectGarbage?.();
  const stopSetUp = startStopwatch();
  await peers.mastra.trim([], SYNTHETIC_BUDGET);
  const mastraSetUp = stopSetUp();
  progress(`warm phase: ${warmPlans.length} contenders, ${SYNTHETIC_ROUNDS} interleaved rounds...`);
  const warmTimed = await timeInRounds(warmPlans.map((plan) => plan.contender), SYNTHETIC_ROUNDS);
  progress(`cold phase: ${coldPlans.length} contenders, ${SYNTHETIC_ROUNDS} interleaved rounds...`);
  const coldTimed = await timeInRounds(coldPlans.map((plan) => plan.contender), SYNTHETIC_ROUNDS);
  progress('saving a session (LevelDB) after three projections, as an agent loop leaves it...');
  saved = await saveSession(items, new DefaultContextProjector({ tokenizer: o200k }), budget);
  progress(`resumed phase: ${resumedPlans.length} contenders, ${SYNTHETIC_ROUNDS} interleaved rounds...`);
  const resumedTimed = await timeInRounds(resumedPlans.map((plan) => plan.contender), SYNTHETIC_ROUNDS);
  const attached = ((resumedTimed[0] as Timed).input as AgentSession).opened.projectionFacts;

  const toRow = (plan: RowPlan, timed: Timed): Row => ({
    library: plan.library,
    counts: plan.counts,
    cache: plan.cache,
    phase: plan.phase,
    ours: plan.ours,
    timed,
    inspection: plan.inspect(timed.output),
  });
  const warmRows = warmPlans.map((plan, index) => toRow(plan, warmTimed[index] as Timed));
  const coldRows = coldPlans.map((plan, index) => toRow(plan, coldTimed[index] as Timed));
  const resumedRows = resumedPlans.map((plan, index) => toRow(plan, resumedTimed[index] as Timed));
  const rows: Row[] = [];
  for (let index = 0; index < warmRows.length; index++) rows.push(coldRows[index] as Row, warmRows[index] as Row);
  rows.push(...resumedRows);
  for (const [phase, timed] of [['warm', warmTimed[0]], ['cold', coldTimed[0]]] as const) {
    checkAgainstReference((timed as Timed).output as ContextProjection, items, budget, `synthetic session, ${phase}`);
  }
  // The resumed session's items are memory's (as stored: keys in the log's order), so the reference projects those.
  const resumedSession = (resumedTimed[0] as Timed).input as AgentSession;
  checkAgainstReference((resumedTimed[0] as Timed).output as ContextProjection, resumedSession.memory.getItems(), budget, 'synthetic session, resumed');
  await saved.log.close();
  await rm(saved.dir, { recursive: true, force: true });
  return {
    rows,
    oursExactCold: coldRows[0] as Row,
    oursExactWarm: warmRows[0] as Row,
    oursExactResumed: resumedRows[0] as Row,
    mastraSetUp,
    saved,
    attached,
    sameAsBeforeSave,
  };
};

/** A row's median wall time divided by another's. */
const wallRatio = (row: Row, by: Row): number => median(row.timed.times) / median(by.timed.times);

const printSynthetic = (chat: readonly ChatMessage[], result: SyntheticResult, peers: PeerLibraries): void => {
  const { rows, oursExactCold, oursExactWarm, oursExactResumed } = result;
  console.log(
    `\n${formatInt(chat.length)} messages, ${formatInt(messageChars(chat))} characters, ` +
      `${formatInt(tokensOf(fromChatCompletions(chat)))} o200k tokens; budget ${formatInt(SYNTHETIC_BUDGET)} tokens ` +
      `(ours: maxTokens ${SYNTHETIC_BUDGET}, pinnedPrefixItems 1).\n`,
  );
  printTable(
    ['library', 'token counts', 'cache', 'phase', 'runs', 'wall ms', 'cpu ms', 'peer ÷ ours', 'msgs', 'o200k tokens', 'over budget', 'orphans', 'users'],
    rows.map((row) => {
      const over = row.inspection.tokens > SYNTHETIC_BUDGET;
      const ours = row.phase === 'cold' ? oursExactCold : row.phase === 'warm' ? oursExactWarm : oursExactResumed;
      return [
        row.library,
        row.counts,
        row.cache,
        row.phase,
        String(row.timed.times.length),
        formatMs(median(row.timed.times)),
        formatMs(median(row.timed.cpuTimes)),
        row.ours ? '' : formatRatio(wallRatio(row, ours)),
        formatInt(row.inspection.messages),
        formatInt(row.inspection.tokens),
        over ? `YES (+${formatInt(row.inspection.tokens - SYNTHETIC_BUDGET)})` : 'no',
        String(row.inspection.orphans),
        String(row.inspection.userMessages),
      ];
    }),
    new Set([4, 5, 6, 7, 8, 9, 11, 12]),
  );
  console.log(
    '\n  cache: cold = no token count cached before the run (ours: fresh item objects; LangChain, ai: fresh messages);' +
      '\n         warm = the same messages projected again, token counts cached (the steady state of an agent loop);' +
      '\n         none = the library caches nothing (Mastra tokenizes the newest messages again on every call).' +
      '\n         resumed = the first projection of a session resumed with openSession from a checkpoint the library saved' +
      '\n         (LevelDB, same process, fresh objects each run): its items got the projection facts saved with the' +
      '\n         checkpoint; the resume itself is set-up, timed apart (below). Mastra is timed beside it again.' +
      `\n  phase: rows are timed in three phases (warm, cold, resumed) of ${SYNTHETIC_ROUNDS} interleaved rounds, so the rows of a` +
      '\n         phase share the machine load (each turn starts with a full collection and an untimed run); times' +
      '\n         are medians of the runs shown: wall-clock, and CPU time of the process (user + system; it leaves out' +
      '\n         waiting for a busy CPU but adds the garbage collector\'s helper threads, so it can exceed wall).' +
      '\n  peer ÷ ours: the peer\'s median wall time divided by ours (o200k exact) in the same phase; above 1 = ours faster.' +
      '\n  o200k tokens: the output counted as ours counts (gpt-tokenizer o200k per text + 4 per item), for every library;' +
      '\n         ours with the approximate counter (chars/4) is expected to land near, not under, the exact budget.' +
      '\n  orphans: tool results without their call before them plus calls without their result after them.' +
      '\n  users: user messages in the output.',
  );
  for (const peer of [peers.langchain, peers.aiSdk, peers.mastra]) console.log(`  ${peer.name} (${peer.version}): ${peer.setup}.`);
  console.log(
    `\n  Tokenizer start-up, apart from the rows above (each side pays it before its first count):` +
      `\n    ours: gpt-tokenizer loading the o200k ranks, once per process: ${formatMs(oursSetUp.wall)} ms wall, ${formatMs(oursSetUp.cpu)} ms cpu` +
      `\n    Mastra: the first TokenLimiter parsing the o200k ranks (js-tiktoken; again for every limiter built): ${formatMs(result.mastraSetUp.wall)} ms wall, ${formatMs(result.mastraSetUp.cpu)} ms cpu` +
      `\n  Resumed rows: the session (${formatInt(result.saved.items)} items in ${formatInt(result.saved.head)} events, checkpoint at the head) was saved` +
      `\n    after three projections; its checkpoint holds ${formatInt(result.saved.countsSaved)} exact o200k counts (those the projections made)` +
      `\n    and every item's characters and tool pairing. Resume (openSession, the set-up of each timed run): median` +
      ` ${formatMs(median(oursExactResumed.timed.prepareTimes))} ms wall, ${formatMs(median(oursExactResumed.timed.prepareCpuTimes))} ms cpu.` +
      `\n    Attached on resume: ${result.attached ? `${formatInt(result.attached.items)} items, ${formatInt(result.attached.tokenCounts)} token counts${result.attached.ignored ? ` (ignored: ${result.attached.ignored})` : ''}` : 'nothing (no projection facts in the checkpoint)'}.` +
      `\n    First projection after each resume equal to the one before the save (items, fates, notes, tokens): ${result.sameAsBeforeSave.same} / ${result.sameAsBeforeSave.checked}.`,
  );
};

// ------------------------------------------------------------------------------------------------ part 2

type Growth = 'message' | 'model call';

interface PrefixRow {
  readonly label: string;
  readonly growth: Growth;
  readonly step: number;
  readonly share: number;
  readonly turns: number;
  readonly itemsAddedPerTurn: number;
  readonly avgItems: number;
  readonly target: boolean;
}

/** Characters at the start of `current` that repeat `previous` exactly (each item serialized as JSON). */
const sharedPrefixChars = (previous: readonly string[], current: readonly string[]): number => {
  let shared = 0;
  for (let i = 0; i < current.length; i++) {
    const now = current[i] as string;
    const before = previous[i];
    if (before === now) {
      shared += now.length;
      continue;
    }
    if (before !== undefined) {
      const limit = Math.min(before.length, now.length);
      let k = 0;
      while (k < limit && before.charCodeAt(k) === now.charCodeAt(k)) k++;
      shared += k;
    }
    break;
  }
  return shared;
};

const runPrefixStability = (chat: ChatMessage[]): PrefixRow[] => {
  const { items, ends } = itemsWithBoundaries(chat);
  // Start once the session is well past maxItems, then take PREFIX_TURNS + 1 consecutive turns (the first one only
  // sets the previous projection). A turn adds either one message or everything up to the next model call.
  const warmedUp = (point: number): boolean => (ends[point - 1] ?? 0) >= 3 * PREFIX_MAX_ITEMS;
  const turnsOf = (growth: Growth): number[] => {
    const points = growth === 'message' ? chat.map((_, index) => index + 1) : requestPoints(chat);
    return points.filter(warmedUp).slice(0, PREFIX_TURNS + 1);
  };
  const serialized = new WeakMap<MemoryItem, string>();
  const json = (item: MemoryItem): string => {
    let text = serialized.get(item);
    if (text === undefined) {
      text = JSON.stringify(item);
      serialized.set(item, text);
    }
    return text;
  };

  const measure = (label: string, growth: Growth, projector: ContextProjector, budget: ContextBudget, target = false): PrefixRow => {
    const turns = turnsOf(growth);
    let previous: string[] | undefined;
    let shared = 0;
    let total = 0;
    let itemsSent = 0;
    let measured = 0;
    for (const point of turns) {
      const memory = items.slice(0, ends[point - 1]);
      const projected = projector.project(memory, budget).items;
      const current = projected.map(json);
      if (previous) {
        shared += sharedPrefixChars(previous, current);
        for (const text of current) total += text.length;
        itemsSent += projected.length;
        measured += 1;
      }
      previous = current;
    }
    const first = turns[0] ?? 0;
    const last = turns.at(-1) ?? 0;
    return {
      label,
      growth,
      step: budget.evictionStep ?? 1,
      share: total === 0 ? NaN : shared / total,
      turns: measured,
      itemsAddedPerTurn: measured === 0 ? NaN : ((ends[last - 1] ?? 0) - (ends[first - 1] ?? 0)) / measured,
      avgItems: measured === 0 ? NaN : itemsSent / measured,
      target,
    };
  };

  const byItems = new DefaultContextProjector();
  const typeAware = new TypeAwareContextProjector();
  const exact = new DefaultContextProjector({ tokenizer: o200k });
  const itemsBudget = (step: number): ContextBudget => ({ maxItems: PREFIX_MAX_ITEMS, pinnedPrefixItems: 1, evictionStep: step });
  const rows: PrefixRow[] = [];
  for (const step of [1, 20]) rows.push(measure('Default, maxItems 100', 'message', byItems, itemsBudget(step), step === 20));
  for (const step of [1, 20, 50]) rows.push(measure('Default, maxItems 100', 'model call', byItems, itemsBudget(step)));
  for (const step of [1, 20]) {
    rows.push(
      measure('TypeAware, maxItems 100, maxRecentToolResults 20', 'model call', typeAware, {
        ...itemsBudget(step),
        maxRecentToolResults: 20,
      }),
    );
  }
  for (const step of [1, 20]) {
    rows.push(
      measure(`Default, maxTokens ${SYNTHETIC_BUDGET} (o200k)`, 'model call', exact, {
        maxTokens: SYNTHETIC_BUDGET,
        pinnedPrefixItems: 1,
        evictionStep: step,
      }),
    );
  }
  return rows;
};

const printPrefixStability = (rows: readonly PrefixRow[]): void => {
  printTable(
    ['budget', 'a turn adds', 'items/turn', 'evictionStep', 'turns', 'avg items sent', 'prefix share', 'target'],
    rows.map((row) => [
      row.label,
      `one ${row.growth}`,
      row.itemsAddedPerTurn.toFixed(2),
      String(row.step),
      String(row.turns),
      row.avgItems.toFixed(1),
      row.share.toFixed(3),
      row.target ? `>= ${TARGET_PREFIX_SHARE}: ${verdict(row.share >= TARGET_PREFIX_SHARE)}` : '(info)',
    ]),
    new Set([2, 3, 4, 5, 6]),
  );
  console.log(
    '\n  prefix share: over consecutive turns of the growing synthetic session, the characters of each projection' +
      '\n  (items as JSON, concatenated) that repeat the previous turn\'s projection from its start, divided by all' +
      '\n  characters sent; 1.0 means every prompt extends the previous one (a provider prompt cache hits).' +
      '\n  evictionStep counts items, so the prefix survives about step / (items per turn) turns: with one message' +
      '\n  per turn (the issue\'s reading: "byte-identical for up to K consecutive turns") the bound is about 1 - 1/K;' +
      '\n  when a turn adds a whole tool step (several items) it is about 1 - (items per turn)/K.',
  );
};

// ------------------------------------------------------------------------------------------------ part 3

interface ReplayTotals {
  readonly library: string;
  requests: number;
  totalMs: number;
  totalCpuMs: number;
  readonly perRequestMs: number[];
  orphanRequests: number;
  overBudget: number;
  /** Over the budget only because the first pinned item and the newest group alone exceed it (allowed for ours). */
  forcedOverBudget: number;
  withoutTask: number;
  invalid: number;
  tokensSent: number;
}

const newTotals = (library: string): ReplayTotals => ({
  library,
  requests: 0,
  totalMs: 0,
  totalCpuMs: 0,
  perRequestMs: [],
  orphanRequests: 0,
  overBudget: 0,
  forcedOverBudget: 0,
  withoutTask: 0,
  invalid: 0,
  tokensSent: 0,
});

const record = (totals: ReplayTotals, elapsed: Elapsed, inspection: Inspection): void => {
  totals.requests += 1;
  totals.totalMs += elapsed.wall;
  totals.totalCpuMs += elapsed.cpu;
  totals.perRequestMs.push(elapsed.wall);
  if (inspection.orphans > 0) totals.orphanRequests += 1;
  if (inspection.tokens > REAL_BUDGET) totals.overBudget += 1;
  if (!inspection.taskKept) totals.withoutTask += 1;
  if (inspection.invalid > 0) totals.invalid += 1;
  totals.tokensSent += inspection.tokens;
};

/** Whether the items ours must always send (first pinned item, newest item with its pair partners) exceed the budget. */
const mandatoryExceeds = (memory: readonly MemoryItem[]): boolean => {
  if (memory.length === 0) return false;
  const groups = toolPairGroups(memory);
  const forced = new Set<number>([...groups.membersOf(0), ...groups.membersOf(memory.length - 1)]);
  let tokens = 0;
  for (const index of forced) tokens += itemTokenCount(memory[index] as MemoryItem, o200kForChecks);
  return tokens > REAL_BUDGET;
};

const runTrajectories = async (trajectories: readonly Trajectory[], peers: PeerLibraries): Promise<ReplayTotals[]> => {
  const ours = newTotals('ours DefaultContextProjector (o200k exact)');
  const peerList = [peers.langchain, peers.aiSdk, peers.mastra];
  const peerTotals = peerList.map((peer) => newTotals(peer.name));
  const projector = new DefaultContextProjector({ tokenizer: o200k });
  // The agent's system prompt and its task (the first two messages) are pinned, as an agent using ours would.
  const budget: ContextBudget = { maxTokens: REAL_BUDGET, pinnedPrefixItems: 2 };
  await peers.mastra.trim([], REAL_BUDGET);

  const projectOurs = async (
    totals: ReplayTotals,
    memory: readonly MemoryItem[],
    task: string | undefined,
  ): Promise<void> => {
    collectYoungGarbage();
    const stop = startStopwatch();
    const projection = projector.project(memory, budget);
    const elapsed = stop();
    checkAgainstReference(projection, memory, budget, `real run at ${memory.length} items`);
    const inspection = inspectItems(projection.items, task);
    record(totals, elapsed, inspection);
    if (inspection.tokens > REAL_BUDGET && mandatoryExceeds(memory)) totals.forcedOverBudget += 1;
  };
  const replayed: { items: MemoryItem[]; ends: number[]; points: number[]; task: string | undefined }[] = [];

  for (const trajectory of trajectories) {
    const { chat } = trajectory;
    const task = firstUserText(chat);
    const points = requestPoints(chat);
    const { items, ends } = itemsWithBoundaries(chat);
    replayed.push({ items, ends, points, task });
    const natives = peerList.map((peer) => peer.toNative(chat));
    collectGarbage?.();
    // Before each model call every library projects the same history; the order rotates from call to call, so
    // no library is always the first to meet a new message (the tokenizer keeps an internal cache of its own).
    for (const [call, point] of points.entries()) {
      for (let turn = 0; turn < 4; turn++) {
        const who = (call + turn) % 4;
        if (who === 0) {
          await projectOurs(ours, items.slice(0, ends[point - 1]), task);
          continue;
        }
        const peer = peerList[who - 1] as PeerTrimmer<unknown>;
        const history = (natives[who - 1] as unknown[]).slice(0, point);
        collectYoungGarbage();
        const stop = startStopwatch();
        const output = await peer.trim(history, REAL_BUDGET);
        const elapsed = stop();
        record(peerTotals[who - 1] as ReplayTotals, elapsed, inspectPeer(peer, output, task));
      }
    }
    progress(`${trajectory.name}: ${chat.length} messages, ${points.length} model calls`);
  }
  // The same replay again: every token count is now cached, so this is the projection work alone.
  const oursAgain = newTotals('ours, same replay again (every count cached)');
  for (const { items, ends, points, task } of replayed) {
    for (const point of points) await projectOurs(oursAgain, items.slice(0, ends[point - 1]), task);
  }
  return [ours, oursAgain, ...peerTotals];
};

const printTrajectories = (trajectories: readonly Trajectory[], totals: readonly ReplayTotals[]): void => {
  const messages = trajectories.reduce((sum, t) => sum + t.chat.length, 0);
  const ours = totals[0] as ReplayTotals;
  console.log(
    `\n${trajectories.length} runs, ${formatInt(messages)} messages, ${formatInt(ours.requests)} model calls replayed; ` +
      `budget ${formatInt(REAL_BUDGET)} o200k tokens (ours: maxTokens ${REAL_BUDGET}, pinnedPrefixItems 2 = system prompt + task).\n`,
  );
  printTable(
    ['library', 'total wall ms', 'total cpu ms', 'wall ÷ ours', 'median ms/call', 'p95 ms/call', 'rejected: orphan', 'over budget', 'task dropped', 'invalid output', 'avg tokens sent'],
    totals.map((row) => [
      row.library,
      formatMs(row.totalMs),
      formatMs(row.totalCpuMs),
      row.library.startsWith('ours') ? '' : formatRatio(row.totalMs / ours.totalMs),
      formatMs(median(row.perRequestMs)),
      formatMs(percentile(row.perRequestMs, 0.95)),
      String(row.orphanRequests),
      row.forcedOverBudget > 0 ? `${row.overBudget} (${row.forcedOverBudget} allowed)` : String(row.overBudget),
      String(row.withoutTask),
      String(row.invalid),
      formatInt(Math.round(row.tokensSent / Math.max(1, row.requests))),
    ]),
    new Set([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]),
  );
  console.log(
    '\n  Each run is replayed as an agent would: before every model call (after the task and after each tool result)' +
      '\n  the memory so far is projected; memory grows by each new message and keeps its objects, so ours counts each' +
      '\n  new message once and finds the history\'s counts cached (the median per call is that steady state); the' +
      '\n  second ours row replays again with every count cached. LangChain\'s counter is cached by message id, the ai' +
      '\n  cut\'s by identity (both count each message once too); Mastra counts again on each call. Total ms includes' +
      '\n  each library\'s first count of every message. Libraries take turns before each call (rotating order), and a' +
      '\n  young-generation collection precedes each timed call, so no library pays for another\'s garbage.' +
      '\n  wall ÷ ours: total wall time divided by ours (first row); ms/call columns are wall-clock too.' +
      '\n  rejected: orphan = requests an OpenAI-compatible API rejects (a tool message without its assistant tool_calls' +
      '\n  before it, or tool_calls without their tool messages). task dropped = the first user message is not sent.' +
      '\n  invalid output = the result holds a non-message (LangChain trimMessages returns [undefined] when includeSystem' +
      '\n  is set and no human message fits). allowed = over the budget only because the newest message with its pair' +
      '\n  (and the pinned first item) alone exceed it, which the design permits.',
  );
};

// ------------------------------------------------------------------------------------------------ main

const main = async (): Promise<void> => {
  const started = performance.now();
  console.log('Projection benchmark (bench/projection.bench.ts)');
  console.log(
    `node ${process.version}, ${process.platform}/${process.arch}, ${cpus().length} cpu(s), ${loadAverage()}` +
      `${collectGarbage ? ', --expose-gc' : ''}`,
  );

  collectGarbage?.();
  const stopLoad = startStopwatch();
  o200k.count('load the o200k ranks');
  oursSetUp = stopLoad();
  console.log(
    `tokenizer start-up (ours, once per process): o200k ranks loaded in ${formatMs(oursSetUp.wall)} ms wall, ${formatMs(oursSetUp.cpu)} ms cpu; reported apart, not in the rows${quick ? '; --quick: a smaller run' : ''}`,
  );

  const peers = await loadPeers({ countChat: countChatMessage });
  console.log(`peers: ${[peers.langchain, peers.aiSdk, peers.mastra].map((peer) => peer.version).join(', ')}`);

  const chat = syntheticConversation(SYNTHETIC_MESSAGES, SEED);

  section(`1. Synthetic session: ${formatInt(SYNTHETIC_MESSAGES)} messages to ${formatInt(SYNTHETIC_BUDGET)} tokens`);
  const synthetic = await runSynthetic(chat, peers);
  printSynthetic(chat, synthetic, peers);

  section(`2. Prefix stability: ${PREFIX_TURNS} consecutive turns, maxItems ${PREFIX_MAX_ITEMS}`);
  const prefix = runPrefixStability(chat);
  printPrefixStability(prefix);

  section(`3. Real agent runs: turn-by-turn replay at ${formatInt(REAL_BUDGET)} tokens`);
  const allTrajectories = loadTrajectories();
  const trajectories = quick ? allTrajectories?.slice(0, QUICK_RUNS) : allTrajectories;
  let replay: ReplayTotals[] | undefined;
  if (!trajectories) {
    console.log(`skipped: ${trajectoriesDir} is absent (set CONTEXT_LEDGER_TRAJECTORIES to the swe-trajectories directory)`);
  } else {
    replay = await runTrajectories(trajectories, peers);
    printTrajectories(trajectories, replay);
  }

  section('Targets (issues #3 and #15)');
  const rowOf = (library: string, phase: Phase): Row | undefined =>
    synthetic.rows.find((row) => row.library === library && row.phase === phase);
  const ratio = (row: Row | undefined, ours: Row): number => (row ? wallRatio(row, ours) : NaN);
  const lcWarm = ratio(rowOf(peers.langchain.name, 'warm'), synthetic.oursExactWarm);
  const lcCold = ratio(rowOf(peers.langchain.name, 'cold'), synthetic.oursExactCold);
  const mastraWarm = ratio(rowOf(peers.mastra.name, 'warm'), synthetic.oursExactWarm);
  const mastraResumed = ratio(rowOf(peers.mastra.name, 'resumed'), synthetic.oursExactResumed);
  const mastraColdRow = rowOf(peers.mastra.name, 'cold');
  // The first projection of a history never seen, tokenizer start-up included on both sides.
  const firstOurs = oursSetUp.wall + median(synthetic.oursExactCold.timed.times);
  const firstMastra = mastraColdRow ? synthetic.mastraSetUp.wall + median(mastraColdRow.timed.times) : NaN;
  const mastraFirst = firstMastra / firstOurs;
  const mastraColdOnly = ratio(mastraColdRow, synthetic.oursExactCold);
  const oursExact = synthetic.rows.filter((row) => row.ours && row.counts === 'o200k exact');
  const oursReplay = replay?.[0];
  const syntheticOrphans = oursExact.reduce((sum, row) => sum + row.inspection.orphans, 0);
  const syntheticOver = oursExact.filter((row) => row.inspection.tokens > SYNTHETIC_BUDGET).length;
  const replayOrphans = oursReplay?.orphanRequests ?? 0;
  const replayOver = oursReplay ? oursReplay.overBudget - oursReplay.forcedOverBudget : 0;
  const prefixRow = prefix.find((row) => row.target);
  // Timing targets are set for the 10,000-message session (LangChain's quadratic cost, for one, barely shows at 2,000,
  // the --quick size): at another size they print as informative. Outputs, orphans, overruns and the prefix share are
  // judged at any size (they do not depend on timing).
  const timingSetAt = SYNTHETIC_MESSAGES === 10_000 ? undefined : '10,000 messages';
  const targets: [string, string, boolean | undefined, string | undefined][] = [
    [
      `first projection of a never-seen history >= ${TARGET_COLD_VS_MASTRA}x faster than Mastra TokenLimiter, tokenizer start-up included on both sides`,
      `${formatRatio(mastraFirst)} (${formatMs(firstMastra)} / ${formatMs(firstOurs)} ms)`,
      mastraFirst >= TARGET_COLD_VS_MASTRA,
      timingSetAt,
    ],
    ['  the same without start-up on either side (cold vs cold; informative)', formatRatio(mastraColdOnly), undefined, undefined],
    [
      `first projection >= ${TARGET_VS_LANGCHAIN}x faster than LangChain trimMessages, cold vs cold`,
      formatRatio(lcCold),
      lcCold >= TARGET_VS_LANGCHAIN,
      timingSetAt,
    ],
    [
      `first projection after a resume (openSession from a checkpoint) >= ${TARGET_RESUMED_VS_MASTRA}x faster than Mastra, set-up excluded`,
      formatRatio(mastraResumed),
      mastraResumed >= TARGET_RESUMED_VS_MASTRA,
      timingSetAt,
    ],
    [
      `warm projection >= ${TARGET_VS_LANGCHAIN}x faster than LangChain trimMessages (warm vs warm)`,
      formatRatio(lcWarm),
      lcWarm >= TARGET_VS_LANGCHAIN,
      timingSetAt,
    ],
    [
      `warm projection >= ${TARGET_WARM_VS_MASTRA}x faster than Mastra TokenLimiter`,
      formatRatio(mastraWarm),
      mastraWarm >= TARGET_WARM_VS_MASTRA,
      timingSetAt,
    ],
    [
      'outputs identical to the eager algorithm (items, fates, notes, token totals) for every budget in this bench',
      `${formatInt(identity.identical)} / ${formatInt(identity.checked)}${identity.firstDifference ? ` (first difference: ${identity.firstDifference})` : ''}`,
      identity.checked > 0 && identity.identical === identity.checked,
      undefined,
    ],
    [
      'first projection after a resume equal to the one before the save (items, fates, notes, tokens)',
      `${synthetic.sameAsBeforeSave.same} / ${synthetic.sameAsBeforeSave.checked}`,
      synthetic.sameAsBeforeSave.checked > 0 && synthetic.sameAsBeforeSave.same === synthetic.sameAsBeforeSave.checked,
      undefined,
    ],
    [
      'ours: no orphaned tool result (synthetic exact rows + every replayed call)',
      `${syntheticOrphans} + ${replayOrphans}${oursReplay ? '' : ' (runs skipped)'}`,
      syntheticOrphans === 0 && replayOrphans === 0,
      undefined,
    ],
    [
      'ours: no budget overrun with exact counts (beyond what the design allows)',
      `${syntheticOver} + ${replayOver}${oursReplay ? '' : ' (runs skipped)'}`,
      syntheticOver === 0 && replayOver === 0,
      undefined,
    ],
    [
      `prefix share >= ${TARGET_PREFIX_SHARE} with evictionStep 20 (maxItems ${PREFIX_MAX_ITEMS}, one message per turn)`,
      prefixRow ? prefixRow.share.toFixed(3) : '-',
      prefixRow !== undefined && prefixRow.share >= TARGET_PREFIX_SHARE,
      undefined,
    ],
  ];
  printTable(
    ['target', 'measured', 'result'],
    targets.map(([name, measured, pass, setAt]) => [name, measured, pass === undefined ? '' : verdictText(pass, setAt)]),
    new Set([1]),
  );
  const results: BenchResult[] = targets.map(([name, measured, pass, setAt]) =>
    pass === undefined ? { measure: name.trim(), value: measured, target: '', verdict: '' } : judged(name.trim(), measured, '', pass, setAt, loadNow()),
  );
  reportResults('projection', results);
  console.log(`\nfinished in ${((performance.now() - started) / 1000).toFixed(1)} s; ${loadAverage()}`);
};

await main();
