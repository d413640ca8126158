// The demo's scripted long-horizon coding-agent session: reads, failing then passing tests, an approval, edits.
import { z } from 'zod';
import { StructuredSummaryCompactPolicy } from '../../compact/index.js';
import { TypeAwareContextProjector, openAiTokenizer, type ContextBudget } from '../../context/index.js';
import { assistantMessage, functionCall } from '../../items/index.js';
import type { SessionEventLog } from '../../log/index.js';
import { ScriptedModelClient, type ModelResult } from '../../model/index.js';
import { Agents, ToolFailedError, defineTool, type Agent } from '../../runtime/index.js';

/** The demo's budget: what each prompt may hold. */
export const DEMO_BUDGET: ContextBudget = { maxTokens: 6_000, maxRecentToolResults: 8, evictionStep: 4, pinnedPrefixItems: 1 };
const KEEP = 40;
const COMPACT_ABOVE = 90;

const FILES: Readonly<Record<string, string>> = Object.fromEntries(
  ['date', 'duration', 'format', 'locale', 'parse', 'timezone', 'calendar', 'interval'].flatMap((name) => [
    [
      `src/${name}.ts`,
      `// ${name}: part of a small date library\n` +
        Array.from({ length: 24 }, (_, i) => `export const ${name}Helper${i} = (value: string): string => value.trim().padStart(${i + 2}, '0');`).join('\n'),
    ],
    [
      `test/${name}.test.ts`,
      `import { describe, expect, it } from 'vitest';\nimport * as m from '../src/${name}.js';\n` +
        Array.from({ length: 10 }, (_, i) => `it('${name} case ${i}', () => expect(m.${name}Helper${i}(' 7 ')).toBe('${'0'.repeat(i + 1)}7'));`).join('\n'),
    ],
  ]),
);

/** The tasks a user gives the agent, one run each. */
const TASKS = [
  { text: 'The date parser drops the timezone offset; fix it.', module: 'date' },
  { text: 'Durations over 24 hours print wrongly; fix the formatter.', module: 'duration' },
  { text: 'Locale fallback picks the wrong language for en-GB; fix it.', module: 'locale' },
  { text: 'Interval overlap is off by one at the end boundary; fix it.', module: 'interval' },
  { text: 'The calendar skips week 53 in ISO years; fix it.', module: 'calendar' },
  { text: 'Timezone names with underscores are rejected; fix the parser.', module: 'timezone' },
] as const;

const MODULES = ['date', 'duration', 'format', 'locale', 'parse', 'timezone', 'calendar', 'interval'];

type Action = { tool: string; args: Record<string, unknown> } | { answer: string };

/** One task's script: explore, reproduce, ask, edit, test until green. About 50 steps. */
const scriptFor = (task: (typeof TASKS)[number], t: number): Action[] => {
  const m = task.module;
  const actions: Action[] = [{ tool: 'list_files', args: { dir: 'src' } }];
  for (let i = 0; i < 12; i++) actions.push({ tool: 'read_file', args: { path: `src/${MODULES[(t + i) % MODULES.length]}.ts` } });
  actions.push({ tool: 'read_file', args: { path: `test/${m}.test.ts` } });
  actions.push({ tool: 'run_tests', args: { suite: m } });
  for (let i = 0; i < 8; i++) actions.push({ tool: 'read_file', args: { path: `test/${MODULES[(t + i + 3) % MODULES.length]}.test.ts` } });
  actions.push({ tool: 'ask_approval', args: { action: `edit src/${m}.ts and its tests` } });
  for (let round = 0; round < 4; round++) {
    for (let i = 0; i < 4; i++) actions.push({ tool: 'edit_file', args: { path: `src/${m}.ts`, line: round * 4 + i + 1 } });
    actions.push({ tool: 'run_tests', args: { suite: m } });
  }
  for (let i = 0; i < 3; i++) actions.push({ tool: 'read_file', args: { path: `src/${MODULES[(t + i + 5) % MODULES.length]}.ts` } });
  actions.push({ tool: 'run_tests', args: { suite: 'all' } });
  actions.push({ answer: `Fixed: ${task.text.replace(/; fix.*$/, '')}. The ${m} tests pass.` });
  return actions;
};

/** The number of steps the full demo takes (all tasks). */
export const demoStepCount = (tasks = TASKS.length): number =>
  TASKS.slice(0, tasks).reduce((n, task, t) => n + scriptFor(task, t).length, 0);

export interface DemoSessionOptions {
  /** Session id (default `demo`). */
  readonly sessionId?: string;
  /** How many of the six tasks to run (default all: about 300 steps). */
  readonly tasks?: number;
  /** Called after each step. */
  readonly onStep?: (step: number, total: number) => void;
  /** The context budget (default `DEMO_BUDGET`). */
  readonly budget?: ContextBudget;
}

export interface DemoSessionResult {
  readonly sessionId: string;
  readonly steps: number;
  readonly agent: Agent;
}

