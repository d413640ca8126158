// The CodeAct sandbox under load: a bounded worker pool, a deadline from the call (queue and start-up included),
// a tool bridge that stops at the deadline, and no worker left behind.
import { existsSync, readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  Agents,
  CodeSandboxClosedError,
  InvalidCodeActOptionError,
  ScriptedModelClient,
  assistantMessage,
  createCodeSandboxPool,
  defineTool,
  ensureCodeSandbox,
  executeJavascriptTool,
  functionCall,
  openMemoryLog,
  replaySession,
  type CodeSandboxPool,
  type SessionEvent,
  type SessionEventLog,
} from '../../src/index.js';
import { runJavascript, type NestedToolCaller } from '../../src/runtime/codeact.js';
import { defaultCodeSandboxPool, workerPoolOf } from '../../src/runtime/sandbox/worker-pool.js';
import { checkSessionLaws } from '../../src/testing/runtime-laws.js';

const noTools: NestedToolCaller = async () => {
  throw new Error('no tools here');
};
const outcome = (promise: Promise<string>): Promise<string> => promise.catch((error: Error) => `Error: ${error.message}`);
const readAll = async (log: SessionEventLog, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};
type ToolResultEvent = Extract<SessionEvent, { type: 'tool.result' }>;
const toolResults = (events: readonly SessionEvent[]): ToolResultEvent[] => events.filter((e): e is ToolResultEvent => e.type === 'tool.result');
/** Threads of this process (Linux): each live worker is one; undefined elsewhere. */
const threads = (): number | undefined => (existsSync('/proc/self/task') ? readdirSync('/proc/self/task').length : undefined);
const neverStarted = (ms: number, workers: number): string => `code timed out after ${ms} ms (it never started: it waited for a sandbox worker; the pool has ${workers})`;
/** Waits until the pool's ended workers have exited (no time limit of its own beyond the test's). */
const settled = (pool: CodeSandboxPool): Promise<void> =>
  vi.waitFor(
    () => {
      const { live, idle, busy } = pool.stats();
      if (busy !== 0 || live !== idle) throw new Error(`still ${live} live, ${idle} idle, ${busy} busy`);
    },
    { timeout: 30_000, interval: 20 },
  );

beforeAll(async () => {
  await ensureCodeSandbox();
});

