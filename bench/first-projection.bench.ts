// The first projection of a history never seen, each measured in a fresh Node process (never in a warmed one):
// ours (DefaultContextProjector, o200k exact) against Mastra's TokenLimiter and a plain exact reverse scan with
// gpt-tokenizer; and the import time of the package's entries, each in a fresh process.
//
//   npm run bench -- first-projection                      # 10,000 messages, 7 rounds
//   node --expose-gc --import tsx bench/first-projection.bench.ts --messages 2000 --rounds 3
//
// The parent spawns one child per contender and round (the order rotates from round to round); each child loads
// its library, starts its tokenizer (timed apart: set-up), builds its input untimed, collects garbage, and times
// one call: the first projection of the process. Issue #28's targets: ours at least 1.5x faster than Mastra, and at
// most 2x the reverse scan, both cold against cold (set-up apart), outputs identical to the eager algorithm.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
import { loadPeers } from './peers/ensure.js';
import type { ChatMessage } from './peers/ensure.js';
import { syntheticConversation } from './corpus.js';
import { argValue, judged, loadLabel, loadRange, positiveInt, quick, reportResults } from './support.js';
import type { BenchResult } from './support.js';

const benchFile = fileURLToPath(import.meta.url);
const rootDir = dirname(dirname(benchFile));
const SEED = 20_260_101;
const FULL_MESSAGES = 10_000;
const MESSAGES = positiveInt(argValue('--messages'), FULL_MESSAGES, 'message count');
// --quick: the same 10,000 messages (the targets' size), 2 rounds, no character-limit row, 3 imports of each entry.
const ROUNDS = positiveInt(argValue('--rounds'), quick ? 2 : 7, 'round count');
const IMPORT_RUNS = quick ? 3 : 5;
const BUDGET = 16_000;
const TARGET_VS_MASTRA = 1.5;
const TARGET_VS_SCAN = 2;

type ContenderName = 'ours' | 'ours-chars' | 'scan' | 'mastra';

/** What a child reports. */
interface ChildResult {
  readonly contender: ContenderName;
  /** Loading the library's modules (through tsx: transpiling included; informative). */
  readonly importMs: number;
  /** Tokenizer start-up: ours and the scan load gpt-tokenizer's o200k ranks, Mastra builds its first TokenLimiter. */
  readonly setUpMs: number;
  /** The first call of the process: wall and CPU milliseconds. */
  readonly firstMs: number;
  readonly firstCpuMs: number;
  /** The first call's main-thread CPU milliseconds (NaN where it cannot be read). */
  readonly firstMainMs: number;
  /** A second call in the same process on fresh objects (JIT warm, nothing cached): informative. */
  readonly secondMs: number;
  /** Output: messages or items sent and their o200k tokens as counted by the contender. */
  readonly sent: number;
  readonly tokens: number;
  /** Ours: the same items, fates, notes and token totals as the eager reference (checked after timing). */
  readonly identical?: boolean;
}

// ------------------------------------------------------------------------------------------------ child

const cpuMs = (from: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / 1000;
};

const gc = (): void => (globalThis as { gc?: () => void }).gc?.();

// A shared word to wait on for a few microseconds: the wait makes the kernel bring the thread's CPU time up to date.
const waitWord = new Int32Array(new SharedArrayBuffer(4));

/**
 * CPU milliseconds the main thread has run (Linux: /proc/self/task/<pid>/schedstat), NaN elsewhere. Unlike wall time
 * it leaves out waiting for a core on a loaded machine, and unlike process CPU time the compiler's and collector's
 * helper threads, which run beside the main thread on an idle machine. The kernel updates a running thread's total
 * only at a scheduler tick or a switch (every few milliseconds), so it is read after a wait of a few microseconds
 * (Atomics.wait): the switch brings it up to date, to the microsecond rather than the tick.
 */
const mainThreadMs = (): number => {
  try {
    Atomics.wait(waitWord, 0, 0, 0.01);
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return NaN;
  }
};

/**
 * A plain reverse scan over Chat Completions messages, what a caller without a library writes: from the newest
 * message back, count each exactly (gpt-tokenizer o200k: content, each tool call's name and arguments, plus 4 per
 * message) and stop at the first that does not fit; the system message is kept in front. Pairs are not checked.
 */
