// CompactPolicy and CompactResult: how a policy turns a memory snapshot into a smaller one.
import { describeComponent, type ComponentDescription, type CompactResultRecord, type MemorySnapshot } from '../events/index.js';

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
  /** Focus instructions (`session.compact(policy, { instructions })`, the `compact` tool's `focus`): a model-based policy puts them in its prompt. */
  readonly instructions?: string;
  /** The name of the agent's recall tool, when it has one: a policy adds {@link recallHintLine} to its summary. */
  readonly recallTool?: string;
}

export interface CompactPolicy {
  /** Whether to compact automatically now; absent means never automatically (manual only). */
  shouldCompact?(snapshot: MemorySnapshot): boolean | Promise<boolean>;
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
  `Details left out here can be read back from the log: ${toolName}({ query }) searches, ${toolName}({ id }) reads an item or a tool call's result.`;