describe('the worker pool: a bound, a queue, a deadline from the call', () => {
  it('the bound defaults to the number of cores and is an option', () => {
    expect(createCodeSandboxPool().maxWorkers).toBe(availableParallelism());
    expect(defaultCodeSandboxPool().maxWorkers).toBe(availableParallelism());
    expect(createCodeSandboxPool({ maxWorkers: 3 }).maxWorkers).toBe(3);
  });

  it('live workers never exceed the bound; calls beyond it wait and then reuse the workers', async () => {
    const pool = createCodeSandboxPool({ maxWorkers: 2 });
    const base = threads();
    let mostThreads = 0;
    let mostLive = 0;
    const probe: NestedToolCaller = async () => {
      mostLive = Math.max(mostLive, pool.stats().live);
      const now = threads();
      if (now !== undefined && base !== undefined) mostThreads = Math.max(mostThreads, now - base);
      return 'seen';
    };
    const outputs = await Promise.all(
      Array.from({ length: 12 }, (_, n) => runJavascript(`await tools.probe({}); return ${n};`, ['probe'], probe, 60_000, { pool })),
    );
    expect(outputs).toEqual(Array.from({ length: 12 }, (_, n) => `=> ${n}`));
    const stats = pool.stats();
    expect(mostLive).toBeLessThanOrEqual(2);
    expect(stats.peakLive).toBe(2);
    expect(stats.peakQueued).toBe(10);
    // Every call ended by itself, so its worker went to the next call: two workers served twelve calls.
    expect(stats).toMatchObject({ spawned: 2, reused: 10, released: 12, queued: 0, busy: 0 });
    if (base !== undefined) expect(mostThreads).toBeLessThanOrEqual(2);
    await pool.close();
    expect(pool.stats().live).toBe(0);
  });

  it('a call whose deadline passes while it waits ends with the timeout result, says it never started, and gets no worker', async () => {
    const pool = createCodeSandboxPool({ maxWorkers: 1 });
    let holderSettled = false;
    const holder = outcome(runJavascript('while (true) {}', [], noTools, 3_000, { pool })).finally(() => (holderSettled = true));
    const waiting = await outcome(runJavascript('return 1', [], noTools, 300, { pool }));
    expect(waiting).toBe(`Error: ${neverStarted(300, 1)}`);
    expect(holderSettled).toBe(false);
    expect(pool.stats()).toMatchObject({ spawned: 1, leftQueue: 1, queued: 0 });
    expect(await holder).toBe('Error: code timed out after 3000 ms');
    await pool.close();
  });

  it('the timeout of a call that never started reads like any other to the model (CodeAct agent)', async () => {
    // Two agents share a pool of one worker: the first holds it until the second's call has left the queue.
    const pool = createCodeSandboxPool({ maxWorkers: 1 });
    const hold = defineTool({
      name: 'hold',
      description: 'waits until a call has left the queue',
      parameters: z.object({}),
      execute: () =>
        vi.waitFor(
          () => {
            if (pool.stats().leftQueue < 1) throw new Error('nothing left the queue yet');
            return 'held';
          },
          { timeout: 30_000, interval: 10 },
        ),
    });
    const scripted = (code: string) =>
      new ScriptedModelClient([{ items: [functionCall('c0', 'execute_javascript', { code })] }, { outputText: 'done', items: [assistantMessage('done')] }]);
    const log = await openMemoryLog();
    const holder = Agents.codeAct({ modelClient: scripted('return await tools.hold({})'), model: 'm', log, tools: [hold], codeSandboxPool: pool, codeTimeoutMs: 60_000 });
    const waiter = Agents.codeAct({ modelClient: scripted('return 1'), model: 'm', log, codeSandboxPool: pool, codeTimeoutMs: 1_000 });
    const [held, waited] = await Promise.all([holder.newSession(), waiter.newSession()]);
    const holding = held.run('hold');
    await vi.waitFor(
      () => {
        if (pool.stats().busy !== 1) throw new Error('not holding yet');
      },
      { timeout: 30_000, interval: 5 },
    );
    await waited.run('wait');
    await holding;
    const waitedEvents = await readAll(log, waited.id);
    expect(toolResults(waitedEvents).map((r) => [r.callId, r.output, r.isError])).toEqual([['c0', `Error: ${neverStarted(1_000, 1)}`, true]]);
    expect(toolResults(await readAll(log, held.id)).at(-1)!.output).toBe('=> held');
    expect(checkSessionLaws(waitedEvents)).toEqual([]);
    expect(pool.stats().spawned).toBe(1);
    await pool.close();
    // A re-run runs the code that never started (its deadline counts from the code's start) and says why it differs;
    // its workers end with the replay.
    const base = threads();
    const replayed = await replaySession(log, waited.id, { mode: 'rerun' });
    expect(replayed.identical).toBe(false);
    expect(replayed.firstDivergence).toMatchObject({ type: 'tool.result', fields: ['output', 'isError'] });
    expect(replayed.notes.join('\n')).toMatch(/step 1: call c0 never started in the recording \(its deadline passed before its code started\); the re-run ran the code/);
    if (base !== undefined) expect(threads()).toBe(base);
  });

  it('an abort while queued ends the call at once and never starts a worker', async () => {
    const pool = createCodeSandboxPool({ maxWorkers: 1 });
    let holderSettled = false;
    const holder = outcome(runJavascript('while (true) {}', [], noTools, 2_000, { pool })).finally(() => (holderSettled = true));
    const controller = new AbortController();
    const queued = outcome(runJavascript('return 1', [], noTools, 60_000, { pool, signal: controller.signal }));
    await vi.waitFor(
      () => {
        if (pool.stats().queued !== 1) throw new Error('not queued yet');
      },
      { timeout: 30_000, interval: 5 },
    );
    controller.abort(new Error('user stop'));
    expect(await queued).toBe('Error: code aborted: user stop (it never started: it waited for a sandbox worker; the pool has 1)');
    expect(holderSettled).toBe(false);
    expect(pool.stats()).toMatchObject({ spawned: 1, queued: 0, leftQueue: 1 });
    // An already aborted signal never queues.
    const before = pool.stats().peakQueued;
    expect(await outcome(runJavascript('return 1', [], noTools, 60_000, { pool, signal: AbortSignal.abort(new Error('early')) }))).toBe(
      'Error: code aborted: early (it never started: it waited for a sandbox worker; the pool has 1)',
    );
    expect(pool.stats().peakQueued).toBe(before);
    await holder;
    await pool.close();
  });

  it('a worker that crashes is replaced: the call behind it runs, and the pool stays within its bound', async () => {
    const pool = createCodeSandboxPool({ maxWorkers: 1 });
    const internal = workerPoolOf(pool, 'pool');
    const crash: NestedToolCaller = async () => {
      // The worker running this call's code dies under it.
      await internal.busyWorkers()[0]!.terminate();
      return 'unreachable';
    };
    const crashed = outcome(runJavascript('await tools.crash({}); return 1', ['crash'], crash, 60_000, { pool }));
    const behind = runJavascript('return 2', [], noTools, 60_000, { pool });
    expect(await crashed).toMatch(/^Error: the sandbox stopped unexpectedly \(exit code \d+\)$/);
    expect(await behind).toBe('=> 2');
    expect(pool.stats()).toMatchObject({ spawned: 2, peakLive: 1 });
    await pool.close();
  });

  it('a worker ended by the deadline is replaced by an idle one, which the next call uses', async () => {
    const pool = createCodeSandboxPool({ maxWorkers: 2 });
    expect(await outcome(runJavascript('while (true) {}', [], noTools, 500, { pool }))).toBe('Error: code timed out after 500 ms');
    await vi.waitFor(
      () => {
        if (pool.stats().idle !== 1 || pool.stats().live !== 1) throw new Error('no replacement yet');
      },
      { timeout: 30_000, interval: 20 },
    );
    expect(pool.stats().spawned).toBe(2);
    expect(await runJavascript('return 3', [], noTools, 60_000, { pool })).toBe('=> 3');
    expect(pool.stats()).toMatchObject({ spawned: 2, reused: 1 });
    await pool.close();
  });

  it('after many runs of every ending, no worker is left but the idle ones, and none after close()', async () => {
    const pool = createCodeSandboxPool({ maxWorkers: 3 });
    const base = threads();
    const programs = [
      ['return 1', 60_000],
      ["throw new Error('no')", 60_000],
      ['while (true) {}', 400],
      ['function f() { return f() } f()', 60_000],
      ['const a = []; for (;;) a.push(new ArrayBuffer(1 << 20));', 60_000],
      ['await new Promise(() => {})', 60_000],
      ['return (', 60_000],
    ] as const;
    const calls: Promise<string>[] = [];
    for (let round = 0; round < 6; round++) {
      for (const [code, ms] of programs) calls.push(outcome(runJavascript(code, [], noTools, ms, { pool, memoryLimitBytes: 16 * 1024 * 1024 })));
      const controller = new AbortController();
      calls.push(outcome(runJavascript('while (true) {}', [], noTools, 60_000, { pool, signal: controller.signal })));
      setTimeout(() => controller.abort(new Error('stop')), 50);
    }
    const outputs = await Promise.all(calls);
    expect(outputs.filter((o) => o === '=> 1')).toHaveLength(6);
    expect(outputs.filter((o) => o.startsWith('Error: code aborted: stop'))).toHaveLength(6);
    expect(pool.stats().peakLive).toBeLessThanOrEqual(3);
    await settled(pool);
    const stats = pool.stats();
    expect(stats.queued).toBe(0);
    expect(stats.idle).toBeLessThanOrEqual(2);
    if (base !== undefined) expect(threads()! - base).toBe(stats.live);
    await pool.close();
    expect(pool.stats()).toMatchObject({ live: 0, idle: 0, busy: 0, queued: 0 });
    if (base !== undefined) expect(threads()).toBe(base);
  });

  it('an idle worker of another memory limit makes room for a waiting call (else it would wait out its deadline)', async () => {
    const pool = createCodeSandboxPool({ maxWorkers: 1 });
    expect(await runJavascript('return 16', [], noTools, 60_000, { pool, memoryLimitBytes: 16 * 1024 * 1024 })).toBe('=> 16');
    expect(pool.stats()).toMatchObject({ idle: 1, live: 1 });
    // Its limit is shorter than an idle worker's 10 s, so waiting for the idle one to expire would not do.
    expect(await runJavascript('return 32', [], noTools, 5_000, { pool, memoryLimitBytes: 32 * 1024 * 1024 })).toBe('=> 32');
    expect(pool.stats()).toMatchObject({ spawned: 2, reused: 0, peakLive: 1 });
    await pool.close();
  });

  it('a pool closed while a call is on its way in ends the call without a worker', async () => {
    const pool = createCodeSandboxPool({ maxWorkers: 1 });
    const racing = outcome(runJavascript('return 1', [], noTools, 60_000, { pool }));
    await pool.close();
    expect(await racing).toBe('Error: code aborted: the sandbox pool was closed (it never started: it waited for a sandbox worker; the pool has 1)');
    expect(pool.stats()).toMatchObject({ spawned: 0, live: 0 });
  });

  it('close() ends running and queued calls at once; the closed pool refuses code with a named error', async () => {
    const pool = createCodeSandboxPool({ maxWorkers: 1 });
    const running = outcome(runJavascript('while (true) {}', [], noTools, 60_000, { pool }));
    const queued = outcome(runJavascript('return 1', [], noTools, 60_000, { pool }));
    await vi.waitFor(
      () => {
        if (pool.stats().busy !== 1 || pool.stats().queued !== 1) throw new Error('not running and queued yet');
      },
      { timeout: 30_000, interval: 5 },
    );
    await pool.close();
    expect(pool.closed).toBe(true);
    expect(await running).toMatch(/^Error: code aborted: the sandbox pool was closed/);
    expect(await queued).toBe('Error: code aborted: the sandbox pool was closed (it never started: it waited for a sandbox worker; the pool has 1)');
    expect(pool.stats()).toMatchObject({ live: 0, busy: 0, queued: 0 });
    await expect(runJavascript('return 1', [], noTools, 1_000, { pool })).rejects.toBeInstanceOf(CodeSandboxClosedError);
    await pool.close();
  });
});

