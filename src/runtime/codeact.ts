// CodeAct: the model writes JavaScript that runs in a node:vm context and calls tools from inside.
//
// The vm context has no `require`, `process`, module loader or file system, and string code generation
// is off. That is isolation against accidents, NOT a security boundary: host functions handed to the
// context (console, tools) can be used to reach the host realm. Run untrusted code in a real sandbox.
import vm from 'node:vm';
import { inspect } from 'node:util';
import { z } from 'zod';
import { CodeTimeoutError } from './errors.js';
import { defineTool, type Tool, type ToolContext } from './tools.js';

export const EXECUTE_JAVASCRIPT = 'execute_javascript';

/** Calls another tool from inside a tool (recorded as its own `tool.result` tied to the outer call). */
export type NestedToolCaller = (name: string, args: unknown) => Promise<string>;

const format = (value: unknown): string => (typeof value === 'string' ? value : inspect(value, { depth: 4, breakLength: 120 }));

const withTimeout = <T>(promise: Promise<T>, ms: number): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new CodeTimeoutError(ms)), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });

/**
 * Runs `code` as the body of an async function in a fresh vm context with `console` and `tools`
 * (each tool as `await tools.name(args)`, resolving to its output text). Returns the console output and
 * the returned value; throws on errors and after `timeoutMs`.
 */
export const runJavascript = async (
  code: string,
  toolNames: readonly string[],
  callTool: NestedToolCaller,
  timeoutMs: number,
): Promise<string> => {
  const lines: string[] = [];
  const log = (...args: unknown[]): void => {
    lines.push(args.map(format).join(' '));
  };
  const tools = Object.freeze(Object.fromEntries(toolNames.map((name) => [name, (args: unknown) => callTool(name, args ?? {})])));
  const context = vm.createContext(
    { console: Object.freeze({ log, info: log, warn: log, error: log }), tools },
    { codeGeneration: { strings: false, wasm: false }, name: 'codeact' },
  );
  const script = new vm.Script(`(async () => {\n${code}\n})()`, { filename: 'codeact.js' });
  const started = script.runInContext(context, { timeout: timeoutMs }) as Promise<unknown>;
  const value = await withTimeout(Promise.resolve(started), timeoutMs);
  if (value !== undefined) lines.push(`=> ${format(value)}`);
  return lines.join('\n');
};

/** The one tool a CodeAct model calls. Its output is the console output and returned value; errors become `Error: …`. */
export const executeJavascriptTool = (
  innerTools: readonly Tool[],
  callNested: (context: ToolContext) => NestedToolCaller,
  timeoutMs: number,
): Tool => {
  const names = innerTools.map((t) => t.name);
  const listing = innerTools.map((t) => `- tools.${t.name}(args): ${t.description}`).join('\n');
  return defineTool({
    name: EXECUTE_JAVASCRIPT,
    description:
      'Run JavaScript (the body of an async function). Use console.log to show results and `return` a value. ' +
      `No require, process or file system. Time limit ${timeoutMs} ms.` +
      (names.length ? `\nTools (await them; each resolves to its output text):\n${listing}` : ''),
    parameters: z.object({ code: z.string().describe('JavaScript source: the body of an async function') }),
    execute: ({ code }, context) => runJavascript(code, names, callNested(context), timeoutMs),
  });
};
