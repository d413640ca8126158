import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  Agents,
  CodeSandboxUnavailableError,
  InvalidCodeActOptionError,
  ScriptedModelClient,
  assistantMessage,
  defineTool,
  functionCall,
  ensureCodeSandbox,
  isAgentRunError,
  openMemoryLog,
  type ModelResult,
  type SessionEvent,
  type SessionEventLog,
} from '../../src/index.js';
import { runJavascript } from '../../src/runtime/codeact.js';
import { loadCodeSandbox } from '../../src/runtime/sandbox/load.js';
import { defaultCodeSandboxPool } from '../../src/runtime/sandbox/worker-pool.js';
import { checkSessionLaws } from '../../src/testing/runtime-laws.js';

const MiB = 1024 * 1024;
const readAll = async (log: SessionEventLog, id: string): Promise<SessionEvent[]> => {
  const out: SessionEvent[] = [];
  for await (const e of log.read(id)) out.push(e);
  return out;
};
type ToolResultEvent = Extract<SessionEvent, { type: 'tool.result' }>;
const toolResults = (events: readonly SessionEvent[]): ToolResultEvent[] => events.filter((e): e is ToolResultEvent => e.type === 'tool.result');
const final = (text: string): ModelResult => ({ outputText: text, items: [assistantMessage(text)] });
const noTools = async (): Promise<string> => {
  throw new Error('no tools here');
};
const run = (code: string, timeoutMs = 5_000, memoryLimitBytes?: number): Promise<string> =>
  runJavascript(code, [], noTools, timeoutMs, memoryLimitBytes === undefined ? {} : { memoryLimitBytes });

/** Runs each program as its own execute_javascript call of one CodeAct run; returns the run's events. */
const runCodeAct = async (
  programs: readonly string[],
  options: {
    tools?: Parameters<typeof Agents.codeAct>[0]['tools'];
    codeTimeoutMs?: number;
    codeMemoryLimitBytes?: number;
    codeMaxWorkers?: number;
    parallelToolCalls?: number;
    settleMs?: number;
  } = {},
): Promise<SessionEvent[]> => {
  const model = new ScriptedModelClient([{ items: programs.map((code, i) => functionCall(`c${i}`, 'execute_javascript', { code })) }, final('done')]);
  const log = await openMemoryLog();
  let n = 0;
  const agent = Agents.codeAct({
    modelClient: model,
    model: 'm',
    log,
    ids: () => `id-${++n}`,
    ...(options.tools ? { tools: options.tools } : {}),
    ...(options.codeTimeoutMs !== undefined ? { codeTimeoutMs: options.codeTimeoutMs } : {}),
    ...(options.codeMemoryLimitBytes !== undefined ? { codeMemoryLimitBytes: options.codeMemoryLimitBytes } : {}),
    ...(options.codeMaxWorkers !== undefined ? { codeMaxWorkers: options.codeMaxWorkers } : {}),
    ...(options.parallelToolCalls !== undefined ? { parallelToolCalls: options.parallelToolCalls } : {}),
  });
  const session = await agent.newSession();
  await session.run('go');
  await agent.close();
  if (options.settleMs) await new Promise((resolve) => setTimeout(resolve, options.settleMs));
  return readAll(log, session.id);
};

const counterTool = (delayMs: number) => {
  const state = { running: 0, maxRunning: 0, started: [] as number[], finished: [] as number[], signals: [] as AbortSignal[] };
  const tool = defineTool({
    name: 'tick',
    description: 'Count a tick',
    parameters: z.object({ n: z.number() }),
    execute: async ({ n }, context) => {
      state.running += 1;
      state.maxRunning = Math.max(state.maxRunning, state.running);
      state.started.push(n);
      state.signals.push(context.signal);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      state.running -= 1;
      state.finished.push(n);
      return `tick ${n}`;
    },
  });
  return { tool, state };
};