describe('an agent with its own pool', () => {
  it('runs within codeMaxWorkers; close() ends its workers, and code after it fails with the named error as its result', async () => {
    const base = threads();
    const programs = Array.from({ length: 4 }, (_, n) => `await tools.echo({ n: ${n} }); return ${n};`);
    const model = new ScriptedModelClient([
      { items: programs.map((code, i) => functionCall(`c${i}`, 'execute_javascript', { code })) },
      { outputText: 'done', items: [assistantMessage('done')] },
      { items: [functionCall('late', 'execute_javascript', { code: 'return 9' })] },
      { outputText: 'done again', items: [assistantMessage('done again')] },
    ]);
    const echo = defineTool({ name: 'echo', description: 'echo', parameters: z.object({ n: z.number() }), execute: ({ n }) => `echo ${n}` });
    const log = await openMemoryLog();
    const agent = Agents.codeAct({ modelClient: model, model: 'm', log, tools: [echo], codeMaxWorkers: 2, parallelToolCalls: 4, codeTimeoutMs: 60_000 });
    const session = await agent.newSession();
    await session.run('go');
    await agent.close();
    if (base !== undefined) expect(threads()).toBe(base);
    await session.run('again');
    const outer = toolResults(await readAll(log, session.id)).filter((r) => r.parentCallId === undefined);
    expect(outer.map((r) => r.output)).toEqual([
      '=> 0',
      '=> 1',
      '=> 2',
      '=> 3',
      'Error: the sandbox pool was closed: no more code runs in it (make a new pool, or a new agent)',
    ]);
    await agent.close();
  });

  it('agents given one codeSandboxPool share its bound', async () => {
    const pool = createCodeSandboxPool({ maxWorkers: 1 });
    const make = () =>
      Agents.codeAct({
        modelClient: new ScriptedModelClient([
          { items: [functionCall('c0', 'execute_javascript', { code: 'return 5' })] },
          { outputText: 'ok', items: [assistantMessage('ok')] },
        ]),
        model: 'm',
        codeSandboxPool: pool,
        codeTimeoutMs: 60_000,
      });
    const agents = [make(), make(), make()];
    const results = await Promise.all(agents.map(async (agent) => (await agent.newSession()).run('go')));
    expect(results.map((r) => r.outputText)).toEqual(['ok', 'ok', 'ok']);
    expect(pool.stats()).toMatchObject({ peakLive: 1, spawned: 1 });
    // The pool is the caller's: an agent's close() leaves it open.
    await agents[0]!.close();
    expect(pool.closed).toBe(false);
    await pool.close();
  });
});

