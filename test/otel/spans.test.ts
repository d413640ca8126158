// OpenTelemetry GenAI spans with the real SDK (InMemorySpanExporter): the tree of a run with tool calls, a failure and a
// compaction; live spans (otelRecorder) and exported spans (exportSessionSpans) match; exporting twice gives the same ids.
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SpanStatusCode } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import * as semconv from '@opentelemetry/semantic-conventions/incubating';
import { describe, expect, it } from 'vitest';
import {
  Agents,
  LlmCompactPolicy,
  ScriptedModelClient,
  isAgentRunError,
  openLevelLog,
  openMemoryLog,
  replaySession,
  type ModelResult,
  type SessionEventLog,
} from '../../src/index.js';
import { GEN_AI, type OtelRecorder, exportSessionSpans, ledgerIdGenerator, otelRecorder, sessionSpanRecords, spanIdOf, traceIdOf } from '../../src/otel/index.js';
import { callTool, echo, final, readAll } from '../replay/support.js';

const tracing = () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ idGenerator: ledgerIdGenerator, spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, provider, tracer: provider.getTracer('context-ledger-test') };
};

const u = (input: number, cached: number) => ({ inputTokens: input, outputTokens: 7, totalTokens: input + 7, cachedInputTokens: cached });
const withUsage = (r: ModelResult, usage: Record<string, unknown>): ModelResult => ({ ...r, usage });

/** Run 1: two tool calls (one fails), a compaction, an answer. Run 2: the model call fails. */
const recordSession = async (log: SessionEventLog, hooks: Partial<OtelRecorder>) => {
  const model = new ScriptedModelClient([
    withUsage(callTool('c1', 'echo', { text: 'one' }), u(900, 0)),
    withUsage(callTool('c2', 'echo', { text: 'fail two' }), u(1100, 896)),
    withUsage(callTool('c3', 'echo', { text: 'three' }), u(1300, 1024)),
    withUsage(final('done'), u(700, 0)),
    new Error('provider down'),
  ]);
  const summarizer = new ScriptedModelClient([{ outputText: JSON.stringify({ goal: 'echo', completed: ['one', 'two'] }), items: [], usage: { inputTokens: 2000, outputTokens: 90 } }]);
  const agent = Agents.react({
    modelClient: model,
    model: 'gpt-4.1',
    systemPrompt: 'You echo.',
    tools: [echo],
    log,
    compactPolicy: new LlmCompactPolicy(summarizer, 'gpt-4.1-mini', 2, { compactAbove: 5 }),
    ...(hooks.onEvent ? { onEvent: hooks.onEvent } : {}),
    ...(hooks.hooks ? { hooks: hooks.hooks } : {}),
  });
  const session = await agent.newSession();
  await session.run('echo three things');
  const failure = await session.run('again').catch((e: unknown) => e);
  expect(isAgentRunError(failure)).toBe(true);
  return session.id;
};

/** A span without its ids, its parent named by name and seq: what live and exported spans must share. */
const shape = (spans: readonly ReadableSpan[]) => {
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  const label = (s: ReadableSpan | undefined) => (s ? `${s.name}@${String(s.attributes['context_ledger.seq'])}` : null);
  return spans
    .map((s) => ({
      name: s.name,
      kind: s.kind,
      parent: label(s.parentSpanContext ? byId.get(s.parentSpanContext.spanId) : undefined),
      attributes: s.attributes,
      status: s.status,
      start: s.startTime,
      end: s.endTime,
    }))
    .sort((a, b) => Number(a.attributes['context_ledger.seq']) - Number(b.attributes['context_ledger.seq']) || a.name.localeCompare(b.name));
};

