// One zod schema per event type (payload and current version), the envelope, and their unions.
import { z } from 'zod';
import { FATE_RUNS_PATTERN } from './fate-runs.js';
import type { NewSessionEventTypes, SessionEventTypes } from './types.generated.js';
import {
  ComponentDescriptionSchema,
  CompactResultRecordSchema,
  ContextReportSchema,
  MemoryItemSchema,
} from './shapes.js';

const items = z.array(MemoryItemSchema);
const step = z.number().int().nonnegative();
const runId = z.string().min(1);
const jsonRecord = z.record(z.string(), z.unknown());
const trigger = z.enum(['auto', 'manual']);

/** Payload shapes by event type. A shipped shape is never edited: bump `EVENT_VERSIONS` and add an upcaster. */
const payloadShapes = {
  'session.started': {
    metadata: jsonRecord.optional(),
    /** v2: set when the session is a fork: the source session and the seq and hash of the last event copied. */
    forkedFrom: z.object({ sessionId: z.string().min(1), seq: z.number().int().nonnegative(), hash: z.string() }).optional(),
  },
  'user.input': { items },
  'model.output': { items },
  'tool.result': {
    callId: z.string().min(1),
    output: z.string(),
    name: z.string().optional(),
    isError: z.boolean().default(false),
    parentCallId: z.string().optional(),
    step: step.optional(),
  },
  'command.failed': {
    command: z.string(),
    exitCode: z.number().int().optional(),
    output: z.string().optional(),
    error: z.string().optional(),
    step: step.optional(),
  },
  'test.result': {
    status: z.enum(['passed', 'failed', 'errored', 'skipped']),
    suite: z.string().optional(),
    command: z.string().optional(),
    passed: z.number().int().nonnegative().optional(),
    failed: z.number().int().nonnegative().optional(),
    skipped: z.number().int().nonnegative().optional(),
    summary: z.string().optional(),
    step: step.optional(),
  },
  'approval.recorded': {
    action: z.string(),
    approved: z.boolean(),
    by: z.string().optional(),
    reason: z.string().optional(),
    /** v2: the call this decides (`session.approve` / `session.reject` answering an `approval.requested`); absent for a free-standing fact. */
    callId: z.string().min(1).optional(),
  },
  /** A call of the model's answer waits for a person's decision (`needsApproval`); the run is interrupted until every one is decided. */
  'approval.requested': {
    callId: z.string().min(1),
    name: z.string(),
    arguments: z.string(),
    step,
    runId: runId.optional(),
  },
  /** An approved call is about to run (`run()` continuing an interrupted run); a call started but never answered is not run again. */
  'approval.call-started': { callId: z.string().min(1), name: z.string(), step, runId: runId.optional() },
  'sandbox.state': { description: z.string(), details: jsonRecord.optional() },
  'artifact.changed': {
    path: z.string().min(1),
    change: z.enum(['created', 'modified', 'deleted', 'renamed']),
    previousPath: z.string().optional(),
    summary: z.string().optional(),
  },
  'memory.summary-set': { summary: z.string().nullable() },
  'memory.restored': { items, summary: z.string().nullable().optional() },
  'memory.cleared': {},
  'memory.compacted': {
    trigger,
    policy: ComponentDescriptionSchema,
    step: step.optional(),
    /** The memory after compaction, in order: a kept item by id, or an item the policy rewrote or created. */
    layout: z.array(
      z.union([
        z.object({ keep: z.string() }),
        /** `replaces` (v2): the id of the dropped item this one stands for (a placeholder of a cleared tool result or reasoning). */
        z.object({ item: MemoryItemSchema, replaces: z.string().optional() }),
      ]),
    ),
    keptIds: z.array(z.string()),
    droppedIds: z.array(z.string()),
    summary: z.string().nullable(),
    result: CompactResultRecordSchema,
    summarizer: z.object({ request: z.unknown(), rawAnswer: z.string() }).optional(),
    /** v2: the tokens of memory (summary included) before and after, counted with `tokenizer`. */
    tokens: z
      .object({ before: z.number().int().nonnegative(), after: z.number().int().nonnegative(), tokenizer: z.string().min(1) })
      .optional(),
    /** v2: the compaction clears the recorded facts up to this seq (those its snapshot held); absent: all of them. */
    factsThroughSeq: z.number().int().nonnegative().optional(),
    /**
     * v3: why it ran. `items`/`tokens`/`usage`: the policy's trigger crossed `threshold` with `value`; `overflow`: the
     * provider refused the request as too long; `manual`: `session.compact`; `requested`: the agent or host asked for it,
     * with focus `instructions`. Absent on events recorded before v3.
     */
    reason: z
      .object({
        kind: z.enum(['items', 'tokens', 'usage', 'overflow', 'manual', 'requested']),
        value: z.number().nonnegative().optional(),
        threshold: z.number().nonnegative().optional(),
        instructions: z.string().optional(),
      })
      .optional(),
    /** v3: the usage the compaction's own model calls reported (summed; same keys as `model.responded.usage`). */
    usage: jsonRecord.optional(),
  },
  /**
   * Memory's items edited by a framework's history capability (the Agents SDK's `applyHistoryTransaction`,
   * `applyHistoryMutations`): not a compaction, so the summary, facts, file lists and last compaction stay (decision 0028).
   */
  'memory.edited': {
    /** Who edited: `openai-agents:applyHistoryTransaction`, `openai-agents:applyHistoryMutations`. */
    editor: z.string().min(1),
    /** What was asked: `append_items`, `replace_suffix`, `replace_function_call`. */
    kind: z.string().min(1),
    /** The caller's idempotency key: the same key with the same `operationDigest` is not applied again; with another, refused. */
    operationId: z.string().min(1).optional(),
    /** sha256 of the canonical JSON of what the operation asked (its transaction). */
    operationDigest: z.string().optional(),
    /** Memory's items after the edit, in order (as `memory.compacted.layout`); absent: the items did not change (an operation already recorded by the events before it). */
    layout: z
      .array(
        z.union([
          z.object({ keep: z.string() }),
          /** `replaces`: the id of the removed item this one stands in for (a replaced function call). */
          z.object({ item: MemoryItemSchema, replaces: z.string().optional() }),
        ]),
      )
      .optional(),
    /** The ids of the items the edit removed. */
    droppedIds: z.array(z.string()).default([]),
  },
  /** A working-memory block's full new text (the `working_memory` tool, or the agent seeding a declared block). */
  'memory.noted': {
    block: z.string().min(1),
    text: z.string(),
    description: z.string().optional(),
    maxChars: z.number().int().positive().optional(),
    step: step.optional(),
    callId: z.string().optional(),
  },
  /** The `recall` tool read items back from the log: by id (`ids` holds the one read) or by query (the hits). */
  'memory.recalled': {
    ids: z.array(z.string()),
    query: z.string().optional(),
    step: step.optional(),
    callId: z.string().optional(),
  },
  /** The `compact` tool asked for a compaction with the agent's policy at the top of the next step. */
  'compaction.requested': {
    instructions: z.string().optional(),
    step: step.optional(),
    callId: z.string().optional(),
  },
  /**
   * From here on memory is as it was after the event at `toSeq`: `memory` is that state (a MemoryState, parsed by the
   * fold), so the fold stays pure. The events in between stay in the log.
   */
  'session.rewound': {
    toSeq: z.number().int().nonnegative(),
    reason: z.string().optional(),
    memory: jsonRecord,
  },
  'compaction.failed': {
    trigger,
    policy: ComponentDescriptionSchema,
    step: step.optional(),
    stage: z.enum(['shouldCompact', 'compact', 'beforeCompact', 'record']).default('compact'),
    error: z.string(),
  },
  'compaction.skipped': {
    trigger,
    policy: ComponentDescriptionSchema,
    step: step.optional(),
    /** Why a compaction the policy asked for did not happen: a `beforeCompact` hook returned false. */
    reason: z.enum(['vetoed']),
  },
  'checkpoint.taken': {
    /** sha256 of the canonical JSON of the session state (memory and run) after the previous event. */
    digest: z.string().min(1),
    /** The checkpoint interval in force, so a re-run takes checkpoints at the same seqs. */
    checkpointEvery: z.number().int().nonnegative(),
  },
  'hook.failed': { hook: z.string(), error: z.string(), step: step.optional(), runId: runId.optional() },
  'context.projected': {
    step: step.optional(),
    runId: runId.optional(),
    projector: ComponentDescriptionSchema,
    budget: jsonRecord,
    tokenizer: z.string().optional(),
    /** The ContextReport without its per-item fates (they are in `fateRuns`). */
    report: ContextReportSchema.omit({ fates: true }),
    /** v2: one fate per memory item the projection saw, as runs (`fatesOf(event)` expands them). */
    fateRuns: z.string().regex(FATE_RUNS_PATTERN, 'expected fate runs: "fate:rule[*count]" separated by single spaces'),
    digest: z.string(),
    /** Counts a remote tokenizer (Anthropic count_tokens) gave for the texts of memory, by `textDigest`; replay reads them back. */
    tokenCounts: z.record(z.string(), z.number().int().nonnegative()).optional(),
    /**
     * v3: the projection was budgeted as a whole request (`maxTokens` bounds items, system prompt, tools and framing): the
     * request's fixed overhead and the calibration margin taken off `maxTokens`, with the steps and drifts the margin was
     * learned from. Absent: only the items were budgeted (every event before v3), and replay projects them so.
     */
    request: z
      .object({
        overheadTokens: z.number().int().nonnegative(),
        /**
         * v4: the working-memory item was sent whatever the limits and counted like the system prompt: its tokens (text and
         * framing) were taken off `maxTokens` with `overheadTokens`. Absent: it competed as a pinned item (before v4), and replay projects it so.
         */
        workingMemoryTokens: z.number().int().nonnegative().optional(),
        marginTokens: z.number().int().nonnegative().optional(),
        calibration: z.object({ steps: z.array(z.number().int().nonnegative()), drifts: z.array(z.number().int()) }).optional(),
      })
      .optional(),
  },
  'model.requested': {
    step: step.optional(),
    runId: runId.optional(),
    model: z.string(),
    systemPrompt: z.string().optional(),
    /** Present (maybe empty) when this event carries the prompt; absent when `promptSeq` refers to an earlier one. */
    tools: z.array(jsonRecord).optional(),
    /** v2: the seq of the earlier `model.requested` whose `systemPrompt` and `tools` this request used unchanged. */
    promptSeq: z.number().int().positive().optional(),
    itemCount: z.number().int().nonnegative(),
    digest: z.string(),
    /** What the client's adapter adds to the request beyond the items (`ModelClient.describeRequest`), e.g. Anthropic's first-turn placeholder. */
    adapter: jsonRecord.optional(),
    /** v3: the call settings a framework sent with the request (temperature, max output tokens, tool choice, provider options), as it sent them. */
    settings: jsonRecord.optional(),
  },
  'model.responded': {
    step: step.optional(),
    runId: runId.optional(),
    items,
    outputText: z.string().optional(),
    usage: jsonRecord.optional(),
    durationMs: z.number().nonnegative().optional(),
    /** v2: why the provider ended the answer, in its words (`ModelResult.finishReason`: `stop`, `length`, `tool_use`, ...), when the client said. */
    finishReason: z.string().min(1).optional(),
  },
  /** v1: a model call failed in a way the runtime handles: `context-overflow` (the provider refused the request as too long). */
  'model.failed': {
    step: step.optional(),
    runId: runId.optional(),
    reason: z.enum(['context-overflow']),
    error: z.string(),
    requestTokens: z.number().int().nonnegative().optional(),
    limitTokens: z.number().int().nonnegative().optional(),
  },
  'plan.created': { runId: runId.optional(), step: step.optional(), plan: z.array(z.string()), text: z.string().optional() },
  'run.started': {
    runId,
    runtime: z.string().optional(),
    /** v2: the settings a re-run needs that live outside the log (library version, base system prompt, limits). */
    settings: z
      .object({
        libraryVersion: z.string(),
        model: z.string(),
        systemPrompt: z.string().optional(),
        maxSteps: z.number().int().positive(),
        codeTimeoutMs: z.number().nonnegative().optional(),
        checkpointEvery: z.number().int().nonnegative().optional(),
      })
      .optional(),
  },
  'step.started': { runId, step },
  'step.ended': { runId, step, toolCalls: z.number().int().nonnegative().default(0) },
  'run.finished': { runId, steps: z.number().int().nonnegative(), outputText: z.string().optional() },
  'run.failed': {
    runId,
    /** v2 adds `context-overflow`: the provider still refused the request as too long after `overflowRetries` recoveries. */
    reason: z.enum(['max-steps', 'aborted', 'error', 'interrupted', 'context-overflow']),
    message: z.string(),
    step: step.optional(),
  },
  /** `log.erase`: the payloads of these earlier events were removed (their digests and envelopes stay); written by the log. */
  'event.erased': {
    seqs: z.array(z.number().int().positive()).min(1),
    reason: z.string().min(1),
    by: z.string().min(1).optional(),
    /**
     * Later events that held copies of the erased content (a rewind's carried memory, a restore's or a compaction's
     * items, a recall's answer, projection digests), scrubbed in the same write: each with the sha256 of its canonical
     * payload as it is now (so verify checks what is left) and the ids of its items that were scrubbed.
     */
    copies: z
      .array(z.object({ seq: z.number().int().positive(), digest: z.string().regex(/^[0-9a-f]{64}$/), items: z.array(z.string()).optional() }))
      .optional(),
  },
} as const;

