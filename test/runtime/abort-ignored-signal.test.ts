// Fault: abort did not end a run when the model client, a tool or the LLM summarizer ignored the signal.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  Agents,
  LlmCompactPolicy,
  assistantMessage,
  defineTool,
  functionCall,
  isAgentRunError,
  openMemoryLog,
  type ModelClient,
  type ModelRequest,
  type ModelResult,
  type SessionEvent,
  type SessionEventLog,
} from '../../src/index.js';
import { checkSessionLaws } from '../../src/testing/runtime-laws.js';

const readAll = async (log: SessionEventLog, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};
const final = (text: string): ModelResult => ({ outputText: text, items: [assistantMessage(text)] });
const ids = (() => {
  let n = 0;
  return (): string => `ab-${++n}`;
})();

/** A promise and the function that settles it. */
const deferred = <T>() => {
  let resolve: (value: T) => void = () => undefined;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
};

/** A client that answers from `answers`, but hands each request to `onRequest` first; it never looks at the signal. */
const deafClient = (answers: (() => Promise<ModelResult>)[], seen: { signal?: AbortSignal | undefined }[] = []): ModelClient => ({
  create: (_request: ModelRequest, options) => {
    seen.push({ signal: options?.signal });
    const next = answers.shift();
    if (!next) throw new Error('no answer left');
    return next();
  },
});

describe('abort ends a run even when what it waits for ignores the signal', () => {
  it('a model client that ignores the signal: run.failed says a late answer will be ignored, and the late answer is never recorded', async () => {
    const log = await openMemoryLog();
    const late = deferred<ModelResult>();
    const controller = new AbortController();
    const client = deafClient([
      () => {
        setTimeout(() => controller.abort(new Error('user pressed stop')), 5);
        return late.promise;
      },
      async () => final('fresh'),
    ]);
    const session = await Agents.react({ modelClient: client, model: 'm', log, ids }).newSession();
    const error = await session.run('go', { signal: controller.signal }).catch((e: unknown) => e);
    expect(isAgentRunError(error) && error.reason).toBe('aborted');
    expect((error as Error).message).toBe('run aborted: user pressed stop (the run did not wait for the model call: a late answer will be ignored)');
    const events = await readAll(log, session.id);
    expect(events.at(-1)).toMatchObject({ type: 'run.failed', reason: 'aborted', message: (error as Error).message });

    late.resolve({ items: [functionCall('late', 'x', {})] });
    await new Promise((r) => setTimeout(r, 10));
    const after = await readAll(log, session.id);
    expect(after).toHaveLength(events.length);
    expect(after.some((e) => e.type === 'model.responded')).toBe(false);
    expect((await session.run('again')).outputText).toBe('fresh');
    expect(checkSessionLaws(await readAll(log, session.id))).toEqual([]);
  });

  it('a tool that ignores the signal: its call gets an error result, later calls "not executed", and its late facts and result are never recorded', async () => {
    const log = await openMemoryLog();
    const controller = new AbortController();
    const release = deferred<void>();
    let lateRecord: Promise<unknown> | undefined;
    const hang = defineTool({
      name: 'hang',
      description: 'ignores the signal',
      parameters: z.object({}),
      execute: async (_args, context) => {
        setTimeout(() => controller.abort(new Error('stop')), 5);
        await release.promise;
        lateRecord = context.record({ type: 'test.result', status: 'passed' }).then(
          () => 'recorded',
          (e: unknown) => (e as Error).message,
        );
        return 'late result';
      },
    });
    const client = deafClient([async () => ({ items: [functionCall('h1', 'hang', {}), functionCall('h2', 'hang', {})] })]);
    const session = await Agents.react({ modelClient: client, model: 'm', tools: [hang], log, ids }).newSession();
    const error = await session.run('go', { signal: controller.signal }).catch((e: unknown) => e);
    expect((error as Error).message).toBe('run aborted: stop (the run did not wait for tool "hang": a late answer will be ignored)');
    const events = await readAll(log, session.id);
    const results = events.filter((e) => e.type === 'tool.result').map((e) => e.type === 'tool.result' && [e.callId, e.output]);
    expect(results).toEqual([
      ['h1', 'Error: aborted while tool "hang" ran; its late result will be ignored'],
      ['h2', 'Error: not executed: run aborted'],
    ]);
    release.resolve();
    await new Promise((r) => setTimeout(r, 10));
    expect(await lateRecord).toMatch(/context\.record\("test\.result"\) after call h1 ended .*not recorded/);
    expect(await readAll(log, session.id)).toHaveLength(events.length);
    expect(checkSessionLaws(events)).toEqual([]);
  });

  it('the LLM summarizer gets the signal, and one that ignores it is not waited for: compaction.failed, no late memory.compacted', async () => {
    const log = await openMemoryLog();
    const controller = new AbortController();
    const late = deferred<ModelResult>();
    const seen: { signal?: AbortSignal | undefined }[] = [];
    const summarizer = deafClient(
      [
        () => {
          setTimeout(() => controller.abort(new Error('enough')), 5);
          return late.promise;
        },
      ],
      seen,
    );
    const session = await Agents.react({
      modelClient: deafClient([async () => final('never asked')]),
      model: 'm',
      log,
      ids,
      compactPolicy: new LlmCompactPolicy(summarizer, 's', 1, { compactAbove: 2 }),
    }).newSession();
    await session.memory.record([{ type: 'user.input', items: [1, 2, 3].map((i) => ({ type: 'message', role: 'user', content: `m${i}` })) }]);
    const error = await session.run('go', { signal: controller.signal }).catch((e: unknown) => e);
    expect(isAgentRunError(error) && error.reason).toBe('aborted');
    expect(seen[0]!.signal).toBe(controller.signal);
    const events = await readAll(log, session.id);
    expect(events.find((e) => e.type === 'compaction.failed')).toMatchObject({
      error: 'aborted while the compaction policy ran; its late result will be ignored',
    });
    expect(events.some((e) => e.type === 'model.requested')).toBe(false);
    late.resolve(final('{"goal": "late"}'));
    await new Promise((r) => setTimeout(r, 10));
    const after = await readAll(log, session.id);
    expect(after).toHaveLength(events.length);
    expect(after.some((e) => e.type === 'memory.compacted')).toBe(false);
  });
});
