// Public face of events: schemas, types, decoding, upcasters, canonical JSON and the shapes events carry.
export {
  EVENT_TYPES,
  EVENT_VERSIONS,
  NewSessionEventSchema,
  SessionEventSchema,
  eventPayloads,
  isEventType,
  newEventSchemaFor,
  storedEventSchemaFor,
} from './schemas.js';
export type { EventEnvelope, EventType, NewSessionEvent, NewSessionEventOf, SessionEvent, SessionEventOf } from './schemas.js';
export { UPCAST_FROM, decodeEvent, upcastFrom, validateNewEvent } from './decode.js';
export { EventDecodeError, InvalidEventError, InvalidFateRunsError, isEventDecodeError, isInvalidEventError, isInvalidFateRunsError, issuesOf } from './errors.js';
export type { EventIssue } from './errors.js';
export { createUpcasterRegistry, defaultUpcasters, upcastContextProjectedV1 } from './upcasters.js';
export {
  FATE_RUNS_PATTERN,
  countFateRuns,
  decodeFateRuns,
  encodeFateRuns,
  encodeReportFates,
  fateRunsLength,
  fatesOf,
  fatesOfRuns,
  sentIdsOf,
} from './fate-runs.js';
export type { FateRun, ItemFateWithId } from './fate-runs.js';
export { createPromptResolver } from './prompt-ref.js';
export type { PromptResolver, RequestPrompt } from './prompt-ref.js';
export type { Upcaster, UpcasterRegistry } from './upcasters.js';
export { describeComponent } from './describe.js';
export {
  CompactResultRecordSchema,
  ComponentDescriptionSchema,
  ContextReportSchema,
  FATES,
  FATE_RULES,
  ItemFateSchema,
  MemoryItemSchema,
  emptyCompactLists,
} from './shapes.js';
export type { CompactResultRecord, ComponentDescription, ContextReport, Fate, FateRule, ItemFate } from './shapes.js';
export { FACT_EVENT_TYPES, isFactEvent } from './shapes.js';
export type { FactEventType } from './shapes.js';
export type { MemorySnapshot, RecordedFact } from './snapshot.js';
