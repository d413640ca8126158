// Tools: zod-typed parameters, JSON Schema for the provider, validated calls whose failures the model sees.
import { type FactEventType, type NewSessionEventOf } from '../events/index.js';
import { errorText } from '../base/index.js';
import { InvalidOptionsError } from '../base/errors.js';
import type { ToolSpec } from '../model/index.js';
import { compileParameters, type CompiledParameters, type ToolArguments, type ToolParameters } from './tool-schema.js';

/** A fact a tool records (`context.record`): one of `FACT_EVENT_TYPES`. */
export type FactEvent = NewSessionEventOf<FactEventType>;

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

/** What `needsApproval` gets besides the call's arguments. */
export interface ApprovalCheckContext {
  readonly sessionId: string;
  readonly runId: string;
  readonly step: number;
  readonly callId: string;
}

export interface Tool<P extends ToolParameters = ToolParameters> {
  readonly name: string;
  readonly description: string;
  /** A zod 4 schema, a zod 3 schema, or a JSON Schema object (validated with ajv). */
  readonly parameters: P;
  /** JSON Schema sent to the provider instead of the one derived from `parameters` (a replay re-sends the recorded one). */
  readonly inputSchema?: Record<string, unknown>;
  execute(args: ToolArguments<P>, context: ToolContext): unknown | Promise<unknown>;
  /**
   * `true`, or a function of the validated arguments: the call waits for `session.approve` / `session.reject`
   * (`approval.requested`; the run resolves `interrupted`). A throwing function gives the call an error result.
   * Calls whose arguments do not parse or validate never ask (they fail without running).
   */
  readonly needsApproval?: boolean | ((args: ToolArguments<P>, context: ApprovalCheckContext) => boolean | Promise<boolean>);
}

const compiled = new WeakMap<object, CompiledParameters>();

const compiledOf = (tool: Tool): CompiledParameters => {
  let found = compiled.get(tool);
  if (!found) {
    found = compileParameters(tool.name, tool.parameters, { jsonSchema: tool.inputSchema });
    compiled.set(tool, found);
  }
  return found;
};

/**
 * Declares a tool with typed arguments. `parameters` is a zod 4 schema, a zod 3 schema, or a plain JSON
 * Schema (`type: 'object'`, validated with ajv); it is checked here, so a schema the provider cannot be sent
 * fails when the tool is defined (a TypeError naming the tool), not at the first step.
 * @example defineTool({ name: 'read_file', description: 'Read a file', parameters: z.object({ path: z.string() }), execute: ({ path }) => fs.readFile(path, 'utf8') })
 * @example defineTool({ name: 'ls', description: 'List a folder', parameters: { type: 'object', properties: { dir: { type: 'string' } }, required: ['dir'] }, execute: ({ dir }) => readdir(String(dir)) })
 */
export const defineTool = <P extends ToolParameters>(tool: Tool<P>): Tool<P> => {
  if (tool === null || typeof tool !== 'object') throw new InvalidOptionsError('defineTool', [{ path: '', message: 'expected a tool object' }]);
  if (typeof tool.name !== 'string' || tool.name.length === 0) throw new InvalidOptionsError('defineTool', [{ path: 'name', message: 'must be a non-empty string' }]);
  if (typeof tool.execute !== 'function') throw new InvalidOptionsError(`tool ${JSON.stringify(tool.name)}`, [{ path: 'execute', message: 'must be a function' }]);
  if (tool.needsApproval !== undefined && typeof tool.needsApproval !== 'boolean' && typeof tool.needsApproval !== 'function') {
    throw new InvalidOptionsError(`tool ${JSON.stringify(tool.name)}`, [{ path: 'needsApproval', message: 'must be a boolean or a function' }]);
  }
  compiled.set(tool, compileParameters(tool.name, tool.parameters, { jsonSchema: tool.inputSchema }));
  return tool;
};

const specs = new WeakMap<Tool, ToolSpec>();

/** The provider-facing spec of a tool: its parameters as JSON Schema. */
export const toolSpec = (tool: Tool): ToolSpec => {
  let spec = specs.get(tool);
  if (!spec) {
    const { $schema: _schema, ...parameters } = tool.inputSchema ?? compiledOf(tool).jsonSchema;
    spec = { type: 'function', name: tool.name, description: tool.description, parameters };
    specs.set(tool, spec);
  }
  return spec;
};

export interface ToolOutcome {
  readonly output: string;
  readonly isError: boolean;
}

const asOutput = (value: unknown): string => {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  try {
    return JSON.stringify(value) ?? errorText(value);
  } catch {
    return errorText(value);
  }
};

/**
 * Whether a call must wait for a person: `needsApproval` of its tool, asked with the validated arguments. Unknown
 * tools and arguments that do not parse or validate never ask (the call fails without running); a throw is returned as `failed`.
 */
export const approvalNeeded = async (
  tool: Tool | undefined,
  rawArguments: string,
  context: ApprovalCheckContext,
): Promise<{ readonly needed: boolean; readonly failed?: string }> => {
  const gate = tool?.needsApproval;
  if (gate === undefined || gate === false) return { needed: false };
  let args: unknown;
  try {
    args = rawArguments.trim() === '' ? {} : JSON.parse(rawArguments);
  } catch {
    return { needed: false };
  }
  const parsed = compiledOf(tool!).validate(args);
  if (!parsed.ok) return { needed: false };
  if (gate === true) return { needed: true };
  try {
    // Any truthy answer asks: a gate that returns 'yes' or 1 must not let the call through unasked.
    return { needed: Boolean(await gate(parsed.value as never, context)) };
  } catch (error) {
    return { needed: false, failed: `Error: needsApproval of ${tool!.name} failed: ${errorText(error)}` };
  }
};

/** Parses a call's JSON arguments, validates them and runs the tool; every failure becomes an `Error: …` result. */
export const runTool = async (tool: Tool | undefined, name: string, rawArguments: string, context: ToolContext): Promise<ToolOutcome> => {
  if (!tool) return { output: `Error: unknown tool ${JSON.stringify(name)}`, isError: true };
  let args: unknown;
  try {
    args = rawArguments.trim() === '' ? {} : JSON.parse(rawArguments);
  } catch (error) {
    return { output: `Error: arguments for ${name} are not valid JSON: ${errorText(error)}`, isError: true };
  }
  const parsed = compiledOf(tool).validate(args);
  if (!parsed.ok) return { output: `Error: invalid arguments for ${name}: ${parsed.message}`, isError: true };
  try {
    return { output: asOutput(await tool.execute(parsed.value as never, context)), isError: false };
  } catch (error) {
    return { output: `Error: ${errorText(error)}`, isError: true };
  }
};