describe('the span tree of a run', () => {
  it('uses the GenAI conventions\' current attribute names', () => {
    expect(GEN_AI.operationName).toBe(semconv.ATTR_GEN_AI_OPERATION_NAME);
    expect(GEN_AI.providerName).toBe(semconv.ATTR_GEN_AI_PROVIDER_NAME);
    expect(GEN_AI.requestModel).toBe(semconv.ATTR_GEN_AI_REQUEST_MODEL);
    expect(GEN_AI.inputTokens).toBe(semconv.ATTR_GEN_AI_USAGE_INPUT_TOKENS);
    expect(GEN_AI.outputTokens).toBe(semconv.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS);
    expect(GEN_AI.cacheReadInputTokens).toBe(semconv.ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS);
    expect(GEN_AI.cacheCreationInputTokens).toBe(semconv.ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS);
    expect(GEN_AI.finishReasons).toBe(semconv.ATTR_GEN_AI_RESPONSE_FINISH_REASONS);
    expect(GEN_AI.toolName).toBe(semconv.ATTR_GEN_AI_TOOL_NAME);
    expect(GEN_AI.toolCallId).toBe(semconv.ATTR_GEN_AI_TOOL_CALL_ID);
    expect(GEN_AI.toolCallArguments).toBe(semconv.ATTR_GEN_AI_TOOL_CALL_ARGUMENTS);
    expect(GEN_AI.toolCallResult).toBe(semconv.ATTR_GEN_AI_TOOL_CALL_RESULT);
    expect(GEN_AI.inputMessages).toBe(semconv.ATTR_GEN_AI_INPUT_MESSAGES);
    expect(GEN_AI.outputMessages).toBe(semconv.ATTR_GEN_AI_OUTPUT_MESSAGES);
    expect(GEN_AI.systemInstructions).toBe(semconv.ATTR_GEN_AI_SYSTEM_INSTRUCTIONS);
    expect(GEN_AI.conversationId).toBe(semconv.ATTR_GEN_AI_CONVERSATION_ID);
  });

  it('live: invoke_agent per run, a span per step, chat per model call, execute_tool per call, compact per compaction', async () => {
    const { exporter, provider, tracer } = tracing();
    const recorder = otelRecorder({ tracer });
    const log = await openMemoryLog();
    const id = await recordSession(log, recorder);
    await provider.forceFlush();
    const spans = exporter.getFinishedSpans();
    const events = await readAll(log, id);
    const byName = (prefix: string) => spans.filter((s) => s.name.startsWith(prefix));
    const parentOf = (s: ReadableSpan) => spans.find((p) => p.spanContext().spanId === s.parentSpanContext?.spanId);

    const runs = byName('invoke_agent');
    expect(runs).toHaveLength(2);
    for (const run of runs) expect(run.parentSpanContext).toBeUndefined();
    const runStarts = events.filter((e) => e.type === 'run.started');
    expect(runs.map((r) => r.spanContext().traceId).sort()).toEqual(runStarts.map((e) => traceIdOf(id, e.seq)).sort());
    const [ok, failed] = [...runs].sort((a, b) => Number(a.attributes['context_ledger.seq']) - Number(b.attributes['context_ledger.seq']));
    expect(ok!.attributes).toMatchObject({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt-4.1', 'gen_ai.conversation.id': id, 'context_ledger.run.steps': 4, 'gen_ai.usage.input_tokens': 4000, 'gen_ai.usage.output_tokens': 28, 'gen_ai.usage.cache_read.input_tokens': 1920 });
    expect(ok!.status.code).toBe(SpanStatusCode.UNSET);
    expect(failed!.status).toEqual({ code: SpanStatusCode.ERROR, message: expect.stringContaining('provider down') });
    expect(failed!.attributes['error.type']).toBe('error');

    const steps = byName('step');
    expect(steps).toHaveLength(5);
    for (const step of steps) expect(parentOf(step)?.name).toBe('invoke_agent');
    const failedStep = steps.find((s) => s.attributes['context_ledger.step'] === 5)!;
    expect(failedStep.status.code).toBe(SpanStatusCode.ERROR);

    const chats = byName('chat ');
    // four answers; the fifth call failed (its span ends in error with the run)
    expect(chats).toHaveLength(5);
    for (const chat of chats) expect(parentOf(chat)?.name).toBe('step');
    const second = chats.find((c) => c.attributes['context_ledger.step'] === 2)!;
    const projected = events.find((e) => e.type === 'context.projected' && e.step === 2);
    const requested = events.find((e) => e.type === 'model.requested' && e.step === 2);
    const responded = events.find((e) => e.type === 'model.responded' && e.step === 2);
    if (projected?.type !== 'context.projected' || requested?.type !== 'model.requested' || responded?.type !== 'model.responded') throw new Error('step 2 events');
    expect(second.name).toBe('chat gpt-4.1');
    expect(second.kind).toBe(2); // CLIENT
    expect(second.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4.1',
      'gen_ai.conversation.id': id,
      'context_ledger.session.id': id,
      'context_ledger.seq': requested.seq,
      'context_ledger.step': 2,
      'context_ledger.items.in_memory': projected.report.sourceItemCount,
      'context_ledger.items.sent': projected.report.projectedItemCount,
      'context_ledger.items.dropped': projected.report.droppedItemCount,
      'context_ledger.items.cleared': 0,
      'context_ledger.items.trimmed': 0,
      'context_ledger.tokens.in_memory': projected.report.sourceTokens,
      'context_ledger.tokens.sent': projected.report.projectedTokens,
      'context_ledger.digest': requested.digest,
      'gen_ai.usage.input_tokens': 1100,
      'gen_ai.usage.output_tokens': 7,
      'gen_ai.usage.cache_read.input_tokens': 896,
      'gen_ai.usage.cache_creation.input_tokens': 0,
      'gen_ai.response.finish_reasons': ['tool_calls'],
      'context_ledger.finish_reason.source': 'answer',
      'context_ledger.model.duration_ms': responded.durationMs,
    });
    // Times from the log: start at model.requested, end after durationMs.
    expect(second.startTime).toEqual([Math.floor(Date.parse(requested.at) / 1000), (Date.parse(requested.at) % 1000) * 1e6]);
    expect(chats.find((c) => c.attributes['context_ledger.step'] === 4)!.attributes['gen_ai.response.finish_reasons']).toEqual(['stop']);
    const lost = chats.find((c) => c.attributes['context_ledger.step'] === 5)!;
    expect(lost.status.code).toBe(SpanStatusCode.ERROR);
    expect(lost.attributes).not.toHaveProperty('gen_ai.usage.input_tokens');

    const tools = byName('execute_tool');
    expect(tools.map((t) => t.name)).toEqual(['execute_tool echo', 'execute_tool echo', 'execute_tool echo']);
    for (const tool of tools) expect(parentOf(tool)?.name).toBe('step');
    const bad = tools.find((t) => t.attributes['gen_ai.tool.call.id'] === 'c2')!;
    expect(bad.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'echo', 'gen_ai.tool.type': 'function', 'error.type': 'tool_error' });
    expect(bad.status).toEqual({ code: SpanStatusCode.ERROR, message: expect.stringContaining('cannot echo fail two') });
    expect(tools.find((t) => t.attributes['gen_ai.tool.call.id'] === 'c1')!.status.code).toBe(SpanStatusCode.UNSET);

    const compactions = byName('compact');
    const recorded = events.filter((e) => e.type === 'memory.compacted');
    expect(compactions).toHaveLength(recorded.length);
    expect(recorded.length).toBeGreaterThan(0);
    const [compacted] = recorded;
    if (compacted?.type !== 'memory.compacted') throw new Error('no compaction');
    const compact = compactions[0]!;
    expect(parentOf(compact)?.name).toBe('step');
    expect(compact.attributes).toMatchObject({
      'context_ledger.compaction.policy': 'LlmCompactPolicy',
      'context_ledger.compaction.trigger': 'auto',
      'context_ledger.compaction.items.before': compacted.keptIds.length + compacted.droppedIds.length,
      'context_ledger.compaction.items.after': compacted.layout.length,
      'context_ledger.compaction.tokens.before': compacted.tokens!.before,
      'context_ledger.compaction.tokens.after': compacted.tokens!.after,
      'gen_ai.usage.input_tokens': 2000,
      'gen_ai.usage.output_tokens': 90,
    });
    // No content unless asked for.
    expect(spans.some((s) => Object.keys(s.attributes).some((k) => k.startsWith('gen_ai.input') || k.startsWith('gen_ai.output') || k.includes('arguments') || k.includes('result')))).toBe(false);
    await log.close();
    await provider.shutdown();
  });

  it('exported from the log: the same names, attributes, parents and times as live; exporting twice gives the same ids', async () => {
    for (const captureContent of [false, true]) {
      const live = tracing();
      const recorder = otelRecorder({ tracer: live.tracer, captureContent });
      const log = await openMemoryLog();
      const id = await recordSession(log, recorder);
      await live.provider.forceFlush();
      const exported = tracing();
      const result = await exportSessionSpans(log, id, { tracer: exported.tracer, captureContent });
      await exported.provider.forceFlush();
      const liveSpans = live.exporter.getFinishedSpans();
      const exportedSpans = exported.exporter.getFinishedSpans();
      expect(result).toMatchObject({ spans: exportedSpans.length, derivedIds: true, incomplete: 0 });
      expect(shape(exportedSpans)).toEqual(shape(liveSpans));
      if (captureContent) {
        const chat = exportedSpans.find((s) => s.name.startsWith('chat') && s.attributes['context_ledger.step'] === 2)!;
        const input = JSON.parse(String(chat.attributes['gen_ai.input.messages'])) as { role: string }[];
        expect(input.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
        expect(JSON.parse(String(chat.attributes['gen_ai.system_instructions']))).toEqual([{ type: 'text', content: 'You echo.' }]);
        const tool = exportedSpans.find((s) => s.attributes['gen_ai.tool.call.id'] === 'c1')!;
        expect(tool.attributes).toMatchObject({ 'gen_ai.tool.call.arguments': '{"text":"one"}', 'gen_ai.tool.call.result': 'echo: one' });
      }
      const again = tracing();
      await exportSessionSpans(log, id, { tracer: again.tracer, captureContent });
      await again.provider.forceFlush();
      const ids = (spans: readonly ReadableSpan[]) => spans.map((s) => [s.spanContext().traceId, s.spanContext().spanId, s.parentSpanContext?.spanId ?? null]).sort();
      expect(ids(again.exporter.getFinishedSpans())).toEqual(ids(exportedSpans));
      // The records for an exporter carry the same ids and parents.
      const records = await sessionSpanRecords(log, id, { captureContent });
      expect(records.map((r) => [r.traceId, r.spanId, r.parentSpanId ?? null]).sort()).toEqual(ids(exportedSpans));
      for (const s of exportedSpans) expect(s.spanContext().spanId).toBe(spanIdOf(id, Number(s.attributes['context_ledger.seq'])));
      // Traced live with ledgerIdGenerator, the live spans have the same ids: a backend given both sees one set.
      expect(ids(liveSpans)).toEqual(ids(exportedSpans));
      await log.close();
      for (const t of [live, exported, again]) await t.provider.shutdown();
    }
  });

  it('a tracer that throws never breaks the run', async () => {
    const throwing = { startSpan: () => { throw new Error('tracer down'); }, startActiveSpan: () => undefined } as never;
    const log = await openMemoryLog();
    const id = await recordSession(log, otelRecorder({ tracer: throwing, captureContent: true }));
    const events = await readAll(log, id);
    expect(events.filter((e) => e.type === 'run.finished')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'hook.failed')).toEqual([]);
    await log.close();
  });

  it('a tracer without ledgerIdGenerator gets random ids, and says so', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const log = await openMemoryLog();
    const id = await recordSession(log, {});
    const result = await exportSessionSpans(log, id, { tracer: provider.getTracer('t') });
    expect(result.derivedIds).toBe(false);
    expect(result.spans).toBeGreaterThan(0);
    await expect(exportSessionSpans(log, 'nope', { tracer: provider.getTracer('t') })).rejects.toThrow(/^invalid options for exportSessionSpans: sessionId: no session "nope"/);
    // The error names the function that was called.
    await expect(sessionSpanRecords(log, 'none')).rejects.toThrow(/^invalid options for sessionSpanRecords: sessionId: no session "none"/);
    await expect(sessionSpanRecords(log, 'none')).rejects.toMatchObject({ code: 'INVALID_OPTIONS', optionsOf: 'sessionSpanRecords' });
    await expect(exportSessionSpans(log, id, { tracer: {} as never })).rejects.toThrow(/tracer/);
    expect(() => otelRecorder({ tracer: undefined as never })).toThrow(/tracer/);
    await log.close();
    await provider.shutdown();
  });

  it('exports a session recorded by 0.1.0 (LevelDB, through the upcasters)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'context-ledger-otel-'));
    await cp(fileURLToPath(new URL('../fixtures/leveldb-0.1.0', import.meta.url)), dir, { recursive: true, filter: (source) => !source.endsWith('README.md') });
    const log = await openLevelLog(dir);
    const { exporter, provider, tracer } = tracing();
    const result = await exportSessionSpans(log, 'v010-1', { tracer });
    await provider.forceFlush();
    const spans = exporter.getFinishedSpans();
    expect(result.spans).toBe(spans.length);
    expect(spans.filter((s) => s.name === 'invoke_agent').length).toBeGreaterThan(0);
    expect(spans.filter((s) => s.name.startsWith('chat ')).length).toBeGreaterThan(0);
    expect(spans.filter((s) => s.name === 'compact').length).toBeGreaterThan(0);
    // Every span but the roots has a parent among the exported spans.
    const ids = new Set(spans.map((s) => s.spanContext().spanId));
    for (const s of spans) if (s.parentSpanContext) expect(ids.has(s.parentSpanContext.spanId)).toBe(true);
    await log.close();
    await provider.shutdown();
    await rm(dir, { recursive: true, force: true });
  });

  it("the chat span carries the provider's finish reason where the answer recorded one (an answer cut off by length is not 'stop')", async () => {
    const log = await openMemoryLog();
    const live = tracing();
    const recorder = otelRecorder({ tracer: live.tracer });
    const model = new ScriptedModelClient([
      { ...callTool('c1', 'echo', { text: 'one' }), finishReason: 'tool_calls' },
      { ...final('a long answer that was cut'), finishReason: 'length' },
      final('no reason given'),
    ]);
    const agent = Agents.react({ modelClient: model, model: 'gpt-4.1', tools: [echo], log, onEvent: recorder.onEvent });
    const session = await agent.newSession();
    await session.run('echo one');
    await session.run('again');
    const events = await readAll(log, session.id);
    expect(events.filter((e) => e.type === 'model.responded').map((e) => (e as { finishReason?: string }).finishReason)).toEqual(['tool_calls', 'length', undefined]);
    expect(events.find((e) => e.type === 'model.responded')).toMatchObject({ v: 2 });
    const exported = tracing();
    await exportSessionSpans(log, session.id, { tracer: exported.tracer });
    for (const { exporter, provider } of [live, exported]) {
      await provider.forceFlush();
      const chats = exporter.getFinishedSpans().filter((s) => s.name.startsWith('chat '));
      expect(chats.map((c) => [c.attributes['gen_ai.response.finish_reasons'], c.attributes['context_ledger.finish_reason.source']])).toEqual([
        [['tool_calls'], 'provider'],
        [['length'], 'provider'],
        [['stop'], 'answer'],
      ]);
      await provider.shutdown();
    }
    for (const mode of ['project', 'rerun'] as const) expect((await replaySession(log, session.id, { mode })).identical).toBe(true);
  });
});
