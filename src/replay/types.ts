// The options and result of replaySession, and how a divergence is reported.
import type { ContextBudget, ContextProjector } from '../context/index.js';
import type { CompactPolicy, ComponentRegistry } from '../compact/index.js';
import type { ModelClient } from '../model/index.js';

export interface ReplayOptions {
  /** 'project' (default): re-project every step from recorded memory. 'rerun': run the runtime again from the recording. */
  readonly mode?: 'project' | 'rerun';
  /** Replace the recorded budget at every step ("what would this budget have sent?"). */
  readonly budget?: ContextBudget;
  /** Replace the recorded projector at every step. */
  readonly projector?: ContextProjector;
  /** Replace the recorded compaction policy (memory then evolves under it; compare by content). */
  readonly policy?: CompactPolicy;
  /** The model a recorded model-based policy (LlmCompactPolicy) summarises with when it is rebuilt. */
  readonly summarizer?: ModelClient;
  /** Users' own projectors, tokenizers and policies by their recorded names. */
  readonly registry?: ComponentRegistry;
  /**
   * Called as the replay advances, for a progress bar: events read out of the session's head ('project'), or
   * model answers replayed out of those recorded ('rerun').
   */
  readonly onProgress?: (done: number, total: number) => void;
  /** Cancels the replay: it rejects with the signal's reason (a re-run ends the code or tool it is waiting for). */
  readonly signal?: AbortSignal;
  /**
   * 'rerun': the longest a recorded CodeAct code limit (`run.started.settings.codeTimeoutMs`) is honoured (default
   * 30,000 ms). A longer recorded limit is capped, with a note; a step whose code runs into the cap is a divergence.
   */
  readonly maxCodeTimeoutMs?: number;
}

/** The default of `ReplayOptions.maxCodeTimeoutMs`. */
export const DEFAULT_REPLAY_MAX_CODE_TIMEOUT_MS = 30_000;

/** How the first differing step or event differs. */
export interface Divergence {
  readonly step: number | undefined;
  readonly seq: number;
  /** The event type compared (`context.projected` for a projection). */
  readonly type: string;
  /** The recorded fields that differ. */
  readonly fields: readonly string[];
  /** For a projection: which memory items the replay sent that the recording did not, and the reverse. */
  readonly context?: {
    readonly added: readonly string[];
    readonly dropped: readonly string[];
    /** Sent in both, with another fate (e.g. kept in one, Tier-1 cleared in the other). */
    readonly rewritten: readonly string[];
    /** How many leading items the two prompts share (by content). */
    readonly commonPrefixItems: number;
  };
}

export interface ReplayResult {
  readonly mode: 'project' | 'rerun';
  /** Every step compared matched the recording (and, in 'rerun', every event). */
  readonly identical: boolean;
  /** Steps compared. */
  readonly steps: number;
  /** How many steps differ. */
  readonly divergentSteps: number;
  /** The step numbers that differ. */
  readonly divergentStepNumbers: readonly number[];
  readonly firstDivergence?: Divergence;
  /**
   * Steps whose projection held content `log.erase` removed and that differ from the recording only for that
   * reason (not divergences; `identical` ignores them). Present only when there are any ('project' mode).
   */
  readonly erasedSteps?: number;
  /** The step numbers of those steps. */
  readonly erasedStepNumbers?: readonly number[];
  /** Remarks: where event comparison stopped, settings that differ from the recording's environment. */
  readonly notes: readonly string[];
}

