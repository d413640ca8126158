// Public face of context-ledger/otel: OpenTelemetry GenAI spans for live runs and for recorded sessions.
export { GEN_AI, LEDGER } from './attributes.js';
export { exportSessionSpans, sessionSpanRecords } from './export.js';
export type { ExportSessionSpansOptions, ExportedSpans, SessionSpanRecord, SessionSpansOptions } from './export.js';
export { ledgerIdGenerator, spanIdOf, traceIdOf } from './ids.js';
export { otelRecorder } from './recorder.js';
export type { OtelRecorder, OtelRecorderOptions } from './recorder.js';
export type { AttributeValue, Attributes, SpanBuilderOptions } from './spans.js';
