// Spans of a recorded session, from the log alone: onto a tracer (exportSessionSpans) or as plain records (for an exporter).
import type * as OtelApi from '@opentelemetry/api';
import { InvalidOptionsError } from '../base/errors.js';
import type { SessionEventLog } from '../log/index.js';
import { replayContext } from '../replay/index.js';
import { spanIdOf, traceIdOf } from './ids.js';
import { SessionSpanBuilder, type Attributes, type RequestContent, type SpanBuilderOptions, type SpanEnd, type SpanSink, type SpanStart } from './spans.js';
import { TracerSink } from './tracer.js';

export interface SessionSpansOptions extends SpanBuilderOptions {
  /** Called every 1,000 events with the seq reached and the session's head. */
  readonly onProgress?: (seq: number, head: number) => void;
}

export interface ExportSessionSpansOptions extends SessionSpansOptions {
  readonly tracer: OtelApi.Tracer;
}

export interface ExportedSpans {
  readonly spans: number;
  /** The trace ids, one per run (and per compaction outside a run), in log order. */
  readonly traceIds: readonly string[];
  /** Whether the tracer took the ids derived from session and seq (its provider uses `ledgerIdGenerator`). */
  readonly derivedIds: boolean;
  /** Spans still open at the end of the log (a run that never finished), ended at the last event and marked incomplete. */
  readonly incomplete: number;
}

/** A finished span as an exporter needs it: derived ids, times in milliseconds since the epoch. */
export interface SessionSpanRecord {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly kind: 'internal' | 'client';
  readonly startMs: number;
  readonly endMs: number;
  readonly attributes: Attributes;
  readonly error?: { readonly type: string; readonly message: string };
}

/** Feeds a session's events to a builder (with each step's replayed context when content is captured); `caller` names the public function in errors. */
const feed = async (caller: string, log: SessionEventLog, sessionId: string, builder: SessionSpanBuilder, options: SessionSpansOptions): Promise<number> => {
  const head = await log.head(sessionId);
  if (head === 0) throw new InvalidOptionsError(caller, [{ path: 'sessionId', message: `no session ${JSON.stringify(sessionId)} in the log` }]);
  for await (const event of log.read(sessionId)) {
    if (options.onProgress && event.seq % 1000 === 0) options.onProgress(event.seq, head);
    let content: RequestContent | undefined;
    if (options.captureContent === true && event.type === 'model.requested' && event.step !== undefined) {
      try {
        content = { items: (await replayContext(log, sessionId, { step: event.step })).items };
      } catch {
        // A step whose projector cannot be rebuilt: its span goes out without the input messages.
      }
    }
    builder.add(event, content);
  }
  const incomplete = builder.openSpans().size;
  builder.endOpen(sessionId);
  options.onProgress?.(head, head);
  return incomplete;
};

const checkTracer = (tracer: unknown): void => {
  if (tracer === null || typeof tracer !== 'object' || typeof (tracer as { startSpan?: unknown }).startSpan !== 'function') {
    throw new InvalidOptionsError('exportSessionSpans', [{ path: 'tracer', message: 'expected an OpenTelemetry Tracer (an object with startSpan())' }]);
  }
};

/**
 * The spans of a recorded session, built from the log alone and begun and ended on `tracer` with the events' times:
 * the same tree `otelRecorder` makes live. With a provider whose `idGenerator` is `ledgerIdGenerator`, span and trace
 * ids are derived from session id and seq, so exporting twice gives the same ids. Any log, any recorded version.
 * @example await exportSessionSpans(log, 'session-1', { tracer: provider.getTracer('context-ledger') }); await provider.forceFlush();
 */
export const exportSessionSpans = async (log: SessionEventLog, sessionId: string, options: ExportSessionSpansOptions): Promise<ExportedSpans> => {
  checkTracer(options?.tracer);
  const sink = new TracerSink(options.tracer, true);
  const traces: string[] = [];
  let spans = 0;
  let derived = true;
  const counting: SpanSink = {
    start: (span) => {
      sink.start(span);
      spans += 1;
      const given = sink.given.get(span.key);
      if (given?.spanId !== spanIdOf(span.sessionId, span.seq, span.part)) derived = false;
      if (span.parentKey === undefined && given && !traces.includes(given.traceId)) traces.push(given.traceId);
    },
    end: (span) => sink.end(span),
  };
  const incomplete = await feed('exportSessionSpans', log, sessionId, new SessionSpanBuilder(counting, options), options);
  return { spans, traceIds: traces, derivedIds: spans > 0 && derived, incomplete };
};

/**
 * The same spans as finished records with derived ids, for an exporter that takes spans as data (the CLI's OTLP export).
 * @example const records = await sessionSpanRecords(log, 'session-1');
 */
export const sessionSpanRecords = async (log: SessionEventLog, sessionId: string, options: SessionSpansOptions = {}): Promise<SessionSpanRecord[]> => {
  const starts = new Map<string, SpanStart>();
  const out: SessionSpanRecord[] = [];
  const sink: SpanSink = {
    start: (span) => void starts.set(span.key, span),
    end: (end: SpanEnd) => {
      const start = starts.get(end.key);
      if (!start) return;
      const parent = start.parentKey !== undefined ? starts.get(start.parentKey) : undefined;
      out.push({
        traceId: traceIdOf(start.sessionId, start.traceSeq),
        spanId: spanIdOf(start.sessionId, start.seq, start.part),
        ...(parent ? { parentSpanId: spanIdOf(parent.sessionId, parent.seq, parent.part) } : {}),
        name: start.name,
        kind: start.kind,
        startMs: start.startMs,
        endMs: end.endMs,
        attributes: { ...start.attributes, ...end.attributes, ...(end.error ? { 'error.type': end.error.type } : {}) },
        ...(end.error ? { error: end.error } : {}),
      });
    },
  };
  await feed('sessionSpanRecords', log, sessionId, new SessionSpanBuilder(sink, options), options);
  return out;
};
