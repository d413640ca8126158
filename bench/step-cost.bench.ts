// The ledger's cost per step beside two floors (issue 28 item 3): a scripted ReAct session on LevelDB, one tool call per
// step, against a plain loop over a message array and the same loop with our projector, at 100, 1k and 10k items in
// memory; then replay and audit of the recorded steps, and the resume of a session against the items it holds.
//
//   node --expose-gc --import tsx bench/step-cost.bench.ts [--quick] [--steps 200] [--items 100,1000,10000] [--resume 1000,10000,100000]
//   node --expose-gc --import tsx bench/step-cost.bench.ts --before /path/to/other/checkout   # the same against another checkout, interleaved
//
// Every measurement runs in a fresh Node process (the bench starts itself with --child), so a size or a checkout
// never pays for another's garbage or JIT state; with --before each size runs once for this checkout and once for the
// other, one after the other, and the load average is printed beside each figure.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { argValue, positiveInt, quick, reportResults, type BenchResult } from './support.js';

const rootDir = dirname(dirname(fileURLToPath(import.meta.url)));

const listOf = (text: string | undefined, fallback: readonly number[], what: string): number[] =>
  text === undefined ? [...fallback] : text.split(',').map((part) => positiveInt(part, 0, what));

const ITEMS = listOf(argValue('--items'), quick ? [100, 1_000] : [100, 1_000, 10_000], 'items in memory');
const STEPS = positiveInt(argValue('--steps'), quick ? 60 : 200, 'timed steps');
const RESUME = listOf(argValue('--resume'), quick ? [1_000, 10_000] : [1_000, 10_000, 100_000], 'items of the resumed session');
const BEFORE = argValue('--before');
const BUDGET = { maxTokens: 4_000, pinnedPrefixItems: 1 } as const;
const SYSTEM_PROMPT = 'You read files.';
/** Targets of issue 28 item 3: ms per step over the projector-only floor. */
const STEP_TARGETS: Record<number, number> = { 1_000: 1, 10_000: 3 };
const REPLAY_TARGET_ITEMS = 10_000;
const REPLAY_TARGET_MS = 2;

const load = (): string => loadavg()[0]!.toFixed(1);
const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const ms = (value: number): string => (value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2));
const fmt = (n: number): string => n.toLocaleString('en-US');

// ---------------------------------------------------------------- the child: one measurement against the checkout at --src

/** What one child measured of the step loops (ms, medians per step) and of replay and audit (ms per recorded step). */
interface StepFigures {
  readonly items: number;
  readonly plain: number;
  readonly projector: number;
  readonly ledger: number;
  readonly replay: number;
  readonly audit: number;
  readonly load: string;
}

interface ResumeFigures {
  readonly items: number;
  readonly events: number;
  readonly resume: number;
  readonly open: number;
  readonly load: string;
}

/** The library's names the bench uses, loaded from the checkout under test (`src/index.ts`). */
interface Library {
  Agents: { react(options: Record<string, unknown>): { resumeSession(id: string): Promise<{ run(input: string): Promise<{ steps: number }> }> } };
  defineTool(tool: Record<string, unknown>): unknown;
  openLevelLog(dir: string): Promise<{ close(): Promise<void> }>;
  openSession(log: unknown, options: Record<string, unknown>): Promise<{ record(events: readonly unknown[]): Promise<unknown>; save(): Promise<unknown> }>;
  ScriptedModelClient: new (answers: readonly unknown[]) => { create(request: unknown): Promise<{ items: readonly Record<string, unknown>[] }> };
  DefaultContextProjector: new () => { project(items: readonly unknown[], budget: unknown): { items: readonly unknown[] } };
  replaySession(log: unknown, id: string): Promise<{ identical: boolean; steps: readonly unknown[] }>;
  auditSession(log: unknown, id: string): Promise<{ totals: { steps: number } }>;
  functionCall(callId: string, name: string, args: unknown): Record<string, unknown>;
  functionCallOutput(callId: string, output: string): Record<string, unknown>;
  userMessage(text: string): Record<string, unknown>;
  assistantMessage(text: string): Record<string, unknown>;
}