/** Every event type. */
export type EventType = keyof SessionEventTypes;
/** Payload shapes by event type (zod raw shapes; the schemas below are built from them). */
export const eventPayloads: { readonly [T in EventType]: z.ZodRawShape } = payloadShapes;
export const EVENT_TYPES = Object.keys(payloadShapes) as EventType[];

const CURRENT_VERSIONS: Partial<Record<EventType, number>> = {
  'tool.result': 2,
  'session.started': 2,
  'run.started': 2,
  'memory.compacted': 3,
  'context.projected': 4,
  'model.requested': 3,
  'run.failed': 2,
  'approval.recorded': 2,
  'model.responded': 2,
};

/** The current schema version of each event type. */
export const EVENT_VERSIONS: Readonly<Record<EventType, number>> = Object.freeze(
  Object.fromEntries(EVENT_TYPES.map((t) => [t, CURRENT_VERSIONS[t] ?? 1])) as Record<EventType, number>,
);

type Payloads = typeof payloadShapes;
/** The event types as the shapes define them (EventType, from the generated types, must be the same list). */
type ShapeType = keyof Payloads;

const newEventSchemaOf = <T extends ShapeType>(type: T) =>
  z.object({ type: z.literal(type), ...(payloadShapes[type] as Payloads[T]) });

