// Upcasters: turn an event stored at an old schema version into the current version on read.
import { encodeReportFates } from './fate-runs.js';
import { EVENT_VERSIONS, isEventType, type EventType } from './schemas.js';
import type { ItemFate } from './shapes.js';

type RawEvent = Record<string, unknown>;

/** Turns a raw stored event at version `from` into version `from + 1`. */
export type Upcaster = (event: RawEvent) => RawEvent;

export interface UpcasterRegistry {
  /** Registers the step from `fromVersion` to `fromVersion + 1` for `type`. */
  register(type: EventType, fromVersion: number, upcaster: Upcaster): UpcasterRegistry;
  /** Whether any step is registered for `type` (an event of it may have been rewritten on read). */
  hasSteps(type: EventType): boolean;
  /** Applies steps until the event reaches its type's current version; unknown steps leave it as is. */
  upcast(event: RawEvent): RawEvent;
}

export const createUpcasterRegistry = (): UpcasterRegistry => {
  const steps = new Map<string, Upcaster>();
  const registry: UpcasterRegistry = {
    register(type, fromVersion, upcaster) {
      steps.set(`${type}@${fromVersion}`, upcaster);
      return registry;
    },
    hasSteps(type) {
      for (const key of steps.keys()) if (key.startsWith(`${type}@`)) return true;
      return false;
    },
    upcast(event) {
      const type = event['type'];
      if (!isEventType(type)) return event;
      const current = EVENT_VERSIONS[type];
      let out = event;
      let v = typeof out['v'] === 'number' ? out['v'] : current;
      while (v < current) {
        const step = steps.get(`${type}@${v}`);
        if (!step) break;
        out = { ...step(out), v: v + 1 };
        v += 1;
      }
      return out;
    },
  };
  return registry;
};

/**
 * `context.projected` v1 → v2: v1 stored one fate per memory item twice (`report.fates` by index and
 * `fates` by id) and the ids sent; v2 stores the fates once, as runs (`fateRuns`), and no id list (the
 * ids are memory's at that seq). Throws when v1's fates do not cover its source items exactly once.
 */
export const upcastContextProjectedV1 = (event: RawEvent): RawEvent => {
  const { sent: _sent, fates: _fates, report, ...rest } = event;
  if (report === null || typeof report !== 'object' || Array.isArray(report)) return { ...rest, report };
  const { fates, ...summary } = report as Record<string, unknown>;
  const count = (summary as { sourceItemCount?: unknown }).sourceItemCount;
  if (!Array.isArray(fates) || typeof count !== 'number') return { ...rest, report: summary };
  return { ...rest, report: summary, fateRuns: encodeReportFates(fates as ItemFate[], count) };
};

/**
 * The built-in upcasters.
 * - `tool.result` v1 → v2: v1 used the item's snake_case keys (`call_id`, `is_error`); v2 uses
 *   `callId` and a required `isError`.
 * - `context.projected` v1 → v2: fates as runs ({@link upcastContextProjectedV1}). v2 → v3: unchanged (v3 adds the
 *   optional `request`, the whole-request budget, and the report's optional `overheadTokens`). v3 → v4: unchanged (v4
 *   adds the optional `request.workingMemoryTokens`).
 * - `model.requested` v1 → v2: v1 always carried the prompt (`tools` defaulted to `[]`); v2 may refer to an
 *   earlier request's prompt by `promptSeq` instead. v2 → v3: unchanged (v3 adds the optional `settings`).
 * - `memory.compacted` v1 → v2: v2 adds the optional `tokens`, the layout's optional
 *   `replaces` and `factsThroughSeq` (the facts it clears; a v1 event without it clears every fact, as v1 did); v1
 *   reads as is. v2 → v3: unchanged (v3 adds the optional `reason` and `usage`).
 * - `session.started` v1 → v2: unchanged (v2 adds the optional `forkedFrom`).
 * - `run.started` v1 → v2: unchanged (v2 adds the optional `settings`).
 * - `run.failed` v1 → v2: unchanged (v2 adds the reason `context-overflow`).
 * - `approval.recorded` v1 → v2: unchanged (v2 adds the optional `callId`; a v1 approval decided no call).
 * - `model.responded` v1 → v2: unchanged (v2 adds the optional `finishReason`; a v1 answer did not record it).
 */
export const defaultUpcasters: UpcasterRegistry = createUpcasterRegistry()
  .register('tool.result', 1, (event) => {
    const { call_id, is_error, ...rest } = event;
    return { ...rest, callId: call_id, isError: is_error === true };
  })
  .register('context.projected', 1, upcastContextProjectedV1)
  // v3 adds the optional `request` (and the report's `overheadTokens`); a v2 projection budgeted its items only.
  .register('context.projected', 2, (event) => event)
  // v4 adds the optional `request.workingMemoryTokens`; before it the working-memory item competed as a pinned item.
  .register('context.projected', 3, (event) => event)
  .register('model.requested', 1, (event) => ({ ...event, tools: Array.isArray(event['tools']) ? event['tools'] : [] }))
  // v3 adds the optional `settings`; a v2 request recorded none.
  .register('model.requested', 2, (event) => event)
  // v2 adds the optional `tokens`, layout `replaces` and `factsThroughSeq`; absent, the fold clears every fact, as v1 did.
  .register('memory.compacted', 1, (event) => event)
  // v3 adds the optional `reason` and `usage`; a v2 event recorded neither.
  .register('memory.compacted', 2, (event) => event)
  // v2 adds the optional `forkedFrom`; a v1 session was never a fork.
  .register('session.started', 1, (event) => event)
  // v2 adds the optional `settings`; a v1 run did not record them.
  .register('run.started', 1, (event) => event)
  // v2 adds the reason `context-overflow`; a v1 event has one of the older reasons.
  .register('run.failed', 1, (event) => event)
  // v2 adds the optional `callId`; a v1 approval was a fact a tool or host wrote, answering no `approval.requested`.
  .register('approval.recorded', 1, (event) => event)
  // v2 adds the optional `finishReason`; a v1 answer recorded none.
  .register('model.responded', 1, (event) => event);