const fileText = (path: string): string => `// ${path}\n${'export const value = compute(input, options);\n'.repeat(8)}`;

const deepFreeze = <T>(value: T): T => {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
};

/** The scripted answers: a read_file call per step, then a final answer. */
const scriptOf = (lib: Library, steps: number, prefix: string): unknown[] => [
  ...Array.from({ length: steps - 1 }, (_, i) => ({ items: [lib.functionCall(`${prefix}${i}`, 'read_file', { path: `src/${prefix}${i}.ts` })] })),
  { outputText: 'done', items: [lib.assistantMessage('done')] },
];

/** The items of a memory of about `items` items: a user turn, then read_file calls with their results. */
const pastItems = (lib: Library, items: number): Record<string, unknown>[] => {
  const out = [lib.userMessage('Read the files.')];
  for (let i = 0; out.length + 2 <= items; i++) {
    out.push(lib.functionCall(`past_${i}`, 'read_file', { path: `src/past_${i}.ts` }), lib.functionCallOutput(`past_${i}`, fileText(`src/past_${i}.ts`)));
  }
  return out;
};

/** The floors: the same scripted model and tool over a message array, with the projector (or without it). */
const floorLoop = async (lib: Library, items: number, steps: number, withProjector: boolean): Promise<number[]> => {
  const messages: unknown[] = pastItems(lib, items).map(deepFreeze);
  messages.push(deepFreeze(lib.userMessage('Read the files.')));
  const client = new lib.ScriptedModelClient(scriptOf(lib, steps, 'call_'));
  const projector = new lib.DefaultContextProjector();
  const tools = [{ type: 'function', name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } }];
  const durations: number[] = [];
  for (let step = 0; step < steps; step++) {
    const started = performance.now();
    const sent = withProjector ? projector.project(messages, BUDGET).items : messages;
    const answer = await client.create({ model: 'scripted', systemPrompt: SYSTEM_PROMPT, items: sent, tools });
    for (const item of answer.items) {
      messages.push(deepFreeze(item));
      if (item['type'] === 'function_call') {
        const { path } = JSON.parse(item['arguments'] as string) as { path: string };
        messages.push(deepFreeze(lib.functionCallOutput(item['call_id'] as string, fileText(path))));
      }
    }
    durations.push(performance.now() - started);
  }
  return durations;
};

/** A LevelDB session whose memory holds about `items` items (recorded in batches, checkpoints as the agent takes them). */
const buildSession = async (lib: Library, dir: string, id: string, items: number): Promise<number> => {
  const log = await lib.openLevelLog(dir);
  const session = await lib.openSession(log, { id, checkpointEvery: 10_000 });
  const past = pastItems(lib, items);
  const events: unknown[] = [{ type: 'user.input', items: [past[0]] }];
  for (let i = 1; i < past.length; i += 2) {
    const call = past[i]!;
    events.push({ type: 'model.output', items: [call] }, { type: 'tool.result', callId: call['call_id'], output: (past[i + 1] as { output: string }).output, isError: false, name: 'read_file' });
  }
  for (let i = 0; i < events.length; i += 1_000) await session.record(events.slice(i, i + 1_000));
  await log.close();
  return events.length + 1;
};

const agentOf = (lib: Library, log: unknown, answers: readonly unknown[], onEvent?: (notification: { type: string; event?: { type: string } }) => void) =>
  lib.Agents.react({
    modelClient: new lib.ScriptedModelClient(answers),
    model: 'scripted',
    systemPrompt: SYSTEM_PROMPT,
    tools: [lib.defineTool({ name: 'read_file', description: 'Read a file', parameters: zodPath, execute: ({ path }: { path: string }) => fileText(path) })],
    log,
    contextProjector: new lib.DefaultContextProjector(),
    contextBudget: BUDGET,
    maxSteps: 1_000_000,
    ...(onEvent ? { onEvent } : {}),
  });

let zodPath: unknown;

