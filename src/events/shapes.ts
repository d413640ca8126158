// Data shapes that events carry: items on the wire, ContextReport, CompactResult, recorded facts.
import { z } from 'zod';
import type { MemoryItem } from '../items/index.js';
import { FATES, FATE_RULES } from './fate-names.js';

export { FATES, FATE_RULES };

/** A memory item as stored: any JSON object with a string `type`; other keys pass through. */
export const MemoryItemSchema = z.looseObject({ type: z.string() }) as unknown as z.ZodType<MemoryItem>;

export const ItemFateSchema = z.object({
  index: z.number().int().nonnegative(),
  fate: z.enum(FATES),
  rule: z.enum(FATE_RULES),
});
export type ItemFate = z.infer<typeof ItemFateSchema>;
export type Fate = (typeof FATES)[number];
export type FateRule = (typeof FATE_RULES)[number];

/** What a projection kept, dropped and why. The first eight fields are the reference's. */
export const ContextReportSchema = z.object({
  sourceItemCount: z.number().int().nonnegative(),
  projectedItemCount: z.number().int().nonnegative(),
  droppedItemCount: z.number().int().nonnegative(),
  sourceApproxChars: z.number().int().nonnegative(),
  projectedApproxChars: z.number().int().nonnegative(),
  itemLimitApplied: z.boolean(),
  characterLimitApplied: z.boolean(),
  notes: z.array(z.string()),
  sourceTokens: z.number().int().nonnegative().optional(),
  projectedTokens: z.number().int().nonnegative().optional(),
  tokenLimitApplied: z.boolean().optional(),
  /**
   * What the request carries besides the items' own token counts (system prompt, tool schemas, reply priming and the
   * per-message framing of the items sent), with the projector's tokenizer; present when the runtime counted the whole request.
   */
  overheadTokens: z.number().int().nonnegative().optional(),
  fates: z.array(ItemFateSchema),
});
export type ContextReport = z.infer<typeof ContextReportSchema>;

const stringList = z.array(z.string()).default([]);

/** The structured part of a compaction result (everything but the memory it produced). */
export const CompactResultRecordSchema = z.object({
  summary: z.string().nullable().optional(),
  goal: z.string().optional(),
  completed: stringList,
  pending: stringList,
  decisions: stringList,
  changedArtifacts: stringList,
  failedCommands: stringList,
  testResults: stringList,
  userConfirmations: stringList,
  sandboxState: stringList,
  openQuestions: stringList,
  readFiles: stringList,
  modifiedFiles: stringList,
  contextReport: ContextReportSchema.optional(),
});
export type CompactResultRecord = z.infer<typeof CompactResultRecordSchema>;

/** The list fields of a CompactResult, all empty. */
export const emptyCompactLists = (): Omit<CompactResultRecord, 'summary' | 'goal' | 'contextReport'> => ({
  completed: [],
  pending: [],
  decisions: [],
  changedArtifacts: [],
  failedCommands: [],
  testResults: [],
  userConfirmations: [],
  sandboxState: [],
  openQuestions: [],
  readFiles: [],
  modifiedFiles: [],
});

/** How a policy or projector describes itself, so a replay can rebuild it. */
export const ComponentDescriptionSchema = z.object({
  name: z.string().min(1),
  settings: z.record(z.string(), z.unknown()).default({}),
});
export type ComponentDescription = z.infer<typeof ComponentDescriptionSchema>;

/** The event types that are recorded facts: kept by the fold for compaction, never prompt items by themselves. */
export const FACT_EVENT_TYPES = ['command.failed', 'test.result', 'approval.recorded', 'sandbox.state', 'artifact.changed'] as const;
export type FactEventType = (typeof FACT_EVENT_TYPES)[number];

const factEventTypes: ReadonlySet<string> = new Set(FACT_EVENT_TYPES);

/**
 * Whether an event (stored or new) is a recorded fact: its type is one of {@link FACT_EVENT_TYPES}.
 * @example events.filter(isFactEvent) // the facts, typed as such
 */
export const isFactEvent = <E extends { readonly type: string }>(event: E): event is Extract<E, { readonly type: FactEventType }> =>
  factEventTypes.has(event.type);
