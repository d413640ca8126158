// Steps whose projection held erased content: replay reports them as erased, not as divergences (issue 22).
import type { SessionEvent, SessionEventOf } from '../events/index.js';
import { createMemoryFold, initialMemoryState, type MemoryState } from '../memory/index.js';

const seqOfId = (id: string): number => Number(id.slice(0, id.indexOf(':')));

/**
 * Whether a step's projection saw erased content: the event itself is marked (erased, or scrubbed of a digest over
 * erased content), or memory held an item of an erased event, or a summary an erased event set. `erasedSeqs`: the
 * seqs of the events marked erased (or scrubbed of copies).
 */
export const holdsErased = (event: SessionEventOf<'context.projected'>, memory: MemoryState, erasedSeqs: ReadonlySet<number>): boolean =>
  erasedSeqs.size > 0 && (event.erased !== undefined || memoryHoldsErased(memory, erasedSeqs, false));

/** Whether memory holds an item, the summary or the working memory (and with `facts`, a recorded fact) of an erased event. */
const memoryHoldsErased = (memory: MemoryState, erasedSeqs: ReadonlySet<number>, facts: boolean): boolean => {
  for (const entry of memory.entries) if (erasedSeqs.has(seqOfId(entry.id))) return true;
  if (facts) for (const fact of memory.facts) if (erasedSeqs.has(fact.seq)) return true;
  if (memory.blocksId !== null && erasedSeqs.has(seqOfId(memory.blocksId))) return true;
  return memory.summaryId !== null && erasedSeqs.has(seqOfId(memory.summaryId));
};

const COMPACTION_EVENTS: ReadonlySet<string> = new Set(['memory.compacted', 'compaction.failed', 'compaction.skipped']);

/**
 * The step numbers (a step without a number counts as 0) that a re-run reproduces from erased content, from a
 * recording: those whose projection held it, and those whose compaction was given memory that held it (its result,
 * token counts or summary can differ).
 */
export const erasedStepsOf = (events: readonly SessionEvent[]): Set<number> => {
  const erasedSeqs = new Set(events.filter((e) => e.erased !== undefined).map((e) => e.seq));
  const steps = new Set<number>();
  if (erasedSeqs.size === 0) return steps;
  const fold = createMemoryFold(initialMemoryState);
  for (const event of events) {
    if (event.type === 'context.projected' && holdsErased(event, fold.result(), erasedSeqs)) steps.add(event.step ?? 0);
    else if (COMPACTION_EVENTS.has(event.type) && (event.erased !== undefined || memoryHoldsErased(fold.result(), erasedSeqs, true))) {
      steps.add((event as { step?: number }).step ?? 0);
    }
    fold.add(event);
  }
  return steps;
};