/** Ledger: resume the session, run `steps` steps; each step from its `step.started` to the next (the last: to `run.finished`). */
const ledgerSteps = async (lib: Library, dir: string, id: string, steps: number): Promise<{ durations: number[]; replay: number; audit: number }> => {
  const log = await lib.openLevelLog(dir);
  const marks: number[] = [];
  const agent = agentOf(lib, log, scriptOf(lib, steps, 'call_'), (notification) => {
    const type = notification.event?.type;
    if (type === 'step.started' || type === 'run.finished') marks.push(performance.now());
  });
  const session = await agent.resumeSession(id);
  const result = await session.run('Read the files.');
  if (result.steps !== steps) throw new Error(`the ledger ran ${result.steps} steps, expected ${steps}`);
  const durations = marks.slice(1).map((mark, i) => mark - marks[i]!);
  let started = performance.now();
  const replayed = await lib.replaySession(log, id);
  const replay = performance.now() - started;
  if (!replayed.identical) throw new Error('the replay of the recorded steps diverged');
  started = performance.now();
  const audit = await lib.auditSession(log, id);
  const audited = performance.now() - started;
  if (audit.totals.steps !== steps) throw new Error(`the audit saw ${audit.totals.steps} steps, expected ${steps}`);
  await log.close();
  return { durations, replay: replay / steps, audit: audited / steps };
};

const loadLibrary = async (src: string): Promise<Library> => {
  const lib = (await import(join(src, 'src/index.ts'))) as Library;
  const { z } = (await import('zod')) as typeof import('zod');
  zodPath = z.object({ path: z.string() });
  return lib;
};

const childSteps = async (src: string, items: number, steps: number): Promise<StepFigures> => {
  const lib = await loadLibrary(src);
  const dir = await mkdtemp(join(tmpdir(), 'step-cost-'));
  try {
    // Untimed first, at a small size: every loop once, so the JIT has seen the code before the timed runs.
    await floorLoop(lib, 100, 20, false);
    await floorLoop(lib, 100, 20, true);
    await buildSession(lib, join(dir, 'warm'), 'warm', 100);
    await ledgerSteps(lib, join(dir, 'warm'), 'warm', 20);
    globalThis.gc?.();
    const plain = median(await floorLoop(lib, items, steps, false));
    globalThis.gc?.();
    const projector = median(await floorLoop(lib, items, steps, true));
    await buildSession(lib, join(dir, 'timed'), 'timed', items);
    globalThis.gc?.();
    const ledger = await ledgerSteps(lib, join(dir, 'timed'), 'timed', steps);
    return { items, plain, projector, ledger: median(ledger.durations), replay: ledger.replay, audit: ledger.audit, load: load() };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};

const childResume = async (src: string, items: number): Promise<ResumeFigures> => {
  const lib = await loadLibrary(src);
  const dir = await mkdtemp(join(tmpdir(), 'step-cost-resume-'));
  try {
    const events = await buildSession(lib, dir, 'resumed', items);
    const log = await lib.openLevelLog(dir);
    const agent = agentOf(lib, log, []);
    await agent.resumeSession('resumed'); // untimed: the JIT
    const resumes: number[] = [];
    const opens: number[] = [];
    for (let run = 0; run < 3; run++) {
      globalThis.gc?.();
      let started = performance.now();
      await agent.resumeSession('resumed');
      resumes.push(performance.now() - started);
      globalThis.gc?.();
      started = performance.now();
      await lib.openSession(log, { id: 'resumed', checkpointEvery: 10_000 });
      opens.push(performance.now() - started);
    }
    await log.close();
    return { items, events, resume: median(resumes), open: median(opens), load: load() };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};

// ---------------------------------------------------------------- the parent: children, tables, verdicts

const runChild = (args: readonly string[]): Promise<unknown> =>
  new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url), '--child', ...args], {
      cwd: rootDir,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = out.trim().split('\n').at(-1) ?? '';
      if (code !== 0 || !line.startsWith('{')) reject(new Error(`child ${args.join(' ')} exited with ${code}: ${out}`));
      else resolveRun(JSON.parse(line));
    });
  });

const printTable = (headers: readonly string[], rows: readonly (readonly string[])[]): void => {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(line(headers));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows) console.log(line(row));
};