const envelopeShape = {
  sessionId: z.string().min(1),
  seq: z.number().int().positive(),
  at: z.string().min(1),
  v: z.number().int().positive(),
  prevHash: z.string(),
  hash: z.string(),
  /** Chain version 2: sha256 of the salt and the canonical payload; the hash covers it instead of the payload. */
  contentDigest: z.string().optional(),
  /** Chain version 2: the random salt hashed into `contentDigest` (so a short payload cannot be guessed from it); erasure removes it. */
  contentSalt: z.string().optional(),
  /** What the log's `redact` option replaced before the event was stored: where, and by which rule (never the value). */
  redactions: z.array(z.object({ path: z.string(), rule: z.string().min(1) })).optional(),
  /** Set when `log.erase` removed the payload (what is left are placeholders): the `event.erased` seq, when, why, by whom. */
  erased: z
    .object({
      seq: z.number().int().positive(),
      at: z.string().min(1),
      reason: z.string().min(1),
      by: z.string().min(1).optional(),
      /** Set when the event was not erased itself but held copies of erased content, which were scrubbed (`items`: the ids of its items that were). */
      copy: z.literal(true).optional(),
      items: z.array(z.string()).optional(),
    })
    .optional(),
};

const storedEventSchemaOf = <T extends ShapeType>(type: T) =>
  z.object({ ...envelopeShape, type: z.literal(type), ...(payloadShapes[type] as Payloads[T]) });

