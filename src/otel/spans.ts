// The span tree of a session, from its events alone: one builder for live runs and for recorded sessions, so both give the same spans.
import { decodeFateRuns, type SessionEvent, type SessionEventOf } from '../events/index.js';
import { isFunctionCall, isFunctionCallOutput, isMessage, isReasoning, textOf, toolCallsOf, type MemoryItem } from '../items/index.js';
import { usageFigures } from '../replay/index.js';
import { GEN_AI, LEDGER } from './attributes.js';

export type AttributeValue = string | number | boolean | readonly string[];
export type Attributes = Record<string, AttributeValue>;

/** A span begins: its key (session and seq of the event that opened it), its trace's root, its parent, and when. */
export interface SpanStart {
  readonly key: string;
  readonly sessionId: string;
  /** The seq its span id is derived from (with `part`, when one event opens two spans). */
  readonly seq: number;
  readonly part?: string;
  /** The seq of its trace's root span (its trace id is derived from it). */
  readonly traceSeq: number;
  readonly parentKey?: string;
  readonly name: string;
  readonly kind: 'internal' | 'client';
  /** Milliseconds since the epoch. */
  readonly startMs: number;
  readonly attributes: Attributes;
}

/** A span ends: more attributes, and an error when it failed. */
export interface SpanEnd {
  readonly key: string;
  readonly endMs: number;
  readonly attributes: Attributes;
  readonly error?: { readonly type: string; readonly message: string };
}

export interface SpanSink {
  start(span: SpanStart): void;
  end(span: SpanEnd): void;
}

export interface SpanBuilderOptions {
  /** Message content, tool arguments and results as attributes (default false: the conventions keep content opt-in). */
  readonly captureContent?: boolean;
  /** `gen_ai.provider.name` (default: guessed from the model name: `openai`, `anthropic`, else none). */
  readonly provider?: string;
  /** `gen_ai.agent.name`; the agent span is then named `invoke_agent NAME`. */
  readonly agentName?: string;
}

/** What a model call was sent, when content is captured: the live request, or the replayed context of a recorded step. */
export interface RequestContent {
  readonly items: readonly MemoryItem[];
}

const providerOf = (model: string | undefined): string | undefined => {
  if (model === undefined) return undefined;
  if (/^(gpt|o\d|chatgpt|text-embedding|davinci|codex)/i.test(model)) return 'openai';
  if (/^claude/i.test(model)) return 'anthropic';
  return undefined;
};

/** The GenAI conventions' message shape for an item (`role` and `parts`). */
const messageOf = (item: MemoryItem): Record<string, unknown> => {
  if (isMessage(item)) {
    const calls = toolCallsOf([item]).map((c) => ({ type: 'tool_call', id: c.callId, name: c.name, arguments: c.arguments }));
    const text = textOf(item);
    return { role: item.role === 'developer' ? 'system' : item.role, parts: [...(text !== '' ? [{ type: 'text', content: text }] : []), ...calls] };
  }
  if (isFunctionCall(item)) return { role: 'assistant', parts: [{ type: 'tool_call', id: item.call_id, name: item.name, arguments: item.arguments }] };
  if (isFunctionCallOutput(item)) return { role: 'tool', parts: [{ type: 'tool_call_response', id: item.call_id, response: item.output }] };
  if (isReasoning(item)) {
    const record = item as Record<string, unknown>;
    const content = typeof record['summary'] === 'string' ? record['summary'] : JSON.stringify(record['summary'] ?? record['content'] ?? record['text'] ?? '');
    return { role: 'assistant', parts: [{ type: 'reasoning', content }] };
  }
  return { role: 'user', parts: [{ type: item.type, content: JSON.stringify(item) }] };
};

/** Consecutive items of one role as one message, as a chat API would carry them. */
const messagesOf = (items: readonly MemoryItem[]): Record<string, unknown>[] => {
  const out: { role: unknown; parts: unknown[] }[] = [];
  for (const item of items) {
    const message = messageOf(item) as { role: unknown; parts: unknown[] };
    const last = out[out.length - 1];
    if (last && last.role === message.role && message.role !== 'tool' && message.role !== 'user') last.parts.push(...message.parts);
    else out.push({ role: message.role, parts: [...message.parts] });
  }
  return out;
};

