// Re-projecting recorded memory with the recorded projector and budget, compared with what `context.projected` recorded.
import { approxTokenizer, projectForModel, type ContextBudget, type ContextProjection, type ContextProjector, type Tokenizer } from '../context/index.js';
import { projectRequest, recordedRequestOptions, tokenizerOfProjector, type RecordedRequest } from '../runtime/index.js';
import {
  canonicalJson,
  digestOf,
  encodeReportFates,
  fatesOf,
  type ContextReport,
  type Fate,
  type FateRule,
  type SessionEventOf,
} from '../events/index.js';
import type { MemoryItem } from '../items/index.js';
import { visibleEntries, type MemoryState } from '../memory/index.js';

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

/** The recorded whole-request budget of a projection, or undefined when it budgeted its items only (before v3). */
export const recordedRequestBudget = (event: SessionEventOf<'context.projected'>, projector: ContextProjector): RecordedRequestBudget | undefined => {
  if (!event.request) return undefined;
  // A remote tokenizer's counts cover memory's texts only: the overhead and framing were counted with approx.
  const own = (projector as { readonly tokenizer?: Tokenizer }).tokenizer;
  const tokenizer = event.tokenCounts !== undefined ? approxTokenizer : tokenizerOfProjector(own, typeof event.tokenizer === 'string' ? event.tokenizer : undefined);
  return { request: event.request, tokenizer };
};

/** Projects memory as the runtime does (summary first, ids by position) and names what was sent. */
export const projectMemory = (memory: MemoryState, projector: ContextProjector, budget: ContextBudget, whole?: RecordedRequestBudget): Reprojection => {
  const entries = visibleEntries(memory);
  // What the runtime sends: the projector, then no orphan tool item (rule `orphan`); within the whole request when recorded so.
  const projection: ContextProjection = whole
    ? projectRequest(projector, entries.map((e) => e.item), budget, whole.request, whole.tokenizer, recordedRequestOptions(whole.request, memory))
    : projectForModel(
    projector,
    entries.map((e) => e.item),
    budget,
  );
  const sent: string[] = [];
  const fates = projection.report.fates.map((f) => {
    const id = entries[f.index]?.id ?? `#${f.index}`;
    if (f.fate !== 'dropped') sent.push(id);
    return { id, fate: f.fate, rule: f.rule };
  });
  return { items: projection.items, report: projection.report, sent, fates, digest: digestOf(projection.items), sourceIds: entries.map((e) => e.id) };
};

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
  const before = recordedFates(recorded, again.sourceIds);
  if (!before || canonicalJson(again.sent) !== canonicalJson(before.sent)) fields.push('sent');
  if (encodeReportFates(again.report.fates, again.sourceIds.length) !== recorded.fateRuns) fields.push('fates');
  const { fates: _fates, ...report } = again.report;
  if (canonicalJson(report) !== canonicalJson(recorded.report)) fields.push('report');
  return fields;
};
