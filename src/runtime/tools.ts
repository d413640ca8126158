// Tools: zod-typed parameters, JSON Schema for the provider, validated calls whose failures the model sees.
import { z } from 'zod';
import type { NewSessionEventOf } from '../events/index.js';
import type { ToolSpec } from '../model/index.js';

export type FactEvent =
  | NewSessionEventOf<'command.failed'>
  | NewSessionEventOf<'test.result'>
  | NewSessionEventOf<'approval.recorded'>
  | NewSessionEventOf<'sandbox.state'>
  | NewSessionEventOf<'artifact.changed'>;

/** What a tool gets besides its arguments. */
export interface ToolContext {
  readonly sessionId: string;
  readonly runId: string;
  readonly step: number;
  readonly callId: string;
  readonly signal: AbortSignal;
  /** Records a fact (`test.result`, `command.failed`, `artifact.changed`, `approval.recorded`, `sandbox.state`) in the log. */
  record(fact: FactEvent): Promise<void>;
}

export interface Tool<P extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly description: string;
  readonly parameters: P;
  /** JSON Schema sent to the provider instead of the one derived from `parameters` (a replay re-sends the recorded one). */
  readonly inputSchema?: Record<string, unknown>;
  execute(args: z.output<P>, context: ToolContext): unknown | Promise<unknown>;
}

/**
 * Declares a tool with typed arguments.
 * @example defineTool({ name: 'read_file', description: 'Read a file', parameters: z.object({ path: z.string() }), execute: ({ path }) => fs.readFile(path, 'utf8') })
 */
export const defineTool = <P extends z.ZodType>(tool: Tool<P>): Tool<P> => tool;

const specs = new WeakMap<Tool, ToolSpec>();

/** The provider-facing spec of a tool: JSON Schema from zod's own converter. */
export const toolSpec = (tool: Tool): ToolSpec => {
  let spec = specs.get(tool);
  if (!spec) {
    const { $schema: _schema, ...parameters } = tool.inputSchema ?? (z.toJSONSchema(tool.parameters) as Record<string, unknown>);
    spec = { type: 'function', name: tool.name, description: tool.description, parameters };
    specs.set(tool, spec);
  }
  return spec;
};

export interface ToolOutcome {
  readonly output: string;
  readonly isError: boolean;
}

/** The message of an error from any realm (vm contexts have their own Error). */
export const messageOf = (error: unknown): string =>
  error !== null && typeof error === 'object' && typeof (error as { message?: unknown }).message === 'string'
    ? (error as { message: string }).message
    : String(error);

const asOutput = (value: unknown): string => {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
};

/** Parses a call's JSON arguments, validates them and runs the tool; every failure becomes an `Error: …` result. */
export const runTool = async (tool: Tool | undefined, name: string, rawArguments: string, context: ToolContext): Promise<ToolOutcome> => {
  if (!tool) return { output: `Error: unknown tool ${JSON.stringify(name)}`, isError: true };
  let args: unknown;
  try {
    args = rawArguments.trim() === '' ? {} : JSON.parse(rawArguments);
  } catch (error) {
    return { output: `Error: arguments for ${name} are not valid JSON: ${(error as Error).message}`, isError: true };
  }
  const parsed = tool.parameters.safeParse(args);
  if (!parsed.success) {
    return { output: `Error: invalid arguments for ${name}: ${z.prettifyError(parsed.error).replace(/\n/g, '; ')}`, isError: true };
  }
  try {
    return { output: asOutput(await tool.execute(parsed.data, context)), isError: false };
  } catch (error) {
    return { output: `Error: ${messageOf(error)}`, isError: true };
  }
};
