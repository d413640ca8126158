// CompactPolicy and CompactResult: how a policy turns a memory snapshot into a smaller one.
import type { Tokenizer } from '../context/index.js';
import { describeComponent, type ComponentDescription, type CompactResultRecord, type MemorySnapshot, type NewSessionEventOf } from '../events/index.js';

/** Why a compaction ran, as `memory.compacted.reason` records it. */
export type CompactReason = NonNullable<NewSessionEventOf<'memory.compacted'>['reason']>;

/**
 * What the session tells `shouldCompact` besides the snapshot. `tokens`: memory's tokens (summary included) with the
 * agent's tokenizer. `lastInputTokens`: the input tokens the provider reported for the session's last request (across
 * runs, from the session's fold) since memory was last compacted, restored, cleared or rewound. `lastCompaction`: what the last compaction left in memory (its items, and their tokens with the
 * summary), so a policy can wait for memory to grow when that compaction could not get below its trigger.
 */
export interface CompactContext {
  readonly tokens: number;
  /**
   * How many items the snapshot holds (`snapshot.items.length`), given by the session so that a trigger reads it
   * without listing memory's items (the snapshot lists them on first read of `items`).
   */
  readonly items?: number | undefined;
  readonly lastInputTokens?: number | undefined;
  readonly step?: number | undefined;
  readonly lastCompaction?: { readonly items: number; readonly tokens: number } | undefined;
}

/** The structured result of one compaction; `memory` is the snapshot memory becomes. */
export type CompactResult = CompactResultRecord & {
  readonly memory?: MemorySnapshot;
  /** For model-based policies: what the summarizer was asked and what it answered (recorded for audit). */
  readonly summarizer?: { readonly request: unknown; readonly rawAnswer: string };
  /** For model-based policies: the usage their model calls reported (recorded as `memory.compacted.usage`). */
  readonly usage?: Readonly<Record<string, unknown>>;
};

/** What the session passes to `compact` besides the snapshot. */
export interface CompactOptions {
  readonly signal?: AbortSignal;
  /** The agent's tokenizer, for policies that keep or chunk by tokens (default: approx). */
  readonly tokenizer?: Tokenizer;
  /** Focus instructions (`session.compact(policy, { instructions })`, the `compact` tool's `focus`): a model-based policy puts them in its prompt. */
  readonly instructions?: string;
  /** The name of the agent's recall tool, when it has one: a policy adds {@link recallHintLine} to its summary. */
  readonly recallTool?: string;
}

export interface CompactPolicy {
  /** Whether to compact automatically now; absent means never automatically (manual only). */
  shouldCompact?(snapshot: MemorySnapshot, context?: CompactContext): boolean | Promise<boolean>;
  /** Why it would compact now (undefined: it would not); the built-in policies have it, and the session records it as `reason`. */
  compactTrigger?(snapshot: MemorySnapshot, context?: CompactContext): CompactReason | undefined;
  /** `options.signal` (automatic compaction in a run) aborts with the run; a policy that ignores it is not waited for. */
  compact(snapshot: MemorySnapshot, options?: CompactOptions): CompactResult | Promise<CompactResult>;
  /** Name and settings, recorded in `memory.compacted` so a replay can rebuild the policy. */
  describe?(): ComponentDescription;
}

/** How a policy names itself when it has no `describe()`. */
export const describePolicy = (policy: CompactPolicy): ComponentDescription => describeComponent(policy, 'CompactPolicy');

/**
 * The line a summary carries when the agent can recall from the log (`recallTool`): how to read back what the
 * summary leaves out. FactSummaryCompactPolicy and LlmCompactPolicy append it.
 * @example recallHintLine('recall') // 'Details left out here can be read back from the log: recall({ query }) searches, recall({ id }) reads an item or a tool call\'s result.'
 */
export const recallHintLine = (toolName: string): string =>
  `${RECALL_HINT_START}${toolName}({ query }) searches, ${toolName}({ id }) reads an item or a tool call's result.`;

const RECALL_HINT_START = 'Details left out here can be read back from the log: ';

/** Whether a summary line is a {@link recallHintLine} (of any tool name): a policy merging a previous summary leaves it out. */
export const isRecallHintLine = (line: string): boolean => line.trim().startsWith(RECALL_HINT_START);
