// CodeAct: the model writes JavaScript that runs in a QuickJS (WebAssembly) sandbox and calls tools from inside.
//
// Each call gets a fresh QuickJS runtime in a worker thread of a bounded pool, with no host object in
// reach: its only ways out are `console.*` (text) and `tools.*` (JSON arguments in, output text back).
// Limits: memory (the WebAssembly memory's hard cap), a wall-clock deadline from the call that a host
// timer enforces (the wait for a worker and tool time included), console output. See docs/runtime.md and docs/decisions/0013-codeact-sandbox.md.
import { z } from 'zod';
import { CodeExecutionError } from './errors.js';
import { parseCodeActLimits, type CodeActLimits } from './sandbox/options.js';
import { runInSandbox } from './sandbox/run.js';
import { workerPoolOf, type CodeSandboxPool } from './sandbox/worker-pool.js';
import { defineTool, type Tool, type ToolContext } from './tools.js';

export const EXECUTE_JAVASCRIPT = 'execute_javascript';

/** What a CodeAct run adds to the agent's system prompt. */
export const CODEACT_PROMPT =
  'Solve the task by writing JavaScript and running it with the execute_javascript tool. Reply without a tool call when done.';

/** Options of one nested call. */
export interface NestedCallOptions {
  /** Aborts when the code's run ends early (deadline, error, abort): the call is then abandoned. */
  readonly signal?: AbortSignal;
}

/** Calls another tool from inside a tool (recorded as its own `tool.result` tied to the outer call). */
export type NestedToolCaller = (name: string, args: unknown, options?: NestedCallOptions) => Promise<string>;

/** Options of `runJavascript` besides the time limit. */
export interface RunJavascriptOptions {
  /** The sandbox's memory cap (default 64 MiB, at least 16 MiB). */
  readonly memoryLimitBytes?: number;
  /** Ends the code like the deadline does (the run's signal); a call still waiting for a worker ends at once. */
  readonly signal?: AbortSignal;
  /** The workers the code runs in (default: one pool shared by the process, `os.availableParallelism()` workers). */
  readonly pool?: CodeSandboxPool;
}

/** The limits of `executeJavascriptTool`, and the pool its code runs in. */
export interface ExecuteJavascriptOptions extends CodeActLimits {
  /** The workers the code runs in (default: one pool shared by the process). */
  readonly pool?: CodeSandboxPool;
}

/**
 * Runs `code` as the body of an async function in a fresh QuickJS sandbox with `console` and `tools`
 * (each tool as `await tools.name(args)`, resolving to its output text; calls run one at a time).
 * Returns the console output and the returned value (`=> value`); throws with the reason when the
 * code throws, times out (`timeoutMs` from this call: the wait for a worker of the pool, its start and
 * tool time included) or runs out of memory. A closed pool rejects with `CodeSandboxClosedError`.
 * @example await runJavascript('console.log(await tools.echo({ text: "hi" })); return 6 * 7', ['echo'], callTool, 5_000) // 'echo: hi\n=> 42'
 */
export const runJavascript = async (
  code: string,
  toolNames: readonly string[],
  callTool: NestedToolCaller,
  timeoutMs: number,
  options: RunJavascriptOptions = {},
): Promise<string> => {
  const calledAt = performance.now();
  const limits = parseCodeActLimits({
    timeoutMs,
    ...(options.memoryLimitBytes !== undefined ? { memoryLimitBytes: options.memoryLimitBytes } : {}),
  });
  const outcome = await runInSandbox({
    code,
    toolNames,
    callTool: (name, args, { signal }) => callTool(name, args, { signal }),
    ...limits,
    calledAt,
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
    ...(options.pool !== undefined ? { pool: options.pool } : {}),
  });
  if (outcome.error === undefined) return outcome.output;
  throw new CodeExecutionError(outcome.output === '' ? outcome.error : `${outcome.error}\nconsole output before the error:\n${outcome.output}`);
};

/**
 * The one tool a CodeAct model calls. Its output is the console output and returned value; errors
 * become `Error: …`. `limits` is the time limit in ms, or `{ timeoutMs, memoryLimitBytes, pool }`; a bad
 * value throws `InvalidCodeActOptionError` here, when the agent is built.
 * @example executeJavascriptTool(tools, (context) => context.callTool, { timeoutMs: 5_000, memoryLimitBytes: 64 * 1024 * 1024 })
 */
export const executeJavascriptTool = (
  innerTools: readonly Tool[],
  callNested: (context: ToolContext) => NestedToolCaller,
  limits: number | ExecuteJavascriptOptions = {},
): Tool => {
  const { pool, ...codeLimits } = typeof limits === 'number' ? { timeoutMs: limits } : limits;
  const { timeoutMs, memoryLimitBytes } = parseCodeActLimits(codeLimits);
  if (pool !== undefined) workerPoolOf(pool, 'pool');
  const names = innerTools.map((t) => t.name);
  const listing = innerTools.map((t) => `- tools.${t.name}(args): ${t.description}`).join('\n');
  return defineTool({
    name: EXECUTE_JAVASCRIPT,
    description:
      'Run JavaScript (the body of an async function) in a sandbox. Use console.log to show results and `return` a value. ' +
      `No require, process, file system, network or timers. Time limit ${timeoutMs} ms including tool calls.` +
      (names.length ? `\nTools (await them; each resolves to its output text; calls run one at a time):\n${listing}` : ''),
    parameters: z.object({ code: z.string().describe('JavaScript source: the body of an async function') }),
    execute: ({ code }, context) => runJavascript(code, names, callNested(context), timeoutMs, { memoryLimitBytes, signal: context.signal, ...(pool !== undefined ? { pool } : {}) }),
  });
};