describe('CodeAct sandbox: the faults that took the host down under node:vm', () => {
  it('each attack ends its call with an error result and the process lives (child process)', async () => {
    const script = fileURLToPath(new URL('../../test/support/codeact-attacks.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exitCode = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).toBe('');
    expect(exitCode).toBe(0);
    const report = JSON.parse(stdout.trim()) as {
      names: string[];
      outputText: string;
      finishedAt: number;
      executions: { n: number; at: number }[];
      events: SessionEvent[];
    };
    expect(report.outputText).toBe('done');
    const results = toolResults(report.events);
    const outer = (i: number): ToolResultEvent => results.find((r) => r.callId === `a${i}`)!;
    const index = (name: string): number => report.names.indexOf(name);

    // A floating rejection is the code's own business: the call returns, the host goes on.
    expect(outer(index('floatingRejection'))).toMatchObject({ output: '=> survived', isError: false });
    // A loop after the first await ends by the deadline.
    expect(outer(index('loopAfterAwait'))).toMatchObject({ output: 'Error: code timed out after 2000 ms', isError: true });
    // An allocation after an await ends with an error (out of memory, or the deadline on a slow machine).
    expect(outer(index('allocationAfterAwait')).output).toMatch(/^Error: code (ran out of memory \(limit 33554432 bytes\)|timed out after 2000 ms)$/);
    // The escape finds no process.
    expect(outer(index('escape'))).toMatchObject({ output: "Error: ReferenceError: 'process' is not defined", isError: true });

    // Tool calls after the deadline: none is run or recorded after the outer result.
    const loopCall = `a${index('toolCallsAfterTimeout')}`;
    const loopOuter = outer(index('toolCallsAfterTimeout'));
    expect(loopOuter.output).toMatch(/^Error: code timed out after 2000 ms/);
    const nested = results.filter((r) => r.parentCallId === loopCall);
    expect(nested.length).toBeGreaterThan(0);
    for (const r of nested) expect(r.seq).toBeLessThan(loopOuter.seq);
    const runFinished = report.events.find((e) => e.type === 'run.finished')!;
    expect(results.every((r) => r.seq < runFinished.seq)).toBe(true);
    expect(report.events.at(-1)?.type).toBe('run.finished');
    // Every tick the loop started is recorded once: done, or abandoned at the deadline (the last one).
    const started = report.executions.filter((e) => e.n >= 1).length;
    const abandoned = nested.filter((r) => r.output.startsWith('Error: abandoned: code timed out after 2000 ms'));
    expect(abandoned.length).toBeLessThanOrEqual(1);
    expect(nested.length - abandoned.length).toBeLessThanOrEqual(started);
    expect(nested.length).toBeGreaterThanOrEqual(started);
    expect(checkSessionLaws(report.events)).toEqual([]);
  });

  it('escape: the constructor chain, globalThis and the usual globals reach no host object', async () => {
    const probe =
      "const F = this.constructor.constructor; return [typeof F('return typeof process')() , F('return typeof process')(), typeof globalThis.process, typeof require, typeof module, typeof setTimeout, typeof fetch, typeof Deno, typeof Bun, typeof tools.constructor.constructor('return this')().process].join(' ')";
    expect(await run(probe)).toBe('=> string undefined undefined undefined undefined undefined undefined undefined undefined undefined');
    await expect(run("return this.constructor.constructor('return process')()")).rejects.toThrow("ReferenceError: 'process' is not defined");
    await expect(run("return console.log.constructor('return process')()")).rejects.toThrow("ReferenceError: 'process' is not defined");
  });

  // The deadline counts a worker's start too: limits of 2 s leave a busy test machine room to start one.
  it('an infinite synchronous loop ends by the deadline', async () => {
    await expect(run('while (true) {}', 2_000)).rejects.toThrow(/^code timed out after 2000 ms$/);
  });

  it('an async loop after an await ends by the deadline, also one that yields forever', async () => {
    const { tool } = counterTool(5);
    const events = await runCodeAct(['await tools.tick({ n: 1 }); for (;;) {}', 'for (;;) await null;', 'while (true) await Promise.resolve(1);'], {
      tools: [tool],
      codeTimeoutMs: 2_000,
      codeMaxWorkers: 3,
      parallelToolCalls: 3,
    });
    const outer = toolResults(events).filter((r) => r.parentCallId === undefined);
    expect(outer.map((r) => r.output)).toEqual(Array(3).fill('Error: code timed out after 2000 ms'));
  });

  it('a big allocation ends with an out-of-memory error, after an await too', async () => {
    const limit = 32 * MiB;
    const oom = `Error: code ran out of memory (limit ${limit} bytes)`;
    const { tool } = counterTool(1);
    const events = await runCodeAct(
      ['return new ArrayBuffer(1e9).byteLength;', 'await tools.tick({ n: 1 }); const a = []; for (;;) a.push(new ArrayBuffer(1 << 20));'],
      { tools: [tool], codeTimeoutMs: 20_000, codeMemoryLimitBytes: limit },
    );
    const outer = toolResults(events).filter((r) => r.parentCallId === undefined);
    expect(outer.map((r) => r.output)).toEqual([oom, oom]);
  });

  it("strings QuickJS's own allocator does not count are capped by the WebAssembly memory (regression)", async () => {
    // In this QuickJS build 'x'.repeat(n) escapes setMemoryLimit: 1,500 such strings grew a 32 MiB runtime to 150 MB.
    await expect(run("const a = []; for (;;) a.push('x'.repeat(1e5) + a.length);", 20_000, 32 * MiB)).rejects.toThrow(
      `code ran out of memory (limit ${32 * MiB} bytes)`,
    );
  });

  it('a worker is reused after a call that ended normally, with a fresh QuickJS each time; never after a deadline', async () => {
    expect(await run('globalThis.mark = 1; return typeof mark;')).toBe('=> number');
    const before = defaultCodeSandboxPool().stats();
    expect(await run('return typeof globalThis.mark;')).toBe('=> undefined');
    const after = defaultCodeSandboxPool().stats();
    expect(after.reused).toBe(before.reused + 1);
    expect(after.released).toBe(before.released + 1);
    await expect(run('while (true) {}', 200)).rejects.toThrow('code timed out after 200 ms');
    // The timed-out worker is ended, not given back.
    expect(defaultCodeSandboxPool().stats().released).toBe(after.released);
    expect(await run('return 2;')).toBe('=> 2');
    expect(defaultCodeSandboxPool().stats().released).toBe(after.released + 1);
  });

  it('deep recursion ends with an error, and the next call works', async () => {
    await expect(run('function f(n) { return f(n + 1) + 1 } return f(0)')).rejects.toThrow(/call stack|stack overflow/);
    expect(await run('return 1 + 1')).toBe('=> 2');
  });

  it('no tool call is started after the deadline, a running one is abandoned, and nothing is recorded after the outer result', async () => {
    const { tool, state } = counterTool(60);
    const events = await runCodeAct(['for (let n = 1; ; n++) await tools.tick({ n });'], { tools: [tool], codeTimeoutMs: 2_000, settleMs: 300 });
    const results = toolResults(events);
    const outer = results.find((r) => r.callId === 'c0')!;
    expect(outer.output).toBe('Error: code timed out after 2000 ms (tools.tick was running; its call is abandoned)');
    const nested = results.filter((r) => r.parentCallId === 'c0');
    expect(nested.every((r) => r.seq < outer.seq)).toBe(true);
    expect(nested.at(-1)!.output).toBe('Error: abandoned: code timed out after 2000 ms');
    // The abandoned call's signal was aborted; it finished later and nothing more was recorded.
    expect(state.signals.at(-1)!.aborted).toBe(true);
    expect(state.started.length).toBe(nested.length);
    expect(state.finished.length).toBe(state.started.length);
    expect(events.at(-1)?.type).toBe('run.finished');
  });

  it('a tool that never returns is abandoned at the deadline', async () => {
    const hang = defineTool({ name: 'hang', description: 'never returns', parameters: z.object({}), execute: () => new Promise<string>(() => {}) });
    const events = await runCodeAct(["console.log('before'); await tools.hang({}); console.log('never');"], { tools: [hang], codeTimeoutMs: 2_000 });
    const results = toolResults(events);
    expect(results.map((r) => [r.callId, r.output])).toEqual([
      ['c0.1', 'Error: abandoned: code timed out after 2000 ms'],
      ['c0', 'Error: code timed out after 2000 ms (tools.hang was running; its call is abandoned)\nconsole output before the error:\nbefore'],
    ]);
  });

  it('an abandoned call cannot record facts after the deadline', async () => {
    let recordError = '';
    const slow = defineTool({
      name: 'slow',
      description: 'records a fact late',
      parameters: z.object({}),
      execute: async (_args, context) => {
        // It records only once it has been abandoned (the deadline aborted its signal), a little later.
        await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }));
        await new Promise((resolve) => setTimeout(resolve, 50));
        await context.record({ type: 'command.failed', command: 'late', exitCode: 1 }).catch((e: Error) => (recordError = e.message));
        return 'late';
      },
    });
    const events = await runCodeAct(['await tools.slow({});'], { tools: [slow], codeTimeoutMs: 2_000, settleMs: 600 });
    expect(events.some((e) => e.type === 'command.failed')).toBe(false);
    expect(recordError).toBe('not recorded: the call was abandoned (code timed out after 2000 ms)');
    expect(events.at(-1)?.type).toBe('run.finished');
  });

  it('a tool named like an Object.prototype property is still a plain tool', async () => {
    const proto = defineTool({ name: '__proto__', description: 'odd name', parameters: z.object({}), execute: () => 'proto ok' });
    const events = await runCodeAct(["return [await tools['__proto__']({}), Object.keys(tools).join(',')];"], { tools: [proto] });
    expect(toolResults(events).at(-1)!.output).toBe('=> ["proto ok","__proto__"]');
  });

  it('two sessions run code at the same time without sharing anything', async () => {
    const [a, b] = await Promise.all([
      runCodeAct(["globalThis.mark = 'a'; await tools.tick({ n: 1 }); return globalThis.mark;"], { tools: [counterTool(50).tool] }),
      runCodeAct(["globalThis.mark = 'b'; await tools.tick({ n: 2 }); return globalThis.mark;"], { tools: [counterTool(50).tool] }),
    ]);
    expect(toolResults(a!).at(-1)!.output).toBe('=> a');
    expect(toolResults(b!).at(-1)!.output).toBe('=> b');
  });

  it('tool calls from inside run one at a time, in the order the code makes them', async () => {
    const { tool, state } = counterTool(20);
    const events = await runCodeAct(['const r = await Promise.all([1, 2, 3].map((n) => tools.tick({ n }))); return r;'], { tools: [tool] });
    expect(state.maxRunning).toBe(1);
    expect(state.started).toEqual([1, 2, 3]);
    const results = toolResults(events);
    expect(results.map((r) => [r.callId, r.parentCallId, r.output])).toEqual([
      ['c0.1', 'c0', 'tick 1'],
      ['c0.2', 'c0', 'tick 2'],
      ['c0.3', 'c0', 'tick 3'],
      ['c0', undefined, '=> ["tick 1","tick 2","tick 3"]'],
    ]);
  });

  it('a tool started but not awaited is finished and recorded before the outer result; queued calls are not started', async () => {
    const { tool, state } = counterTool(50);
    const events = await runCodeAct(["tools.tick({ n: 1 }); tools.tick({ n: 2 }); return 'early';"], { tools: [tool], settleMs: 200 });
    const results = toolResults(events);
    expect(results.map((r) => [r.callId, r.output])).toEqual([
      ['c0.1', 'tick 1'],
      ['c0', '=> early'],
    ]);
    expect(state.started).toEqual([1]);
  });

  it('tool errors reach the code as exceptions; the code may catch them', async () => {
    const fail = defineTool({ name: 'fail', description: 'fails', parameters: z.object({}), execute: () => Promise.reject(new Error('disk full')) });
    const events = await runCodeAct(
      ["try { await tools.fail({}); } catch (e) { console.log('caught', e.message); } return 1;", 'await tools.fail({});', 'await tools.fail(1n);'],
      { tools: [fail] },
    );
    const outer = toolResults(events).filter((r) => r.parentCallId === undefined);
    expect(outer.map((r) => r.output)).toEqual(['caught disk full\n=> 1', 'Error: disk full', 'Error: TypeError: Do not know how to serialize a BigInt']);
  });

  it('a tool output too big for the sandbox memory reaches the code as an error, not a crash', async () => {
    const big = defineTool({ name: 'big', description: 'huge output', parameters: z.object({}), execute: () => 'z'.repeat(5_000_000) });
    const events = await runCodeAct(["try { await tools.big({}); } catch (e) { return e.message; }"], { tools: [big], codeMemoryLimitBytes: 16 * MiB });
    expect(toolResults(events).at(-1)!.output).toBe('=> tool output too large for the sandbox (5000000 characters)');
  });

  it('console output: values as JSON, output before an error kept, and capped', async () => {
    expect(await run("console.log('a', 1, { b: [2] }, null, undefined, 3n); console.error(new TypeError('t')); return { ok: true };")).toBe(
      'a 1 {"b":[2]} null undefined 3n\nTypeError: t\n=> {"ok":true}',
    );
    await expect(run("console.log('step 1'); throw new Error('bad code');")).rejects.toThrow('bad code\nconsole output before the error:\nstep 1');
    expect(await run("return 'v'.repeat(300000);")).toBe(`=> ${'v'.repeat(100_000)} [cut at 100000 characters]`);
    await expect(run("throw new Error('e'.repeat(300000));")).rejects.toThrow(`${'e'.repeat(100_000)} [cut at 100000 characters]`);
    const out = await run("for (let i = 0; i < 1e4; i++) console.log('y'.repeat(100)); return 'end';");
    expect(out.length).toBeLessThan(110_000);
    expect(out).toMatch(/\[console output cut at 100000 characters\]\n=> end$/);
  });

  it('code that replaces built-ins does not break the bridge; a value whose toJSON loops ends by the deadline', async () => {
    const { tool } = counterTool(1);
    const events = await runCodeAct(
      [
        "JSON.stringify = () => { throw new Error('hijacked'); }; Array.prototype.map = null; String.prototype.slice = null; const t = await tools.tick({ n: 7 }); console.log(t, [1]); return t;",
        'return { toJSON() { for (;;) {} } };',
      ],
      { tools: [tool], codeTimeoutMs: 2_000 },
    );
    const outer = toolResults(events).filter((r) => r.parentCallId === undefined);
    expect(outer.map((r) => r.output)).toEqual(['tick 7 [1]\n=> tick 7', 'Error: code timed out after 2000 ms']);
  });

  it('a promise nothing settles ends at once, a syntax error is an error', async () => {
    await expect(run('await new Promise(() => {});')).rejects.toThrow('the code awaits a promise that nothing will settle');
    await expect(run('return (')).rejects.toThrow(/^SyntaxError: /);
  });

  it('aborting the run stops the code', async () => {
    const controller = new AbortController();
    // The code says it has started (a tool call), then loops; the abort comes once it loops.
    const started = defineTool({
      name: 'started',
      description: 'says the code runs',
      parameters: z.object({}),
      execute: () => {
        setTimeout(() => controller.abort(new Error('user stop')), 50);
        return 'ok';
      },
    });
    const code = 'await tools.started({}); while (true) {}';
    const model = new ScriptedModelClient([{ items: [functionCall('c0', 'execute_javascript', { code })] }, final('done')]);
    const log = await openMemoryLog();
    const session = await Agents.codeAct({ modelClient: model, model: 'm', log, tools: [started], codeTimeoutMs: 60_000 }).newSession();
    const error = await session.run('go', { signal: controller.signal }).catch((e: unknown) => e);
    expect(isAgentRunError(error) && error.reason).toBe('aborted');
    const results = toolResults(await readAll(log, session.id));
    expect(results.map((r) => r.output)).toEqual(['ok', 'Error: code aborted: user stop']);
  });
});

