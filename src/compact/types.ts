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
