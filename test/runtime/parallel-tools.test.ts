// Parallel tool calls: the limit holds, an abort ends every running call, a failure does not cancel siblings, CodeAct keeps nested ids.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  Agents,
  ScriptedModelClient,
  assistantMessage,
  defineTool,
  functionCall,
  isAgentRunError,
  openMemoryLog,
  replaySession,
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

describe('parallelToolCalls', () => {
  it('runs up to the limit at once; a failing call does not cancel its siblings; hooks run once per call', async () => {
    let running = 0;
    let most = 0;
    const gates: Array<() => void> = [];
    const slow = defineTool({
      name: 'slow',
      description: 'slow',
      parameters: z.object({ n: z.number() }),
      execute: async ({ n }) => {
        running += 1;
        most = Math.max(most, running);
        await new Promise<void>((resolve) => gates.push(resolve));
        running -= 1;
        if (n === 1) throw new Error('one fails');
        return `n=${n}`;
      },
    });
    const seen: string[] = [];
    const log = await openMemoryLog();
    const model = new ScriptedModelClient([{ items: [0, 1, 2, 3].map((n) => functionCall(`c${n}`, 'slow', { n })) }, final('ok')]);
    const agent = Agents.react({
      modelClient: model,
      model: 'm',
      log,
      tools: [slow],
      parallelToolCalls: 2,
      hooks: { beforeToolCall: ({ call }) => void seen.push(`before ${call.callId}`), afterToolCall: ({ call }) => void seen.push(`after ${call.callId}`) },
    });
    const session = await agent.newSession();
    const running$ = session.run('go');
    // Release the calls in reverse order as they start, so later calls finish first.
    for (let released = 0; released < 4; ) {
      await new Promise((r) => setTimeout(r, 5));
      while (gates.length > 0) {
        gates.pop()!();
        released += 1;
      }
    }
    await running$;
    expect(most).toBe(2);
    expect(seen.filter((s) => s.startsWith('before'))).toHaveLength(4);
    expect(seen.filter((s) => s.startsWith('after'))).toEqual(['after c0', 'after c1', 'after c2', 'after c3']);
    const results = (await readAll(log, session.id)).filter((e) => e.type === 'tool.result');
    expect(results.map((r) => r.type === 'tool.result' && [r.callId, r.output])).toEqual([
      ['c0', 'n=0'],
      ['c1', 'Error: one fails'],
      ['c2', 'n=2'],
      ['c3', 'n=3'],
    ]);
    expect(checkSessionLaws(await readAll(log, session.id))).toEqual([]);
  });

  it('an abort ends every running call: each gets its aborted result, calls never started get "not executed", run.failed aborted', async () => {
    const hang = defineTool({ name: 'hang', description: 'hangs', parameters: z.object({}), execute: () => new Promise(() => undefined) });
    const log = await openMemoryLog();
    const model = new ScriptedModelClient([{ items: [0, 1, 2, 3].map((n) => functionCall(`h${n}`, 'hang', {})) }]);
    const agent = Agents.react({ modelClient: model, model: 'm', log, tools: [hang], parallelToolCalls: 3 });
    const session = await agent.newSession();
    const controller = new AbortController();
    const running = session.run('go', { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('user pressed stop')), 20);
    await expect(running).rejects.toSatisfy((e: unknown) => isAgentRunError(e) && e.reason === 'aborted');
    const events = await readAll(log, session.id);
    const results = events.filter((e): e is Extract<SessionEvent, { type: 'tool.result' }> => e.type === 'tool.result');
    expect(results.map((r) => r.callId)).toEqual(['h0', 'h1', 'h2', 'h3']);
    for (const r of results.slice(0, 3)) expect(r.output).toBe(`Error: aborted while tool "hang" ran; its late result will be ignored`);
    expect(results[3]!.output).toBe('Error: not executed: run aborted');
    expect(events.at(-1)).toMatchObject({ type: 'run.failed', reason: 'aborted' });
    expect(checkSessionLaws(events)).toEqual([]);
  });

  it('an abort with calls [hang, fail, hang, fast, hang, fast]: afterToolCall for every call that ran to an end, none for the aborted; the re-run is identical', async () => {
    for (const hangs of ['ignore the signal', 'honour the signal'] as const) {
      for (const limit of [1, 2, 4, true] as const) {
        const kinds = ['hang', 'fail', 'hang', 'fast', 'hang', 'fast'];
        const controller = new AbortController();
        let scheduled = false;
        // The abort comes once the first hang has run for a while (50 turns of the event loop): the quick calls have ended by then.
        const abortSoon = (): void => {
          if (scheduled) return;
          scheduled = true;
          void (async () => {
            for (let t = 0; t < 50; t++) await new Promise((resolve) => setImmediate(resolve));
            controller.abort(new Error('user pressed stop'));
          })();
        };
        const work = defineTool({
          name: 'work',
          description: 'work',
          parameters: z.object({ kind: z.string() }),
          execute: async ({ kind }, context) => {
            if (kind === 'hang') {
              abortSoon();
              await new Promise((_resolve, reject) => {
                if (hangs === 'honour the signal') context.signal.addEventListener('abort', () => reject(new Error('stopped by the signal')), { once: true });
              });
            }
            if (kind === 'fail') throw new Error('it failed');
            return 'fast ok';
          },
        });
        const before: string[] = [];
        const after: string[] = [];
        const log = await openMemoryLog();
        let n = 0;
        const agent = Agents.react({
          modelClient: new ScriptedModelClient([{ items: kinds.map((kind, i) => functionCall(`c${i}`, 'work', { kind })) }, final('done')]),
          model: 'm',
          log,
          tools: [work],
          parallelToolCalls: limit,
          ids: () => `id-${++n}`,
          hooks: { beforeToolCall: ({ call }) => void before.push(call.callId), afterToolCall: ({ call }) => void after.push(call.callId) },
        });
        const session = await agent.newSession();
        const outcome = await session.run('go', { signal: controller.signal }).catch((e: unknown) => e);
        expect(isAgentRunError(outcome) && outcome.reason).toBe('aborted');
        const events = await readAll(log, session.id);
        const results = events.filter((e): e is Extract<SessionEvent, { type: 'tool.result' }> => e.type === 'tool.result');
        expect(results.map((r) => r.callId)).toEqual(['c0', 'c1', 'c2', 'c3', 'c4', 'c5']);
        const started = results.filter((r) => !r.output.startsWith('Error: not executed'));
        const aborted = results.filter((r) => r.output.startsWith('Error: aborted while tool'));
        expect(before).toEqual(started.map((r) => r.callId));
        // afterToolCall once for each call that ran to an end (returned or threw), in call order; never for one the abort ended.
        expect(after).toEqual(started.filter((r) => !aborted.includes(r)).map((r) => r.callId));
        const width = limit === true ? 6 : limit;
        const expectedStarted = { 1: 1, 2: 3, 4: 6, 6: 6 }[width]!;
        expect(started).toHaveLength(expectedStarted);
        if (hangs === 'ignore the signal') {
          expect(aborted.map((r) => r.callId)).toEqual(['c0', 'c2', 'c4'].slice(0, started.filter((r) => ['c0', 'c2', 'c4'].includes(r.callId)).length));
          if (width >= 4) expect({ before: before.length, after: after.length }).toEqual({ before: 6, after: 3 });
        } else {
          expect(aborted).toEqual([]);
          expect(after).toEqual(before);
        }
        expect(events.at(-1)).toMatchObject({ type: 'run.failed', reason: 'aborted' });
        expect(checkSessionLaws(events)).toEqual([]);
        for (const mode of ['project', 'rerun'] as const) {
          const replayed = await replaySession(log, session.id, { mode });
          expect({ limit, hangs, mode, identical: replayed.identical, at: replayed.firstDivergence }).toEqual({ limit, hangs, mode, identical: true, at: undefined });
        }
      }
    }
  });

  it('CodeAct: two programs of one answer run at once and their nested calls keep <callId>.<n> ids', async () => {
    const echo = defineTool({ name: 'echo', description: 'echo', parameters: z.object({ text: z.string() }), execute: ({ text }) => `echo: ${text}` });
    const code = (tag: string) => `const a = await tools.echo({ text: '${tag}1' }); const b = await tools.echo({ text: '${tag}2' }); return a + ' ' + b;`;
    const log = await openMemoryLog();
    const model = new ScriptedModelClient([
      { items: [functionCall('p', 'execute_javascript', { code: code('p') }), functionCall('q', 'execute_javascript', { code: code('q') })] },
      final('done'),
    ]);
    const session = await Agents.codeAct({ modelClient: model, model: 'm', log, tools: [echo], parallelToolCalls: true }).newSession();
    await session.run('go');
    const results = (await readAll(log, session.id)).filter((e): e is Extract<SessionEvent, { type: 'tool.result' }> => e.type === 'tool.result');
    expect(results.map((r) => [r.callId, r.parentCallId ?? null])).toEqual([
      ['p.1', 'p'],
      ['p.2', 'p'],
      ['p', null],
      ['q.1', 'q'],
      ['q.2', 'q'],
      ['q', null],
    ]);
    expect(results.find((r) => r.callId === 'q')?.output).toContain('echo: q1 echo: q2');
  });

  it('rejects a limit that is not a positive integer or a boolean', () => {
    const modelClient = new ScriptedModelClient([]);
    for (const bad of [0, -1, 1.5, Number.NaN, '2']) {
      expect(() => Agents.react({ modelClient, model: 'm', parallelToolCalls: bad as never })).toThrow(/parallelToolCalls/);
    }
  });
});
