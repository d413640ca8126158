// Real mini-SWE-agent runs driven through the runtime (budget, Tier-1, compaction), then replayed in both modes: identical.
// The two smallest runs are committed under test/fixtures; the rest are read from ../shared/data when it is there.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  Agents,
  ScriptedModelClient,
  StructuredSummaryCompactPolicy,
  TypeAwareContextProjector,
  assistantMessage,
  defineTool,
  isAgentRunError,
  openAiTokenizer,
  openMemoryLog,
  replaySession,
  type MemoryItem,
  type ScriptedAnswer,
  type SessionEventLog,
} from '../../src/index.js';
import { fromChatCompletions, type ChatMessage } from '../../src/runtime/providers/index.js';
import { checkSessionLaws } from '../../src/testing/runtime-laws.js';
import { readAll } from './support.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixtures = path.resolve(here, '../fixtures/swe-trajectories');
const shared = process.env['SWE_TRAJECTORIES_DIR'] ?? path.resolve(here, '../../../shared/data/swe-trajectories');
const sharedFiles = existsSync(shared) ? readdirSync(shared).filter((f) => f.endsWith('.traj.json')).sort() : [];
if (!existsSync(shared)) console.warn(`real-runs replay: ${shared} is absent, so only the two committed fixtures are replayed (the other 12 runs are skipped).`);
const fixtureFiles = readdirSync(fixtures).filter((f) => f.endsWith('.traj.json')).sort();
const fixtureRuns = fixtureFiles.map((f) => ({ file: f, from: fixtures }));
// The other 12 shared runs take about a minute in both modes: `npm run test:real-runs` (REPLAY_REAL_RUNS=1) replays them.
const allRuns = process.env['REPLAY_REAL_RUNS'] === '1';
const sharedRuns = allRuns ? sharedFiles.filter((f) => !fixtureFiles.includes(f)).map((f) => ({ file: f, from: shared })) : [];
if (!allRuns) console.info('real-runs replay: the 12 other shared runs are replayed by `npm run test:real-runs` (REPLAY_REAL_RUNS=1).');

interface Trajectory {
  readonly info: { readonly exit_status: string; readonly submission: string };
  readonly messages: readonly ChatMessage[];
}
const text = (content: ChatMessage['content']): string => (typeof content === 'string' ? content : '');

/** Plays a recorded run through the ReAct runtime as test/runtime/swe-trajectories-runtime.test.ts does. */
const record = async (trajectory: Trajectory, log: SessionEventLog): Promise<string> => {
  const [system, task, ...rest] = trajectory.messages;
  const exit = rest.at(-1)!;
  const body = rest.slice(0, -1);
  const submitted = trajectory.info.exit_status === 'Submitted';
  const outputs = new Map<string, ChatMessage>();
  const interjections = new Map<number, ChatMessage>();
  const answers: ScriptedAnswer[] = [];
  for (const message of body) {
    if (message.role === 'assistant') answers.push({ items: fromChatCompletions([message]) });
    else if (message.role === 'tool') outputs.set(message.tool_call_id!, message);
    else if (message.role === 'user') interjections.set(answers.length, message);
  }
  answers.push(submitted ? { outputText: trajectory.info.submission, items: [assistantMessage(trajectory.info.submission)] } : new Error(text(exit.content)));
  const bash = defineTool({
    name: 'bash',
    description: 'Execute a bash command',
    parameters: z.object({ command: z.string() }),
    execute: async ({ command }, context) => {
      const recorded = outputs.get(context.callId);
      if (!recorded) {
        if (submitted && command.includes('COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT')) return trajectory.info.submission;
        throw new Error(`no recorded output for ${context.callId}`);
      }
      const returncode = (recorded['extra'] as Record<string, unknown> | undefined)?.['returncode'];
      if (typeof returncode === 'number' && returncode !== 0) await context.record({ type: 'command.failed', command, exitCode: returncode, step: context.step });
      return text(recorded.content);
    },
  });
  let counter = 0;
  let controller = new AbortController();
  const agent = Agents.react({
    modelClient: new ScriptedModelClient(answers),
    model: 'deepseek-chat',
    systemPrompt: text(system!.content),
    tools: [bash],
    log,
    contextProjector: new TypeAwareContextProjector({ tokenizer: openAiTokenizer() }),
    contextBudget: { maxTokens: 8_000, maxRecentToolResults: 10 },
    compactPolicy: new StructuredSummaryCompactPolicy({ maxItems: 40, pinnedPrefixItems: 1 }, undefined, { compactAbove: 80 }),
    maxSteps: answers.length + 5,
    ids: () => `swe-${++counter}`,
    hooks: {
      afterTurn: ({ step }) => {
        if (interjections.has(step)) controller.abort(new Error('the user interjected'));
      },
    },
  });
  const session = await agent.newSession();
  let input: MemoryItem[] = fromChatCompletions([task!]);
  for (;;) {
    controller = new AbortController();
    try {
      await session.run(input, { signal: controller.signal });
      break;
    } catch (error) {
      const interjection = interjections.get(session.lastStep);
      if (isAgentRunError(error) && error.reason === 'aborted' && interjection) {
        input = fromChatCompletions([interjection]);
        continue;
      }
      break;
    }
  }
  return session.id;
};

const replaysIdentically = async ({ file, from }: { file: string; from: string }): Promise<void> => {
  const trajectory = JSON.parse(readFileSync(path.join(from, file), 'utf8')) as Trajectory;
  const log = await openMemoryLog();
  const id = await record(trajectory, log);
  const events = await readAll(log, id);
  expect(checkSessionLaws(events)).toEqual([]);
  const projected = await replaySession(log, id);
  expect(projected.firstDivergence).toBeUndefined();
  expect(projected.identical).toBe(true);
  const rerun = await replaySession(log, id, { mode: 'rerun' });
  expect(rerun.firstDivergence).toBeUndefined();
  expect(rerun).toMatchObject({ identical: true, steps: projected.steps });
  await log.close();
};

describe('real runs replay identically in both modes', () => {
  it.each(fixtureRuns)('fixture $file', replaysIdentically, 30_000);
  // Under `npm test` the other runs are not registered (the line above says where they run); under
  // `npm run test:real-runs` a missing data directory is a visible skip, which CI counts as a failure.
  if (allRuns) {
    describe.skipIf(sharedRuns.length === 0)(`the other shared runs (skipped: ${shared} has no runs)`, () => {
      it.each(sharedRuns.length > 0 ? sharedRuns : [{ file: '(none)', from: shared }])('shared $file', replaysIdentically, 60_000);
    });
  }
});