interface SessionSpans {
  lastMs: number;
  run: { key: string; seq: number; inputTokens: number; outputTokens: number; cached: number; written: number; calls: number } | undefined;
  step: { key: string; step: number } | undefined;
  chat: { key: string; startMs: number } | undefined;
  projected: SessionEventOf<'context.projected'> | undefined;
  /** Outer calls whose span opened with their first nested call (CodeAct). */
  readonly openTools: Map<string, string>;
  /** The calls of the last answer, by id: name and arguments. */
  calls: Map<string, { name: string; arguments: string }>;
  readonly prompts: Map<number, string | undefined>;
}

const ms = (at: string, fallback: number): number => {
  const t = Date.parse(at);
  return Number.isFinite(t) ? t : fallback;
};

/**
 * Turns a session's events, in log order, into spans: `invoke_agent` per run, `step` per step, `chat MODEL` per model
 * call, `execute_tool NAME` per tool call, `compact` per compaction. Times are the events' `at` (a model call's end is
 * its start plus `durationMs`); every span is keyed by the session and the seq of the event that opened it, so the
 * same log always gives the same tree. Spans open at the end (a run still going) are left to the caller (`openSpans`).
 */
export class SessionSpanBuilder {
  readonly #sessions = new Map<string, SessionSpans>();
  readonly #open = new Map<string, string>();

  constructor(
    readonly sink: SpanSink,
    readonly options: SpanBuilderOptions = {},
  ) {}

  /** The keys of spans begun and not ended, with the session each belongs to. */
  openSpans(): ReadonlyMap<string, string> {
    return this.#open;
  }

  /** Ends every open span at `endMs` (export of a session whose last run never ended), marked incomplete. */
  endOpen(sessionId: string): void {
    const s = this.#sessions.get(sessionId);
    if (!s) return;
    const keys = [...this.#open].filter(([, session]) => session === sessionId).map(([key]) => key).reverse();
    for (const key of keys) this.#end(key, s.lastMs, { [LEDGER.incomplete]: true });
    s.run = undefined;
    s.step = undefined;
    s.chat = undefined;
  }

  /** Feeds one event; `content` is what its model call was sent (only used for `model.requested` with captureContent). */
  add(event: SessionEvent, content?: RequestContent): void {
    let s = this.#sessions.get(event.sessionId);
    if (!s) {
      s = { lastMs: ms(event.at, 0), run: undefined, step: undefined, chat: undefined, projected: undefined, openTools: new Map(), calls: new Map(), prompts: new Map() };
      this.#sessions.set(event.sessionId, s);
    }
    const at = ms(event.at, s.lastMs);
    this.#handle(s, event, at, content);
    s.lastMs = at;
  }

  #key(event: SessionEvent): string {
    return `${event.sessionId}#${event.seq}`;
  }

