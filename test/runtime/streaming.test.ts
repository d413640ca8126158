// run(input, { onDelta }) over a client with `stream`: deltas to the caller and to onEvent, the answer recorded once, broken streams fail cleanly.
import { describe, expect, it } from 'vitest';
import {
  Agents,
  assistantMessage,
  isAgentRunError,
  openMemoryLog,
  type ModelClient,
  type ModelResult,
  type ModelStreamPart,
  type RuntimeNotification,
  type SessionEvent,
} from '../../src/index.js';
import { checkSessionLaws } from '../../src/testing/runtime-laws.js';

const answer: ModelResult = { outputText: 'hello world', items: [assistantMessage('hello world')], usage: { inputTokens: 3, outputTokens: 2 } };

/** A client whose stream yields `parts`; `create` answers the same result and counts its calls. */
const streamingClient = (parts: () => AsyncIterable<unknown>) => {
  const calls = { create: 0, stream: 0 };
  const client: ModelClient = {
    create: async () => {
      calls.create += 1;
      return answer;
    },
    stream: () => {
      calls.stream += 1;
      return parts() as AsyncIterable<ModelStreamPart>;
    },
  };
  return { client, calls };
};

async function* good(): AsyncGenerator<ModelStreamPart> {
  yield { type: 'text-delta', delta: 'hello ' };
  yield { type: 'text-delta', delta: 'world' };
  yield { type: 'finish', result: answer };
}

const run = async (client: ModelClient, options: Parameters<Awaited<ReturnType<ReturnType<typeof Agents.react>['newSession']>>['run']>[1] = {}) => {
  const log = await openMemoryLog();
  const notes: RuntimeNotification[] = [];
  let n = 0;
  const session = await Agents.react({ modelClient: client, model: 'm', log, ids: () => `id-${++n}`, onEvent: (e) => void notes.push(e) }).newSession();
  const outcome = await session.run('hi', options).then(
    (r) => r,
    (e: unknown) => e,
  );
  const events: SessionEvent[] = [];
  for await (const e of log.read(session.id)) events.push(e);
  return { outcome, events, notes, memory: session.memory.getItems() };
};

const strip = (events: readonly SessionEvent[]) =>
  events.map((e) => {
    const { at: _a, hash: _h, prevHash: _p, contentDigest: _c, contentSalt: _s, ...rest } = e as SessionEvent & { durationMs?: number; contentDigest?: string };
    const { durationMs: _d, ...payload } = rest as typeof rest & { durationMs?: number };
    return payload;
  });

describe('streaming in the runtime', () => {
  it('streams with onDelta: deltas to the caller and as MODEL_DELTA, the answer recorded once as without streaming', async () => {
    const plain = streamingClient(good);
    const without = await run(plain.client);
    expect(plain.calls).toEqual({ create: 1, stream: 0 });

    const streamed = streamingClient(good);
    const deltas: string[] = [];
    const withDeltas = await run(streamed.client, { onDelta: (d) => void (d.type === 'text-delta' && deltas.push(d.delta)) });
    expect(streamed.calls).toEqual({ create: 0, stream: 1 });
    expect(deltas).toEqual(['hello ', 'world']);
    expect(withDeltas.notes.filter((n) => n.type === 'MODEL_DELTA')).toMatchObject([
      { type: 'MODEL_DELTA', step: 1, delta: { type: 'text-delta', delta: 'hello ' } },
      { type: 'MODEL_DELTA', step: 1, delta: { type: 'text-delta', delta: 'world' } },
    ]);
    expect(strip(withDeltas.events)).toEqual(strip(without.events));
    expect(withDeltas.events.filter((e) => e.type === 'model.responded')).toHaveLength(1);
  });

  it('onDelta with a client that cannot stream works as before; a throwing onDelta does not break the run', async () => {
    const createOnly: ModelClient = { create: async () => answer };
    expect(await run(createOnly, { onDelta: () => undefined })).toMatchObject({ outcome: { status: 'finished', outputText: 'hello world' } });
    const { client } = streamingClient(good);
    const thrown = await run(client, {
      onDelta: () => {
        throw new Error('display broke');
      },
    });
    expect(thrown.outcome).toMatchObject({ status: 'finished', outputText: 'hello world' });
  });

  it('a stream without finish, with a part of unknown type, or with parts after finish fails the run; nothing of it enters memory', async () => {
    const cases: Array<[() => AsyncIterable<unknown>, RegExp]> = [
      [
        async function* () {
          yield { type: 'text-delta', delta: 'hel' };
        },
        /ended without a finish part/,
      ],
      [
        async function* () {
          yield { type: 'text-delta', delta: 'x' };
          yield { type: 'surprise' };
        },
        /unknown type "surprise"/,
      ],
      [
        async function* () {
          yield 42;
        },
        /where a part was expected/,
      ],
      [
        async function* () {
          yield { type: 'finish', result: answer };
          yield { type: 'text-delta', delta: 'late' };
        },
        /after its finish part/,
      ],
      [
        async function* () {
          yield { type: 'text-delta', delta: 'x' };
          throw new Error('connection reset');
        },
        /connection reset/,
      ],
    ];
    for (const [parts, message] of cases) {
      const { outcome, events, memory } = await run(streamingClient(parts).client, { onDelta: () => undefined });
      expect(isAgentRunError(outcome) && outcome.reason).toBe('error');
      expect((outcome as Error).message).toMatch(message);
      expect(events.some((e) => e.type === 'model.responded')).toBe(false);
      expect(memory).toEqual([{ type: 'message', role: 'user', content: 'hi' }]);
      expect(checkSessionLaws(events)).toEqual([]);
    }
  });

  it('an abort mid-stream, even from a stream that ignores the signal, records run.failed aborted and no partial answer', async () => {
    const controller = new AbortController();
    const { client } = streamingClient(async function* () {
      yield { type: 'text-delta', delta: 'partial' };
      await new Promise(() => undefined); // never continues, never looks at the signal
    });
    const aborted = await run(client, { signal: controller.signal, onDelta: () => controller.abort(new Error('user stopped')) });
    expect(isAgentRunError(aborted.outcome) && aborted.outcome.reason).toBe('aborted');
    expect(aborted.events.some((e) => e.type === 'model.responded')).toBe(false);
    expect(aborted.events.at(-1)).toMatchObject({ type: 'run.failed', reason: 'aborted' });
    expect(aborted.memory).toEqual([{ type: 'message', role: 'user', content: 'hi' }]);
  });

  it('rejects an onDelta that is not a function', async () => {
    const { outcome } = await run(streamingClient(good).client, { onDelta: 'yes' as never });
    expect(String(outcome)).toMatch(/onDelta/);
  });
});
