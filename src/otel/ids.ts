// Span and trace ids derived from a session id and a seq, and the IdGenerator that hands them to an SDK tracer.
import { createHash, randomBytes } from 'node:crypto';

const hex = (text: string, length: number): string => {
  const digest = createHash('sha256').update(text).digest('hex').slice(0, length);
  // An all-zero id is invalid in OpenTelemetry; a sha256 prefix of zeros is astronomically unlikely, but never emitted.
  return /^0+$/.test(digest) ? `${digest.slice(0, -1)}1` : digest;
};

/**
 * The trace id of the trace rooted at `seq` of `sessionId` (32 hex digits): the same session and seq always give the same id.
 * @example traceIdOf('demo', 3) === traceIdOf('demo', 3) // true
 */
export const traceIdOf = (sessionId: string, seq: number): string => hex(`context-ledger\0trace\0${sessionId}\0${seq}`, 32);

/**
 * The span id of the span opened by event `seq` of `sessionId` (16 hex digits); `part` tells apart two spans one event opens.
 * @example spanIdOf('demo', 7)
 */
export const spanIdOf = (sessionId: string, seq: number, part?: string): string =>
  hex(`context-ledger\0span\0${sessionId}\0${seq}${part !== undefined ? `\0${part}` : ''}`, 16);

let next: { traceId?: string | undefined; spanId?: string | undefined } | undefined;

/** Sets the ids the next `startSpan` of a tracer using {@link ledgerIdGenerator} gets (synchronously consumed). */
export const withNextIds = <T>(ids: { traceId: string; spanId: string }, start: () => T): T => {
  next = { ...ids };
  try {
    return start();
  } finally {
    next = undefined;
  }
};

/**
 * An OpenTelemetry `IdGenerator` for your TracerProvider (`new BasicTracerProvider({ idGenerator: ledgerIdGenerator })`):
 * spans that `exportSessionSpans` makes get the ids derived from their session and seq, so exporting a session twice
 * gives the same trace and span ids; every other span gets random ids, as with the SDK's default generator.
 * @example const provider = new BasicTracerProvider({ idGenerator: ledgerIdGenerator, spanProcessors: [processor] })
 */
export const ledgerIdGenerator = {
  generateTraceId(): string {
    const id = next?.traceId;
    if (next) next.traceId = undefined;
    return id ?? randomBytes(16).toString('hex');
  },
  generateSpanId(): string {
    const id = next?.spanId;
    if (next) next.spanId = undefined;
    return id ?? randomBytes(8).toString('hex');
  },
};