const reverseScan = (chat: readonly ChatMessage[], budget: number, count: (text: string) => number): { kept: ChatMessage[]; tokens: number } => {
  const system = chat[0]?.role === 'system' ? chat[0] : undefined;
  const costOf = (message: ChatMessage): number => {
    let tokens = 4;
    if (message.content) tokens += count(message.content);
    if (message.reasoning_content) tokens += count(message.reasoning_content);
    for (const call of message.tool_calls ?? []) tokens += count(call.function.name) + count(call.function.arguments);
    return tokens;
  };
  let used = system ? costOf(system) : 0;
  let start = chat.length;
  const stop = system ? 1 : 0;
  while (start > stop) {
    const cost = costOf(chat[start - 1] as ChatMessage);
    if (used + cost > budget) break;
    used += cost;
    start -= 1;
  }
  return { kept: system ? [system, ...chat.slice(start)] : chat.slice(start), tokens: used };
};

/**
 * The history as a caller holds it: parsed from JSON (an API's answer, a file, a database row), so every contender reads
 * plain strings. The corpus builder cuts its texts out of larger strings, and V8 keeps such a cut as a view of the
 * larger one (a sliced string), which reads more slowly than a plain one; before this copy the scan got plain strings
 * (a structured clone) and the others the cuts.
 */
const receivedHistory = (chat: readonly ChatMessage[]): ChatMessage[] => JSON.parse(JSON.stringify(chat)) as ChatMessage[];

const runChild = async (contender: ContenderName): Promise<ChildResult> => {
  const chat = syntheticConversation(MESSAGES, SEED);
  if (contender === 'ours' || contender === 'ours-chars') {
    // The built package when the parent built it (what a user loads), else the sources through tsx.
    const dist = argValue('--dist');
    const importStart = performance.now();
    const context = (dist ? await import(pathToFileURL(join(dist, 'context', 'index.js')).href) : await import('../src/context/entry.js')) as typeof import('../src/context/entry.js');
    const importMs = performance.now() - importStart;
    const { fromChatCompletions } = (dist ? await import(pathToFileURL(join(dist, 'index.js')).href) : await import('../src/index.js')) as typeof import('../src/index.js');
    const { deepFreeze } = (dist ? await import(pathToFileURL(join(dist, 'testing', 'index.js')).href) : await import('../src/testing/index.js')) as typeof import('../src/testing/index.js');
    const setUpStart = performance.now();
    const o200k = context.openAiTokenizer('o200k_base');
    o200k.count('load the o200k ranks');
    const setUpMs = performance.now() - setUpStart;
    const projector = new context.DefaultContextProjector({ tokenizer: o200k });
    // ours-chars: a character limit the token limit binds first, so every item's characters are measured.
    const budget = { maxTokens: BUDGET, pinnedPrefixItems: 1, ...(contender === 'ours-chars' ? { maxApproxChars: 10_000_000 } : {}) };
    const items = deepFreeze(fromChatCompletions(receivedHistory(chat)));
    const again = deepFreeze(fromChatCompletions(receivedHistory(chat)));
    gc();
    const main = mainThreadMs();
    const cpu = process.cpuUsage();
    const started = performance.now();
    const projection = projector.project(items, budget);
    const firstMs = performance.now() - started;
    const firstCpuMs = cpuMs(cpu);
    const firstMainMs = mainThreadMs() - main;
    const startedAgain = performance.now();
    projector.project(again, budget);
    const secondMs = performance.now() - startedAgain;
    // Checked after timing: the report's character totals too (read now, so lazily computed ones are measured here).
    const { referenceProjectContext } = await import('../test/support/reference-projection.js');
    const reference = referenceProjectContext(deepFreeze(fromChatCompletions(chat)), budget, {
      tokenizer: { name: o200k.name, count: (text: string) => o200k.count(text) },
    });
    const { sourceTokens, ...report } = projection.report;
    const { sourceTokens: referenceSourceTokens, ...referenceReport } = reference.report;
    const identical =
      projection.items.length === reference.items.length &&
      projection.items.every((item, i) => JSON.stringify(item) === JSON.stringify(reference.items[i])) &&
      JSON.stringify({ ...report, fates: [...report.fates] }) === JSON.stringify(referenceReport) &&
      (sourceTokens === undefined || sourceTokens === referenceSourceTokens);
    return { contender, importMs, setUpMs, firstMs, firstCpuMs, firstMainMs, secondMs, sent: projection.items.length, tokens: projection.report.projectedTokens ?? NaN, identical };
  }
  if (contender === 'scan') {
    const require = createRequire(import.meta.url);
    const importStart = performance.now();
    const encoding = require('gpt-tokenizer/cjs/encoding/o200k_base') as { countTokens: (text: string, options?: object) => number };
    const importMs = performance.now() - importStart;
    const plain = { disallowedSpecial: new Set<string>() };
    const count = (text: string): number => encoding.countTokens(text, plain);
    const setUpStart = performance.now();
    count('load the o200k ranks');
    const setUpMs = performance.now() - setUpStart;
    const input = receivedHistory(chat);
    const again = receivedHistory(chat);
    gc();
    const main = mainThreadMs();
    const cpu = process.cpuUsage();
    const started = performance.now();
    const output = reverseScan(input, BUDGET, count);
    const firstMs = performance.now() - started;
    const firstCpuMs = cpuMs(cpu);
    const firstMainMs = mainThreadMs() - main;
    const startedAgain = performance.now();
    reverseScan(again, BUDGET, count);
    const secondMs = performance.now() - startedAgain;
    return { contender, importMs, setUpMs, firstMs, firstCpuMs, firstMainMs, secondMs, sent: output.kept.length, tokens: output.tokens };
  }
  const importStart = performance.now();
  const peers = await loadPeers({ countChat: () => 0 });
  const importMs = performance.now() - importStart;
  const mastra = peers.mastra;
  const setUpStart = performance.now();
  await mastra.trim([], BUDGET);
  const setUpMs = performance.now() - setUpStart;
  const input = mastra.toNative(receivedHistory(chat));
  const again = mastra.toNative(receivedHistory(chat));
  gc();
  const main = mainThreadMs();
  const cpu = process.cpuUsage();
  const started = performance.now();
  const output = await mastra.trim(input, BUDGET);
  const firstMs = performance.now() - started;
  const firstCpuMs = cpuMs(cpu);
  const firstMainMs = mainThreadMs() - main;
  const startedAgain = performance.now();
  await mastra.trim(again, BUDGET);
  const secondMs = performance.now() - startedAgain;
  return { contender, importMs, setUpMs, firstMs, firstCpuMs, firstMainMs, secondMs, sent: output.length, tokens: NaN };
};