type NewSchemas = { [T in ShapeType]: ReturnType<typeof newEventSchemaOf<T>> };
type StoredSchemas = { [T in ShapeType]: ReturnType<typeof storedEventSchemaOf<T>> };

const newSchemas = Object.fromEntries(EVENT_TYPES.map((t) => [t, newEventSchemaOf(t)])) as NewSchemas;
const storedSchemas = Object.fromEntries(EVENT_TYPES.map((t) => [t, storedEventSchemaOf(t)])) as StoredSchemas;

/** The fields the log adds to every event. */
export interface EventEnvelope {
  readonly sessionId: string;
  readonly seq: number;
  readonly at: string;
  readonly v: number;
  readonly prevHash: string;
  readonly hash: string;
  readonly contentDigest?: string;
  readonly contentSalt?: string;
  readonly redactions?: readonly { readonly path: string; readonly rule: string }[];
  readonly erased?: { readonly seq: number; readonly at: string; readonly reason: string; readonly by?: string; readonly copy?: true; readonly items?: readonly string[] };
}

/** An event as a caller appends it: `{ type, ...payload }` (spelled out in types.generated.ts from the schemas). */
export type NewSessionEvent = NewSessionEventTypes[EventType];
/** An event as stored: the envelope plus `type` and payload (spelled out in types.generated.ts from the schemas). */
export type SessionEvent = SessionEventTypes[EventType];
export type SessionEventOf<T extends EventType> = SessionEventTypes[T];
export type NewSessionEventOf<T extends EventType> = NewSessionEventTypes[T];

