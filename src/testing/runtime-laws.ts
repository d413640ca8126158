// Law checks over a recorded session: coverage (law 8) and what the model was sent (law 9), at every seq.
import { isRecord } from '../base/index.js';
import { projectStep, recordedRequestOptions } from '../runtime/index.js';
import { projectorOfRecord, recordedRequestBudget } from '../replay/reproject.js';
import type { ContextBudget, ContextProjector } from '../context/index.js';
import { type SessionEvent } from '../events/index.js';
import { canonicalJson } from '../base/index.js';
import { ERASED_PLACEHOLDER } from '../log/index.js';
import { visibleEntries } from '../memory/index.js';
import { foldSession, initialSessionState, sessionReducer, type SessionState } from '../session/index.js';
import { unansweredCalls, type MemoryItem } from '../items/index.js';

export interface SessionLawViolation {
  readonly law:
    | 'coverage'
    | 'answered-calls'
    | 'call-without-result'
    | 'result-without-call'
    | 'projection-digest'
    | 'request-digest'
    | 'fold-chunks'
    | 'rewind';
  readonly seq: number;
  readonly message: string;
}

export interface CheckSessionLawsOptions {
  /** The projector that built the prompts; default: rebuilt from each `context.projected` description. */
  readonly projector?: ContextProjector;
}

const usableId = (id: unknown): boolean => typeof id === 'string' && id !== '';

/** Descriptions of the calls in `items` that can never be answered: a call id that is missing, empty or not a string. */
const callsWithoutUsableId = (items: readonly MemoryItem[]): string[] => {
  const found: string[] = [];
  items.forEach((item, i) => {
    if (item.type === 'function_call' && !usableId((item as { call_id?: unknown }).call_id)) {
      found.push(`function_call #${i} with call_id ${JSON.stringify((item as { call_id?: unknown }).call_id) ?? 'missing'}`);
    }
    if (item.type !== 'message') return;
    const calls = (item as { tool_calls?: unknown }).tool_calls;
    if (Array.isArray(calls)) {
      calls.forEach((call: unknown, k) => {
        if (!isRecord(call) || !usableId(call['id'])) found.push(`tool_calls[${k}] of item #${i} with id ${JSON.stringify(isRecord(call) ? call['id'] : call) ?? 'missing'}`);
      });
    }
  });
  return found;
};

/**
 * Replays a session's events and checks, at every seq: every item that ever entered memory is in memory
 * or was removed by a compaction (named in droppedIds), restore, clear or rewind (law 8); when the model was
 * called, no call in memory was unanswered and the items sent are exactly the recorded projection
 * (re-projected from memory, same digest in `context.projected` and `model.requested`) (law 9); no call
 * can never be answered (an id that is missing, empty or not a string) and no run ends with a call
 * unanswered (`call-without-result`); every `tool.result` answers an unanswered call in memory
 * (`result-without-call`); memory after a `session.rewound` is memory folded to its toSeq (`rewind`); and
 * folding in two chunks equals folding at once (law 1). Returns the violations (empty when lawful). The laws are
 * numbered as docs/design.md#laws numbers them.
 */