describe('the tool bridge stops at the deadline', () => {
  it('a burst of 10,000 quick calls: none starts after the deadline', async () => {
    const starts: number[] = [];
    const quick: NestedToolCaller = async () => {
      starts.push(performance.now());
      return 'ok';
    };
    const code = 'const calls = []; for (let i = 0; i < 10000; i++) calls.push(tools.quick({ i })); await Promise.all(calls); return calls.length;';
    const timeoutMs = 1_000;
    const running = outcome(runJavascript(code, ['quick'], quick, timeoutMs));
    // runJavascript took its start time before it returned: the deadline is no later than this.
    const deadline = performance.now() + timeoutMs;
    const output = await running;
    expect(starts.filter((at) => at > deadline)).toEqual([]);
    if (output !== '=> 10000') expect(output).toMatch(/^Error: code timed out after 1000 ms/);
  });

  it('a burst of 10,000 calls in a CodeAct run: each started call is recorded once, all before the outer result', async () => {
    let started = 0;
    const quick = defineTool({
      name: 'quick',
      description: 'answers at once',
      parameters: z.object({ i: z.number() }),
      execute: ({ i }) => {
        started += 1;
        return `ok ${i}`;
      },
    });
    const code = 'const calls = []; for (let i = 0; i < 10000; i++) calls.push(tools.quick({ i })); await Promise.all(calls); return calls.length;';
    const model = new ScriptedModelClient([{ items: [functionCall('c0', 'execute_javascript', { code })] }, { outputText: 'done', items: [assistantMessage('done')] }]);
    const log = await openMemoryLog();
    const session = await Agents.codeAct({ modelClient: model, model: 'm', log, tools: [quick], codeTimeoutMs: 1_000 }).newSession();
    await session.run('go');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const events = await readAll(log, session.id);
    const results = toolResults(events);
    const outer = results.find((r) => r.callId === 'c0')!;
    const nested = results.filter((r) => r.parentCallId === 'c0');
    expect(nested).toHaveLength(started);
    expect(nested.every((r) => r.seq < outer.seq)).toBe(true);
    expect(results.at(-1)).toEqual(outer);
    expect(events.at(-1)?.type).toBe('run.finished');
    expect(checkSessionLaws(events)).toEqual([]);
  });

  it('a tool that holds the event loop past the deadline: the bridge starts no call after it, though the timer had no chance to fire (regression)', async () => {
    let calls = 0;
    let holdUntil = 0;
    const callTool: NestedToolCaller = async () => {
      calls += 1;
      // The fifth call blocks the host's event loop until well past the deadline: the timer cannot fire meanwhile.
      if (calls === 5) while (performance.now() < holdUntil);
      return 'ok';
    };
    const code = 'const calls = []; for (let i = 0; i < 1000; i++) calls.push(tools.t({ i })); await Promise.all(calls); return 1;';
    const pool = createCodeSandboxPool({ maxWorkers: 1 });
    // A warm worker, so the code starts well within its limit.
    expect(await runJavascript('return 0', [], noTools, 60_000, { pool })).toBe('=> 0');
    const timeoutMs = 3_000;
    const running = outcome(runJavascript(code, ['t'], callTool, timeoutMs, { pool }));
    holdUntil = performance.now() + timeoutMs + 300;
    expect(await running).toBe('Error: code timed out after 3000 ms');
    expect(calls).toBe(5);
    await pool.close();
  });
});