// ------------------------------------------------------------------------------------------------ parent

const spawnChild = (args: readonly string[]): Promise<string> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', ...args], { cwd: rootDir, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
    });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`child ${args.join(' ')} exited with ${code}`))));
  });

const runInFreshProcess = async (contender: ContenderName, dist: string | undefined): Promise<ChildResult> => {
  const out = await spawnChild([benchFile, '--child', contender, '--messages', String(MESSAGES), ...(dist && contender.startsWith('ours') ? ['--dist', dist] : [])]);
  const line = out.trim().split('\n').at(-1) ?? '';
  return JSON.parse(line) as ChildResult;
};

const median = (values: readonly number[]): number => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};
const fmt = (ms: number): string => (!Number.isFinite(ms) ? '-' : ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2));
const fmtRange = (values: readonly number[]): string => `${fmt(Math.min(...values))}–${fmt(Math.max(...values))}`;

const printTable = (header: readonly string[], rows: readonly (readonly string[])[]): void => {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]): string => cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0))).join('  ').trimEnd();
  console.log(line(header));
  console.log(widths.map((width) => '-'.repeat(width)).join('  '));
  for (const row of rows) console.log(line(row));
};

/** The package entries whose import time is measured (built JavaScript, as a user loads it). */
const ENTRIES = [
  ['context-ledger', 'index.js'],
  ['context-ledger/context', 'context/index.js'],
] as const;
const HEAVY = ['zod', 'ajv', 'immer', 'fp-ts', 'level', 'classic-level', 'abstract-level', 'memory-level', 'minisearch'];

/**
 * Builds the package's JavaScript (tsup, no declarations) into a scratch directory inside the repository, so its
 * imports resolve against node_modules. Undefined (with the reason printed) when the build fails.
 */
const buildDist = (): string | undefined => {
  const outDir = join(rootDir, '.tmp', 'bench-first-projection-dist');
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const tsup = join(rootDir, 'node_modules', '.bin', 'tsup');
  const result = spawnSync(tsup, ['--out-dir', outDir, '--silent'], { cwd: rootDir, encoding: 'utf8' });
  if (result.status !== 0 || !existsSync(join(outDir, 'index.js'))) {
    console.log(`import times skipped: tsup failed (${result.status}): ${(result.stderr || result.stdout).trim().slice(0, 400)}`);
    return undefined;
  }
  return outDir;
};

