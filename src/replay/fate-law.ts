// The fate law over a recorded session: at every step every item in memory has exactly one fate, the sent items are
// the non-dropped fates in order, and the report's (and an audit's) counts agree.
import { countFateRuns, fatesOf, type SessionEvent, type SessionEventOf } from '../events/index.js';
import { createMemoryFold, initialMemoryState, visibleEntries } from '../memory/index.js';
import { ERASED_PLACEHOLDER } from '../log/index.js';
import type { SessionAudit } from './audit.js';

export interface FateLawViolation {
  readonly seq: number;
  readonly step?: number;
  readonly message: string;
}

/**
 * Checks the fate law at every `context.projected` of a session's events (in seq order): its fates cover
 * memory as folded at that seq, one fate per item; the report's source, projected and dropped counts equal
 * the fates'; the step's `model.requested` sent as many items as there are non-dropped fates, with the same
 * digest. With `audit` (from `auditSession` over the same events), its step records and every item's fate
 * spans must agree with the events. Returns the violations (empty when lawful).
 * @example expect(checkFateLaw(events, await auditSession(log, id))).toEqual([])
 */
export const checkFateLaw = (events: Iterable<SessionEvent>, audit?: SessionAudit): FateLawViolation[] => {
  const checker = createFateLawChecker(audit);
  for (const event of events) checker.observe(event);
  return checker.finish();
};

export interface FateLawChecker {
  /** Checks one event (give them in seq order). */
  observe(event: SessionEvent): void;
  /** The violations found (and, with an audit, the item spans checked against the events). */
  finish(): FateLawViolation[];
}

/**
 * The fate law as a streaming check, for sessions too long to hold: memory is folded as events arrive.
 * Without an audit it holds only memory; with one, it also keeps each item's fate per step to compare.
 * @example const law = createFateLawChecker(); for await (const e of log.read(id)) law.observe(e); law.finish()
 */
export const createFateLawChecker = (audit?: SessionAudit): FateLawChecker => {
  const violations: FateLawViolation[] = [];
  // Memory, folded as the events come and built only at a step (one copy of its entries per step, not one per event).
  const memory = createMemoryFold(initialMemoryState);
  let pending: { event: SessionEventOf<'context.projected'>; sent: number } | undefined;
  const auditSteps = new Map((audit?.steps ?? []).map((s) => [s.seq, s]));
  const fateAt = new Map<string, Map<number, string>>(); // item id → step → fate/rule, from the events
  let ordinal = 0;
  const observe = (event: SessionEvent): void => {
    if (event.type === 'context.projected') {
      const step = event.step ?? ++ordinal;
      const at = { seq: event.seq, step };
      // Counted from the runs (without an audit no item's fate is needed): the check is linear in the session.
      const visible = visibleEntries(memory.result());
      let counts;
      let problem: string | undefined;
      try {
        counts = countFateRuns(event.fateRuns);
        if (counts.total !== visible.length) problem = `the fates cover ${counts.total} item(s) but ${visible.length} id(s) were given`;
      } catch (error) {
        problem = (error as Error).message;
      }
      if (problem !== undefined || counts === undefined) {
        violations.push({ ...at, message: `one fate per item in memory: ${problem ?? 'no fates'}` });
        memory.add(event);
        return;
      }
      const fates = audit ? fatesOf(event, visible.map((e) => e.id)) : [];
      const { dropped } = counts;
      const sent = counts.total - dropped;
      const { report } = event;
      if (report.sourceItemCount !== counts.total) violations.push({ ...at, message: `report.sourceItemCount ${report.sourceItemCount}, but memory has ${counts.total} item(s)` });
      if (report.projectedItemCount !== sent) violations.push({ ...at, message: `report.projectedItemCount ${report.projectedItemCount}, but ${sent} fate(s) are not dropped` });
      if (report.droppedItemCount !== dropped) violations.push({ ...at, message: `report.droppedItemCount ${report.droppedItemCount}, but ${dropped} fate(s) are dropped` });
      pending = { event, sent };
      if (audit) for (const f of fates) {
        let byStep = fateAt.get(f.id as string);
        if (!byStep) fateAt.set(f.id as string, (byStep = new Map()));
        byStep.set(step, `${f.fate}/${f.rule}`);
      }
      if (audit) {
        const record = auditSteps.get(event.seq);
        if (!record) violations.push({ ...at, message: 'the audit has no record of this step' });
        else {
          const fateCount = record.fates.kept + record.fates.cleared + record.fates.trimmed + record.fates.dropped;
          if (record.memory.items !== fates.length || fateCount !== fates.length) violations.push({ ...at, message: `the audit counts ${record.memory.items} item(s) in memory and ${fateCount} fate(s), the events ${fates.length}` });
          if (record.sent.items !== sent || record.fates.dropped !== dropped) violations.push({ ...at, message: `the audit counts ${record.sent.items} sent and ${record.fates.dropped} dropped, the events ${sent} and ${dropped}` });
        }
      }
    } else if (event.type === 'model.requested' && pending) {
      const at = { seq: event.seq, ...(event.step !== undefined ? { step: event.step } : {}) };
      if (event.itemCount !== pending.sent) violations.push({ ...at, message: `model.requested sent ${event.itemCount} item(s), but ${pending.sent} fate(s) are not dropped` });
      // An erasure replaces a digest over erased content with the placeholder (decision 0030): there is nothing to compare.
      const erasedDigest = event.digest === ERASED_PLACEHOLDER || pending.event.digest === ERASED_PLACEHOLDER;
      if (!erasedDigest && event.digest !== pending.event.digest) violations.push({ ...at, message: 'model.requested digest differs from its context.projected' });
      pending = undefined;
    }
    memory.add(event);
  };
  const finish = (): FateLawViolation[] => {
    if (audit) {
      // An item a rewind brought back has a record per stay in memory: its spans are checked together.
      const lives = new Map<string, (typeof audit.items)[number][]>();
      for (const item of audit.items) lives.set(item.id, [...(lives.get(item.id) ?? []), item]);
      for (const [id, records] of lives) {
        const item = { id, fates: records.flatMap((r) => r.fates) };
        const recorded = fateAt.get(item.id) ?? new Map<number, string>();
        let covered = 0;
        for (const span of item.fates) {
          for (let step = span.fromStep; step <= span.toStep; step++) {
            const fate = recorded.get(step);
            if (fate === undefined) continue; // a step in the span the item was not projected at cannot exist: spans join consecutive steps only
            covered += 1;
            if (fate !== `${span.fate}/${span.rule}`) violations.push({ seq: 0, step, message: `the audit says item ${item.id} was ${span.fate}/${span.rule}, the events ${fate}` });
          }
        }
        if (covered !== recorded.size) violations.push({ seq: 0, message: `the audit gives item ${item.id} a fate at ${covered} step(s), the events at ${recorded.size}` });
      }
    }
    return violations;
  };
  return { observe, finish };
};
