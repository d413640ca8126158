// MemoryState: the folded state of one session's events, and its zod schema (checkpoints are parsed with it).
import { z } from 'zod';
import {
  CompactResultRecordSchema,
  ComponentDescriptionSchema,
  FACT_EVENT_TYPES,
  MemoryItemSchema,
  storedEventSchemaFor,
  type ComponentDescription,
  type CompactResultRecord,
  type FactEventType,
  type RecordedFact,
  type SessionEventOf,
} from '../events/index.js';
import type { MemoryItem } from '../items/index.js';

/** A memory item with the stable id of the event that brought it in: `"<seq>:<index>"`. */
export interface MemoryEntry {
  readonly id: string;
  readonly item: MemoryItem;
}

export interface LastCompaction {
  readonly seq: number;
  readonly trigger: 'auto' | 'manual';
  readonly policy: ComponentDescription;
  readonly result: CompactResultRecord;
}

/** A working-memory block as memory holds it: its full text and what the agent declared of it. */
export interface WorkingMemoryBlock {
  readonly name: string;
  readonly text: string;
  readonly description?: string | undefined;
  readonly maxChars?: number | undefined;
}

export interface MemoryState {
  readonly entries: readonly MemoryEntry[];
  readonly summary: string | null;
  /** Id of the summary when shown as a message: `"<seq>:summary"` of the event that set it. */
  readonly summaryId: string | null;
  /** Recorded facts since the last compaction. */
  readonly facts: readonly RecordedFact[];
  readonly readFiles: readonly string[];
  readonly modifiedFiles: readonly string[];
  readonly lastCompaction: LastCompaction | null;
  /** Working-memory blocks, in the order they were first noted (`memory.noted`); compaction and restore keep them. */
  readonly blocks: readonly WorkingMemoryBlock[];
  /** Id of the working-memory item a prompt carries after the summary: `"<seq>:memory"` of the last `memory.noted`. */
  readonly blocksId: string | null;
}

/** A recorded fact: a fact event's stored schema without the envelope fields other than `seq` (what `factOf` keeps). */
const RecordedFactSchema = z.discriminatedUnion(
  'type',
  FACT_EVENT_TYPES.map((type) =>
    (storedEventSchemaFor(type) as unknown as z.ZodObject).omit({ sessionId: true, at: true, v: true, prevHash: true, hash: true, contentDigest: true, contentSalt: true }),
  ) as unknown as [z.ZodObject, ...z.ZodObject[]],
) as unknown as z.ZodType<RecordedFact>;

// One schema per MemoryState field (a field added to one and not the other does not compile), from the event shapes.
const memoryStateShape = {
  entries: z.array(z.object({ id: z.string(), item: MemoryItemSchema })),
  summary: z.string().nullable(),
  summaryId: z.string().nullable(),
  facts: z.array(RecordedFactSchema),
  readFiles: z.array(z.string()),
  modifiedFiles: z.array(z.string()),
  lastCompaction: z
    .object({ seq: z.number().int().positive(), trigger: z.enum(['auto', 'manual']), policy: ComponentDescriptionSchema, result: CompactResultRecordSchema })
    .nullable(),
  // Absent in checkpoints written before working memory: no blocks.
  blocks: z
    .array(z.object({ name: z.string().min(1), text: z.string(), description: z.string().optional(), maxChars: z.number().int().positive().optional() }))
    .default([]),
  blocksId: z.string().nullable().default(null),
} satisfies Record<keyof MemoryState, z.ZodType>;

/**
 * MemoryState as a zod schema: what a checkpoint's memory is parsed with. A parsed value is a MemoryState (checked
 * at compile time below); the fold laws check that parsing a folded state gives it back unchanged.
 * @example MemoryStateSchema.parse(JSON.parse(JSON.stringify(foldMemory(events))))
 */
export const MemoryStateSchema = z.object(memoryStateShape);

// Each field's parsed type is the field's type: a schema that drifts from MemoryState does not compile.
void ((parsed: z.infer<typeof MemoryStateSchema>): MemoryState => parsed);

export const initialMemoryState: MemoryState = Object.freeze({
  entries: Object.freeze([]) as readonly MemoryEntry[],
  summary: null,
  summaryId: null,
  facts: Object.freeze([]) as readonly RecordedFact[],
  readFiles: Object.freeze([]) as readonly string[],
  modifiedFiles: Object.freeze([]) as readonly string[],
  lastCompaction: null,
  blocks: Object.freeze([]) as readonly WorkingMemoryBlock[],
  blocksId: null,
});

/** Id of the `index`-th item an event at `seq` brought into memory. */
export const itemId = (seq: number, index: number): string => `${seq}:${index}`;
export const summaryIdOf = (seq: number): string => `${seq}:summary`;
/** Id of the working-memory item as of the `memory.noted` at `seq`. */
export const blocksIdOf = (seq: number): string => `${seq}:memory`;

/**
 * A fact event as memory keeps it: without `sessionId`, `at`, `v`, `prevHash`, `hash`, `contentDigest` and
 * `contentSalt` (the chain's, which differ in a fork or a re-run; the salt goes with the event when it is erased).
 */
export const factOf = (event: SessionEventOf<FactEventType>): RecordedFact => {
  const { sessionId: _s, at: _a, v: _v, prevHash: _p, hash: _h, contentDigest: _d, contentSalt: _c, ...fact } = event;
  return fact as RecordedFact;
};