/** Imports one built entry in a fresh process: milliseconds, and which heavy dependencies it loaded. */
const importInFreshProcess = (file: string): { ms: number; loaded: string[] } => {
  const url = pathToFileURL(file).href;
  // A resolve hook lists the packages loaded (a second process, so the hook's own cost is not in the time).
  const timing = spawnSync(process.execPath, ['--input-type=module', '-e', `const t = performance.now(); await import(${JSON.stringify(url)}); console.log(performance.now() - t);`], {
    cwd: rootDir,
    encoding: 'utf8',
  });
  const hook = `data:text/javascript,${encodeURIComponent(
    'export async function resolve(s, c, next) { const r = await next(s, c); if (/node_modules/.test(r.url)) process.stderr.write("LOADED " + r.url + "\\n"); return r; }',
  )}`;
  const listing = spawnSync(
    process.execPath,
    ['--input-type=module', '-e', `import { register } from 'node:module'; register(${JSON.stringify(hook)}); await import(${JSON.stringify(url)});`],
    { cwd: rootDir, encoding: 'utf8' },
  );
  const loaded = new Set<string>();
  for (const line of listing.stderr.split('\n')) {
    const match = /LOADED .*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(line);
    if (match?.[1] && HEAVY.includes(match[1])) loaded.add(match[1]);
  }
  return { ms: Number(timing.stdout.trim()), loaded: [...loaded].sort() };
};

