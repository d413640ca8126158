// Shared helpers for the replay tests: a scripted agent session with tools, compaction and facts, and a log that counts reads and writes.
import { z } from 'zod';
import {
  Agents,
  ScriptedModelClient,
  StructuredSummaryCompactPolicy,
  TypeAwareContextProjector,
  assistantMessage,
  defineTool,
  functionCall,
  type Agent,
  type AgentOptions,
  type ModelResult,
  type SessionEvent,
  type SessionEventLog,
} from '../../src/index.js';

export const readAll = async (log: SessionEventLog, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};

export const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

export const final = (text: string): ModelResult => ({ outputText: text, items: [assistantMessage(text)] });
export const callTool = (id: string, name: string, args: object): ModelResult => ({ items: [functionCall(id, name, args)] });

export const echo = defineTool({
  name: 'echo',
  description: 'Echo the text',
  parameters: z.object({ text: z.string() }),
  execute: async ({ text }, context) => {
    if (text.startsWith('fail')) {
      await context.record({ type: 'command.failed', command: `echo ${text}`, exitCode: 1, step: context.step });
      throw new Error(`cannot echo ${text}`);
    }
    return `echo: ${text}`;
  },
});

/** A log wrapper that counts events read, appends and checkpoint writes. */
export const countingLog = (log: SessionEventLog) => {
  const counts = { eventsRead: 0, appends: 0, checkpointWrites: 0 };
  const wrapped: SessionEventLog = {
    ...log,
    append: (...args) => {
      counts.appends += 1;
      return log.append(...args);
    },
    read: (id, options) => ({
      [Symbol.asyncIterator]: () => {
        const inner = log.read(id, options)[Symbol.asyncIterator]();
        return {
          async next() {
            const next = await inner.next();
            if (!next.done) counts.eventsRead += 1;
            return next;
          },
          async return() {
            return (await inner.return?.()) ?? { done: true as const, value: undefined };
          },
        };
      },
    }),
    head: (id) => log.head(id),
    sessions: () => log.sessions(),
    verify: (id) => log.verify(id),
    putCheckpoint: (...args) => {
      counts.checkpointWrites += 1;
      return log.putCheckpoint(...args);
    },
    latestCheckpoint: (id) => log.latestCheckpoint(id),
    checkpointAtOrBefore: (id, seq) => log.checkpointAtOrBefore(id, seq),
    close: () => log.close(),
  };
  return { log: wrapped, counts };
};

/** Scripted answers for `turns` tool turns then a final answer; every 4th call fails. */
export const scriptedTurns = (turns: number, prefix = 'c'): ModelResult[] => [
  ...Array.from({ length: turns }, (_, i) => callTool(`${prefix}${i}`, 'echo', { text: i % 4 === 3 ? `fail ${i}` : `turn ${i} ${'x'.repeat(i % 5)}` })),
  final(`done ${prefix}`),
];

let counter = 0;
/** An agent over `log` with a token budget, Tier-1, and automatic compaction. */
export const replayAgent = (log: SessionEventLog, answers: readonly ModelResult[], overrides: Partial<AgentOptions> = {}): Agent =>
  Agents.react({
    modelClient: new ScriptedModelClient(answers),
    model: 'm',
    systemPrompt: 'You are a test agent.',
    tools: [echo],
    log,
    contextProjector: new TypeAwareContextProjector(),
    contextBudget: { maxTokens: 400, maxRecentToolResults: 3, pinnedPrefixItems: 1 },
    compactPolicy: new StructuredSummaryCompactPolicy({ maxItems: 8, pinnedPrefixItems: 1 }, undefined, { compactAbove: 14 }),
    ids: () => `id-${++counter}`,
    ...overrides,
  });
