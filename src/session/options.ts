// The zod schema of openSession's options (a typo, NaN or a negative interval is an error, not a silent default).
import { z } from 'zod';
import { functionOption, objectWithMethods } from '../base/options.js';
import type { Tokenizer } from '../context/index.js';
import type { MemoryCompressor } from '../memory/index.js';

/** Hooks a session knows, each a function when present (other keys pass: the runtime hands its own hooks in too). */
export const SessionHooksSchema = z.looseObject({
  beforeCompact: functionOption().optional(),
  onCompact: functionOption().optional(),
});

const openSessionShape = {
  id: z.string().min(1).optional(),
  hooks: SessionHooksSchema.optional(),
  ids: functionOption().optional(),
  clock: functionOption().optional(),
  checkpointEvery: z.number().int().nonnegative().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  compressor: objectWithMethods<MemoryCompressor>('a MemoryCompressor', 'compress').optional(),
  onEvents: functionOption().optional(),
  onCheckpointError: functionOption().optional(),
  tokenizer: z
    .custom<Tokenizer>(
      (value) =>
        value !== null &&
        typeof value === 'object' &&
        typeof (value as { name?: unknown }).name === 'string' &&
        (value as { name: string }).name !== '' &&
        typeof (value as { count?: unknown }).count === 'function',
      { message: 'expected a Tokenizer (an object with a non-empty name and count())' },
    )
    .optional(),
  countTokensOnWrite: z.boolean().optional(),
};

/**
 * `openSession(log, options)`; unknown options are errors.
 * @example OpenSessionOptionsSchema.safeParse({ checkpointEvery: -5 }).success // false
 */
export const OpenSessionOptionsSchema = z.strictObject(openSessionShape);
