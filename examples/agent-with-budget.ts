// A ReAct agent with a context budget and automatic compaction on the LevelDB log, driven by a scripted model:
// 30 tool steps, then a final answer; prints what each prompt kept, the compactions, and checks the laws.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import {
  Agents,
  ScriptedModelClient,
  StructuredSummaryCompactPolicy,
  TypeAwareContextProjector,
  assistantMessage,
  defineTool,
  functionCall,
  openLevelLog,
  type ModelResult,
  type SessionEvent,
} from '../src/index.js';
import { checkSessionLaws } from '../src/testing/index.js';

// Tools: zod parameters (sent to the model as JSON Schema); `context.record` logs facts compaction can use.
const readFile = defineTool({
  name: 'read_file',
  description: 'Read a file of the repository',
  parameters: z.object({ path: z.string() }),
  execute: ({ path: file }) => `// ${file}\n${'export const parse = (s: string) => new Date(s);\n'.repeat(20)}`,
});
const runTests = defineTool({
  name: 'run_tests',
  description: 'Run the test suite',
  parameters: z.object({ suite: z.string() }),
  execute: async ({ suite }, context) => {
    const failed = context.step < 25 ? 1 : 0;
    await context.record({ type: 'test.result', status: failed ? 'failed' : 'passed', suite, passed: 12, failed });
    return { suite, passed: 12, failed }; // a non-string result reaches the model as JSON text
  },
});

// A scripted model: 30 steps of tool calls (a real one would be openAiChatCompletionsClient(new OpenAI()) etc.).
const STEPS = 30;
const step = (n: number): ModelResult => ({
  items:
    n % 3 === 0
      ? [functionCall(`call_${n}`, 'run_tests', { suite: 'date' })]
      : [functionCall(`call_${n}`, 'read_file', { path: `src/file-${n}.ts` })],
});
const model = new ScriptedModelClient([
  ...Array.from({ length: STEPS }, (_, i) => step(i + 1)),
  { outputText: 'Fixed: the parser keeps the offset; tests pass.', items: [assistantMessage('Fixed: the parser keeps the offset; tests pass.')] },
]);

const dir = process.argv[2] ?? (await mkdtemp(path.join(tmpdir(), 'context-ledger-example-')));
const log = await openLevelLog(dir);
try {
  const agent = Agents.react({
    modelClient: model,
    model: 'gpt-4.1',
    systemPrompt: 'You fix bugs in a TypeScript repository.',
    tools: [readFile, runTests],
    log,
    // What the model is sent each step: at most 800 (approximate) tokens, only the 3 newest tool results raw,
    // and always the first two items (the task; once compacted, the summary and the task).
    contextProjector: new TypeAwareContextProjector(),
    contextBudget: { maxTokens: 800, maxRecentToolResults: 3, pinnedPrefixItems: 2 },
    // What memory keeps: past 24 items, compact down to the task and the newest items (about 12).
    compactPolicy: new StructuredSummaryCompactPolicy({ maxItems: 12, pinnedPrefixItems: 1 }, undefined, { compactAbove: 24 }),
    maxSteps: 40,
    hooks: {
      onCompact: ({ step: at, event }) => console.log(`  step ${String(at).padStart(2)}: compacted, kept ${event.keptIds.length}, dropped ${event.droppedIds.length}`),
    },
    onEvent: (n) => {
      if (n.type === 'CONTEXT_PROJECTED' && n.step % 5 === 0) {
        const { sourceItemCount, projectedItemCount, projectedTokens, notes } = n.report;
        console.log(`  step ${String(n.step).padStart(2)}: sent ${projectedItemCount}/${sourceItemCount} items, ${projectedTokens} tokens; ${notes.join('; ')}`);
      }
    },
  });

  const session = await agent.newSession();
  console.log(`log: ${dir}   session: ${session.id}`);
  const result = await session.run('The date parser test fails in some timezones; please fix it.');
  console.log(`\nanswer after ${result.steps} steps: ${result.outputText}`);

  const events: SessionEvent[] = [];
  for await (const event of log.read(session.id)) events.push(event);
  const count = (type: SessionEvent['type']): number => events.filter((e) => e.type === type).length;
  console.log(`events: ${events.length}, tool results: ${count('tool.result')}, compactions: ${count('memory.compacted')}, test results: ${count('test.result')}`);
  console.log(`memory now: ${session.memory.getItems().length} items; summary starts "${session.memory.getSummary()?.split('\n')[0]}"`);
  const last = model.requests.at(-1)!;
  console.log(`last prompt: ${last.items.length} items, starting ${last.items.slice(0, 2).map((i) => JSON.stringify(i).slice(0, 50)).join(', ')}…`);

  const violations = checkSessionLaws(events);
  console.log(`session laws: ${violations.length === 0 ? 'all hold' : JSON.stringify(violations)}`);
  if (violations.length > 0) process.exitCode = 1;
} finally {
  await log.close();
  if (process.argv[2] === undefined) await rm(dir, { recursive: true, force: true });
}
