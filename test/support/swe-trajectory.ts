// One driver for real mini-SWE-agent runs (../shared/data/swe-trajectories) through the ReAct runtime: the
// real-runs replay test, the runtime integration test and the log-size benchmark all play runs with it.
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
  type ContextBudget,
  type MemoryItem,
  type ModelResult,
  type RunResult,
  type ScriptedAnswer,
  type SessionEvent,
  type SessionEventLog,
} from '../../src/index.js';
import { fromChatCompletions, type ChatMessage } from '../../src/providers/index.js';

/** A mini-SWE-agent trajectory file: system, task, the exchange, then `exit` (the submission or the error). */
export interface Trajectory {
  readonly info: { readonly exit_status: string; readonly submission: string };
  readonly messages: readonly ChatMessage[];
}

/** The budget and compaction every run is played with: an exact o200k budget, Tier-1, compaction above 80 items. */
export const SWE_RUN_SETTINGS = {
  budget: { maxTokens: 8_000, maxRecentToolResults: 10 },
  keep: 40,
  compactAbove: 80,
} as const;

export interface PlayTrajectoryOptions {
  /** Where the session is recorded, left open (default: a fresh memory log, closed once the events are read). */
  readonly log?: SessionEventLog;
  /** Session and run ids are `<idPrefix>-1`, `<idPrefix>-2`, … (default `swe`). */
  readonly idPrefix?: string;
  /**
   * A user message in the middle (mini-SWE-agent's format-error notice) is how a host steers: it aborts the run
   * after that step and starts a new run with the message (default true). Off: such messages are left out.
   */
  readonly interjections?: boolean;
  /** A recorded non-zero exit code is recorded as a `command.failed` fact (default true). */
  readonly failedCommands?: boolean;
  /** Each answer carries the usage its recorded response reported (default true). */
  readonly usage?: boolean;
  /** The error a run that did not submit ends on (default: the recorded `exit` message). */
  readonly modelError?: string;
  /** The context budget (default `SWE_RUN_SETTINGS.budget`). */
  readonly budget?: ContextBudget;
}

export interface PlayedTrajectory {
  readonly sessionId: string;
  readonly events: SessionEvent[];
  readonly model: ScriptedModelClient;
  readonly result: RunResult | undefined;
  readonly failure: unknown;
  readonly runs: number;
  /** The commands the `bash` tool ran, in order. */
  readonly executed: { callId: string; command: string }[];
}

type Json = Record<string, unknown>;

/** The text of a Chat Completions content ('' for parts). */
export const contentText = (content: ChatMessage['content']): string => (typeof content === 'string' ? content : '');

/** The usage a recorded assistant message's response reported, in ModelUsage terms. */
const usageOf = (message: ChatMessage): ModelResult['usage'] => {
  const usage = ((message['extra'] as Json | undefined)?.['response'] as Json | undefined)?.['usage'] as Json | undefined;
  if (!usage || typeof usage['prompt_tokens'] !== 'number' || typeof usage['completion_tokens'] !== 'number') return undefined;
  return { inputTokens: usage['prompt_tokens'], outputTokens: usage['completion_tokens'] };
};

/**
 * Plays a recorded run through the ReAct runtime. The system message is the system prompt and the first user
 * message the run's input; each step the model answers with the next recorded assistant message; `bash`
 * answers each call with its recorded output. The recorded run ends with the submit call
 * (`echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat patch.txt`), whose output is the submission; the script
 * then runs out and the model answers with the submission as final text. A run that ended on a model error
 * (the timeout) ends on that error.
 * @example const { events, failure } = await playTrajectory(JSON.parse(readFileSync(file, 'utf8')))
 */
export const playTrajectory = async (trajectory: Trajectory, options: PlayTrajectoryOptions = {}): Promise<PlayedTrajectory> => {
  const { interjections: steer = true, failedCommands = true, usage = true, idPrefix = 'swe' } = options;
  const [system, task, ...rest] = trajectory.messages;
  const exit = rest.at(-1);
  if (system?.role !== 'system' || task?.role !== 'user' || exit?.role !== 'exit') throw new Error('unexpected trajectory shape');
  const body = rest.slice(0, -1);
  const submitted = trajectory.info.exit_status === 'Submitted';

  const outputs = new Map<string, ChatMessage>();
  const interjections = new Map<number, ChatMessage>(); // after step N, the user said
  const answers: ScriptedAnswer[] = [];
  for (const message of body) {
    const reported = usage ? usageOf(message) : undefined;
    if (message.role === 'assistant') answers.push({ items: fromChatCompletions([message]), ...(reported ? { usage: reported } : {}) });
    else if (message.role === 'tool') outputs.set(message.tool_call_id!, message);
    else if (message.role === 'user') {
      if (steer) interjections.set(answers.length, message);
    } else throw new Error(`unexpected role ${message.role}`);
  }
  answers.push(
    submitted
      ? { outputText: trajectory.info.submission, items: [assistantMessage(trajectory.info.submission)] }
      : new Error(options.modelError ?? contentText(exit.content)),
  );

  const executed: { callId: string; command: string }[] = [];
  const bash = defineTool({
    name: 'bash',
    description: 'Execute a bash command',
    parameters: z.object({ command: z.string() }),
    execute: async ({ command }, context) => {
      executed.push({ callId: context.callId, command });
      const recorded = outputs.get(context.callId);
      if (!recorded) {
        if (submitted && command.includes('COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT')) return trajectory.info.submission;
        throw new Error(`no recorded output for ${context.callId}`);
      }
      const returncode = (recorded['extra'] as Json | undefined)?.['returncode'];
      if (failedCommands && typeof returncode === 'number' && returncode !== 0) {
        await context.record({ type: 'command.failed', command, exitCode: returncode, step: context.step });
      }
      return contentText(recorded.content);
    },
  });

  const model = new ScriptedModelClient(answers);
  const log = options.log ?? (await openMemoryLog());
  let counter = 0;
  let controller = new AbortController();
  const agent = Agents.react({
    modelClient: model,
    model: 'deepseek-chat',
    systemPrompt: contentText(system.content),
    tools: [bash],
    log,
    contextProjector: new TypeAwareContextProjector({ tokenizer: openAiTokenizer() }),
    contextBudget: options.budget ?? SWE_RUN_SETTINGS.budget,
    compactPolicy: new StructuredSummaryCompactPolicy({ maxItems: SWE_RUN_SETTINGS.keep, pinnedPrefixItems: 1 }, undefined, {
      compactAbove: SWE_RUN_SETTINGS.compactAbove,
    }),
    maxSteps: answers.length + 5,
    ids: () => `${idPrefix}-${++counter}`,
    ...(steer
      ? {
          hooks: {
            afterTurn: ({ step }) => {
              if (interjections.has(step)) controller.abort(new Error('the user interjected'));
            },
          },
        }
      : {}),
  });
  const session = await agent.newSession();
  let input: MemoryItem[] = fromChatCompletions([task]);
  let result: RunResult | undefined;
  let failure: unknown;
  let runs = 0;
  for (;;) {
    controller = new AbortController();
    runs += 1;
    try {
      result = await session.run(input, { signal: controller.signal });
      break;
    } catch (error) {
      const interjection = interjections.get(session.lastStep);
      if (isAgentRunError(error) && error.reason === 'aborted' && interjection) {
        input = fromChatCompletions([interjection]);
        continue;
      }
      failure = error;
      break;
    }
  }
  const events: SessionEvent[] = [];
  for await (const event of log.read(session.id)) events.push(event);
  if (!options.log) await log.close();
  return { sessionId: session.id, events, model, result, failure, runs, executed };
};