describe('CodeAct options and the optional peers', () => {
  const base = { modelClient: new ScriptedModelClient([]), model: 'm' };
  it.each([
    ['codeTimeoutMs', NaN],
    ['codeTimeoutMs', 0],
    ['codeTimeoutMs', -5],
    ['codeTimeoutMs', Infinity],
    ['codeMemoryLimitBytes', NaN],
    ['codeMemoryLimitBytes', 1024],
    ['codeMemoryLimitBytes', 32 * MiB + 0.5],
    ['codeMemoryLimitBytes', Infinity],
    ['codeMemoryLimitBytes', 4096 * MiB],
  ])('%s: %s is refused with a named error', (option, value) => {
    const build = () => Agents.codeAct({ ...base, [option]: value });
    expect(build).toThrow(InvalidCodeActOptionError);
    expect(build).toThrow(new RegExp(`^${option}: `));
  });

  it('runJavascript refuses bad limits too', async () => {
    await expect(runJavascript('return 1', [], noTools, NaN)).rejects.toThrow(/^codeTimeoutMs: .*got NaN/);
    await expect(runJavascript('return 1', [], noTools, 100, { memoryLimitBytes: -1 })).rejects.toThrow(InvalidCodeActOptionError);
  });

  it('ensureCodeSandbox resolves when the peers are installed', async () => {
    await expect(ensureCodeSandbox()).resolves.toBeUndefined();
  });

  it('a missing peer gives CodeSandboxUnavailableError naming it and how to install', async () => {
    const missing = (specifier: string): Promise<unknown> =>
      specifier === '@jitl/quickjs-wasmfile-release-asyncify' ? Promise.reject(Object.assign(new Error(`Cannot find package '${specifier}'`), { code: 'ERR_MODULE_NOT_FOUND' })) : import(specifier);
    const error = await loadCodeSandbox(missing).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CodeSandboxUnavailableError);
    expect((error as CodeSandboxUnavailableError).missing).toBe('@jitl/quickjs-wasmfile-release-asyncify');
    expect((error as Error).message).toMatch(/npm install quickjs-emscripten-core@\^0\.32 @jitl\/quickjs-wasmfile-release-asyncify@\^0\.32/);
  });

  it('without the peers installed, a CodeAct run fails with CodeSandboxUnavailableError before recording a run (child process)', async () => {
    const hooks = `export async function resolve(specifier, context, next) { if (specifier === 'quickjs-emscripten-core' || specifier.startsWith('@jitl/')) { const e = new Error('Cannot find package ' + specifier); e.code = 'ERR_MODULE_NOT_FOUND'; throw e; } return next(specifier, context); }`;
    const register = `import { register } from 'node:module'; register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hooks)}));`;
    const main = `
      const { Agents, ScriptedModelClient, openMemoryLog } = await import(${JSON.stringify(new URL('../../src/index.ts', import.meta.url).href)});
      const log = await openMemoryLog();
      const session = await Agents.codeAct({ modelClient: new ScriptedModelClient([]), model: 'm', log }).newSession();
      const error = await session.run('go').catch((e) => e);
      const types = []; for await (const e of log.read(session.id)) types.push(e.type);
      console.log(JSON.stringify({ name: error.name, code: error.code, missing: error.missing, types }));`;
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--import', `data:text/javascript,${encodeURIComponent(register)}`, '--input-type=module', '-e', main],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exitCode = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).toBe('');
    expect(exitCode).toBe(0);
    expect(JSON.parse(stdout.trim())).toEqual({
      name: 'CodeSandboxUnavailableError',
      code: 'CODE_SANDBOX_UNAVAILABLE',
      missing: 'quickjs-emscripten-core',
      types: ['session.started'],
    });
  });
});