const main = async (): Promise<void> => {
  const started = performance.now();
  console.log('First projection in fresh processes (bench/first-projection.bench.ts)');
  console.log(`node ${process.version}, ${cpus().length} cpu(s), ${loadLabel()}; ${MESSAGES.toLocaleString('en-US')} messages, budget ${BUDGET.toLocaleString('en-US')} o200k tokens, ${ROUNDS} rounds`);
  // Installs the peers once here, not in a timed child; builds the package once (ours runs from it, as a user's would).
  await loadPeers({ countChat: () => 0 });
  const dist = buildDist();
  console.log(dist ? `ours: the built package (tsup) in ${dist}` : 'ours: the sources through tsx (the build failed)');
  const contenders: ContenderName[] = quick ? ['ours', 'scan', 'mastra'] : ['ours', 'scan', 'mastra', 'ours-chars'];
  const results = new Map<ContenderName, ChildResult[]>(contenders.map((name) => [name, []]));
  const loads: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order = contenders.map((_, k) => contenders[(k + round) % contenders.length] as ContenderName);
    for (const contender of order) {
      loads.push(loadavg()[0] as number);
      results.get(contender)?.push(await runInFreshProcess(contender, dist));
    }
    const line = contenders
      .map((name) => {
        const last = results.get(name)?.at(-1);
        return `${name} ${fmt(last?.firstMs ?? NaN)} ms (main thread ${fmt(last?.firstMainMs ?? NaN)})`;
      })
      .join(', ');
    console.log(`  round ${round + 1}/${ROUNDS} (load ${(loadavg()[0] as number).toFixed(1)}): ${line}`);
  }
  const of = (name: ContenderName): ChildResult[] => results.get(name) ?? [];
  const labels: Record<ContenderName, string> = {
    ours: 'ours DefaultContextProjector, o200k exact',
    'ours-chars': 'ours, with a character limit too (every item measured)',
    scan: 'exact reverse scan, gpt-tokenizer o200k',
    mastra: 'Mastra TokenLimiter (js-tiktoken o200k)',
  };
  console.log('');
  printTable(
    ['contender', 'first call: main-thread cpu ms', 'min–max', 'wall ms', 'min–max', 'process cpu ms', 'second call wall ms', 'set-up ms', 'import ms', 'sent', 'tokens'],
    contenders.map((name) => {
      const runs = of(name);
      return [
        labels[name],
        fmt(median(runs.map((r) => r.firstMainMs))),
        fmtRange(runs.map((r) => r.firstMainMs)),
        fmt(median(runs.map((r) => r.firstMs))),
        fmtRange(runs.map((r) => r.firstMs)),
        fmt(median(runs.map((r) => r.firstCpuMs))),
        fmt(median(runs.map((r) => r.secondMs))),
        fmt(median(runs.map((r) => r.setUpMs))),
        fmt(median(runs.map((r) => r.importMs))),
        String(runs[0]?.sent ?? '-'),
        Number.isFinite(runs[0]?.tokens) ? String(runs[0]?.tokens) : '-',
      ];
    }),
  );
  console.log(
    '\n  Each figure comes from its own process: the library loaded, its tokenizer started (set-up, apart), the input' +
      '\n  built untimed, a full collection, then one call timed: the first projection the process makes. "second call"' +
      '\n  is a second call in the same process on fresh objects (JIT warm, nothing cached). Contenders take turns in' +
      '\n  each round (rotating order), so they share the machine\'s load. Mastra tokenizes the newest messages until the' +
      '\n  budget is full and is not exact by our count; the reverse scan counts exactly but does not keep tool calls with' +
      '\n  their results; ours counts exactly, keeps pairs, and reports a fate for every item. The targets are judged on' +
      '\n  the main thread\'s CPU time of the call (Linux; wall time elsewhere): on a loaded machine wall time mostly' +
      '\n  measures the wait for a core, and on an idle one the two agree (the JIT compiler and the collector\'s helpers' +
      '\n  run on the other core). Wall-time ratios are printed beside, for reading on a quiet machine.',
  );

  const onMainThread = of('ours').every((r) => Number.isFinite(r.firstMainMs));
  const timeOf = (name: ContenderName): number => median(of(name).map((r) => (onMainThread ? r.firstMainMs : r.firstMs)));
  const wallOf = (name: ContenderName): number => median(of(name).map((r) => r.firstMs));
  const vsMastra = timeOf('mastra') / timeOf('ours');
  const vsScan = timeOf('ours') / timeOf('scan');
  const basis = onMainThread ? 'main-thread cpu' : 'wall';
  const identical = of('ours')
    .concat(of('ours-chars'))
    .every((r) => r.identical === true);
  const load = loadRange(loads);
  const setAt = MESSAGES === FULL_MESSAGES ? undefined : `${FULL_MESSAGES.toLocaleString('en-US')} messages`;
  const figures: BenchResult[] = [
    judged(`first projection, fresh process, ${basis}: Mastra ÷ ours`, `${vsMastra.toFixed(2)}x`, `>= ${TARGET_VS_MASTRA}x`, vsMastra >= TARGET_VS_MASTRA, setAt, load),
    judged(`first projection, fresh process, ${basis}: ours ÷ exact reverse scan`, `${vsScan.toFixed(2)}x`, `<= ${TARGET_VS_SCAN}x`, vsScan <= TARGET_VS_SCAN, setAt, load),
    ...(onMainThread
      ? [
          {
            measure: '  the same in wall time: Mastra ÷ ours, ours ÷ scan',
            value: `${(wallOf('mastra') / wallOf('ours')).toFixed(2)}x, ${(wallOf('ours') / wallOf('scan')).toFixed(2)}x`,
            target: '',
            verdict: '' as const,
            load,
          },
        ]
      : []),
    judged(`first projection identical to the eager algorithm (${quick ? 'no character limit' : 'with and without a character limit'})`, `${of('ours').length + of('ours-chars').length} runs`, 'all', identical, undefined, load),
  ];

  if (dist) {
    console.log(`\nImport time of each entry (built JavaScript, fresh process each, median of ${IMPORT_RUNS}):`);
    const rows: string[][] = [];
    for (const [name, file] of ENTRIES) {
      const times: number[] = [];
      let loaded: string[] = [];
      for (let k = 0; k < IMPORT_RUNS; k++) {
        const run = importInFreshProcess(join(dist, file));
        times.push(run.ms);
        loaded = run.loaded;
      }
      rows.push([name, fmt(median(times)), fmtRange(times), loaded.length > 0 ? loaded.join(', ') : 'none of them']);
      figures.push({ measure: `import ${name} (fresh process)`, value: `${fmt(median(times))} ms`, target: '', verdict: '' });
      if (name === 'context-ledger/context') {
        figures.push({ measure: `${name} loads none of ${HEAVY.join(', ')}`, value: loaded.length === 0 ? 'none' : loaded.join(', '), target: 'none', verdict: loaded.length === 0 ? 'PASS' : 'MISS' });
      }
    }
    printTable(['entry', 'import ms (median)', 'min–max', `loads (of ${HEAVY.join(', ')})`], rows);
    rmSync(dist, { recursive: true, force: true });
  }

  console.log('\nTargets (issue #28, item 1)');
  printTable(
    ['measure', 'value', 'load', 'target', ''],
    figures.map((f) => [f.measure, f.value, f.load ?? '', f.target, f.verdict]),
  );
  reportResults('first-projection', figures);
  console.log(`\nfinished in ${((performance.now() - started) / 1000).toFixed(1)} s; ${loadLabel()}`);
};

const child = argValue('--child');
if (child !== undefined) {
  if (!['ours', 'ours-chars', 'scan', 'mastra'].includes(child)) throw new Error(`unknown contender ${child}`);
  const result = await runChild(child as ContenderName);
  process.stdout.write(`\n${JSON.stringify(result)}\n`);
} else {
  await main();
}