describe('pool options are checked', () => {
  const base = { modelClient: new ScriptedModelClient([]), model: 'm' };
  it.each([0, -1, 1.5, NaN, Infinity, '2', null])('maxWorkers: %s is refused with a named error', (value) => {
    const make = () => createCodeSandboxPool({ maxWorkers: value as number });
    expect(make).toThrow(InvalidCodeActOptionError);
    expect(make).toThrow(/^maxWorkers: expected a positive integer \(got /);
    for (const runtime of ['codeAct', 'react', 'deepResearch'] as const) {
      const agent = () => Agents[runtime]({ ...base, codeMaxWorkers: value as number });
      expect(agent).toThrow(InvalidCodeActOptionError);
      expect(agent).toThrow(/^codeMaxWorkers: expected a positive integer \(got /);
    }
  });

  it('a pool not made by createCodeSandboxPool, both pool options, or an unknown pool option are refused', () => {
    const fake = { maxWorkers: 2, closed: false, stats: () => ({}), close: async () => undefined } as unknown as CodeSandboxPool;
    expect(() => Agents.codeAct({ ...base, codeSandboxPool: fake })).toThrow(/^codeSandboxPool: expected a pool made by createCodeSandboxPool$/);
    expect(() => Agents.codeAct({ ...base, codeSandboxPool: createCodeSandboxPool(), codeMaxWorkers: 2 })).toThrow(
      /^codeSandboxPool: give codeMaxWorkers or codeSandboxPool, not both$/,
    );
    expect(() => executeJavascriptTool([], () => noTools, { pool: fake })).toThrow(/^pool: expected a pool made by createCodeSandboxPool$/);
    expect(() => createCodeSandboxPool({ max: 2 } as never)).toThrow(InvalidCodeActOptionError);
  });

  it('runJavascript refuses a pool that is not one', async () => {
    await expect(runJavascript('return 1', [], noTools, 1_000, { pool: {} as CodeSandboxPool })).rejects.toThrow(InvalidCodeActOptionError);
  });
});
