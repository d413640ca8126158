// Fault: run(invalidInput) rejected with InvalidEventError and left an unended run.started; a throw whose String() throws.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  AgentRunError,
  Agents,
  ScriptedModelClient,
  assistantMessage,
  defineTool,
  functionCall,
  openMemoryLog,
  type MemoryItem,
  type ModelResult,
  type SessionEvent,
  type SessionEventLog,
} from '../../src/index.js';
import { errorText } from '../../src/base/error-text.js';
import { checkSessionLaws } from '../../src/testing/runtime-laws.js';

const readAll = async (log: SessionEventLog, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};
const final = (text: string): ModelResult => ({ outputText: text, items: [assistantMessage(text)] });
let n = 0;
const ids = (): string => `in-${++n}`;

/** A thrown value nothing can print: its message getter, toString and JSON all throw. */
const unprintable = (): unknown => ({
  get message(): string {
    throw new Error('no message');
  },
  toString(): string {
    throw new Error('no string');
  },
});

describe('run input is validated before anything is written', () => {
  const invalid: [string, unknown, RegExp][] = [
    ['an item without a type', { role: 'user', content: 'hi' }, /^run: invalid input: input\.0\.type: /],
    ['a list with a non-item', [{ type: 'message', role: 'user', content: 'ok' }, 'text'], /^run: invalid input: input\.1: /],
    ['a number', 42, /^run: invalid input: expected a string, an item or a list of items, got number$/],
    ['null', null, /got null$/],
  ];
  for (const [what, input, message] of invalid) {
    it(`${what}: AgentRunError invalid-input, nothing written, the next run works`, async () => {
      const log = await openMemoryLog();
      const session = await Agents.react({ modelClient: new ScriptedModelClient([final('ok')]), model: 'm', log, ids }).newSession();
      const head = await log.head(session.id);
      const error = await session.run(input as MemoryItem).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AgentRunError);
      expect((error as AgentRunError).reason).toBe('invalid-input');
      expect((error as AgentRunError).runId).toBe('');
      expect((error as Error).message).toMatch(message);
      expect(await log.head(session.id)).toBe(head);
      expect(session.interruptedRunId).toBeUndefined();
      expect((await session.run('valid')).outputText).toBe('ok');
      expect(checkSessionLaws(await readAll(log, session.id))).toEqual([]);
    });
  }

  it('invalid input does not supersede an interrupted run', async () => {
    const log = await openMemoryLog();
    const session = await Agents.react({ modelClient: new ScriptedModelClient([final('continued')]), model: 'm', log, ids }).newSession();
    await session.session.record([{ type: 'run.started', runId: 'open-run' }, { type: 'user.input', items: [{ type: 'message', role: 'user', content: 'x' }] }]);
    const resumed = await Agents.react({ modelClient: new ScriptedModelClient([final('continued')]), model: 'm', log, ids }).resumeSession(session.id);
    await expect(resumed.run({} as MemoryItem)).rejects.toMatchObject({ reason: 'invalid-input' });
    expect(resumed.interruptedRunId).toBe('open-run');
    expect((await resumed.run()).runId).toBe('open-run');
  });
});

describe('a thrown value whose String() throws does not end the run', () => {
  it('errorText never throws', () => {
    expect(errorText(unprintable())).toBe('[unprintable object]');
    expect(errorText(Object.create(null))).toBe('{}');
    expect(errorText(new Error('plain'))).toBe('plain');
    expect(errorText(Symbol('s'))).toBe('Symbol(s)');
  });

  it('from a hook: hook.failed is recorded; from a tool: an error result; the run finishes', async () => {
    const log = await openMemoryLog();
    const bad = defineTool({
      name: 'bad',
      description: 'throws the unprintable',
      parameters: z.object({}),
      execute: () => {
        throw unprintable();
      },
    });
    const session = await Agents.react({
      modelClient: new ScriptedModelClient([{ items: [functionCall('b1', 'bad', {})] }, final('still here')]),
      model: 'm',
      tools: [bad],
      log,
      ids,
      hooks: {
        beforeTurn: () => {
          throw unprintable();
        },
      },
    }).newSession();
    expect((await session.run('go')).outputText).toBe('still here');
    const events = await readAll(log, session.id);
    expect(events.filter((e) => e.type === 'hook.failed').map((e) => e.type === 'hook.failed' && e.error)).toEqual(['[unprintable object]', '[unprintable object]']);
    expect(events.find((e) => e.type === 'tool.result')).toMatchObject({ callId: 'b1', isError: true, output: 'Error: [unprintable object]' });
  });
});