const main = async (): Promise<void> => {
  const checkouts: Array<{ name: string; src: string }> = [{ name: 'this', src: rootDir }];
  if (BEFORE !== undefined) checkouts.push({ name: 'before', src: resolve(BEFORE) });
  console.log(`step cost: a scripted ReAct session on LevelDB, one read_file call per step, ${fmt(STEPS)} timed steps per size,`);
  console.log(`DefaultContextProjector, budget ${JSON.stringify(BUDGET)}; floors: the same model and tool over a message array,`);
  console.log(`with the projector and without it. Medians per step; each size in a fresh process. Node ${process.version}, load ${load()} at the start.`);
  const steps: Array<StepFigures & { checkout: string }> = [];
  for (const items of ITEMS) {
    for (const checkout of checkouts) {
      const figures = (await runChild(['steps', '--src', checkout.src, '--items', String(items), '--steps', String(STEPS)])) as StepFigures;
      steps.push({ ...figures, checkout: checkout.name });
      console.log(`  (${checkout.name}: ${fmt(items)} items measured, load ${figures.load})`);
    }
  }
  console.log('');
  printTable(
    ['checkout', 'items', 'plain loop', 'projector only', 'ledger step', 'over floor', 'replay/step', 'over floor', 'audit/step', 'load'],
    steps.map((f) => [f.checkout, fmt(f.items), ms(f.plain), ms(f.projector), ms(f.ledger), ms(f.ledger - f.projector), ms(f.replay), ms(f.replay - f.projector), ms(f.audit), f.load]),
  );
  console.log('(ms; "over floor" is the figure minus the projector-only loop of the same process)');

  const resumes: Array<ResumeFigures & { checkout: string }> = [];
  for (const items of RESUME) {
    for (const checkout of checkouts) {
      const figures = (await runChild(['resume', '--src', checkout.src, '--items', String(items)])) as ResumeFigures;
      resumes.push({ ...figures, checkout: checkout.name });
    }
  }
  console.log('\nresume of a session against the items in its memory (checkpoint every 10,000 events, medians of 3):');
  printTable(
    ['checkout', 'items', 'events', 'agent.resumeSession', 'openSession', 'load'],
    resumes.map((f) => [f.checkout, fmt(f.items), fmt(f.events), `${ms(f.resume)} ms`, `${ms(f.open)} ms`, f.load]),
  );

  const results: BenchResult[] = [];
  for (const f of steps.filter((s) => s.checkout === 'this')) {
    const target = STEP_TARGETS[f.items];
    const over = f.ledger - f.projector;
    results.push({
      measure: `step over the projector floor, ${fmt(f.items)} items (load ${f.load})`,
      value: `${ms(over)} ms`,
      target: target !== undefined ? `<= ${target} ms` : '',
      verdict: target === undefined ? '' : over <= target ? 'PASS' : 'MISS',
    });
    if (f.items === REPLAY_TARGET_ITEMS) {
      for (const [what, value] of [['replay', f.replay - f.projector], ['audit', f.audit - f.projector]] as const) {
        results.push({ measure: `${what} per step over the projector floor, ${fmt(f.items)} items (load ${f.load})`, value: `${ms(value)} ms`, target: `<= ${REPLAY_TARGET_MS} ms`, verdict: value <= REPLAY_TARGET_MS ? 'PASS' : 'MISS' });
      }
    }
  }
  for (const f of resumes.filter((r) => r.checkout === 'this')) {
    results.push({ measure: `agent.resumeSession, ${fmt(f.items)} items (load ${f.load})`, value: `${ms(f.resume)} ms`, target: '', verdict: '' });
  }
  console.log('');
  for (const r of results) console.log(`${r.measure}: ${r.value}${r.target ? ` (target ${r.target}: ${r.verdict})` : ''}`);
  reportResults('step-cost', results);
};

const childArgs = process.argv.slice(2);
if (childArgs[0] === '--child') {
  const src = argValue('--src') ?? rootDir;
  const items = positiveInt(argValue('--items'), 1_000, 'items');
  const figures = childArgs[1] === 'resume' ? await childResume(src, items) : await childSteps(src, items, positiveInt(argValue('--steps'), STEPS, 'steps'));
  console.log(JSON.stringify(figures));
} else {
  await main();
}
