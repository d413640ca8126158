// The limits of one CodeAct code run (time, memory, output), validated with zod and given defaults.
import { z } from 'zod';
import { InvalidCodeActOptionError } from './errors.js';

/** Default wall-clock limit of one `execute_javascript` call, tool calls included. */
export const DEFAULT_CODE_TIMEOUT_MS = 5_000;
/** Default memory of one `execute_javascript` call: the sandbox's whole WebAssembly memory (64 MiB). */
export const DEFAULT_CODE_MEMORY_LIMIT_BYTES = 64 * 1024 * 1024;
/** The smallest memory limit: the QuickJS build needs 16 MiB of WebAssembly memory to start. */
export const MIN_CODE_MEMORY_LIMIT_BYTES = 16 * 1024 * 1024;
/** The largest memory limit: the QuickJS build's WebAssembly memory cannot grow past 2 GiB. */
export const MAX_CODE_MEMORY_LIMIT_BYTES = 2 * 1024 * 1024 * 1024;
/** The largest timeout (setTimeout's own limit, about 24.8 days). */
export const MAX_CODE_TIMEOUT_MS = 2_147_483_647;
/** Console output kept per call (characters); the rest is cut with a note. */
export const CODE_OUTPUT_LIMIT_CHARS = 100_000;

/** Limits of one code run. */
export interface CodeActLimits {
  /** Wall clock of one call, from the moment the code starts, tool calls included (default 5,000 ms). */
  readonly timeoutMs?: number;
  /** The sandbox's memory, a hard cap (default 64 MiB; at least 16 MiB, at most 2 GiB). */
  readonly memoryLimitBytes?: number;
}

export interface ResolvedCodeActLimits {
  readonly timeoutMs: number;
  readonly memoryLimitBytes: number;
}

const limitsSchema = z.strictObject({
  timeoutMs: z.number().positive().max(MAX_CODE_TIMEOUT_MS).optional(),
  memoryLimitBytes: z.number().int().min(MIN_CODE_MEMORY_LIMIT_BYTES).max(MAX_CODE_MEMORY_LIMIT_BYTES).optional(),
});

const optionNames: Record<string, string> = { timeoutMs: 'codeTimeoutMs', memoryLimitBytes: 'codeMemoryLimitBytes' };

/**
 * Validates CodeAct limits and fills in the defaults; a bad value throws `InvalidCodeActOptionError`
 * naming the agent option (`codeTimeoutMs`, `codeMemoryLimitBytes`).
 * @example parseCodeActLimits({ timeoutMs: 2_000 }) // { timeoutMs: 2000, memoryLimitBytes: 67108864 }
 */
export const parseCodeActLimits = (limits: CodeActLimits = {}): ResolvedCodeActLimits => {
  const parsed = limitsSchema.safeParse(limits);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = String(issue.path[0] ?? '');
    const value = (limits as Record<string, unknown>)[key];
    throw new InvalidCodeActOptionError(optionNames[key] ?? key, `${issue.message} (got ${typeof value === 'number' ? String(value) : JSON.stringify(value) ?? typeof value})`);
  }
  return {
    timeoutMs: parsed.data.timeoutMs ?? DEFAULT_CODE_TIMEOUT_MS,
    memoryLimitBytes: parsed.data.memoryLimitBytes ?? DEFAULT_CODE_MEMORY_LIMIT_BYTES,
  };
};
