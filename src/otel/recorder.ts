// otelRecorder: a live run's spans, made from the events the runtime tells the host (onEvent), as they are recorded.
import type * as OtelApi from '@opentelemetry/api';
import { InvalidOptionsError } from '../base/errors.js';
import type { MemoryItem } from '../items/index.js';
import type { AgentHooks, RuntimeNotification } from '../runtime/index.js';
import { SessionSpanBuilder, type RequestContent, type SpanBuilderOptions } from './spans.js';
import { TracerSink } from './tracer.js';

export interface OtelRecorderOptions extends SpanBuilderOptions {
  readonly tracer: OtelApi.Tracer;
}

/** What an agent takes: `onEvent` (every event appended) and `hooks` (the request's items, when content is captured). */
export interface OtelRecorder {
  readonly onEvent: (notification: RuntimeNotification) => void;
  readonly hooks: AgentHooks;
}

/**
 * OpenTelemetry GenAI spans for live runs: `invoke_agent` per run, `step` per step, `chat MODEL` per model call,
 * `execute_tool NAME` per tool call, `compact` per compaction, with the same names, attributes and parents as
 * `exportSessionSpans` gives for the recorded session (and, with `ledgerIdGenerator`, the same ids: a backend that gets
 * both sees one set of spans). Message content only with `captureContent: true`.
 * @example const recorder = otelRecorder({ tracer }); const agent = Agents.react({ ...options, onEvent: recorder.onEvent, hooks: { ...recorder.hooks } });
 */
export const otelRecorder = (options: OtelRecorderOptions): OtelRecorder => {
  const tracer = options?.tracer as unknown;
  if (tracer === null || typeof tracer !== 'object' || typeof (tracer as { startSpan?: unknown }).startSpan !== 'function') {
    throw new InvalidOptionsError('otelRecorder', [{ path: 'tracer', message: 'expected an OpenTelemetry Tracer (an object with startSpan())' }]);
  }
  const builder = new SessionSpanBuilder(new TracerSink(options.tracer, true), options);
  const requests = new Map<string, readonly MemoryItem[]>();
  const capture = options.captureContent === true;
  return {
    onEvent: (notification) => {
      if (notification.type !== 'EVENT') return;
      const { event } = notification;
      let content: RequestContent | undefined;
      if (capture && event.type === 'model.requested') {
        const key = `${event.sessionId}\0${event.step ?? ''}`;
        const items = requests.get(key);
        requests.delete(key);
        if (items) content = { items };
      }
      builder.add(event, content);
    },
    hooks: capture
      ? {
          beforeModelRequest: ({ sessionId, step, request }) => {
            requests.set(`${sessionId}\0${step}`, request.items);
          },
        }
      : {},
  };
};
