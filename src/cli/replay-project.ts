// Project-mode replay for the CLI: re-project every recorded step from memory (recorded or given projector and
// budget) and compare with the recording. The replay module's replaySession takes over once it lands.
import { contextProjectorFromDescription, type ContextBudget, type ContextProjector } from '../context/index.js';
import { digestOf, encodeReportFates, type SessionEventOf } from '../events/index.js';
import type { SessionEventLog } from '../log/index.js';
import { initialMemoryState, memoryReducer, visibleEntries, type MemoryState } from '../memory/index.js';

export interface ProjectReplayOptions {
  readonly budget?: ContextBudget;
  readonly projector?: ContextProjector;
  readonly onProgress?: (seq: number) => void;
}

export interface ProjectReplayResult {
  readonly mode: 'project';
  readonly identical: boolean;
  readonly steps: number;
  readonly divergentSteps: number;
  readonly divergentStepNumbers: readonly number[];
  readonly firstDivergence?: { readonly step: number | undefined; readonly seq: number; readonly fields: readonly string[] };
}

/** Re-projects each recorded step and compares digest, fates and report counts with the recording. */
export const replayProjections = async (log: SessionEventLog, sessionId: string, options: ProjectReplayOptions = {}): Promise<ProjectReplayResult> => {
  let state: MemoryState = initialMemoryState;
  const cache = new Map<string, ContextProjector>();
  let steps = 0;
  const divergent: number[] = [];
  let first: ProjectReplayResult['firstDivergence'];
  for await (const event of log.read(sessionId)) {
    if (event.seq % 1000 === 0) options.onProgress?.(event.seq);
    if (event.type === 'context.projected') {
      steps += 1;
      const fields = compare(event, state, options, cache);
      if (fields.length > 0) {
        divergent.push(event.step ?? steps);
        first ??= { step: event.step, seq: event.seq, fields };
      }
    }
    state = memoryReducer(state, event);
  }
  return { mode: 'project', identical: divergent.length === 0, steps, divergentSteps: divergent.length, divergentStepNumbers: divergent, ...(first ? { firstDivergence: first } : {}) };
};

const compare = (
  event: SessionEventOf<'context.projected'>,
  state: MemoryState,
  options: ProjectReplayOptions,
  cache: Map<string, ContextProjector>,
): string[] => {
  const key = JSON.stringify(event.projector);
  let projector = options.projector ?? cache.get(key);
  if (!projector) {
    projector = contextProjectorFromDescription(event.projector);
    cache.set(key, projector);
  }
  const entries = visibleEntries(state);
  const projection = projector.project(
    entries.map((e) => e.item),
    options.budget ?? (event.budget as ContextBudget),
  );
  const fields: string[] = [];
  if (digestOf(projection.items) !== event.digest) fields.push('digest');
  if (encodeReportFates(projection.report.fates, entries.length) !== event.fateRuns) fields.push('fates');
  const { fates: _f, ...report } = projection.report;
  if (JSON.stringify(report) !== JSON.stringify(event.report)) fields.push('report');
  return fields;
};