/**
 * Runs the scripted coding-agent session into `log`: TypeAware projection with exact o200k tokens, a token
 * budget, structured-summary compaction; tests fail and then pass (recorded as facts), a human approves the edits.
 * @example const { sessionId, steps } = await runDemoSession(await openLevelLog('./.ledger'))
 */
export const runDemoSession = async (log: SessionEventLog, options: DemoSessionOptions = {}): Promise<DemoSessionResult> => {
  const sessionId = options.sessionId ?? 'demo';
  const tasks = TASKS.slice(0, options.tasks ?? TASKS.length);
  const scripts = tasks.map(scriptFor);
  const total = scripts.reduce((n, s) => n + s.length, 0);
  const answers: ModelResult[] = [];
  let callNo = 0;
  for (const script of scripts) {
    for (const action of script) {
      if ('answer' in action) answers.push({ outputText: action.answer, items: [assistantMessage(action.answer)] });
      else answers.push({ items: [functionCall(`call_${++callNo}`, action.tool, action.args)] });
    }
  }
  // The module under repair fails until its third round of edits; the rest pass.
  let currentModule = '';
  let edits = 0;
  const listFiles = defineTool({
    name: 'list_files',
    description: 'List the files of a directory',
    parameters: z.object({ dir: z.string() }),
    execute: ({ dir }) => Object.keys(FILES).filter((f) => f.startsWith(`${dir}/`)).join('\n'),
  });
  const readFile = defineTool({
    name: 'read_file',
    description: 'Read a file of the repository',
    parameters: z.object({ path: z.string() }),
    execute: ({ path }) => {
      const text = FILES[path];
      if (text === undefined) throw new ToolFailedError('read_file', `no such file: ${path}`);
      return text;
    },
  });
  const runTests = defineTool({
    name: 'run_tests',
    description: 'Run a test suite (or "all")',
    parameters: z.object({ suite: z.string() }),
    execute: async ({ suite }, context) => {
      const failing = suite === currentModule || suite === 'all' ? (edits < 12 ? 3 - Math.floor(edits / 4) : 0) : 0;
      const passed = (suite === 'all' ? 80 : 10) - failing;
      const command = `npx vitest run ${suite === 'all' ? '' : `test/${suite}.test.ts`}`.trim();
      await context.record({ type: 'test.result', status: failing > 0 ? 'failed' : 'passed', suite, command, passed, failed: failing });
      if (failing > 0) {
        await context.record({ type: 'command.failed', command, exitCode: 1, output: `${failing} failed`, step: context.step });
        return `FAIL ${failing} test(s) in ${suite}\n` + Array.from({ length: failing }, (_, i) => `  × ${suite} case ${i}: expected '0${i}7' to be '${'0'.repeat(i + 1)}7'`).join('\n');
      }
      return `PASS ${passed} test(s) in ${suite}`;
    },
  });
  const editFile = defineTool({
    name: 'edit_file',
    description: 'Edit one line of a file',
    parameters: z.object({ path: z.string(), line: z.number().int() }),
    execute: async ({ path, line }, context) => {
      edits += 1;
      await context.record({ type: 'artifact.changed', path, change: 'modified', summary: `line ${line}` });
      return `edited ${path}:${line}`;
    },
  });
  const askApproval = defineTool({
    name: 'ask_approval',
    description: 'Ask the maintainer to approve an action',
    parameters: z.object({ action: z.string() }),
    execute: async ({ action }, context) => {
      await context.record({ type: 'approval.recorded', action, approved: true, by: 'maintainer', reason: 'go ahead' });
      return `approved: ${action}`;
    },
  });

  let idNo = 0;
  const projector = new TypeAwareContextProjector({ tokenizer: openAiTokenizer('o200k_base') });
  const agent = Agents.react({
    modelClient: new ScriptedModelClient(answers),
    model: 'scripted-coder',
    systemPrompt: 'You are a careful coding agent. Read before you edit, run the tests, ask before changing code.',
    tools: [listFiles, readFile, runTests, editFile, askApproval],
    log,
    contextProjector: projector,
    contextBudget: options.budget ?? DEMO_BUDGET,
    compactPolicy: new StructuredSummaryCompactPolicy(
      { maxItems: KEEP, pinnedPrefixItems: 1, maxRecentToolResults: 6 },
      projector,
      { compactAbove: COMPACT_ABOVE },
    ),
    maxSteps: 200,
    ids: () => (idNo++ === 0 ? sessionId : `${sessionId}-run-${idNo - 1}`),
    ...(options.onStep ? { onEvent: (n) => n.type === 'MEMORY_COMPRESS' && options.onStep?.(n.step, total) } : {}),
  });
  const session = await agent.newSession();
  for (const [t, task] of tasks.entries()) {
    currentModule = task.module;
    edits = 0;
    void t;
    await session.run(task.text);
  }
  return { sessionId, steps: session.lastStep, agent };
};