/** Validates an event as a caller appends it: `{ type, ...payload }`. */
export const NewSessionEventSchema: z.ZodType<unknown, NewSessionEvent> = z.discriminatedUnion(
  'type',
  Object.values(newSchemas) as unknown as [NewSchemas[ShapeType], ...NewSchemas[ShapeType][]],
);

/** Validates an event as stored: the envelope plus `type` and payload. */
export const SessionEventSchema: z.ZodType<SessionEvent> = z.discriminatedUnion(
  'type',
  Object.values(storedSchemas) as unknown as [StoredSchemas[ShapeType], ...StoredSchemas[ShapeType][]],
) as unknown as z.ZodType<SessionEvent>;

export const isEventType = (value: unknown): value is EventType =>
  typeof value === 'string' && Object.prototype.hasOwnProperty.call(payloadShapes, value);

/** The schema of one event type as appended (its output has defaults filled). */
export const newEventSchemaFor = (type: EventType): z.ZodType<unknown, NewSessionEvent> =>
  newSchemas[type] as unknown as z.ZodType<unknown, NewSessionEvent>;
/** The schema of one event type as stored. */
export const storedEventSchemaFor = (type: EventType): z.ZodType<SessionEvent> => storedSchemas[type] as unknown as z.ZodType<SessionEvent>;
