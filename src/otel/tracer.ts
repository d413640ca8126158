// Spans begun and ended on a user's OpenTelemetry tracer (the API is loaded on first use, never at import).
import { createRequire } from 'node:module';
import type * as OtelApi from '@opentelemetry/api';
import { MissingDependencyError } from '../base/errors.js';
import { GEN_AI } from './attributes.js';
import { spanIdOf, traceIdOf, withNextIds } from './ids.js';
import type { SpanEnd, SpanSink, SpanStart } from './spans.js';

let api: typeof OtelApi | undefined;

/** `@opentelemetry/api`, loaded the first time a span is made (an optional peer: a clear error when it is missing). */
export const otelApi = (): typeof OtelApi => {
  if (api) return api;
  try {
    api = createRequire(import.meta.url)('@opentelemetry/api') as typeof OtelApi;
  } catch (error) {
    throw new MissingDependencyError('@opentelemetry/api', 'context-ledger/otel needs the optional peer @opentelemetry/api: npm install @opentelemetry/api', { cause: error });
  }
  return api;
};

/** Milliseconds since the epoch as an OpenTelemetry HrTime (a plain number would be read as performance time when old). */
export const hrTime = (ms: number): [number, number] => {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
};

/** A sink onto a tracer; with `derivedIds`, each span asks for the ids derived from its session and seq (see ledgerIdGenerator). */
export class TracerSink implements SpanSink {
  readonly #spans = new Map<string, OtelApi.Span>();
  /** Span ids as the tracer gave them, by key (to tell whether the derived ids were taken). */
  readonly given = new Map<string, { traceId: string; spanId: string }>();

  constructor(
    readonly tracer: OtelApi.Tracer,
    readonly derivedIds = false,
  ) {}

  start(span: SpanStart): void {
    const otel = otelApi();
    const parent = span.parentKey !== undefined ? this.#spans.get(span.parentKey) : undefined;
    const context = parent ? otel.trace.setSpan(otel.ROOT_CONTEXT, parent) : otel.ROOT_CONTEXT;
    const options: OtelApi.SpanOptions = {
      kind: span.kind === 'client' ? otel.SpanKind.CLIENT : otel.SpanKind.INTERNAL,
      startTime: hrTime(span.startMs),
      attributes: span.attributes as OtelApi.Attributes,
      ...(parent ? {} : { root: true }),
    };
    const begin = (): OtelApi.Span => this.tracer.startSpan(span.name, options, context);
    const made = this.derivedIds
      ? withNextIds({ traceId: traceIdOf(span.sessionId, span.traceSeq), spanId: spanIdOf(span.sessionId, span.seq, span.part) }, begin)
      : begin();
    this.#spans.set(span.key, made);
    const { traceId, spanId } = made.spanContext();
    this.given.set(span.key, { traceId, spanId });
  }

  end(end: SpanEnd): void {
    const span = this.#spans.get(end.key);
    if (!span) return;
    this.#spans.delete(end.key);
    span.setAttributes(end.attributes as OtelApi.Attributes);
    if (end.error) {
      span.setAttribute(GEN_AI.errorType, end.error.type);
      span.setStatus({ code: otelApi().SpanStatusCode.ERROR, message: end.error.message });
    }
    span.end(hrTime(end.endMs));
  }
}