export const checkSessionLaws = (events: readonly SessionEvent[], options: CheckSessionLawsOptions = {}): SessionLawViolation[] => {
  const violations: SessionLawViolation[] = [];
  let session: SessionState = initialSessionState;
  const everSeen = new Set<string>();
  const removed = new Set<string>();
  const projectorCache = new Map<string, ContextProjector>();
  let lastProjection: { step: number | undefined; digest: string } | undefined;

  for (const event of events) {
    const state = session.memory;
    const beforeIds = state.entries.map((e) => e.id);
    if (event.type === 'model.requested' || event.type === 'run.finished' || event.type === 'run.failed') {
      const broken = callsWithoutUsableId(state.entries.map((e) => e.item));
      if (broken.length > 0) {
        violations.push({ law: 'call-without-result', seq: event.seq, message: `call(s) that can never be answered in memory: ${broken.join('; ')}` });
      }
    }
    if (event.type === 'run.finished' || event.type === 'run.failed') {
      const open = unansweredCalls(state.entries.map((e) => e.item));
      if (open.length > 0) {
        violations.push({ law: 'call-without-result', seq: event.seq, message: `run ended with unanswered call(s) ${open.map((c) => c.callId).join(', ')}` });
      }
    }
    if (event.type === 'tool.result' && event.parentCallId === undefined) {
      const open = unansweredCalls(state.entries.map((e) => e.item));
      if (!open.some((c) => c.callId === event.callId)) {
        violations.push({ law: 'result-without-call', seq: event.seq, message: `tool.result for ${JSON.stringify(event.callId)}, which no unanswered call in memory issued` });
      }
    }
    if (event.type === 'model.requested') {
      const missing = unansweredCalls(state.entries.map((e) => e.item));
      if (missing.length > 0) {
        violations.push({ law: 'answered-calls', seq: event.seq, message: `model called with unanswered call(s) ${missing.map((c) => c.callId).join(', ')}` });
      }
      // An erasure replaces a digest over erased content with the placeholder (decision 0030): there is nothing to compare.
      const erasedDigest = event.digest === ERASED_PLACEHOLDER || lastProjection?.digest === ERASED_PLACEHOLDER;
      if (!lastProjection || lastProjection.step !== event.step || (!erasedDigest && lastProjection.digest !== event.digest)) {
        violations.push({ law: 'request-digest', seq: event.seq, message: `model.requested digest does not match the step's context.projected` });
      }
    }
    if (event.type === 'context.projected') {
      // A remote tokenizer's counts were recorded with the projection: rebuild it from them, never ask again.
      const counted = event.tokenCounts !== undefined && typeof event.tokenizer === 'string';
      const key = JSON.stringify(event.projector);
      let projector = options.projector ?? (counted ? undefined : projectorCache.get(key));
      if (!projector) {
        projector = projectorOfRecord(event);
        if (!counted) projectorCache.set(key, projector);
      }
      const entries = visibleEntries(state);
      const whole = recordedRequestBudget(event, projector);
      // The runtime's own function, with what the step recorded.
      const projection = projectStep(
        projector,
        entries.map((e) => e.item),
        event.budget as ContextBudget,
        whole ? { allowance: whole.request, tokenizer: whole.tokenizer, options: recordedRequestOptions(whole.request, state) } : undefined,
      );
      // A projection whose content was erased re-projects over placeholders: neither its digest nor its fates can be compared.
      if (event.digest !== ERASED_PLACEHOLDER && (projection.digest !== event.digest || projection.fateRuns !== event.fateRuns)) {
        violations.push({ law: 'projection-digest', seq: event.seq, message: 're-projecting memory does not give the recorded projection' });
      }
      lastProjection = { step: event.step, digest: event.digest };
    }
    session = sessionReducer(session, event);
    const after = session.memory;
    if (event.type === 'memory.compacted' || event.type === 'memory.edited') for (const id of event.droppedIds) removed.add(id);
    // A rewind removes what entered after its toSeq (named by the event: memory is the state it carries).
    if (event.type === 'memory.restored' || event.type === 'memory.cleared' || event.type === 'session.rewound') for (const id of beforeIds) removed.add(id);
    if (event.type === 'session.rewound') {
      // The memory it carries is the fold of the events up to toSeq.
      const upTo = foldSession(events.filter((e) => e.seq <= event.toSeq)).memory;
      if (canonicalJson(upTo) !== canonicalJson(after)) {
        violations.push({ law: 'rewind', seq: event.seq, message: `memory after session.rewound differs from memory folded to seq ${event.toSeq}` });
      }
    }
    const present = new Set(after.entries.map((e) => e.id));
    for (const id of present) everSeen.add(id);
    for (const id of everSeen) {
      if (!present.has(id) && !removed.has(id)) {
        violations.push({ law: 'coverage', seq: event.seq, message: `item ${id} left memory without a compaction, edit, restore or clear naming it` });
        removed.add(id); // report once
      }
    }
  }
  const cut = Math.floor(events.length / 2);
  const whole = foldSession(events);
  const chunked = foldSession(events.slice(cut), foldSession(events.slice(0, cut)));
  if (JSON.stringify(whole) !== JSON.stringify(session)) {
    violations.push({ law: 'fold-chunks', seq: events.at(-1)?.seq ?? 0, message: 'the one-pass fold differs from the reducer step by step' });
  }
  if (JSON.stringify(whole) !== JSON.stringify(chunked)) {
    violations.push({ law: 'fold-chunks', seq: events.at(-1)?.seq ?? 0, message: 'folding in two chunks differs from folding at once' });
  }
  return violations;
};

/**
 * {@link checkSessionLaws} that throws instead of returning: an Error listing every violation (law, seq, message),
 * for tests that want a failure rather than a list. Returns nothing when the session is lawful.
 * @example assertSessionLaws(await collect(log.read(sessionId)));
 */
export const assertSessionLaws = (events: readonly SessionEvent[], options: CheckSessionLawsOptions = {}): void => {
  const violations = checkSessionLaws(events, options);
  if (violations.length === 0) return;
  const lines = violations.map((v) => `  law ${v.law} at seq ${v.seq}: ${v.message}`);
  throw new Error(`session breaks ${violations.length} law(s):\n${lines.join('\n')}`);
};
