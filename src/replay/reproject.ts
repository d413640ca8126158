// Re-projecting recorded memory with the recorded projector and budget, compared with what `context.projected` recorded.
import { approxTokenizer, contextProjectorFromDescription, projectorTokenizer, recordedCountsTokenizer, reportFateRuns, reportFatesInSourceOrder, reportWithoutFates, type ContextBudget, type ContextProjector, type ProjectorRegistry, type Tokenizer } from '../context/index.js';
import { projectStep, recordedRequestOptions, tokenizerOfProjector, type RecordedRequest } from '../runtime/index.js';
import { fatesOf, type ContextReport, type Fate, type FateRule, type SessionEventOf } from '../events/index.js';
import { canonicalJson } from '../base/index.js';
import type { MemoryItem } from '../items/index.js';
import { visibleEntries, type MemoryEntry, type MemoryState } from '../memory/index.js';

export interface Reprojection {
  readonly items: readonly MemoryItem[];
  readonly report: ContextReport;
  /** Ids of the memory items sent (kept, cleared or trimmed), in order. */
  readonly sent: readonly string[];
  readonly fates: readonly { readonly id: string; readonly fate: Fate; readonly rule: FateRule }[];
  readonly digest: string;
  /** Ids of every memory item the projection saw, in order. */
  readonly sourceIds: readonly string[];
}

/** How a recorded projection budgeted the whole request (`context.projected.request`, v3), and what counted it. */
export interface RecordedRequestBudget {
  readonly request: RecordedRequest;
  readonly tokenizer: Tokenizer;
}

/**
 * The projector a `context.projected` recorded, rebuilt from its description with `registry`. When the step recorded
 * a remote tokenizer's counts (`tokenCounts`), they stand in for that tokenizer: a replay never asks a provider again.
 * The one rebuild replay, the report, `replayContext` and the runtime laws use.
 * @example const projector = projectorOfRecord(projected, { tokenizers: { mine: myTokenizer } });
 */
export const projectorOfRecord = (event: SessionEventOf<'context.projected'>, registry: ProjectorRegistry = {}): ContextProjector =>
  contextProjectorFromDescription(
    event.projector,
    event.tokenCounts !== undefined && typeof event.tokenizer === 'string'
      ? { ...registry, tokenizers: { ...registry.tokenizers, [event.tokenizer]: recordedCountsTokenizer(event.tokenizer, event.tokenCounts) } }
      : registry,
  );

/** The recorded whole-request budget of a projection, or undefined when it budgeted its items only (before v3). */
export const recordedRequestBudget = (event: SessionEventOf<'context.projected'>, projector: ContextProjector): RecordedRequestBudget | undefined => {
  if (!event.request) return undefined;
  // A remote tokenizer's counts cover memory's texts only: the overhead and framing were counted with approx.
  const own = projectorTokenizer(projector, { named: false });
  const tokenizer = event.tokenCounts !== undefined ? approxTokenizer : tokenizerOfProjector(own, typeof event.tokenizer === 'string' ? event.tokenizer : undefined);
  return { request: event.request, tokenizer };
};

/**
 * Projects memory as the runtime does (summary first, ids by position) and names what was sent. `sent`, `fates` and
 * `sourceIds` (one entry per memory item) are built when first read: a replay that finds a step identical never
 * needs them, so its cost per step beyond the projection does not grow with memory.
 */
export const projectMemory = (memory: MemoryState, projector: ContextProjector, budget: ContextBudget, whole?: RecordedRequestBudget): Reprojection => {
  const entries = visibleEntries(memory);
  const items = new Array<MemoryItem>(entries.length);
  for (let i = 0; i < entries.length; i++) items[i] = (entries[i] as MemoryEntry).item;
  // What the runtime sends (the same function): the projector, then no orphan tool item (rule `orphan`); within the
  // whole request when recorded so.
  const projection = projectStep(projector, items, budget, whole ? { allowance: whole.request, tokenizer: whole.tokenizer, options: recordedRequestOptions(whole.request, memory) } : undefined);
  let named: { readonly sent: readonly string[]; readonly fates: Reprojection['fates'] } | undefined;
  const name = (): NonNullable<typeof named> => {
    if (named) return named;
    itemRecordsBuilt += projection.report.fates.length;
    const sent: string[] = [];
    const fates = projection.report.fates.map((f) => {
      const id = entries[f.index]?.id ?? `#${f.index}`;
      if (f.fate !== 'dropped') sent.push(id);
      return { id, fate: f.fate, rule: f.rule };
    });
    return (named = { sent, fates });
  };
  let sourceIds: readonly string[] | undefined;
  const reprojection = {
    items: projection.items,
    report: projection.report,
    get sent() {
      return name().sent;
    },
    get fates() {
      return name().fates;
    },
    digest: projection.digest,
    get sourceIds() {
      if (!sourceIds) itemRecordsBuilt += entries.length;
      return (sourceIds ??= entries.map((e) => e.id));
    },
  };
  sourceCounts.set(reprojection, entries.length);
  return reprojection;
};

let itemRecordsBuilt = 0;

/** How many per-item records (a fate with its id, an id) reprojections have built in this process: a work count for tests. */
export const reprojectionItemRecordCount = (): number => itemRecordsBuilt;

/** How many memory items a reprojection saw, without building its `sourceIds`. */
const sourceCounts = new WeakMap<Reprojection, number>();

/**
 * What a recorded projection sent and each item's fate, by id, given the ids of the memory it saw (the
 * re-projection's `sourceIds`); undefined when its fates do not cover that memory.
 */
export const recordedFates = (
  recorded: SessionEventOf<'context.projected'>,
  sourceIds: readonly string[],
): { readonly sent: readonly string[]; readonly fates: readonly { readonly id: string; readonly fate: Fate; readonly rule: FateRule }[] } | undefined => {
  let fates;
  try {
    fates = fatesOf(recorded, sourceIds);
  } catch {
    return undefined;
  }
  return {
    sent: fates.filter((f) => f.fate !== 'dropped').map((f) => f.id as string),
    fates: fates.map((f) => ({ id: f.id as string, fate: f.fate, rule: f.rule })),
  };
};

/** The fields of a recorded projection that a re-projection does not reproduce. */
export const projectionDifferences = (recorded: SessionEventOf<'context.projected'>, again: Reprojection): string[] => {
  const fields: string[] = [];
  if (again.digest !== recorded.digest) fields.push('digest');
  // The fates first: when their runs are the recorded ones and they come in source order, the ids sent are the
  // recorded ones (both are the ids of the same memory at the same indices), and no per-item list is built.
  const runs = reportFateRuns(again.report, sourceCounts.get(again) ?? again.sourceIds.length);
  const sameFates = runs === recorded.fateRuns;
  if (!sameFates || !reportFatesInSourceOrder(again.report)) {
    const before = recordedFates(recorded, again.sourceIds);
    if (!before || canonicalJson(again.sent) !== canonicalJson(before.sent)) fields.push('sent');
  }
  if (!sameFates) fields.push('fates');
  const report = reportWithoutFates(again.report);
  if (canonicalJson(report) !== canonicalJson(recorded.report)) fields.push('report');
  return fields;
};
