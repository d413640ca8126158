// The zod schemas of the runtime's options: Agents.react / deepResearch / codeAct and run().
import { z } from 'zod';
import type { CompactPolicy } from '../compact/index.js';
import type { ContextProjector } from '../context/index.js';
import { functionOption, objectWithMethods } from '../base/options.js';
import type { SessionEventLog } from '../log/index.js';
import type { ModelClient } from '../model/index.js';
import { HOOK_NAMES } from './hooks.js';

/** A tool as `defineTool` makes it: a non-empty name, a description, a zod schema and `execute`. */
export const ToolOptionSchema = z.looseObject({
  name: z.string().min(1),
  description: z.string(),
  parameters: objectWithMethods<z.ZodType>('a zod schema', 'safeParse'),
  execute: functionOption(),
  needsApproval: z.union([z.boolean(), functionOption()]).optional(),
});

/** The lifecycle hooks: each a function; any other key is a typo. */
export const AgentHooksSchema = z.strictObject(Object.fromEntries(HOOK_NAMES.map((name) => [name, functionOption().optional()])));

/** The shape of `AgentOptions`, one schema per option (NaN, Infinity, negative counts and unknown options are errors). */
export const agentOptionsShape = {
  modelClient: objectWithMethods<ModelClient>('a ModelClient', 'create'),
  model: z.string().min(1),
  systemPrompt: z.string().optional(),
  tools: z.array(ToolOptionSchema).optional(),
  log: objectWithMethods<SessionEventLog>('a SessionEventLog', 'append', 'read', 'head').optional(),
  contextProjector: objectWithMethods<ContextProjector>('a ContextProjector', 'project', 'describe').optional(),
  /** Checked in full by `parseContextBudget` (InvalidBudgetError). */
  contextBudget: z.looseObject({}).optional(),
  compactPolicy: objectWithMethods<CompactPolicy>('a CompactPolicy', 'compact').optional(),
  hooks: AgentHooksSchema.optional(),
  onEvent: functionOption().optional(),
  maxSteps: z.number().int().positive().optional(),
  ids: functionOption().optional(),
  checkpointEvery: z.number().int().nonnegative().optional(),
  /** Count each item with the projector's tokenizer once stored, in the background (openSession's `countTokensOnWrite`). */
  countTokensOnWrite: z.boolean().optional(),
  /** How many times a step recovers from a provider's context overflow (compact, project tighter, retry) before the run fails (default 2). */
  overflowRetries: z.number().int().nonnegative().optional(),
  /** Checked by `parseCodeActLimits` for every runtime (InvalidCodeActOptionError naming the option). */
  codeTimeoutMs: z.unknown().optional(),
  /** Checked by `parseCodeActLimits` for every runtime (InvalidCodeActOptionError naming the option). */
  codeMemoryLimitBytes: z.unknown().optional(),
  /** Checked by `parseMaxWorkers` for every runtime (InvalidCodeActOptionError naming the option). */
  codeMaxWorkers: z.unknown().optional(),
  /** Checked for every runtime: a pool from `createCodeSandboxPool`, not with `codeMaxWorkers` (InvalidCodeActOptionError). */
  codeSandboxPool: z.unknown().optional(),
  /** The most calls of one answer that run at once: a positive integer, `true` (all) or `false` (one). */
  parallelToolCalls: z.union([z.boolean(), z.number().int().positive()]).optional(),
  /** Checked in full by `WorkingMemoryOptionsSchema` (names, limits, initial texts). */
  workingMemory: z.looseObject({}).optional(),
};

/**
 * The options of `Agents.react`, `Agents.deepResearch` and `Agents.codeAct`.
 * @example AgentOptionsSchema.safeParse({ modelClient, model: 'm', maxSteps: 0 }).success // false
 */
export const AgentOptionsSchema = z.strictObject(agentOptionsShape);

/** The options of `session.run(input, options)`. */
export const RunOptionsSchema = z.strictObject({
  signal: z.custom<AbortSignal>((value) => value instanceof AbortSignal, { message: 'expected an AbortSignal' }).optional(),
  onDelta: functionOption().optional(),
});

/** The options of `session.approve(callId, options)` and `session.reject(callId, options)`. */
export const ApprovalOptionsSchema = z.strictObject({
  by: z.string().optional(),
  reason: z.string().optional(),
});