  #start(s: SessionSpans, event: SessionEvent, start: Omit<SpanStart, 'key' | 'sessionId' | 'seq' | 'traceSeq'>, traceSeq?: number): string {
    const key = `${this.#key(event)}${start.part !== undefined ? `/${start.part}` : ''}`;
    this.sink.start({ key, sessionId: event.sessionId, seq: event.seq, traceSeq: traceSeq ?? s.run?.seq ?? event.seq, ...start });
    this.#open.set(key, event.sessionId);
    return key;
  }

  #end(key: string, endMs: number, attributes: Attributes, error?: SpanEnd['error']): void {
    if (!this.#open.has(key)) return;
    this.#open.delete(key);
    this.sink.end({ key, endMs, attributes, ...(error ? { error } : {}) });
  }

  #common(event: SessionEvent): Attributes {
    return { [LEDGER.sessionId]: event.sessionId, [LEDGER.seq]: event.seq };
  }

  #provider(model: string | undefined): Attributes {
    const provider = this.options.provider ?? providerOf(model);
    return provider !== undefined ? { [GEN_AI.providerName]: provider } : {};
  }

  /** The span a step's work hangs under: the open step (of that step number), else the open run. */
  #parentFor(s: SessionSpans, step: number | undefined): string | undefined {
    if (s.step && (step === undefined || step === s.step.step)) return s.step.key;
    return s.run?.key;
  }

  #handle(s: SessionSpans, event: SessionEvent, at: number, content: RequestContent | undefined): void {
    switch (event.type) {
      case 'run.started': {
        if (s.run) this.#failRun(s, at, 'interrupted', 'a new run started');
        const model = event.settings?.model;
        const name = this.options.agentName !== undefined ? `invoke_agent ${this.options.agentName}` : 'invoke_agent';
        const key = this.#start(
          s,
          event,
          {
            name,
            kind: 'internal',
            startMs: at,
            attributes: {
              [GEN_AI.operationName]: 'invoke_agent',
              ...this.#provider(model),
              ...(model !== undefined ? { [GEN_AI.requestModel]: model } : {}),
              ...(this.options.agentName !== undefined ? { [GEN_AI.agentName]: this.options.agentName } : {}),
              [GEN_AI.conversationId]: event.sessionId,
              ...this.#common(event),
              [LEDGER.runId]: event.runId,
              ...(event.runtime !== undefined ? { [LEDGER.runtime]: event.runtime } : {}),
            },
          },
          event.seq,
        );
        s.run = { key, seq: event.seq, inputTokens: 0, outputTokens: 0, cached: 0, written: 0, calls: 0 };
        return;
      }
      case 'step.started': {
        // A run continued in another process (resumed after a crash) has no run.started here: its span opens now.
        if (!s.run) this.#openRun(s, event, at);
        if (!s.run) return;
        if (s.step) this.#end(s.step.key, at, {});
        const key = this.#start(s, event, {
          name: 'step',
          kind: 'internal',
          startMs: at,
          parentKey: s.run.key,
          attributes: { ...this.#common(event), [LEDGER.runId]: event.runId, [LEDGER.step]: event.step },
        });
        s.step = { key, step: event.step };
        s.projected = undefined;
        return;
      }
      case 'context.projected':
        s.projected = event;
        return;
      case 'model.requested':
        this.#startChat(s, event, at, content);
        return;
      case 'model.responded':
        this.#endChat(s, event, at);
        return;
      case 'tool.result':
        this.#tool(s, event, at);
        return;
      case 'memory.compacted':
      case 'compaction.failed':
        this.#compaction(s, event, at);
        return;
      case 'step.ended':
        if (s.step && s.step.step === event.step) {
          this.#end(s.step.key, at, { [LEDGER.toolCalls]: event.toolCalls });
          s.step = undefined;
        }
        return;
      case 'run.finished': {
        const run = s.run;
        if (!run) return;
        this.#closeChildren(s, at);
        this.#end(run.key, at, { [LEDGER.steps]: event.steps, ...this.#runUsage(run) });
        s.run = undefined;
        return;
      }
      case 'run.failed':
        if (s.run) this.#failRun(s, at, event.reason, event.message);
        return;
      default:
        return;
    }
  }

  #openRun(s: SessionSpans, event: SessionEventOf<'step.started'>, at: number): void {
    const name = this.options.agentName !== undefined ? `invoke_agent ${this.options.agentName}` : 'invoke_agent';
    const key = this.#start(
      s,
      event,
      {
        name,
        kind: 'internal',
        startMs: at,
        part: 'run',
        attributes: {
          [GEN_AI.operationName]: 'invoke_agent',
          ...this.#provider(undefined),
          ...(this.options.agentName !== undefined ? { [GEN_AI.agentName]: this.options.agentName } : {}),
          [GEN_AI.conversationId]: event.sessionId,
          ...this.#common(event),
          [LEDGER.runId]: event.runId,
          [LEDGER.incomplete]: true,
        },
      },
      event.seq,
    );
    s.run = { key, seq: event.seq, inputTokens: 0, outputTokens: 0, cached: 0, written: 0, calls: 0 };
  }

  #runUsage(run: NonNullable<SessionSpans['run']>): Attributes {
    if (run.calls === 0) return {};
    return {
      [GEN_AI.inputTokens]: run.inputTokens,
      [GEN_AI.outputTokens]: run.outputTokens,
      ...(run.cached > 0 ? { [GEN_AI.cacheReadInputTokens]: run.cached } : {}),
      ...(run.written > 0 ? { [GEN_AI.cacheCreationInputTokens]: run.written } : {}),
    };
  }

  #closeChildren(s: SessionSpans, at: number, error?: SpanEnd['error']): void {
    if (s.chat) this.#end(s.chat.key, at, {}, error ?? { type: 'incomplete', message: 'the model call did not answer' });
    s.chat = undefined;
    for (const key of [...s.openTools.values()].reverse()) this.#end(key, at, {}, error ?? { type: 'incomplete', message: 'the tool call did not finish' });
    s.openTools.clear();
    if (s.step) this.#end(s.step.key, at, {}, error);
    s.step = undefined;
  }

  #failRun(s: SessionSpans, at: number, reason: string, message: string): void {
    const run = s.run!;
    const error = { type: reason, message };
    this.#closeChildren(s, at, error);
    this.#end(run.key, at, this.#runUsage(run), error);
    s.run = undefined;
  }

  #startChat(s: SessionSpans, event: SessionEventOf<'model.requested'>, at: number, content: RequestContent | undefined): void {
    if (!s.run) return;
    if (s.chat) this.#end(s.chat.key, at, {}, { type: 'incomplete', message: 'the model call did not answer' });
    if (event.promptSeq === undefined) s.prompts.set(event.seq, event.systemPrompt);
    const systemPrompt = event.promptSeq !== undefined ? s.prompts.get(event.promptSeq) : event.systemPrompt;
    const p = s.projected && (s.projected.step === undefined || s.projected.step === event.step) ? s.projected : undefined;
    const fates = { cleared: 0, trimmed: 0, dropped: 0 };
    if (p) {
      try {
        for (const run of decodeFateRuns(p.fateRuns)) if (run.fate !== 'kept') fates[run.fate] += run.count;
      } catch {
        // a malformed fateRuns string: the counts from the report alone
      }
    }
    const captured = this.options.captureContent === true;
    const key = this.#start(s, event, {
      name: `chat ${event.model}`,
      kind: 'client',
      startMs: at,
      ...(this.#parentFor(s, event.step) !== undefined ? { parentKey: this.#parentFor(s, event.step)! } : {}),
      attributes: {
        [GEN_AI.operationName]: 'chat',
        ...this.#provider(event.model),
        [GEN_AI.requestModel]: event.model,
        [GEN_AI.conversationId]: event.sessionId,
        ...this.#common(event),
        ...(event.step !== undefined ? { [LEDGER.step]: event.step } : {}),
        ...(p
          ? {
              [LEDGER.itemsInMemory]: p.report.sourceItemCount,
              [LEDGER.itemsSent]: p.report.projectedItemCount,
              [LEDGER.itemsDropped]: p.report.droppedItemCount,
              [LEDGER.itemsCleared]: fates.cleared,
              [LEDGER.itemsTrimmed]: fates.trimmed,
              ...(p.report.sourceTokens !== undefined ? { [LEDGER.tokensInMemory]: p.report.sourceTokens } : {}),
              ...(p.report.projectedTokens !== undefined ? { [LEDGER.tokensSent]: p.report.projectedTokens } : {}),
            }
          : { [LEDGER.itemsSent]: event.itemCount }),
        [LEDGER.digest]: event.digest,
        ...(captured && systemPrompt !== undefined ? { [GEN_AI.systemInstructions]: JSON.stringify([{ type: 'text', content: systemPrompt }]) } : {}),
        ...(captured && content ? { [GEN_AI.inputMessages]: JSON.stringify(messagesOf(content.items)) } : {}),
      },
    });
    s.chat = { key, startMs: at };
  }

  #endChat(s: SessionSpans, event: SessionEventOf<'model.responded'>, at: number): void {
    const chat = s.chat;
    s.calls = new Map(toolCallsOf(event.items).map((c) => [c.callId, { name: c.name, arguments: c.arguments }]));
    if (!chat) return;
    s.chat = undefined;
    const usage = usageFigures(event.usage);
    const run = s.run;
    if (usage && run) {
      run.calls += 1;
      run.inputTokens += usage.inputTokens;
      run.outputTokens += usage.outputTokens;
      run.cached += usage.cachedInputTokens;
      run.written += usage.cacheWriteTokens;
    }
    const end = event.durationMs !== undefined ? chat.startMs + event.durationMs : at;
    this.#end(chat.key, end, {
      ...(usage
        ? {
            [GEN_AI.inputTokens]: usage.inputTokens,
            [GEN_AI.outputTokens]: usage.outputTokens,
            ...(usage.cacheReported ? { [GEN_AI.cacheReadInputTokens]: usage.cachedInputTokens, [GEN_AI.cacheCreationInputTokens]: usage.cacheWriteTokens } : {}),
          }
        : {}),
      // The provider's reason when the client recorded one; otherwise derived from the answer (it called tools, or it did not).
      [GEN_AI.finishReasons]: [event.finishReason ?? (s.calls.size > 0 ? 'tool_calls' : 'stop')],
      [LEDGER.finishReasonSource]: event.finishReason !== undefined ? 'provider' : 'answer',
      ...(event.durationMs !== undefined ? { [LEDGER.durationMs]: event.durationMs } : {}),
      ...(this.options.captureContent === true ? { [GEN_AI.outputMessages]: JSON.stringify(messagesOf(event.items)) } : {}),
    });
  }

  #tool(s: SessionSpans, event: SessionEventOf<'tool.result'>, at: number): void {
    if (!s.run) return;
    const outer = event.parentCallId;
    let parentKey = this.#parentFor(s, event.step);
    if (outer !== undefined) {
      let open = s.openTools.get(outer);
      if (open === undefined) {
        // The outer call's span opens with its first nested call, where the outer call's own work began.
        const known = s.calls.get(outer);
        open = this.#start(s, event, { ...this.#toolStart(event, known?.name ?? 'unknown', outer, s.lastMs, parentKey, known?.arguments), part: 'outer' });
        s.openTools.set(outer, open);
      }
      parentKey = open;
    }
    const already = outer === undefined ? s.openTools.get(event.callId) : undefined;
    const error = event.isError ? { type: 'tool_error', message: event.output.slice(0, 500) } : undefined;
    const result = this.options.captureContent === true ? { [GEN_AI.toolCallResult]: event.output } : {};
    if (already !== undefined) {
      s.openTools.delete(event.callId);
      this.#end(already, at, result, error);
      return;
    }
    const known = s.calls.get(event.callId);
    const name = event.name ?? known?.name ?? 'unknown';
    const key = this.#start(s, event, this.#toolStart(event, name, event.callId, s.lastMs, parentKey, known?.arguments));
    this.#end(key, at, { ...result, ...(outer !== undefined ? { [LEDGER.parentCallId]: outer } : {}) }, error);
  }

  #toolStart(
    event: SessionEventOf<'tool.result'>,
    name: string,
    callId: string,
    startMs: number,
    parentKey: string | undefined,
    args: string | undefined,
  ): Omit<SpanStart, 'key' | 'sessionId' | 'seq' | 'traceSeq'> {
    return {
      name: `execute_tool ${name}`,
      kind: 'internal',
      startMs,
      ...(parentKey !== undefined ? { parentKey } : {}),
      attributes: {
        [GEN_AI.operationName]: 'execute_tool',
        [GEN_AI.toolName]: name,
        [GEN_AI.toolCallId]: callId,
        [GEN_AI.toolType]: 'function',
        ...this.#common(event),
        ...(event.step !== undefined ? { [LEDGER.step]: event.step } : {}),
        ...(this.options.captureContent === true && args !== undefined ? { [GEN_AI.toolCallArguments]: args } : {}),
      },
    };
  }

  #compaction(s: SessionSpans, event: SessionEventOf<'memory.compacted'> | SessionEventOf<'compaction.failed'>, at: number): void {
    const parentKey = s.run ? this.#parentFor(s, event.step) : undefined;
    const common: Attributes = {
      ...this.#common(event),
      [LEDGER.policy]: event.policy.name,
      [LEDGER.trigger]: event.trigger,
      ...(event.step !== undefined ? { [LEDGER.step]: event.step } : {}),
    };
    // A compaction outside a run (session.compact) is a trace of its own.
    const traceSeq = parentKey !== undefined ? undefined : event.seq;
    if (event.type === 'compaction.failed') {
      const key = this.#start(s, event, { name: 'compact', kind: 'internal', startMs: s.lastMs, ...(parentKey ? { parentKey } : {}), attributes: { ...common, [LEDGER.stage]: event.stage } }, traceSeq);
      this.#end(key, at, {}, { type: `compaction_${event.stage}`, message: event.error });
      return;
    }
    const usage = usageFigures(event.usage);
    const key = this.#start(
      s,
      event,
      {
        name: 'compact',
        kind: 'internal',
        startMs: s.lastMs,
        ...(parentKey ? { parentKey } : {}),
        attributes: {
          ...common,
          ...(event.reason ? { [LEDGER.reason]: event.reason.kind } : {}),
          ...(event.reason?.value !== undefined ? { [LEDGER.reasonValue]: event.reason.value } : {}),
          ...(event.reason?.threshold !== undefined ? { [LEDGER.reasonThreshold]: event.reason.threshold } : {}),
          [LEDGER.itemsBefore]: event.keptIds.length + event.droppedIds.length,
          [LEDGER.itemsAfter]: event.layout.length,
          ...(event.tokens ? { [LEDGER.tokensBefore]: event.tokens.before, [LEDGER.tokensAfter]: event.tokens.after } : {}),
          ...(usage ? { [GEN_AI.inputTokens]: usage.inputTokens, [GEN_AI.outputTokens]: usage.outputTokens } : {}),
        },
      },
      traceSeq,
    );
    this.#end(key, at, {});
  }
}
